"""Timing and memory helpers shared by the benchmark scripts."""

from __future__ import annotations

import gc
import time
import tracemalloc

import numpy as np


def best_time(fn, repeat):
    """Minimum wall time over ``repeat`` calls and the last result."""
    best, out = np.inf, None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def peak_memory(fn):
    """``(peak bytes traced during fn(), result)``."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, out
