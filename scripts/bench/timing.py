"""Wall and CPU time of repeated calls, summarised as the bench reports them (median, nearest-rank p99)."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


def percentile(values: list[float], share: float) -> float:
    """Nearest rank: with few samples p99 is the largest."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass
class Timing:
    wall_ms: list[float]
    cpu_ms: list[float]

    def summary(self) -> dict[str, float]:
        return {
            "p50_ms": statistics.median(self.wall_ms),
            "p99_ms": percentile(self.wall_ms, 0.99),
            "cpu_ms": statistics.median(self.cpu_ms),
            "samples": len(self.wall_ms),
        }


def timed(action: Callable[[], object], reps: int, before: Callable[[], object] | None = None) -> Timing:
    """`reps` runs of `action`, each after `before` (untimed) when given."""
    timing = Timing([], [])
    for _ in range(reps):
        if before is not None:
            before()
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        timing.cpu_ms.append((time.process_time() - cpu) * 1000)
        timing.wall_ms.append((time.perf_counter() - wall) * 1000)
    return timing
