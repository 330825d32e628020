"""The accuracy–fairness trade-off and coefficient paths of a δ-fair model selection.

The FaiTH paper's Figures 3 and 4 (Xue, Yurochkin & Sun 2020, §5.2).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._utils import import_optional

__all__ = ["plot_coefficient_path", "plot_tradeoff"]


def _path_parameter(selector, param):
    """The varying numeric parameter on the x-axis, and its values per candidate."""
    params = selector.cv_results_["params"]
    if param is None:
        varying = [
            name
            for name in sorted({k for p in params for k in p})
            if len({repr(p.get(name)) for p in params}) > 1
        ]
        c_like = [name for name in varying if name == "C" or name.endswith("__C")]
        if c_like:
            param = c_like[0]
        elif len(varying) == 1:
            param = varying[0]
        else:
            raise ValueError(
                f"cannot tell which parameter to put on the x-axis (varying: {varying}); pass "
                "param=..."
            )
    try:
        values = np.array([p[param] for p in params], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"parameter {param!r} must be numeric in every candidate.") from exc
    return param, values


def _axes(ax):
    plt = import_optional("matplotlib.pyplot", "plotting")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    return ax


def plot_tradeoff(selector, *, param=None, log_x=True, ax=None):
    r"""Validation error, the criterion's statistic and bound along the path, with δ.

    The paper's Figure 3: strong penalties (small :math:`1/\lambda`) give a small FaiTH value
    but a large error; the candidates whose one-sided lower bound lies under the δ line pass
    the δ-fairness test; the selected model (vertical line) is the passing one with the lowest
    validation error. With another criterion (e.g. :class:`GroupDifferenceCriterion`), its
    statistic, its decision bound and its threshold are drawn instead.

    Parameters
    ----------
    selector : FairModelSelector
        Fitted.
    param : str, optional
        Parameter on the x-axis; by default the (Pipeline-prefixed) ``C``, or the only varying
        parameter.
    log_x : bool, default=True
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    check_is_fitted(selector, "cv_results_")
    ax = _axes(ax)
    name, x = _path_parameter(selector, param)
    order = np.argsort(x, kind="stable")
    results = selector.cv_results_
    x = x[order]
    ax.plot(x, results["mean_test_error"][order], "o-", color="C0", ms=3,
            label="validation error")
    criterion = selector.criterion_
    faith = criterion.label == "FaiTH ψ"
    bound = criterion.decision_bound
    level = f"{selector.fold_confidence_level_:.0%}"
    ax.plot(x, results["mean_test_statistic"][order], "s-", color="C1", ms=3,
            label="FaiTH statistic" if faith else f"{criterion.label} (estimate)")
    ax.plot(x, results[bound][order], "--", color="C1",
            label=f"FaiTH lower bound ({level} one-sided)" if faith else
            f"{bound.replace('_', ' ')} ({level} simultaneous)")
    ax.axhline(criterion.threshold, color="C2", ls=":",
               label=f"{criterion.threshold_name} = {criterion.threshold:g}")
    passes = results["passes"][order]
    if passes.any():
        ax.plot(x[passes], results[bound][order][passes], "|", color="C2", ms=10,
                label="passes the δ test" if faith else "passes the criterion")
    best = results["params"][selector.best_index_][name]
    ax.axvline(best, color="k", ls=":", lw=1, label=f"selected {name} = {best:.4g}")
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(f"{name} (= 1/λ)" if name.split("__")[-1] == "C" else name)
    ax.set_ylabel("rate")
    ax.legend(fontsize="small")
    ax.set_title("Accuracy–fairness trade-off along the path")
    return ax


def plot_coefficient_path(path, *, selected=None, param=None, log_x=True, ax=None):
    r"""Coefficient paths along the grid, with the selected model marked (the paper's Figure 4).

    Parameters
    ----------
    path : CoefficientPath
        From :func:`coefficient_path` (e.g. on ``selector.cv_results_["params"]``).
    selected : int, optional
        Index of the selected candidate (e.g. ``selector.best_index_``): a vertical line.
    param : str, optional
        Parameter on the x-axis (default: the varying ``C``).
    log_x : bool, default=True
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)

    class _Params:  # the minimal interface _path_parameter reads
        cv_results_ = {"params": path.params}

    name, x = _path_parameter(_Params, param)
    order = np.argsort(x, kind="stable")
    for j, feature in enumerate(path.feature_names):
        ax.plot(x[order], path.coef[order, j], "-", lw=1.5, label=feature)
    ax.axhline(0.0, color="0.6", lw=0.8)
    if selected is not None:
        ax.axvline(x[selected], color="k", ls=":", lw=1,
                   label=f"selected {name} = {x[selected]:.4g}")
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(f"{name} (= 1/λ)" if name.split("__")[-1] == "C" else name)
    ax.set_ylabel("coefficient")
    ax.legend(fontsize="x-small", ncol=2)
    ax.set_title("Coefficient paths")
    return ax
