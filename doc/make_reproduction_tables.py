"""Write the documentation's result fragments from the committed ``benchmarks/results``.

``doc/reproduction_tables.rst`` (the reproduction page), ``doc/fair_metric_failure.rst``,
``doc/fair_metric_results.rst`` (the "Choosing a fair metric" page),
``doc/faith_continuous_validity.rst`` and the fragments ``doc/user_guide/*.inc`` that the user
guide includes quote numbers only through this script, so that every number and every sentence
of conclusion on them is computed from a results file written by a benchmark script. Run it
after rerunning a benchmark::

    python doc/make_reproduction_tables.py

The test suite checks that the committed fragments are what this script writes.

This file is only the driver: each benchmark's renderer is a module ``doc/_render_<name>.py``
beside it, whose docstring documents the JSON shape it reads, built from the helpers of
``doc/_render_common.py`` (``load``, ``table``, ``pct``, ``GENERATED``, ...). A new benchmark
plugs in with one import below and one entry in :func:`render_all` (a fragment of the user
guide) or in :func:`reproduction_page` (a section of the reproduction page).
"""

from __future__ import annotations

import _render_conformal_coverage
import _render_engine
import _render_fair_metric_compas
import _render_faith_budget
import _render_faith_compas_table
import _render_faith_continuous_validity
import _render_faith_reference_speed
import _render_faith_scale
import _render_faith_solver
import _render_faith_validity
import _render_group_compas
import _render_group_validity
import _render_model_selection_compas
import _render_monitor
import _render_peers
import _render_progress
import _render_ratios
import _render_rkhs_table4
import _render_selector
import _render_tilts
from _render_common import GENERATED, GUIDE, ROOT

OUTPUT = ROOT / "doc" / "reproduction_tables.rst"


def reproduction_page():
    """``doc/reproduction_tables.rst``: one section per benchmark, in this order."""
    parts = [
        GENERATED,
        _render_faith_compas_table.faith_table1(),
        _render_faith_validity.faith_validity(),
        _render_model_selection_compas.model_selection(),
        _render_group_compas.group_compas(),
        _render_conformal_coverage.conformal_and_rkhs(),
        _render_tilts.conformal_tilts_figure(),
        _render_rkhs_table4.rkhs_table4(),
        _render_tilts.tilt_validity(),
        _render_tilts.tilt_speed(),
        _render_group_validity.group_validity(),
        _render_group_validity.group_validity_small_groups(),
        _render_peers.peers(),
        _render_engine.engine_at_scale(),
    ]
    return "\n".join(parts)


def render_all():
    """Every page and fragment this script writes, by path: the test suite checks each."""
    return {
        OUTPUT: reproduction_page(),
        **_render_fair_metric_compas.render_fair_metric(),
        GUIDE / "model_selection_results.inc":
            GENERATED + "\n" + _render_model_selection_compas.model_selection_guide(),
        GUIDE / "group_compas_results.inc":
            GENERATED + "\n" + _render_group_compas.group_compas_guide(),
        GUIDE / "faith_solver_results.inc":
            GENERATED + "\n" + _render_faith_solver.faith_solver_guide(),
        GUIDE / "faith_scale_figures.inc":
            GENERATED + "\n" + _render_faith_scale.faith_scale_guide(),
        GUIDE / "faith_budget_results.inc":
            GENERATED + "\n" + _render_faith_budget.faith_budget_guide(),
        GUIDE / "faith_reference_speed.inc":
            GENERATED + "\n" + _render_faith_reference_speed.faith_reference_speed_guide(),
        GUIDE / "tilt_results.inc": _render_tilts.tilt_results(),
        GUIDE / "monitoring_results.inc": GENERATED + "\n" + _render_monitor.monitoring_guide(),
        GUIDE / "progress_results.inc": GENERATED + "\n" + _render_progress.progress_guide(),
        _render_faith_continuous_validity.FAITH_CONTINUOUS:
            GENERATED + "\n" + _render_faith_continuous_validity.faith_continuous_validity(),
        **_render_selector.render_selector(),
        **_render_ratios.render_ratios(),
    }


def main():
    for path, text in render_all().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
