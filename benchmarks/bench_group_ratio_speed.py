"""Speed of the ratio audit against the difference audit, in the same run.

Usage::

    nice -n 10 python benchmarks/bench_group_ratio_speed.py [--rows 1000000] [--repeat 3]

10⁶ rows, 72 groups: every intersection of race (5 levels) x sex (2) x age (3) plus the
group of all rows; selection rate; B = 1,000 resamples, one thread. Timed, alternated, best
of ``repeat`` each, end to end from the rows (the one pass over the rows is shared by both
procedures and dominates):

* the difference audit :func:`skfair_audit.group.certify_bounds` (target: overall rate);
* the ratio audit :func:`skfair_audit.group.ratio_bounds` (``denominator="max"``: the
  impact ratio, the most selected group re-chosen in every replicate);

and, on the same :class:`~skfair_audit.group.AuditSummary`, the bootstrap part alone of each.
Writes ``benchmarks/results/group_ratio_speed.json`` with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import warnings

import numpy as np
from _common import best_time

OUT = pathlib.Path(__file__).resolve().parent / "results" / "group_ratio_speed.json"


def trail(rows, seed=0):
    rng = np.random.default_rng(seed)
    race = rng.choice(5, rows, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    sex = rng.choice(2, rows)
    age = rng.choice(3, rows, p=[0.2, 0.5, 0.3])
    rate = 0.3 + 0.05 * race - 0.04 * sex + 0.02 * age
    selected = (rng.random(rows) < rate).astype(np.int8)
    return selected, {"race": race, "sex": sex, "age": age}


def main(argv=None):
    from skfair_audit.group import (
        AuditSummary,
        certify_bounds,
        intersections,
        ratio_bounds,
        summary_ratio_bounds,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)
    selected, sensitive = trail(args.rows)
    groups = intersections(sensitive, include_all=True)
    common = dict(n_resamples=args.resamples, random_state=0)
    load_before = os.getloadavg()
    times = {"difference": np.inf, "ratio": np.inf, "difference_bootstrap": np.inf,
             "ratio_bootstrap": np.inf}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = AuditSummary.from_rows(selected, selected, groups, metric="selection_rate")
        for _ in range(args.repeat):  # alternated: both see the same load
            for key, fn in (
                ("difference", lambda: certify_bounds(selected, selected, groups,
                                                      metric="selection_rate", **common)),
                ("ratio", lambda: ratio_bounds(selected, selected, groups, **common)),
                ("difference_bootstrap", lambda: summary.certify_bounds(**common)),
                ("ratio_bootstrap", lambda: summary_ratio_bounds(summary, **common)),
            ):
                seconds, _ = best_time(fn, 1)
                times[key] = min(times[key], seconds)
    payload = {
        "benchmark": "bench_group_ratio_speed.py",
        "command": "python benchmarks/bench_group_ratio_speed.py " + " ".join(
            argv if argv is not None else sys.argv[1:]),
        "rows": args.rows, "groups": groups.n_groups, "resamples": args.resamples,
        "repeat": args.repeat, "seconds": times,
        "ratio_to_difference": times["ratio"] / times["difference"],
        "bootstrap_ratio_to_difference": times["ratio_bootstrap"] / times[
            "difference_bootstrap"],
        "load_average_before": list(load_before), "load_average_after": list(os.getloadavg()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    OUT.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: payload[k] for k in ("groups", "seconds", "ratio_to_difference",
                                              "bootstrap_ratio_to_difference",
                                              "load_average_before")}, indent=1))


if __name__ == "__main__":
    main()
