"""Ratio and difference point values against fairlearn and AIF360 on COMPAS and Adult.

Run with an interpreter where fairlearn and AIF360 are installed (they are not dependencies
of skfair_audit), e.g.::

    python -m venv --system-site-packages peers-env
    peers-env/bin/pip install fairlearn aif360
    SKFAIR_AUDIT_DATA=<data home> PYTHONPATH=. peers-env/bin/python \\
        benchmarks/bench_group_ratio_peers.py

Writes ``benchmarks/results/group_ratio_peers.json``: for every quantity, the peer's value,
ours and their absolute difference. ``tests/group/test_ratios.py`` checks the differences
(≤ 1e-12) and that our values are still the ones recorded.

Models audited: COMPAS's "high risk" rule (``decile_score >= 5``) against
``two_year_recid``; on Adult (no model ships with it) the rule ``education-num >= 13``
(a bachelor's degree or more) against ``income > 50K``.
"""

from __future__ import annotations

import json
import pathlib
import platform
import warnings

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "group_ratio_peers.json"


def datasets():
    """``{name: (y, y_pred, race, sex)}`` of the two audits."""
    from skfair_audit.datasets import fetch_adult, fetch_compas

    compas = fetch_compas(as_frame=True).frame
    adult = fetch_adult(as_frame=True).frame
    return {
        "compas": (compas["two_year_recid"].to_numpy().astype(int),
                   (compas["decile_score"] >= 5).to_numpy().astype(int),
                   compas["race"].astype(str).to_numpy(), compas["sex"].astype(str).to_numpy()),
        "adult": ((adult["income"].astype(str) == ">50K").to_numpy().astype(int),
                  (adult["education-num"] >= 13).to_numpy().astype(int),
                  adult["race"].astype(str).to_numpy(), adult["sex"].astype(str).to_numpy()),
    }


#: AIF360 comparisons: (attribute, privileged level, unprivileged level or None for all).
AIF360_PAIRS = {
    "compas": [("sex", "Female", "Male"), ("race", "Caucasian", "African-American")],
    "adult": [("sex", "Male", "Female"), ("race", "White", "Black")],
}


def ours(y, y_pred, race, sex):
    """Our point values (the bootstrap does not change them: few resamples)."""
    from skfair_audit.group import disparity_summaries, ratio_bounds

    cells = np.char.add(np.char.add(race.astype(str), " & "), sex.astype(str))
    out = {}
    summ = disparity_summaries(y, y_pred, {"cell": cells}, n_resamples=50, random_state=0)
    for name in ("demographic_parity_difference", "demographic_parity_ratio",
                 "equalized_odds_difference", "equalized_odds_ratio"):
        out[name] = summ.value(name)
    for denominator in ("max", "overall"):
        res = ratio_bounds(y, y_pred, {"cell": cells}, denominator=denominator,
                           n_resamples=50, random_state=0)
        for name, r in zip(res.names, res.ratios, strict=True):
            out[f"ratio_{denominator}[{name.split('=', 1)[1]}]"] = float(r)
    return out


def ours_reference(y_pred, attribute, privileged, unprivileged):
    from skfair_audit.group import ratio_bounds

    keep = np.isin(attribute, [privileged, unprivileged])
    res = ratio_bounds(y_pred[keep], y_pred[keep], {"a": attribute[keep]},
                       denominator=f"a={privileged}", n_resamples=50, random_state=0)
    j = res.names.index(f"a={unprivileged}")
    return float(res.ratios[j]), float(res.group_values[j] - res.denominators[j])


def peers(y, y_pred, race, sex):
    import pandas as pd
    from fairlearn.metrics import (
        MetricFrame,
        demographic_parity_difference,
        demographic_parity_ratio,
        equalized_odds_difference,
        equalized_odds_ratio,
        selection_rate,
    )

    sf = pd.DataFrame({"race": race, "sex": sex})
    out = {
        "demographic_parity_difference": demographic_parity_difference(
            y, y_pred, sensitive_features=sf),
        "demographic_parity_ratio": demographic_parity_ratio(y, y_pred, sensitive_features=sf),
        "equalized_odds_difference": equalized_odds_difference(y, y_pred, sensitive_features=sf),
        "equalized_odds_ratio": equalized_odds_ratio(y, y_pred, sensitive_features=sf),
    }
    frame = MetricFrame(metrics=selection_rate, y_true=y, y_pred=y_pred, sensitive_features=sf)
    by_group = frame.by_group
    for (r, s), value in by_group.items():
        out[f"ratio_max[{r} & {s}]"] = value / by_group.max()
        out[f"ratio_overall[{r} & {s}]"] = value / frame.overall
    return {k: float(v) for k, v in out.items()}


def aif360_values(y, y_pred, attribute, privileged, unprivileged):
    from aif360.sklearn.metrics import disparate_impact_ratio, statistical_parity_difference

    keep = np.isin(attribute, [privileged, unprivileged])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        di = disparate_impact_ratio(y[keep], y_pred[keep], prot_attr=attribute[keep],
                                    priv_group=privileged)
        spd = statistical_parity_difference(y[keep], y_pred[keep], prot_attr=attribute[keep],
                                            priv_group=privileged)
    return float(di), float(spd)


def main():
    import aif360
    import fairlearn

    rows = []
    for name, (y, y_pred, race, sex) in datasets().items():
        ref = peers(y, y_pred, race, sex)
        mine = ours(y, y_pred, race, sex)
        for key in sorted(ref):
            rows.append({"dataset": name, "peer": "fairlearn", "quantity": key,
                         "peer_value": ref[key], "ours": mine[key],
                         "abs_diff": abs(ref[key] - mine[key])})
        attributes = {"race": race, "sex": sex}
        for attr, priv, unpriv in AIF360_PAIRS[name]:
            di, spd = aif360_values(y, y_pred, attributes[attr], priv, unpriv)
            r, d = ours_reference(y_pred, attributes[attr], priv, unpriv)
            for quantity, peer_value, our_value in (
                    (f"disparate_impact_ratio[{attr}: {unpriv} / {priv}]", di, r),
                    (f"statistical_parity_difference[{attr}: {unpriv} - {priv}]", spd, d)):
                rows.append({"dataset": name, "peer": "aif360", "quantity": quantity,
                             "peer_value": peer_value, "ours": our_value,
                             "abs_diff": abs(peer_value - our_value)})
    payload = {
        "benchmark": "bench_group_ratio_peers.py",
        "versions": {"fairlearn": fairlearn.__version__, "aif360": aif360.__version__,
                     "python": platform.python_version()},
        "max_abs_diff": max(r["abs_diff"] for r in rows),
        "rows": rows,
    }
    RESULTS.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"{len(rows)} values, largest difference {payload['max_abs_diff']:.3g}")


if __name__ == "__main__":
    main()
