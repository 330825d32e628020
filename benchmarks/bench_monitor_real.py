"""The fairness monitor on real data replayed as streams: COMPAS and UCI Adult.

Usage::

    SKFAIR_AUDIT_DATA=~/skfair_audit_data python benchmarks/bench_monitor_real.py [--seed 0]

* **COMPAS** (ProPublica filter, 6,172 rows) replayed in screening-date order (ties by id),
  looks after every 100 rows. The monitored model is the COMPAS rule "high risk" =
  ``decile_score >= 5``; metric: false positive rate (rows with ``two_year_recid = 0``);
  groups: all intersections of race x sex x age_cat; target: the overall FPR; flag groups at
  least 5 points above it (``epsilon0 = 0.05``, ``alternative="greater"``), at level 0.05
  (FWER, the default) and with e-BH at q = 0.1 (FDR).
* **UCI Adult** (48,842 rows): a logistic regression on the numeric features, trained on a
  random 30% (seed ``--seed``), predicts ``income > 50K`` for the other rows, replayed in a
  fixed random order (same seed), looks after every 500 rows; metric: selection rate; groups:
  all intersections of sex x race; target: the overall selection rate; flag
  ``|disparity| > 0.05`` (``alternative="two-sided"``), FWER at 0.05.

Writes ``benchmarks/results/monitor_real.json`` (final tables, first-flag rows, the rows at
each look) and the plots of the confidence sequences over time,
``monitor_real_compas.png`` and ``monitor_real_adult.png``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skfair_audit.datasets import fetch_adult, fetch_compas  # noqa: E402
from skfair_audit.monitor import FairnessMonitor  # noqa: E402

ADULT_NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def replay(monitor, frame, batch):
    """Fold ``frame`` into ``monitor`` in batches of ``batch`` rows; flags per look."""
    first_flag = {}
    for look, start in enumerate(range(0, len(frame), batch), start=1):
        monitor.partial_fit(frame.iloc[start:start + batch])
        res = monitor.result()
        for name, flagged in zip(res.names, res.flagged, strict=True):
            if flagged and name not in first_flag:
                first_flag[name] = {"look": look, "rows": int(min(start + batch, len(frame)))}
    return monitor.result(), first_flag


def summary(res, first_flag):
    keys = ("group", "size", "rate", "disparity", "low", "high", "flagged", "since",
            "certified", "pvalue")
    return {"looks": res.n_looks, "rows": res.n_rows, "target_value": res.target_value,
            "guarantee": res.guarantee(), "verdict": res.verdict_summary(),
            "flagged": [n for n, f in zip(res.names, res.flagged, strict=True) if f],
            "first_flag": first_flag,
            "table": [dict(zip(keys, row, strict=True)) for row in res.table().rows]}


def save_plot(res, path, title):
    fig, ax = plt.subplots(figsize=(8, 5.6), layout="constrained")
    res.plot(max_groups=8, ax=ax)
    ax.set_title(title, fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default="monitor_real")
    args = parser.parse_args(argv)
    run = Run(__file__, argv, packages=("matplotlib",))
    out = {"seed": args.seed}
    # COMPAS in screening-date order
    compas = fetch_compas(download_if_missing=False).frame
    compas = compas.sort_values(["screening_date", "id"], kind="stable").reset_index(drop=True)
    trail = compas[["race", "sex", "age_cat"]].assign(
        y=compas["two_year_recid"].to_numpy(),
        y_pred=(compas["decile_score"] >= 5).astype(int).to_numpy())
    out["compas"] = {"rows": len(trail), "batch": 100,
                     "first_date": str(compas["screening_date"].iloc[0]),
                     "last_date": str(compas["screening_date"].iloc[-1])}
    for procedure in ("fwer", "fdr"):
        mon = FairnessMonitor(["race", "sex", "age_cat"], metric="fpr", target="overall",
                              epsilon0=0.05, alternative="greater", procedure=procedure,
                              levels={c: sorted(trail[c].unique()) for c in
                                      ("race", "sex", "age_cat")})
        res, first = replay(mon, trail, 100)
        out["compas"][procedure] = summary(res, first)
        if procedure == "fwer":
            save_plot(res, run.path("_compas"),
                      "COMPAS 'high risk' rule, FPR disparity vs overall, screening-date order "
                      "(95% CSs)")
    # Adult in a fixed random order
    adult = fetch_adult(download_if_missing=False).frame
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(adult))
    n_train = int(0.3 * len(adult))
    train, stream = adult.iloc[order[:n_train]], adult.iloc[order[n_train:]]
    y_train = (train["income"] == ">50K").astype(int)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    model.fit(train[ADULT_NUMERIC], y_train)
    trail = stream[["sex", "race"]].assign(
        y=(stream["income"] == ">50K").astype(int).to_numpy(),
        y_pred=model.predict(stream[ADULT_NUMERIC])).reset_index(drop=True)
    mon = FairnessMonitor(["sex", "race"], metric="selection_rate", target="overall",
                          epsilon0=0.05, alternative="two-sided",
                          levels={c: sorted(trail[c].unique()) for c in ("sex", "race")})
    res, first = replay(mon, trail, 500)
    out["adult"] = {"rows": len(trail), "batch": 500, "train_rows": n_train,
                    "model": "StandardScaler + LogisticRegression on " + ", ".join(ADULT_NUMERIC),
                    "fwer": summary(res, first)}
    save_plot(res, run.path("_adult"),
              "UCI Adult, selection-rate disparity vs overall, random order (95% CSs)")
    write_results(run, out, name=args.output)
    print(json.dumps({k: (v if k == "seed" else {
        kk: (vv["verdict"] if isinstance(vv, dict) and "verdict" in vv else vv)
        for kk, vv in v.items()}) for k, v in out.items()}, indent=1,
        default=str))


if __name__ == "__main__":
    main()
