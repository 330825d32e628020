"""Write ``doc/user_guide/faith_scale_figures.inc`` from ``benchmarks/results/faith_scale.json``.

The user guide's "continuous features at scale" section quotes the benchmark only through this
file, so that every figure there is one of the committed results. Rerun after the benchmark::

    python benchmarks/bench_faith_scale.py
    python doc/make_faith_scale_figures.py

The test suite checks that the committed file is what this script writes.
"""

from __future__ import annotations

import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "faith_scale.json"
OUTPUT = ROOT / "doc" / "user_guide" / "faith_scale_figures.inc"

HEADER = [
    ".. list-table::",
    "   :header-rows: 1",
    "",
    "   * - audit rows n",
    "     - cells K",
    "     - nearest-neighbour: audit",
    "     - peak memory",
    "     - bootstrap per replicate",
    "     - dense: audit",
    "     - peak memory",
]


def _seconds(x):
    return f"{x:.2f} s" if x < 10 else f"{x:.0f} s"


def _mib(x):
    return f"{x / 1024:.2f} GiB" if x >= 1024 else f"{x:.0f} MiB"


def _bytes(x):
    return f"{x / 2**30:,.0f} GiB" if x >= 2**30 else f"{x / 2**20:,.0f} MiB"


def _load(values):
    return ", ".join(f"{v:.1f}" for v in values)


def _verdict(check):
    return (f"targets {check['target_seconds']:g} s and {check['target_peak_rss_gib']:g} GiB: "
            f"{'met' if check['holds'] else 'NOT met'}")


def _table(rows):
    """The list-table of one loss: a row per n, both paths side by side."""
    lines = list(HEADER)
    for n in sorted(rows):
        near, dense = rows[n].get("nearest", {}), rows[n].get("dense", {})
        if "audit_seconds" in dense:
            dense_time = (f"{_seconds(dense['audit_seconds'])} "
                          f"({dense['time_ratio_dense_to_nearest']:.0f}x)")
            dense_memory = (f"{_mib(dense['peak_rss_mib'])} "
                            f"({dense['memory_ratio_dense_to_nearest']:.1f}x)")
        else:
            dense_time, dense_memory = "does not fit", f"needs {_bytes(dense['estimated_bytes'])}"
        ran = "audit_seconds" in near
        lines += [
            f"   * - {n:,}",
            f"     - {near.get('n_cells', 4 * n):,}",
            f"     - {_seconds(near['audit_seconds'])}" if ran else "     - failed",
            f"     - {_mib(near['peak_rss_mib'])}" if ran else "     -",
            f"     - {1e3 * near['bootstrap_seconds_per_replicate']:.2f} ms" if ran else "     -",
            f"     - {dense_time}",
            f"     - {dense_memory}",
        ]
    return lines


def render(results=None):
    results = json.loads(RESULTS.read_text(encoding="utf-8")) if results is None else results
    s, machine, checks = results["settings"], results["machine"], results["checks"]
    by_loss = {}
    for row in results["scaling"]:
        by_loss.setdefault(row.get("loss", "zero_one"), {}).setdefault(row["n"], {})[
            row["path"]] = row
    lines = [
        ".. This file is written by doc/make_faith_scale_figures.py from",
        "   benchmarks/results/faith_scale.json; do not edit it by hand.",
        "",
        f"``bench_faith_scale.py`` (run {results['started'][:10]}, {machine['cpu_count']} "
        f"cores, load average {_load(machine['load_average_start'])} at the start and "
        f"{_load(machine['load_average_end'])} at the end: the machine was shared, so absolute "
        "times are upper bounds; the ratios between the two paths come from the same run). "
        f"Synthetic audits: {s['synthetic']}; 0-1 loss, default metric, ε = {s['epsilon']:g}, "
        f"{s['method']} bootstrap with B = {s['n_resamples']:,}. Each configuration ran in a "
        "fresh process; peak memory is its peak resident set size (imports included); the "
        "ratios in brackets are dense over nearest-neighbour.",
        "",
        *_table(by_loss["zero_one"]),
    ]
    if "log_loss" in by_loss:
        lines += ["", "The same with ``loss=\"log_loss\"`` (as many loss values as cells, "
                      "searched through the level tree):", "", *_table(by_loss["log_loss"])]
    differences = [r["statistic_difference"] for r in results["scaling"]
                   if "statistic_difference" in r]
    if differences:
        lines += ["", "Where both paths ran, their statistics differ by at most "
                      f"{max(differences):.1e}."]
    adult = results["adult"]
    if "audit_seconds" in adult:
        lines += [
            "",
            f"**UCI Adult**: the {adult['n']:,} complete rows audited, K = "
            f"{adult['n_cells']:,} cells (every distinct row in the 10 sex x race combinations,"
            f" two labels), model and {adult['metric']} fitted on the {adult['n_train']:,} rows"
            f" of the training file: audit {_seconds(adult['audit_seconds'])} (of which "
            f"{_seconds(adult['value_seconds'])} without the bootstrap; "
            f"{1e3 * adult['bootstrap_seconds_per_replicate']:.2f} ms per replicate), fit "
            f"{_seconds(adult['fit_seconds'])}, peak memory {_mib(adult['peak_rss_mib'])} "
            f"({_verdict(checks['adult'])}).",
        ]
    if checks.get("million"):
        million = checks["million"]
        cells = by_loss["zero_one"][1_000_000]["nearest"]["n_cells"]
        lines += [
            "",
            f"**10⁶ rows** (K = {cells:,} cells): audit {_seconds(million['seconds'])}, peak "
            f"memory {million['peak_rss_gib']:.2f} GiB ({_verdict(million)}).",
        ]
    cli = results["cli"]
    if "seconds" in cli:
        lines += [
            "",
            f"**Command line**: ``skfair-audit faith --space empirical`` on a {cli['n']:,}-row "
            f"CSV audit trail with continuous columns (K = {cli['n_cells']:,} cells, B = "
            f"{s['n_resamples']:,}): {_seconds(cli['seconds'])} from start to exit, reading "
            f"the files included, peak memory {_mib(cli['peak_rss_mib'])} "
            f"({_verdict(checks['cli'])}).",
        ]
    return "\n".join(lines) + "\n"


def main():
    OUTPUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
