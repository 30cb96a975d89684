"""`serve`'s process-wide runtime while it serves (local.runtime): the event loop asks for the GIL back every
millisecond, each generation is collected later than Python's defaults have it, and what is alive when serving
starts is left out of every later collection; all put back when serving ends (the tests' process is serve's here)."""

from __future__ import annotations

import gc
import subprocess
import sys

from local import runtime


def pythons_thresholds() -> tuple[int, ...]:
    """The collector's thresholds of a fresh interpreter (this one's may have been changed)."""
    shown = subprocess.run(
        [sys.executable, "-c", "import gc; print(*gc.get_threshold())"], capture_output=True, text=True, check=True
    )
    return tuple(int(value) for value in shown.stdout.split())


def test_while_serving_each_generation_is_collected_later_than_pythons_defaults_have_it() -> None:
    before = (gc.get_threshold(), sys.getswitchinterval())

    with runtime.serving():
        serving = (gc.get_threshold(), sys.getswitchinterval())

    assert serving == (runtime.GC_THRESHOLDS, runtime.SWITCH_INTERVAL)
    assert all(ours > pythons for ours, pythons in zip(runtime.GC_THRESHOLDS, pythons_thresholds(), strict=True))
    assert (gc.get_threshold(), sys.getswitchinterval()) == before


def test_what_is_alive_when_serving_starts_is_left_out_of_every_collection_until_serving_ends() -> None:
    started_with = type("Wired", (), {})()  # a tracked object alive at startup, as the wired services are

    with runtime.serving():
        walked = {id(candidate) for candidate in gc.get_objects()}  # what collections walk (frozen objects are not)
        frozen = gc.get_freeze_count()

    assert frozen > 0
    assert id(started_with) not in walked
    assert gc.get_freeze_count() == 0
    assert id(started_with) in {id(candidate) for candidate in gc.get_objects()}
