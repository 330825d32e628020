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
from ._criteria import FaithCriterion

#: Columns of :func:`selection_table`.
SELECTION_COLUMNS = ("candidate", "validation error", "FaiTH ψ̂", "lower bound", "passes",
                     "non-zero coef.", "chosen")


def params_text(params):
    """``"C=0.01, penalty=l1"``: a candidate's parameters, without Pipeline prefixes."""
    return ", ".join(f"{k.split('__')[-1]}={format_value(v)}" for k, v in params.items())


def selection_columns(selector):
    """Columns of :func:`selection_table` for the selector's criterion."""
    criterion = selector.criterion_
    if isinstance(criterion, FaithCriterion):
        return SELECTION_COLUMNS
    bound = criterion.decision_bound.replace("_", " ")
    return ("candidate", "validation error", f"{criterion.label} (estimate)", bound,
            "passes", "non-zero coef.", "chosen")


def selection_guarantee(selector):
    """The guarantee of the fair choice of a fitted selector, in plain words."""
    return selector.criterion_.guarantee(selector.fold_confidence_level_, selector.n_splits_)


def selection_verdict(selector):
    """``(passed, sentence)``: whether some candidate passed, and the choice in words."""
    results = selector.cv_results_
    best = selector.best_index_
    chosen = params_text(results["params"][best])
    if results["passes"][best]:
        return True, (
            f"{int(np.sum(results['passes']))} of {len(results['params'])} candidates pass; "
            f"chosen: {chosen} (validation error {format_value(results['mean_test_error'][best])}"
            f", {selector.criterion_.label} {format_value(results['mean_test_statistic'][best])})."
        )
    return False, (f"No candidate passes the {_test_name(selector)}; the fairest one was "
                   f"kept: {chosen}.")


def tradeoff_caption(selector):
    """What :func:`plot_tradeoff` draws for this selector, in words."""
    if isinstance(selector.criterion_, FaithCriterion):
        return ("Validation error, FaiTH statistic and its lower bound along the path, with δ "
                "and the chosen model")
    return (f"Validation error, {selector.criterion_.label} and its bound along the path, "
            "with the threshold and the chosen model")


def _test_name(selector):
    return "δ-test" if isinstance(selector.criterion_, FaithCriterion) else "fairness criterion"


def selection_key_figures(selector):
    """δ, candidates, passing, chosen and folds of a fitted selector."""
    results = selector.cv_results_
    criterion = selector.criterion_
    return {criterion.threshold_name: criterion.threshold,
            "candidates": len(results["params"]),
            "passing": int(np.sum(results["passes"])),
            "chosen": params_text(results["params"][selector.best_index_]),
            "folds": selector.n_splits_}


def selection_table(selector):
    """One row per candidate, in grid order (columns :func:`selection_columns`)."""
    results = selector.cv_results_
    best = selector.best_index_
    return tuple(
        (params_text(p), results["mean_test_error"][k], results["mean_test_statistic"][k],
         results[selector.criterion_.decision_bound][k], bool(results["passes"][k]),
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
    test = _test_name(selector)
    faith = test == "δ-test"
    return html_card(
        "FairModelSelector: " + ("δ-fair model selection" if faith else
                                 "fairness-constrained model selection"),
        verdict=html_verdict(f"a candidate passes the {test}" if passed else
                             f"no candidate passes the {test}", sentence, unfair=not passed),
        guarantee=html_guarantee(selection_guarantee(selector)),
        key_figures=selection_key_figures(selector),
        tables=[html_table("Candidates: the chosen one, then those that pass by validation "
                           "error", selection_columns(selector), shown, total=len(rows),
                           highlight={0})],
        figures=[card_figure("selection-tradeoff", tradeoff_caption(selector),
                             lambda: plot_tradeoff(selector))],
    )
