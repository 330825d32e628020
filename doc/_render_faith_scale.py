"""``bench_faith_scale.py`` → ``doc/user_guide/faith_scale_figures.inc`` (and the table helpers
of the reference-speed fragment).

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import load

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "faith_scale.json": {
        "adult": "object",
        "adult.audit_seconds": "float",
        "adult.bootstrap_seconds_per_replicate": "float",
        "adult.fit_seconds": "float",
        "adult.metric": "str",
        "adult.n": "int",
        "adult.n_cells": "int",
        "adult.n_train": "int",
        "adult.peak_rss_mib": "float",
        "adult.value_seconds": "float",
        "checks": "object",
        "checks.adult": "object",
        "checks.adult.holds": "bool",
        "checks.adult.target_peak_rss_gib": "float",
        "checks.adult.target_seconds": "float",
        "checks.cli": "object",
        "checks.cli.holds": "bool",
        "checks.cli.target_peak_rss_gib": "float",
        "checks.cli.target_seconds": "float",
        "checks.million": "object",
        "checks.million.holds": "bool",
        "checks.million.peak_rss_gib": "float",
        "checks.million.seconds": "float",
        "checks.million.target_peak_rss_gib": "float",
        "checks.million.target_seconds": "float",
        "cli": "object",
        "cli.n": "int",
        "cli.n_cells": "int",
        "cli.peak_rss_mib": "float",
        "cli.seconds": "float",
        "date": "str",
        "machine": "object",
        "machine.cpus": "int",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "scaling": "list",
        "scaling[].audit_seconds": "float",
        "scaling[].bootstrap_seconds_per_replicate": "float",
        "scaling[].estimated_bytes": "int",
        "scaling[].loss": "str",
        "scaling[].memory_ratio_dense_to_nearest": "float",
        "scaling[].n": "int",
        "scaling[].n_cells": "int",
        "scaling[].path": "str",
        "scaling[].peak_rss_mib": "float",
        "scaling[].statistic_difference": "float",
        "scaling[].time_ratio_dense_to_nearest": "float",
        "settings": "object",
        "settings.epsilon": "float",
        "settings.method": "str",
        "settings.n_resamples": "int",
        "settings.synthetic": "str",
    },
}


# --------------------------------------------------------------------------- FaiTH at scale
_SCALE_HEADER = [
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


def _scale_seconds(x):
    return f"{x:.2f} s" if x < 10 else f"{x:.0f} s"


def _scale_mib(x):
    return f"{x / 1024:.2f} GiB" if x >= 1024 else f"{x:.0f} MiB"


def _scale_bytes(x):
    return f"{x / 2**30:,.0f} GiB" if x >= 2**30 else f"{x / 2**20:,.0f} MiB"


def _scale_load(values):
    return ", ".join(f"{v:.1f}" for v in values)


def _scale_verdict(check):
    return (f"targets {check['target_seconds']:g} s and {check['target_peak_rss_gib']:g} GiB: "
            f"{'met' if check['holds'] else 'NOT met'}")


def _scale_table(rows):
    """The list-table of one loss: a row per n, both paths side by side."""
    lines = list(_SCALE_HEADER)
    for n in sorted(rows):
        near, dense = rows[n].get("nearest", {}), rows[n].get("dense", {})
        if "audit_seconds" in dense:
            dense_time = (f"{_scale_seconds(dense['audit_seconds'])} "
                          f"({dense['time_ratio_dense_to_nearest']:.0f}x)")
            dense_memory = (f"{_scale_mib(dense['peak_rss_mib'])} "
                            f"({dense['memory_ratio_dense_to_nearest']:.1f}x)")
        else:
            dense_time = "does not fit"
            dense_memory = f"needs {_scale_bytes(dense['estimated_bytes'])}"
        ran = "audit_seconds" in near
        lines += [
            f"   * - {n:,}",
            f"     - {near.get('n_cells', 4 * n):,}",
            f"     - {_scale_seconds(near['audit_seconds'])}" if ran else "     - failed",
            f"     - {_scale_mib(near['peak_rss_mib'])}" if ran else "     -",
            f"     - {1e3 * near['bootstrap_seconds_per_replicate']:.2f} ms" if ran else "     -",
            f"     - {dense_time}",
            f"     - {dense_memory}",
        ]
    return lines


def faith_scale_guide(results=None):
    """The user guide's \"continuous features at scale\" figures (``faith_scale.json``)."""
    results = load("faith_scale.json") if results is None else results
    s, machine, checks = results["settings"], results["machine"], results["checks"]
    by_loss = {}
    for row in results["scaling"]:
        by_loss.setdefault(row.get("loss", "zero_one"), {}).setdefault(row["n"], {})[
            row["path"]] = row
    lines = [
        f"``bench_faith_scale.py`` (run {results['date'][:10]}, {machine['cpus']} "
        f"cores, load average {_scale_load(machine['load_average_start'])} at the start and "
        f"{_scale_load(machine['load_average_end'])} at the end: the machine was shared, so "
        "absolute times are upper bounds; the ratios between the two paths come from the same "
        "run). "
        f"Synthetic audits: {s['synthetic']}; 0-1 loss, default metric, ε = {s['epsilon']:g}, "
        f"``method=\"{s['method']}\"`` with B = {s['n_resamples']:,} bootstrap replicates. Each "
        "configuration ran in a "
        "fresh process; peak memory is its peak resident set size (imports included); the "
        "ratios in brackets are dense over nearest-neighbour.",
        "",
        *_scale_table(by_loss["zero_one"]),
    ]
    if "log_loss" in by_loss:
        lines += ["", "The same with ``loss=\"log_loss\"`` (as many loss values as cells, "
                      "searched through the level tree):", "", *_scale_table(by_loss["log_loss"])]
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
            f" of the training file: audit {_scale_seconds(adult['audit_seconds'])} (of which "
            f"{_scale_seconds(adult['value_seconds'])} without the bootstrap; "
            f"{1e3 * adult['bootstrap_seconds_per_replicate']:.2f} ms per replicate), fit "
            f"{_scale_seconds(adult['fit_seconds'])}, peak memory "
            f"{_scale_mib(adult['peak_rss_mib'])} "
            f"({_scale_verdict(checks['adult'])}).",
        ]
    if checks.get("million"):
        million = checks["million"]
        cells = by_loss["zero_one"][1_000_000]["nearest"]["n_cells"]
        lines += [
            "",
            f"**10⁶ rows** (K = {cells:,} cells): audit {_scale_seconds(million['seconds'])}, peak "
            f"memory {million['peak_rss_gib']:.2f} GiB ({_scale_verdict(million)}).",
        ]
    cli = results["cli"]
    if "seconds" in cli:
        lines += [
            "",
            f"**Command line**: ``skfair-audit faith --space empirical`` on a {cli['n']:,}-row "
            f"CSV audit trail with continuous columns (K = {cli['n_cells']:,} cells, B = "
            f"{s['n_resamples']:,}): {_scale_seconds(cli['seconds'])} from start to exit, reading "
            f"the files included, peak memory {_scale_mib(cli['peak_rss_mib'])} "
            f"({_scale_verdict(checks['cli'])}).",
        ]
    return "\n".join(lines) + "\n"

