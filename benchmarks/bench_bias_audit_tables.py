"""Local Law 144 bias-audit tables on COMPAS and Adult (the user guide's tables).

Usage::

    SKFAIR_AUDIT_DATA=<data home> python benchmarks/bench_bias_audit_tables.py

:func:`skfair_audit.group.bias_audit_table` (sex, race and their intersection; categories
under 2% listed but excluded; 95% simultaneous intervals; B = 2,000; seed 0) on

* COMPAS (ProPublica filter, 6,172 rows), selection mode: "selected" = predicted high risk
  (``decile_score >= 5``); scoring mode: the decile score (share above the sample median);
* Adult (48,842 rows), selection mode: the rule ``education-num >= 13`` (no model ships with
  Adult; a bachelor's degree or more) and scoring mode on ``education-num``.

Writes ``benchmarks/results/bias_audit_tables.json`` (every table row, the guarantee and the
verdict).
"""

from __future__ import annotations

import json
import pathlib
import warnings

OUT = pathlib.Path(__file__).resolve().parent / "results" / "bias_audit_tables.json"
RESAMPLES = 2000


def audits():
    from skfair_audit.datasets import fetch_adult, fetch_compas

    compas = fetch_compas(as_frame=True).frame
    adult = fetch_adult(as_frame=True).frame
    return [
        ("compas", "selection", "predicted high risk (decile_score >= 5)",
         (compas["decile_score"] >= 5).astype(int).to_numpy(), compas[["sex", "race"]]),
        ("compas", "scoring", "COMPAS decile score",
         compas["decile_score"].to_numpy(dtype=float), compas[["sex", "race"]]),
        ("adult", "selection", "rule education-num >= 13",
         (adult["education-num"] >= 13).astype(int).to_numpy(), adult[["sex", "race"]]),
        ("adult", "scoring", "education-num as the score",
         adult["education-num"].to_numpy(dtype=float), adult[["sex", "race"]]),
    ]


def main():
    from skfair_audit._utils import json_safe
    from skfair_audit.group import bias_audit_table

    tables = []
    for dataset, mode, tool, outcomes, sensitive in audits():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = bias_audit_table(outcomes, sensitive.astype(str), mode=mode,
                                   n_resamples=RESAMPLES, random_state=0)
        verdict = res.verdict()
        tables.append({"dataset": dataset, "mode": mode, "tool": tool, "rows": res.n,
                       "median": res.median, "alpha": res.alpha,
                       "threshold": res.threshold, "min_share": res.min_share,
                       "resamples": RESAMPLES, "verdict": verdict.summary,
                       "details": verdict.details, "guarantee": res.guarantee(),
                       "columns": list(res.table().columns),
                       "table": [list(r) for r in res.table().rows]})
        print(dataset, mode, verdict.summary)
    payload = json_safe({"benchmark": "bench_bias_audit_tables.py", "tables": tables})
    OUT.write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
