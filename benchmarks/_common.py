"""What every benchmark script shares: where results go, how they are written, timers.

Each ``benchmarks/bench_<name>.py`` writes ``benchmarks/results/<name>.json`` (and, for some,
``<name>.csv`` and ``<name>*.png``) through :func:`write_results`, which puts one metadata
block at the top of the JSON, spelled the same way for every benchmark::

    {
      "command": "python benchmarks/bench_<name>.py --quick",   # how to rerun it
      "date": "2026-12-01T17:40:00+00:00",                      # UTC, when it was written
      "machine": {
        "cpus": 2,                                  # os.cpu_count()
        "cpus_available": 2,                        # the process's CPU affinity
        "platform": "Linux-...",
        "load_average_start": [0.7, 0.8, 1.0],      # os.getloadavg() when the run began
        "load_average_end": [1.9, 1.2, 1.1],        # ... and when it ended
        ...                                          # optional: threads, processor, note
      },
      "versions": {"python": "3.12.3", "numpy": "...", "scipy": "...", "scikit-learn": "...",
                   "pandas": "...", "skfair_audit": "...", ...},
      ...                                                         # the benchmark's own payload
    }

Results written before this module existed were brought to this layout by a mechanical key
rename (values untouched): the machine block used to be spelled five ways (``versions.cpu_count``,
``machine.cpu_count``, ``load_average_before``/``_at_start``/``loadavg_before``, ...).

The scripts are run as ``python benchmarks/bench_<name>.py`` from the repository root, so this
directory is the first entry of ``sys.path`` and ``import _common`` finds this module; the
scripts never import each other (shared pieces live in the underscore modules beside them).
"""

from __future__ import annotations

import csv
import gc
import importlib.metadata
import json
import os
import platform
import sys
import time
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"

#: Packages whose versions every results file records (``None`` when not installed).
PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "skfair_audit")


def versions(*extra):
    """``{"python": ..., package: version}`` for :data:`PACKAGES` and ``extra``."""
    out = {"python": platform.python_version()}
    for package in (*PACKAGES, *extra):
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            out[package] = None
    return out


def cpus_available():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count()


class Run:
    """One run of a benchmark script: create it when the run begins.

    Parameters
    ----------
    script : str
        The script's ``__file__``; its results are named after it (``bench_x.py`` writes
        ``x.json``).
    argv : list of str, optional
        The arguments the script was given (default ``sys.argv[1:]``), for ``command``.
    packages : tuple of str
        Packages recorded in ``versions`` beyond :data:`PACKAGES`.
    **machine
        Extra entries of the ``machine`` block (e.g. ``threads=1``).
    """

    def __init__(self, script, argv=None, *, packages=(), **machine):
        script = Path(script)
        self.name = script.stem.removeprefix("bench_").removeprefix("fig_")
        self.command = " ".join(["python", f"benchmarks/{script.name}",
                                 *(sys.argv[1:] if argv is None else argv)])
        self.packages = tuple(packages)
        self.extra = machine
        self.load_average_start = list(os.getloadavg())
        self.started = time.perf_counter()

    def elapsed(self):
        """Seconds since the run began."""
        return time.perf_counter() - self.started

    def path(self, suffix="", ext="png"):
        """``benchmarks/results/<name><suffix>.<ext>``: figures are named after the script."""
        return RESULTS / f"{self.name}{suffix}.{ext}"

    def metadata(self, command=None):
        """The metadata block (``command`` defaults to how the script was called)."""
        return {
            "command": self.command if command is None else command,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": {
                "cpus": os.cpu_count(), "cpus_available": cpus_available(),
                "platform": platform.platform(),
                "load_average_start": self.load_average_start,
                "load_average_end": list(os.getloadavg()),
                **self.extra,
            },
            "versions": versions(*self.packages),
        }


def dumps(payload):
    """The one JSON layout of the results files."""
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"


def write_results(run, payload, *, suffix="", name=None, rows=None, command=None):
    """Write ``<name><suffix>.json`` (the metadata of ``run``, then ``payload``) and, given
    ``rows`` (a list of flat dicts), ``<name><suffix>.csv``; return the JSON's path.

    ``name`` defaults to the script's (``bench_x.py`` writes ``x.json``); ``--quick`` runs
    use ``suffix="_quick"``.
    """
    stem = (run.name if name is None else name) + suffix
    RESULTS.mkdir(parents=True, exist_ok=True)
    if rows is not None:
        with (RESULTS / f"{stem}.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]), extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    path = RESULTS / f"{stem}.json"
    path.write_text(dumps({**run.metadata(command), **payload}), encoding="utf-8")
    return path


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
