"""`serve`'s process-wide runtime settings. One process answers many requests at once: its event loop accepts
connections and answers /healthz, while worker threads parse, match and rank thousands of items for searches and
recalls holding the GIL. The loop waits for the GIL at every step it takes, and for every collection of the cyclic
garbage collector, which stops every thread while it walks the objects of the generations it collects.

Measured with `python -m bench.health` (4 clients recalling 10,000 memories, /healthz probed every 20 ms;
docs/operations.md): with Python's collector settings, a full collection (walking the warm copies of the namespace,
the startup heap and the recalls' working sets) ran 9 to 12 times in 15 s, for a median of about 190 ms each (up to
630), and set /healthz's p99; with these, none ran while serving.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

# The loop asks for the GIL back every millisecond instead of every 5 ms (Python's default).
SWITCH_INTERVAL: Final = 0.001
# A young collection waits for this many more tracked objects alive (Python's default: 2,000): the working sets of
# concurrent recalls, which die together when they answer, are then rarely caught alive and promoted, so the old
# generation grows by what lives on (the warm copies). 10,000, 25,000 and 50,000 gave the same p99 within the noise:
# the smaller, the more middle collections; the larger, the longer each young one.
YOUNG_OBJECTS: Final = 25_000
# The collector's thresholds (Python's: 2,000, 10, 10): a middle collection after 50 young ones, a full one after
# 1,000 middle ones, not every few seconds.
GC_THRESHOLDS: Final = (YOUNG_OBJECTS, 50, 1_000)


@contextmanager
def serving() -> Iterator[None]:
    """This process set up to serve while the block runs: the switch interval and the collector's thresholds, and
    what is alive when it starts (modules, frameworks, models, the wired services: what lives as long as the
    process) left out of every later collection, so none walks it again. All put back when the block ends: `serve`
    is the whole process, but tests run it in theirs."""
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(SWITCH_INTERVAL)
    gc.set_threshold(*GC_THRESHOLDS)
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        sys.setswitchinterval(interval)
