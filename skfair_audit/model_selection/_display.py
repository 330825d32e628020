"""What a fitted :class:`FairModelSelector` tells a reader: its guarantee, its decision and
its table of candidates, in words (shared by the report's section and the notebook display).
"""

from __future__ import annotations

import numpy as np

from .._utils import (
    CARD_ROWS,
    card_figure,
    format_value,
    html_card,
    html_guarantee,
    html_table,
    html_verdict,
)

#: Columns of :func:`selection_table`.
SELECTION_COLUMNS = ("candidate", "validation error", "FaiTH ψ̂", "lower bound", "passes",
                     "non-zero coef.", "chosen")


def params_text(params):
    """``"C=0.01, penalty=l1"``: a candidate's parameters, without Pipeline prefixes."""
    return ", ".join(f"{k.split('__')[-1]}={format_value(v)}" for k, v in params.items())


def selection_guarantee(selector):
    """The guarantee of the δ-fair choice of a fitted selector, in plain words."""
    level = selector.fold_confidence_level_
    return (
        f"Each candidate is audited on validation data; it passes when its one-sided "
        f"{level:.0%} FaiTH lower bound is below δ = {selector.delta:g}. A candidate that is "
        f"in fact δ-fair is wrongly discarded with probability at most "
        f"{(1 - level) * selector.n_splits_:.0%}; the chosen model is the most accurate of "
        "those that pass."
    )


def selection_verdict(selector):
    """``(passed, sentence)``: whether some candidate passed, and the choice in words."""
    results = selector.cv_results_
    best = selector.best_index_
    chosen = params_text(results["params"][best])
    if results["passes"][best]:
        return True, (
            f"{int(np.sum(results['passes']))} of {len(results['params'])} candidates pass; "
            f"chosen: {chosen} (validation error {format_value(results['mean_test_error'][best])}"
            f", FaiTH statistic {format_value(results['mean_test_statistic'][best])})."
        )
    return False, f"No candidate passes the δ-test; the fairest one was kept: {chosen}."


def selection_key_figures(selector):
    """δ, candidates, passing, chosen and folds of a fitted selector."""
    results = selector.cv_results_
    return {"δ": selector.delta, "candidates": len(results["params"]),
            "passing": int(np.sum(results["passes"])),
            "chosen": params_text(results["params"][selector.best_index_]),
            "folds": selector.n_splits_}


def selection_table(selector):
    """One row per candidate, in grid order (columns :data:`SELECTION_COLUMNS`)."""
    results = selector.cv_results_
    best = selector.best_index_
    return tuple(
        (params_text(p), results["mean_test_error"][k], results["mean_test_statistic"][k],
         results["lower_bound"][k], bool(results["passes"][k]),
         results["n_nonzero_coef"][k], k == best)
        for k, p in enumerate(results["params"])
    )


def selection_card(selector):
    """The notebook display of a fitted selector's choice (HTML)."""
    from ._plot import plot_tradeoff

    passed, sentence = selection_verdict(selector)
    rows = selection_table(selector)
    errors = np.asarray(selector.cv_results_["mean_test_error"], dtype=float)
    # the chosen model first, then the candidates that pass by validation error, then the rest
    order = sorted(range(len(rows)), key=lambda k: (not rows[k][6], not rows[k][4], errors[k]))
    shown = [rows[k] for k in order[:CARD_ROWS]]
    return html_card(
        "FairModelSelector: δ-fair model selection",
        verdict=html_verdict("a candidate passes the δ-test" if passed else
                             "no candidate passes the δ-test", sentence, unfair=not passed),
        guarantee=html_guarantee(selection_guarantee(selector)),
        key_figures=selection_key_figures(selector),
        tables=[html_table("Candidates: the chosen one, then those that pass by validation "
                           "error", SELECTION_COLUMNS, shown, total=len(rows), highlight={0})],
        figures=[card_figure("selection-tradeoff", "Validation error, FaiTH statistic and its "
                             "lower bound along the path, with δ and the chosen model",
                             lambda: plot_tradeoff(selector))],
    )
