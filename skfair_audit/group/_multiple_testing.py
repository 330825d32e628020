"""False discovery rate control over the groups of an audit."""

from __future__ import annotations

import numpy as np

from ..utils import check_alpha

__all__ = ["benjamini_hochberg"]


def benjamini_hochberg(pvalues, q=0.1):
    """Benjamini–Hochberg step-up procedure at false discovery rate ``q``.

    With sorted p-values :math:`p_{(1)} \\le \\dots \\le p_{(m)}` the adjusted p-values are

    .. math::

        \\tilde p_{(i)} = \\min_{k \\ge i} \\min\\Big(1, \\frac{m}{k} p_{(k)}\\Big),

    and the hypotheses with :math:`\\tilde p \\le q` are rejected, which is the same set as
    rejecting the :math:`k^*` smallest p-values for the largest :math:`k^*` with
    :math:`p_{(k^*)} \\le q k^* / m`.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        Values in [0, 1].
    q : float
        Target false discovery rate in (0, 1).

    Returns
    -------
    rejected : ndarray of bool, shape (m,)
    adjusted : ndarray of float, shape (m,)
        Adjusted p-values (as :func:`scipy.stats.false_discovery_control` with
        ``method="bh"``).

    References
    ----------
    Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate: a practical
    and powerful approach to multiple testing. JRSS-B 57(1), 289–300.

    Examples
    --------
    >>> rejected, adjusted = benjamini_hochberg([0.01, 0.04, 0.03, 0.5], q=0.1)
    >>> rejected.tolist()
    [True, True, True, False]
    >>> adjusted.round(3).tolist()
    [0.04, 0.053, 0.053, 0.5]
    """
    q = check_alpha(q, "q")
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {p.shape}.")
    if p.size == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    if np.isnan(p).any() or np.any((p < 0) | (p > 1)):
        raise ValueError("pvalues must lie in [0, 1] (no NaN).")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted <= q, adjusted
