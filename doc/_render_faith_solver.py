"""``bench_faith_solver.py`` → ``doc/user_guide/faith_solver_results.inc``.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import load

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "faith_solver.json": {
        "compas_like": "object",
        "compas_like.highs_seconds_per_replicate": "float",
        "compas_like.max_abs_difference_on_subset": "float",
        "compas_like.n_cells": "int",
        "compas_like.n_replicates": "int",
        "compas_like.ours_seconds_all_replicates": "float",
    },
}


def faith_solver_guide():
    """The exact solver's timing quoted by the individual-fairness user guide."""
    solver = load("faith_solver.json")["compas_like"]
    return (
        "The committed benchmark ``benchmarks/results/faith_solver.json`` records, on a "
        f"COMPAS-like grid of {solver['n_cells']} cells, {solver['n_replicates']:,} replicates "
        f"in {1000 * solver['ours_seconds_all_replicates']:.1f} ms against "
        f"{1000 * solver['highs_seconds_per_replicate']:.0f} ms for *one* replicate with "
        "``scipy.optimize.linprog(method=\"highs\")``, with a largest difference of the "
        f"values of {solver['max_abs_difference_on_subset']:.1e}.\n"
    )

