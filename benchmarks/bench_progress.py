"""Progress bars on long work: how often they move, and what they cost.

Usage::

    python benchmarks/bench_progress.py [--quick] [--repeat 3]

Design. Three long jobs of the library, each run with ``verbose=1``:

* **group bootstrap**: ``certify_bounds`` on a synthetic audit trail of ``n`` rows with five
  attributes (8, 6, 5, 4 and 3 levels; every intersection: 7,559 groups), ``B = 2000``
  resamples;
* **FaiTH audit**: ``FaithAuditor`` (uniform bounds, ``B = 1000``) of a logistic regression on
  seven categorical features (a grid of 9,600 cells);
* **model selection**: ``FairModelSelector``, 20 candidates × 5 folds, each audited with
  ``B = 200``.

For each job: the times at which the bar moves, recorded by a stand-in for the bar (number
of moves, longest wait between two moves, and the job's time); then the job's time with
``verbose=0`` and with tqdm's bar writing to ``/dev/null``, alternated ``--repeat`` times,
and the ratio of the best times measured in the same run (the machine is shared: the load
average is recorded); and whether the results are identical (they must be).

Writes ``benchmarks/results/progress.json`` (``--quick``: ``progress_quick.json``, smaller
jobs). Run time (2 shared cores): about 6 minutes; ``--quick`` about 80 seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time

import numpy as np
from _common import Run, best_time, write_results

from skfair_audit import _progress


class _Recorder:
    """Stands in for the bar: the time of every move."""

    moves = []

    def __init__(self, total, desc, unit):
        type(self).moves.append((time.perf_counter(), 0))

    def update(self, n=1):
        type(self).moves.append((time.perf_counter(), n))

    def close(self):
        type(self).moves.append((time.perf_counter(), None))


def _moves(job):
    """Run ``job(verbose=1)`` with the recorder: the bar's moves, the longest wait between
    two of them (from the bar's start to its close), and the bar's time."""
    original = _progress._tqdm
    _progress._tqdm = _Recorder
    _Recorder.moves = []
    try:
        start = time.perf_counter()
        job(1)
        elapsed = time.perf_counter() - start
    finally:
        _progress._tqdm = original
    # one bar per job here: from its start (n = 0) through its moves to its close (None)
    times = np.array([t for t, _ in _Recorder.moves])
    return {"bars": int(sum(1 for _, n in _Recorder.moves if n == 0)),
            "moves": int(sum(1 for _, n in _Recorder.moves if n)),
            "longest_wait_s": float(np.diff(times).max()),
            "bar_time_s": float(times[-1] - times[0]), "job_time_s": elapsed}


def _group_job(n):
    from skfair_audit.group import certify_bounds

    rng = np.random.default_rng(0)
    groups = {name: rng.integers(0, levels, n).astype(str)
              for name, levels in (("a", 8), ("b", 6), ("c", 5), ("d", 4), ("e", 3))}
    y = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.8, y, 1 - y)

    def job(verbose):
        return certify_bounds(y, y_pred, groups, metric="error_rate", n_resamples=2000,
                              random_state=0, verbose=verbose).lower
    return job


def _faith_job(n):
    import pandas as pd
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from skfair_audit.faith import FaithAuditor

    rng = np.random.default_rng(1)
    levels = (5, 5, 4, 4, 3, 2, 2)
    X = pd.DataFrame({f"x{j}": rng.integers(0, k, n).astype(str) for j, k in enumerate(levels)})
    logit = (X.x0 == "1") * 1.0 + (X.x1 == "2") * 0.8 - (X.x4 == "1") * 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy()))).astype(int)
    model = make_pipeline(OneHotEncoder(), LogisticRegression(max_iter=500))
    half = n // 2

    def job(verbose):
        auditor = FaithAuditor(model, protected=["x4"], epsilon=0.1, n_resamples=1000,
                               random_state=0, verbose=verbose).fit(X[:half], y[:half])
        return auditor.audit(X[half:], y[half:]).bootstrap_distribution
    return job


def _selection_job(n):
    import pandas as pd
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from skfair_audit.faith import FaithAuditor
    from skfair_audit.model_selection import FairModelSelector, l1_logistic_regression

    rng = np.random.default_rng(2)
    X = pd.DataFrame({"g": rng.choice(["a", "b"], n), "p": rng.choice(["0", "1", "2"], n),
                      "q": rng.choice(["u", "v", "w", "z"], n)})
    logit = -1 + 1.5 * (X.p == "2") + 0.5 * (X.g == "b") + 0.3 * (X.q == "z")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy()))).astype(int)
    model = make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())

    def job(verbose):
        selector = FairModelSelector(
            model, param_grid={"logisticregression__C": list(np.geomspace(0.005, 5, 20))},
            delta=0.05, protected=["g"], cv=5, on_none="fairest",
            auditor=FaithAuditor(None, epsilon=0.0, n_resamples=200), random_state=0,
            verbose=verbose).fit(X, y)
        return selector.cv_results_["lower_bound"]
    return job


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = {"group": 100_000, "faith": 5_000, "selection": 2_000} if args.quick else {
        "group": 1_000_000, "faith": 20_000, "selection": 10_000}
    jobs = {"group bootstrap": _group_job(sizes["group"]),
            "FaiTH audit": _faith_job(sizes["faith"]),
            "model selection": _selection_job(sizes["selection"])}
    run = Run(__file__, argv)
    out = {"quick": args.quick, "sizes": sizes, "repeat": args.repeat, "jobs": {}}
    for name, job in jobs.items():
        record = _moves(job)
        silent = loud = np.inf
        same = True
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
            for _ in range(args.repeat):  # alternated: the same machine state for both
                t0, a = best_time(lambda job=job: job(0), 1)
                t1, b = best_time(lambda job=job: job(1), 1)
                silent, loud = min(silent, t0), min(loud, t1)
                same &= bool(np.array_equal(a, b))
        record.update(time_silent_s=silent, time_with_bar_s=loud, ratio=loud / silent,
                      identical=same)
        out["jobs"][name] = record
        print(f"{name:16s} {record['moves']:4d} moves, longest wait "
              f"{record['longest_wait_s']:.2f} s of {record['bar_time_s']:.2f} s (job "
              f"{silent:.2f} s without the bar); with the bar "
              f"{loud:.2f} s (x{loud / silent:.3f}); identical: {same}")
    print(f"written: {write_results(run, out, suffix='_quick' if args.quick else '')}")


if __name__ == "__main__":
    main()
