"""Fair model selection: δ-fair with the FaiTH audit (Xue, Yurochkin & Sun 2020, §5.2), or
certified group-fair.

:class:`FairModelSelector` fits candidates (by default an ℓ1 logistic-regression path; any
classifier, fairlearn's mitigators through :class:`SensitiveFeaturesAdapter`), audits each on
validation data, and keeps the most accurate model that passes the criterion: FaiTH lower
confidence bound below δ (:class:`FaithCriterion`) or every group disparity certified within
±ε₀ (:class:`GroupDifferenceCriterion`). It runs
:class:`~sklearn.model_selection.GridSearchCV` with :func:`make_selection_scorer` and
:func:`fair_refit`; :func:`delta_fair_refit` with the FaiTH scorers make the same choice on a
single split; :func:`plot_tradeoff` and
:func:`plot_coefficient_path` draw the paper's Figures 3 and 4.
"""

from ._adapter import SensitiveFeaturesAdapter
from ._criteria import (
    FaithCriterion,
    GroupDifferenceCriterion,
    SelectionCriterion,
    delta_fair_refit,
    fair_refit,
    make_selection_scorer,
)
from ._display import (
    SELECTION_COLUMNS,
    params_text,
    selection_columns,
    selection_guarantee,
    selection_key_figures,
    selection_table,
    selection_verdict,
    tradeoff_caption,
)
from ._logistic import L1_RATIO_SPELLING, default_c_path, l1_logistic_regression
from ._plot import plot_coefficient_path, plot_tradeoff
from ._scorers import (
    NoFairCandidateError,
    NoFairCandidateWarning,
    fair_choice,
    make_error_scorer,
    make_faith_bound_scorer,
)
from ._selector import CoefficientPath, FairModelSelector, coefficient_path

__all__ = [
    "CoefficientPath",
    "FairModelSelector",
    "FaithCriterion",
    "GroupDifferenceCriterion",
    "NoFairCandidateError",
    "NoFairCandidateWarning",
    "SelectionCriterion",
    "SensitiveFeaturesAdapter",
    "coefficient_path",
    "default_c_path",
    "delta_fair_refit",
    "fair_refit",
    "l1_logistic_regression",
    "make_error_scorer",
    "make_faith_bound_scorer",
    "make_selection_scorer",
    "plot_coefficient_path",
    "plot_tradeoff",
]
