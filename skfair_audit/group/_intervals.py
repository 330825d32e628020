"""Maximum-subarray search: the supremum of an additive process over all grid intervals.

For an additive set function :math:`T(G) = \\sum_{j \\in G} t_j` over bins, the supremum over
all intervals of bins is the maximum-subarray sum (Kadane 1984), computed in :math:`O(m)`
from the prefix sums :math:`P_k = \\sum_{j < k} t_j`:

.. math::

    \\max_{a < b} \\sum_{a \\le j < b} t_j = \\max_b \\Big(P_b - \\min_{a < b} P_a\\Big),

with a running minimum instead of enumerating the :math:`m(m+1)/2` intervals. A minimum
length :math:`g_b - g_a \\ge \\ell` on the grid restricts the running minimum to
:math:`a \\le k(b)`, the last edge at distance :math:`\\ge \\ell` before :math:`g_b`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["max_subarray"]


def max_subarray(values, edges=None, min_length=0.0, *, return_interval=False):
    """Largest sum of consecutive entries along the last axis (vectorised over the others).

    Parameters
    ----------
    values : array-like of shape (..., m)
        Per-bin values ``t_j`` (one row per bootstrap replicate, say).
    edges : array-like of shape (m + 1,), optional
        Bin edges; needed only with ``min_length`` (default ``0, 1, ..., m``).
    min_length : float
        Only intervals ``[edges[a], edges[b])`` with ``edges[b] - edges[a] >= min_length``.
    return_interval : bool
        Also return the maximising ``(a, b)`` bin ranges (``a <= bin < b``).

    Returns
    -------
    best : ndarray of shape (...)
        The maximum over admissible intervals (``-inf`` if none is admissible).
    start, end : ndarray of int, shape (...)
        Only with ``return_interval``.

    Examples
    --------
    >>> float(max_subarray([1.0, -3.0, 2.0, -1.0, 2.0]))
    3.0
    >>> best, start, end = max_subarray([1.0, -3.0, 2.0, -1.0, 2.0], return_interval=True)
    >>> int(start), int(end)
    (2, 5)
    """
    t = np.asarray(values, dtype=float)
    m = t.shape[-1]
    if m == 0:
        raise ValueError("values must have at least one bin.")
    edges = np.arange(m + 1, dtype=float) if edges is None else np.asarray(edges, dtype=float)
    if edges.shape != (m + 1,):
        raise ValueError(f"edges must have {m + 1} entries, got {edges.shape}.")
    prefix = np.concatenate([np.zeros((*t.shape[:-1], 1)), np.cumsum(t, axis=-1)], axis=-1)
    running_min = np.minimum.accumulate(prefix, axis=-1)
    # last admissible start for every end b: largest a with edges[a] <= edges[b] - min_length
    tol = 1e-12 * max(1.0, abs(float(min_length)))
    last_start = np.searchsorted(edges, edges - float(min_length) + tol, side="right") - 1
    last_start = np.minimum(last_start, np.arange(m + 1) - 1)
    ends = np.flatnonzero(last_start >= 0)
    if ends.size == 0:
        best = np.full(t.shape[:-1], -np.inf)
        if return_interval:
            zero = np.zeros(t.shape[:-1], dtype=np.intp)
            return best, zero, zero
        return best
    candidates = prefix[..., ends] - running_min[..., last_start[ends]]
    best = candidates.max(axis=-1)
    if not return_interval:
        return best
    arg = candidates.argmax(axis=-1)
    end = ends[arg]
    limit = last_start[end]
    # the start is where the running minimum was attained (first position up to `limit`)
    prefix_end = np.take_along_axis(prefix, end[..., None], axis=-1)[..., 0]
    target = prefix_end - best
    positions = np.arange(m + 1)
    hit = (np.abs(prefix - target[..., None]) <= 1e-12 * (1 + np.abs(target[..., None]))) & (
        positions <= limit[..., None]
    )
    start = hit.argmax(axis=-1)
    return best, start, end
