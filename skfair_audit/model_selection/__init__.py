"""δ-fair model selection with the FaiTH audit (Xue, Yurochkin & Sun 2020, §5.2).

:class:`FairModelSelector` fits candidates (by default an ℓ1 logistic-regression path), audits
each on validation data, and keeps the most accurate model whose FaiTH lower confidence bound is
below δ. The scorers and :func:`delta_fair_refit` make the same choice inside
:class:`~sklearn.model_selection.GridSearchCV`; :func:`plot_tradeoff` and
:func:`plot_coefficient_path` draw the paper's Figures 3 and 4.
"""

from ._display import (
    SELECTION_COLUMNS,
    params_text,
    selection_guarantee,
    selection_key_figures,
    selection_table,
    selection_verdict,
)
from ._logistic import L1_RATIO_SPELLING, default_c_path, l1_logistic_regression
from ._plot import plot_coefficient_path, plot_tradeoff
from ._scorers import (
    NoFairCandidateError,
    NoFairCandidateWarning,
    delta_fair_refit,
    fair_choice,
    make_error_scorer,
    make_faith_bound_scorer,
)
from ._selector import CoefficientPath, FairModelSelector, coefficient_path

__all__ = [
    "CoefficientPath",
    "FairModelSelector",
    "NoFairCandidateError",
    "NoFairCandidateWarning",
    "coefficient_path",
    "default_c_path",
    "delta_fair_refit",
    "l1_logistic_regression",
    "make_error_scorer",
    "make_faith_bound_scorer",
    "plot_coefficient_path",
    "plot_tradeoff",
]
