"""Per-row performance metrics of a group audit.

A metric turns an audit trail ``(y, y_pred)`` into a per-row value :math:`L_i` and a mask of
the rows that *count* (the conditioning event). Conditional metrics such as the false
positive rate are means of :math:`L` over the rows where the condition holds:

.. math::

    \\mathrm{FPR}(G) = E[L \\mid G, Y = \\text{neg}], \\qquad L = 1\\{\\hat Y = \\text{pos}\\}.

Every metric is an immutable :class:`Metric`; its parameters (``pos_label`` ...) are stored
as a tuple of pairs, so two metrics never share mutable state.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from .._utils import check_no_missing, encode_categories, sorted_levels, user_stacklevel


def as_array(values, name: str) -> np.ndarray:
    """Numpy view of a list / Series / DataFrame column (pandas never imported here)."""
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be array-like with one entry per row, got a scalar.")
    return arr


def _check_no_missing(arr: np.ndarray, name: str) -> None:
    check_no_missing(arr, name)


def _binary_pos_mask(arr: np.ndarray, pos_label, name: str, metric: str):
    """``(arr == pos_label, labels)`` after checking that ``arr`` has at most one other label.

    One pass of the shared encoder (hash or bincount, never a sort of the rows).
    """
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D for metric {metric!r}, got shape {arr.shape}.")
    codes, labels = encode_categories(arr, name)
    if pos_label is None:
        observed = set(labels)
        for candidate in ({0, 1}, {-1, 1}):
            if observed <= candidate:
                pos_label = 1
                break
        else:
            raise ValueError(
                f"metric {metric!r}: labels {sorted_levels(observed)} are not in {{0, 1}} or "
                "{-1, 1}; pass pos_label to say which label is positive."
            )
    hits = [k for k, label in enumerate(labels) if _equal(label, pos_label)]
    if not hits:
        return np.zeros(arr.shape[0], dtype=bool), labels, pos_label
    return codes == hits[0], labels, pos_label


def _equal(a, b):
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _check_binary_pair(y, y_pred, pos_label, metric: str):
    """Positive masks of ``y`` and ``y_pred`` with a shared negative label."""
    y_pos, y_labels, pos = _binary_pos_mask(y, pos_label, "y", metric)
    p_pos, p_labels, _ = _binary_pos_mask(y_pred, pos_label, "y_pred", metric)
    others = {v for v in (*y_labels, *p_labels) if not _equal(v, pos)}
    if len(others) > 1:
        shown = 1 if pos_label is None else pos_label
        raise ValueError(
            f"metric {metric!r} needs binary labels {{negative, positive={shown!r}}}; y and "
            f"y_pred hold several non-positive labels {sorted_levels(others)}."
        )
    return y_pos, p_pos


# --- binary classification metrics -------------------------------------------------------
# (condition, value) pairs in terms of the positive masks of y and y_pred.
_BINARY = {
    "false_positive_rate": ("y_neg", "pred_pos"),
    "true_negative_rate": ("y_neg", "pred_neg"),
    "false_negative_rate": ("y_pos", "pred_neg"),
    "true_positive_rate": ("y_pos", "pred_pos"),
    "positive_predictive_value": ("pred_pos", "y_pos"),
    "false_discovery_rate": ("pred_pos", "y_neg"),
    "negative_predictive_value": ("pred_neg", "y_neg"),
    "false_omission_rate": ("pred_neg", "y_pos"),
}

#: Metrics whose label and prediction are both binary labels.
BINARY_METRICS = frozenset(_BINARY)

#: Metrics (canonical names) that take a ``pos_label``: the positive label of a model's
#: output defaults to ``classes_[1]`` for them.
POS_LABEL_METRICS = frozenset(_BINARY) | {"selection_rate", "calibration", "calibration_residual"}


def _event(masks, name):
    """One of ``y_pos``, ``y_neg``, ``pred_pos``, ``pred_neg`` from the positive masks."""
    mask = masks[0] if name.startswith("y_") else masks[1]
    return ~mask if name.endswith("_neg") else mask


def _binary_value(y, y_pred, *, metric, pos_label):
    return _event(_check_binary_pair(y, y_pred, pos_label, metric), _BINARY[metric][1])


def _binary_condition(y, y_pred, *, metric, pos_label):
    return _event(_check_binary_pair(y, y_pred, pos_label, metric), _BINARY[metric][0])


def _binary_rows(y, y_pred, *, metric, pos_label):
    """``(value, condition)`` of a binary metric with one check of the labels."""
    masks = _check_binary_pair(y, y_pred, pos_label, metric)
    condition, value = _BINARY[metric]
    return _event(masks, value), _event(masks, condition)


def _selection_value(y, y_pred, *, pos_label):
    return _binary_pos_mask(y_pred, pos_label, "y_pred", "selection_rate")[0]


def _error_value(y, y_pred):
    return np.asarray(y) != np.asarray(y_pred)


def _accuracy_value(y, y_pred):
    return np.asarray(y) == np.asarray(y_pred)


# --- prediction sets ---------------------------------------------------------------------
def _coverage_value(y, y_pred, *, classes):
    _check_no_missing(y_pred, "y_pred")
    if y_pred.ndim != 2:
        raise ValueError(
            "coverage needs y_pred of shape (n, 2) (intervals [low, high]) or a boolean "
            f"(n, n_classes) membership matrix; got shape {y_pred.shape}."
        )
    _check_no_missing(y, "y")
    if y_pred.dtype == bool:
        labels = np.arange(y_pred.shape[1]) if classes is None else np.asarray(classes)
        if labels.size != y_pred.shape[1]:
            raise ValueError(
                f"classes has {labels.size} entries but y_pred has {y_pred.shape[1]} columns."
            )
        index = {label: j for j, label in enumerate(labels.tolist())}
        unknown = set(np.unique(y).tolist()) - set(index)
        if unknown:
            raise ValueError(
                f"coverage: labels {sorted_levels(unknown)} of y are not columns of the "
                f"prediction-set matrix (classes {labels.tolist()})."
            )
        cols = np.array([index[v] for v in y.tolist()], dtype=np.intp)
        return y_pred[np.arange(y.size), cols]
    if y_pred.shape[1] != 2:
        raise ValueError(
            f"coverage with numeric y_pred needs 2 columns [low, high], got {y_pred.shape[1]}."
        )
    low, high = y_pred[:, 0].astype(float), y_pred[:, 1].astype(float)
    crossed = np.flatnonzero(low > high)
    if crossed.size:
        # Crossed quantiles (e.g. conformalized quantile regression): an empty interval,
        # which covers nothing.
        warnings.warn(
            f"coverage: {crossed.size} interval(s) have low > high (e.g. rows "
            f"{crossed[:5].tolist()}); they are empty and count as not covering.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    y = y.astype(float)
    return (low <= y) & (y <= high)


# --- scores ------------------------------------------------------------------------------
def _check_scores(y_pred, metric):
    _check_no_missing(y_pred, "y_pred")
    scores = y_pred.astype(float)
    if scores.ndim != 1:
        raise ValueError(f"{metric} needs 1-D predicted scores, got shape {scores.shape}.")
    bad = np.unique(scores[(scores < 0) | (scores > 1)])
    if bad.size:
        raise ValueError(f"{metric}: predicted scores must lie in [0, 1]; got {bad[:5].tolist()}.")
    return scores


def _calibration_value(y, y_pred, *, pos_label, bin):
    _check_scores(y_pred, "calibration")
    return _binary_pos_mask(y, pos_label, "y", "calibration")[0]


def _calibration_condition(y, y_pred, *, pos_label, bin):
    scores = _check_scores(y_pred, "calibration")
    low, high = bin
    upper = scores <= high if high >= 1 else scores < high
    return (scores >= low) & upper


def _calibration_residual_value(y, y_pred, *, pos_label):
    scores = _check_scores(y_pred, "calibration_residual")
    return _binary_pos_mask(y, pos_label, "y", "calibration_residual")[0] - scores


# --- regression --------------------------------------------------------------------------
def _numeric(arr, name):
    _check_no_missing(arr, name)
    try:
        return arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric for a regression metric.") from None


def _squared_error_value(y, y_pred):
    return (_numeric(y, "y") - _numeric(y_pred, "y_pred")) ** 2


def _absolute_error_value(y, y_pred):
    return np.abs(_numeric(y, "y") - _numeric(y_pred, "y_pred"))


@dataclass(frozen=True)
class Metric:
    """A per-row audit metric: value :math:`L_i` and the rows that count.

    Parameters
    ----------
    name : str
        Display name.
    value : callable
        ``value(y, y_pred) -> ndarray (n,)`` of per-row values :math:`L_i` (numpy arrays in).
    condition : callable or None
        ``condition(y, y_pred) -> bool ndarray (n,)``: the rows the metric is averaged over
        (e.g. ``y == negative`` for the false positive rate). ``None`` means every row.
    bounds : tuple of float
        Domain ``(low, high)`` of :math:`L`; values outside raise ``ValueError``.
    params : tuple of (str, object) pairs
        The parameters the metric was built with (immutable; see :attr:`parameters`).
    joint : callable or None
        Optional ``joint(y, y_pred) -> (values, condition)``, the same as ``value`` and
        ``condition`` computed together (one check of the labels for binary metrics).

    Examples
    --------
    >>> import numpy as np
    >>> fpr = get_metric("false_positive_rate", pos_label="yes")
    >>> values, rows = fpr.evaluate(np.array(["no", "no", "yes"]), np.array(["yes", "no", "no"]))
    >>> values[rows].tolist()
    [1.0, 0.0]
    """

    name: str
    value: Callable
    condition: Callable | None = None
    bounds: tuple = (-np.inf, np.inf)
    params: tuple = field(default=())
    joint: Callable | None = field(default=None, repr=False)

    @property
    def parameters(self) -> dict:
        """A fresh dict of the parameters (mutating it does not affect the metric)."""
        return dict(self.params)

    @property
    def is_conditional(self) -> bool:
        return self.condition is not None

    def evaluate(self, y, y_pred):
        """Per-row values and the mask of rows that count.

        Parameters
        ----------
        y, y_pred : array-like of shape (n,) (``y_pred`` may be 2-D for coverage)

        Returns
        -------
        values : ndarray of float, shape (n,)
            :math:`L_i` (meaningful on the masked rows; other rows are 0).
        rows : ndarray of bool, shape (n,)
        """
        values, rows = self.row_values(y, y_pred)
        if rows is None:
            return values.astype(float), np.ones(values.shape[0], dtype=bool)
        return np.where(rows, values, 0.0), rows

    def row_values(self, y, y_pred):
        """:math:`L_i` and the condition in their compact form (for one pass over the rows).

        Parameters
        ----------
        y, y_pred : array-like of shape (n,) (``y_pred`` may be 2-D for coverage)

        Returns
        -------
        values : ndarray of shape (n,)
            Boolean for the binary metrics (:math:`L \\in \\{0, 1\\}`), float otherwise;
            meaningful on the rows where the condition holds.
        rows : ndarray of bool of shape (n,), or None
            The condition (``None``: every row counts).
        """
        y = as_array(y, "y")
        y_pred = as_array(y_pred, "y_pred")
        if y.shape[0] != y_pred.shape[0]:
            raise ValueError(
                f"y and y_pred have different lengths ({y.shape[0]} and {y_pred.shape[0]})."
            )
        check_no_missing(y_pred, "y_pred")
        check_no_missing(y, "y")
        rows = None
        if self.joint is not None:
            values, rows = self.joint(y, y_pred)
        else:
            values = self.value(y, y_pred)
            if self.condition is not None:
                rows = self.condition(y, y_pred)
        if rows is not None:
            rows = np.asarray(rows, dtype=bool)
            if rows.shape != (y.shape[0],):
                raise ValueError(f"condition of {self.name!r} must return a mask of shape (n,).")
        values = np.asarray(values)
        if values.shape != (y.shape[0],):
            raise ValueError(
                f"metric {self.name!r} must return one value per row, got shape {values.shape}."
            )
        if values.dtype == bool:
            if self.bounds[0] > 0 or self.bounds[1] < 1:
                raise ValueError(f"metric {self.name!r} returned 0/1 values outside its "
                                 f"domain [{self.bounds[0]}, {self.bounds[1]}].")
            return values, rows
        values = values.astype(float, copy=False)
        used = values if rows is None else values[rows]
        if not np.isfinite(used).all():
            raise ValueError(f"metric {self.name!r} returned NaN or infinite values.")
        low, high = self.bounds
        outside = np.unique(used[(used < low) | (used > high)])
        if outside.size:
            raise ValueError(
                f"metric {self.name!r} returned values {outside[:5].tolist()} outside its "
                f"domain [{low}, {high}]."
            )
        return values, rows


_ALIASES = {
    "fpr": "false_positive_rate",
    "tnr": "true_negative_rate",
    "specificity": "true_negative_rate",
    "fnr": "false_negative_rate",
    "tpr": "true_positive_rate",
    "recall": "true_positive_rate",
    "ppv": "positive_predictive_value",
    "precision": "positive_predictive_value",
    "fdr": "false_discovery_rate",
    "npv": "negative_predictive_value",
    "for": "false_omission_rate",
    "mse": "squared_error",
}

_OTHER = (
    "error_rate",
    "accuracy",
    "selection_rate",
    "coverage",
    "calibration",
    "calibration_residual",
    "squared_error",
    "absolute_error",
)


def available_metrics() -> list[str]:
    """Names accepted by :func:`get_metric` (aliases excluded).

    Returns
    -------
    list of str
    """
    return sorted([*_BINARY, *_OTHER])


def _check_params(name, params, allowed):
    unknown = set(params) - set(allowed)
    if unknown:
        raise ValueError(
            f"metric {name!r} does not take parameters {sorted(unknown)}; allowed: "
            f"{sorted(allowed) or 'none'}."
        )


def get_metric(metric, /, **params) -> Metric:
    """Build a metric by name, or wrap a user function.

    Parameters
    ----------
    metric : str, Metric or callable
        One of :func:`available_metrics` (or an alias such as ``"fpr"``, ``"ppv"``), an
        existing :class:`Metric` (returned unchanged), or a function
        ``f(y, y_pred) -> L`` (then ``condition=``, ``bounds=`` and ``name=`` may be given).
    **params
        ``pos_label`` for binary metrics (the conditioning uses *this* label);
        ``classes`` for ``"coverage"`` with a membership matrix; ``bin=(low, high)`` and
        ``pos_label`` for ``"calibration"``.

    Returns
    -------
    Metric

    Notes
    -----
    Binary metrics require ``y`` and ``y_pred`` to take at most two values, the positive
    label and one negative label; otherwise ``ValueError`` names the offending values.
    Without ``pos_label`` the labels must be ``{0, 1}`` or ``{-1, 1}``.

    Examples
    --------
    >>> get_metric("ppv", pos_label=1).name
    'positive_predictive_value'
    >>> sq = get_metric(lambda y, p: (y - p) ** 2, bounds=(0, None))
    >>> sq.bounds
    (0.0, inf)
    """
    name = metric
    if isinstance(name, Metric):
        if params:
            raise ValueError("parameters cannot be combined with an existing Metric.")
        return name
    if callable(name):
        _check_params("custom", params, {"condition", "bounds", "name"})
        low, high = params.get("bounds") or (None, None)
        bounds = (
            -np.inf if low is None else float(low),
            np.inf if high is None else float(high),
        )
        return Metric(
            name=params.get("name") or getattr(name, "__name__", "custom"),
            value=name,
            condition=params.get("condition"),
            bounds=bounds,
        )
    if not isinstance(name, str):
        raise ValueError(f"metric must be a name, a Metric or a callable, got {name!r}.")
    key = _ALIASES.get(name.lower(), name.lower())
    frozen = tuple(sorted(params.items()))
    if key in _BINARY:
        _check_params(key, params, {"pos_label"})
        pos = params.get("pos_label")
        return Metric(
            key,
            partial(_binary_value, metric=key, pos_label=pos),
            partial(_binary_condition, metric=key, pos_label=pos),
            (0.0, 1.0),
            frozen,
            partial(_binary_rows, metric=key, pos_label=pos),
        )
    if key == "selection_rate":
        _check_params(key, params, {"pos_label"})
        return Metric(
            key, partial(_selection_value, pos_label=params.get("pos_label")), None, (0.0, 1.0),
            frozen,
        )
    if key in ("error_rate", "accuracy"):
        _check_params(key, params, ())
        fn = _error_value if key == "error_rate" else _accuracy_value
        return Metric(key, fn, None, (0.0, 1.0), frozen)
    if key == "coverage":
        _check_params(key, params, {"classes"})
        classes = params.get("classes")
        classes = None if classes is None else tuple(np.asarray(classes).tolist())
        return Metric(
            key, partial(_coverage_value, classes=classes), None, (0.0, 1.0),
            (("classes", classes),),
        )
    if key == "calibration":
        _check_params(key, params, {"pos_label", "bin"})
        pos = params.get("pos_label")
        bin_ = params.get("bin")
        if bin_ is None:
            return Metric(
                key, partial(_calibration_value, pos_label=pos, bin=None), None, (0.0, 1.0),
                frozen,
            )
        low, high = (float(v) for v in bin_)
        if not 0.0 <= low < high <= 1.0:
            raise ValueError(f"calibration bin must satisfy 0 <= low < high <= 1, got {bin_}.")
        return Metric(
            f"calibration[{low:g}, {high:g}{']' if high >= 1 else ')'}",
            partial(_calibration_value, pos_label=pos, bin=(low, high)),
            partial(_calibration_condition, pos_label=pos, bin=(low, high)),
            (0.0, 1.0),
            (("bin", (low, high)), ("pos_label", pos)),
        )
    if key == "calibration_residual":
        _check_params(key, params, {"pos_label"})
        return Metric(
            key, partial(_calibration_residual_value, pos_label=params.get("pos_label")), None,
            (-1.0, 1.0), frozen,
        )
    if key in ("squared_error", "absolute_error"):
        _check_params(key, params, ())
        fn = _squared_error_value if key == "squared_error" else _absolute_error_value
        return Metric(key, fn, None, (0.0, np.inf), frozen)
    raise ValueError(f"unknown metric {name!r}; available: {available_metrics()}.")

