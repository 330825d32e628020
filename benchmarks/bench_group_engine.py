"""The one pass of the group engine against a pandas groupby-count: time and memory.

Usage::

    python benchmarks/bench_group_engine.py [--quick] [--sizes 1000000 10000000]
                                            [--repeat 3] [--resamples 1000]

Design. A synthetic audit trail of ``n`` rows: race (4 levels), age (3), sex (2) and binary
``y`` / ``y_pred`` (int8), the attributes stored three ways — pandas ``category``, the plain
string dtype of pandas (``str``) and ``object`` arrays of Python strings. For each:

* **floor**: ``frame.groupby([race, age, sex, y, y_pred], observed=True, sort=False).size()``,
  the count of the distinct rows, i.e. the least work that compresses rows into atoms;
* **ours**: the one pass of every group audit,
  ``AuditSummary.from_rows(y, y_pred, frame[[race, age, sex]], metric="fpr")`` — encoding of
  the attributes and labels, the metric, the intersections collection (59 groups) and the
  atoms with their counts;
* ``--repeat`` runs of each, alternated (groupby, pass, groupby, pass ...), one thread
  (``OMP/MKL/OPENBLAS_NUM_THREADS=1``); the ratio of the best times **measured in the same
  run** and the median of the paired ratios (the machine is shared: the load average is
  recorded before and after);
* memory: the ``tracemalloc`` peak of our pass (numpy registers its buffers; pandas' hash
  tables of the string columns are numpy arrays too) against the bytes of the input columns
  (``memory_usage(deep=True)``), then the peak of the bootstrap on the summary
  (``certify_bounds``, ``B = --resamples``), which is O(atoms · B) and independent of ``n``.

Writes ``benchmarks/results/group_engine.json`` (``--quick``: ``group_engine_quick.json``).
Run time (2 shared cores): about 2 minutes with the default sizes; ``--quick`` (10^5 and
10^6 rows) about 15 seconds.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import Run, best_time, peak_memory, write_results  # noqa: E402

from skfair_audit.group import AuditSummary  # noqa: E402

LEVELS = {"race": ["A", "B", "C", "D"], "age": ["<25", "25-45", ">45"], "sex": ["F", "M"]}
PROBS = {"race": [0.5, 0.25, 0.15, 0.10], "age": [0.2, 0.5, 0.3], "sex": [0.5, 0.5]}
ATTRS = list(LEVELS)
COLUMNS = [*ATTRS, "y", "y_pred"]
KINDS = ("category", "str", "object")


def make_trail(n, kind, seed=0):
    """The synthetic audit trail with its attributes stored as ``kind``."""
    rng = np.random.default_rng(seed)
    data = {}
    for name, levels in LEVELS.items():
        codes = rng.choice(len(levels), n, p=PROBS[name]).astype(np.int8)
        if kind == "category":
            data[name] = pd.Categorical.from_codes(codes, levels)
        elif kind == "str":
            data[name] = pd.array(np.array(levels)[codes], dtype="str")
        else:
            data[name] = pd.Series(np.array(levels, dtype=object)[codes], dtype=object)
        del codes
    y = rng.integers(0, 2, n, dtype=np.int8)
    flip = rng.random(n) < 0.13
    data["y"] = y
    data["y_pred"] = np.where(flip, 1 - y, y).astype(np.int8)
    frame = pd.DataFrame(data)
    for name in ATTRS:  # pandas 3 infers "str" for object columns in the constructor
        if kind == "object":
            frame[name] = frame[name].astype(object)
    return frame


def one_case(n, kind, repeat, resamples):
    frame = make_trail(n, kind)
    input_bytes = int(sum(frame[c].memory_usage(deep=True, index=False) for c in COLUMNS))

    def groupby():
        return frame.groupby(COLUMNS, observed=True, sort=False).size()

    def one_pass():
        return AuditSummary.from_rows(frame["y"], frame["y_pred"], frame[ATTRS], metric="fpr")

    groupby()  # warm-up (imports, code paths)
    one_pass()
    # alternate the two, so that both see the same moments of a shared machine
    floors, ours = [], []
    for _ in range(repeat):
        t, counts = best_time(groupby, 1)
        floors.append(t)
        t, summary = best_time(one_pass, 1)
        ours.append(t)
    t_floor, t_ours = min(floors), min(ours)
    peak_pass, _ = peak_memory(one_pass)
    t_boot, result = best_time(
        lambda: summary.certify_bounds(n_resamples=resamples, random_state=0, n_jobs=1), 1)
    peak_boot, _ = peak_memory(
        lambda: summary.certify_bounds(n_resamples=resamples, random_state=0, n_jobs=1))
    # the atoms are the distinct (cell, y, y_pred) of the audit sample (y == 0): a subset of
    # the groupby's rows, which also counts the positives
    row = {
        "n": n, "kind": kind, "dtype": str(frame["race"].dtype),
        "groupby_rows": int(len(counts)), "n_atoms": int(summary.stats.n_atoms),
        "n_groups": int(summary.groups.n_groups),
        "seconds_groupby_count": t_floor, "seconds_one_pass": t_ours,
        "ratio_one_pass_to_groupby": t_ours / t_floor,
        "median_paired_ratio": float(np.median(np.divide(ours, floors))),
        "seconds_groupby_count_runs": floors, "seconds_one_pass_runs": ours,
        "input_column_bytes": input_bytes, "peak_bytes_one_pass": int(peak_pass),
        "ratio_peak_to_input": peak_pass / input_bytes,
        "seconds_bootstrap": t_boot, "peak_bytes_bootstrap": int(peak_boot),
        "bootstrap_resamples": resamples, "critical_value": result.critical_value,
    }
    print(f"  n={n:>10,d} {kind:>8}: groupby {t_floor:.3f} s, one pass {t_ours:.3f} s "
          f"(x{t_ours / t_floor:.2f}); peak {peak_pass / 2**20:.1f} MiB for "
          f"{input_bytes / 2**20:.1f} MiB of input (x{peak_pass / input_bytes:.2f}); "
          f"bootstrap B={resamples} {t_boot:.3f} s, peak {peak_boot / 2**20:.1f} MiB",
          flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**6, 10**7])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)
    sizes = [10**5, 10**6] if args.quick else args.sizes
    run = Run(__file__, argv,
              note="2 cores shared with other jobs; ratios are from the same run")
    rows = [one_case(n, kind, args.repeat, args.resamples) for n in sizes for kind in KINDS]
    result = {
        "description": __doc__.split("\n\n")[2].strip(),
        "repeat": args.repeat,
        "cases": rows,
        "max_ratio_one_pass_to_groupby": max(r["ratio_one_pass_to_groupby"] for r in rows),
        "max_ratio_peak_to_input": max(r["ratio_peak_to_input"] for r in rows),
        "elapsed_seconds": round(run.elapsed(), 1),
    }
    path = write_results(run, result, suffix="_quick" if args.quick else "")
    print(f"largest ratio to the groupby: x{result['max_ratio_one_pass_to_groupby']:.2f}; "
          f"largest peak / input: x{result['max_ratio_peak_to_input']:.2f}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
