"""Exact, batched solver of the FaiTH audit linear program.

The audit value of Xue, Yurochkin & Sun (2020) on ``K`` discrete cells is the linear program

.. math::

    \\psi(f) = \\max_{\\Pi \\ge 0} \\langle R, \\Pi \\rangle
    \\quad \\text{s.t.} \\quad \\Pi \\mathbf 1 = f, \\quad
    \\langle C, \\Pi \\rangle \\le \\varepsilon, \\quad \\Pi_{ij} = 0 \\text{ if } D_{ij},

with ``R[i, j] = loss[j] - loss[i]``. Only the row marginal and a single budget constrain the
plan, so the program is the LP relaxation of a multiple-choice knapsack: every source cell is a
class, its allowed destinations are the items. It is solved exactly by a greedy walk over the
upper concave hulls of the points ``(C_ij, R_ij)`` of each row, sorted once by slope. The hulls
and their order depend on neither ``f`` nor ``epsilon``, so after :func:`prepare_transport`
every evaluation is a cumulative sum over the segment list, vectorised over a batch of
frequency vectors (one bootstrap replicate per row).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT, check_memory

__all__ = ["TransportProblem", "prepare_transport"]


def check_epsilon(epsilon) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real | np.ndarray):
        raise ValueError(f"epsilon must be a non-negative real number, got {epsilon!r}.")
    value = np.asarray(epsilon, dtype=float)
    if value.ndim != 0:
        raise ValueError(f"epsilon must be a scalar, got an array of shape {value.shape}.")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"epsilon must be a finite non-negative number, got {epsilon!r}.")
    return value


def _check_tolerance(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a non-negative real number, got {value!r}.")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}.")
    return value


#: Elements of one temporary array of a batched evaluation (16 MiB of float64): batches of
#: frequency vectors are evaluated in chunks of rows so that memory stays bounded.
CHUNK_ELEMENTS = 2**21

#: Bytes per pair of cells the dense construction holds at its peak (cost, gain, masks, the
#: best free move and the sorted candidates), used by the memory guard.
DENSE_BYTES_PER_PAIR = 48


def dense_transport_bytes(n_cells) -> int:
    """Peak memory of :func:`prepare_transport` on ``K = n_cells`` cells (about 48 K² bytes)."""
    return DENSE_BYTES_PER_PAIR * int(n_cells) ** 2


def hull_segments(rows, cost, gain, destination, base_gain, base_destination, *,
                  return_hulls=False):
    """Rising upper concave hulls of many rows at once, as segments.

    Parameters
    ----------
    rows : ndarray of int, shape (R,)
        Source cell of each row, ascending.
    cost, gain : ndarray of shape (R, C)
        Candidate moves of each row: cost ``> 0`` and gain ``> base_gain`` (other entries must
        be padding: ``cost = inf``, ``gain = -inf``), sorted within each row by cost, then
        gain descending, then destination ascending (``np.lexsort((dest, -gain, cost))``).
    destination : ndarray of int, shape (R, C)
        Destination cell of each candidate.
    base_gain : ndarray of shape (R,)
        Gain of the best free move of each row (the hull starts at ``(0, base_gain)``).
    base_destination : ndarray of int, shape (R,)
    return_hulls : bool, default=False
        Also return the vertices of every hull (for the certificates of the neighbour search).

    Returns
    -------
    dict of ndarray
        ``row, source, target, cost, gain`` of every segment, in row order and, within a row,
        along its hull. With ``return_hulls``, also ``vertex_cost``, ``vertex_gain`` and
        ``vertex_destination`` of shape (R, H) (vertex 0 is the base ``(0, base_gain)``;
        padding beyond ``height`` has cost ``inf``) and ``height`` of shape (R,).

    Notes
    -----
    The Pareto front keeps a candidate when its gain beats every cheaper one (ties in cost: the
    best gain, then the smallest destination); the monotone chain then pops a middle vertex
    unless ``(x0, y0) -> (x1, y1) -> (x2, y2)`` turns strictly right, so collinear points are
    dropped and consecutive slopes decrease strictly. Both steps are vectorised over the rows;
    the loop runs over the candidate columns.
    """
    n_rows, width = cost.shape
    previous = np.maximum.accumulate(
        np.concatenate([base_gain[:, None], gain[:, :-1]], axis=1), axis=1
    ) if width else np.empty((n_rows, 0))
    keep = gain > previous
    n_front = keep.sum(axis=1)
    depth = int(n_front.max()) if n_rows else 0
    r_idx, c_idx = np.nonzero(keep)
    position = (np.cumsum(keep, axis=1) - 1)[r_idx, c_idx]
    front_cost = np.full((n_rows, depth), np.inf)
    front_gain = np.full((n_rows, depth), -np.inf)
    front_dest = np.full((n_rows, depth), -1, dtype=np.intp)
    front_cost[r_idx, position] = cost[r_idx, c_idx]
    front_gain[r_idx, position] = gain[r_idx, c_idx]
    front_dest[r_idx, position] = destination[r_idx, c_idx]

    hull_c = np.zeros((n_rows, depth + 1))
    hull_r = np.zeros((n_rows, depth + 1))
    hull_d = np.full((n_rows, depth + 1), -1, dtype=np.intp)
    hull_r[:, 0] = base_gain
    hull_d[:, 0] = base_destination
    height = np.ones(n_rows, dtype=np.intp)
    for t in range(depth):
        active = np.flatnonzero(n_front > t)
        x2, y2 = front_cost[active, t], front_gain[active, t]
        check = np.arange(active.size)
        while check.size:
            check = check[height[active[check]] >= 2]
            if not check.size:
                break
            r, h = active[check], height[active[check]]
            x0, y0 = hull_c[r, h - 2], hull_r[r, h - 2]
            x1, y1 = hull_c[r, h - 1], hull_r[r, h - 1]
            xc, yc = x2[check], y2[check]
            pop = (x1 - x0) * (yc - y0) - (y1 - y0) * (xc - x0) >= 0
            check = check[pop]
            height[active[check]] -= 1
        h = height[active]
        hull_c[active, h] = x2
        hull_r[active, h] = y2
        hull_d[active, h] = front_dest[active, t]
        height[active] += 1

    n_seg = height - 1
    seg_rows = np.repeat(np.arange(n_rows), n_seg)
    step = np.arange(seg_rows.size) - np.repeat(np.cumsum(n_seg) - n_seg, n_seg)
    out = {
        "row": np.asarray(rows, dtype=np.intp)[seg_rows],
        "source": hull_d[seg_rows, step],
        "target": hull_d[seg_rows, step + 1],
        "cost": hull_c[seg_rows, step + 1] - hull_c[seg_rows, step],
        "gain": hull_r[seg_rows, step + 1] - hull_r[seg_rows, step],
    }
    if return_hulls:
        beyond = np.arange(depth + 1)[None, :] >= height[:, None]
        hull_c[beyond] = np.inf
        hull_r[beyond] = -np.inf
        out.update(vertex_cost=hull_c, vertex_gain=hull_r, vertex_destination=hull_d,
                   height=height)
    return out


def sort_candidates(cost, gain, destination):
    """Sort candidate moves within each row as :func:`hull_segments` expects."""
    order = np.lexsort((destination, -gain, cost), axis=-1)
    return (
        np.take_along_axis(cost, order, axis=1),
        np.take_along_axis(gain, order, axis=1),
        np.take_along_axis(destination, order, axis=1),
    )


def row_dot(f, weights):
    """``f @ weights`` for a batch ``f`` of shape (B, n), the same bits in every process.

    BLAS may split a matrix-vector product differently with another number of threads (a
    joblib worker runs with fewer), which changes the last bits of bootstrap replicates; a
    numpy reduction over each row does not depend on threads, so results stay identical for
    any ``n_jobs`` and backend.
    """
    return np.multiply(f, weights).sum(axis=1)


def assemble_problem(loss, base_gain, base_destination, parts, support=None):
    """A :class:`TransportProblem` from per-row bases and hull segments (in row order)."""
    def _cat(key, dtype):
        arrays = [part[key] for part in parts if part[key].size]
        return np.concatenate(arrays).astype(dtype) if arrays else np.empty(0, dtype=dtype)

    seg_row = _cat("row", np.intp)
    seg_source = _cat("source", np.intp)
    seg_target = _cat("target", np.intp)
    seg_cost = _cat("cost", float)
    seg_gain = _cat("gain", float)
    seg_slope = seg_gain / seg_cost if seg_cost.size else np.empty(0)
    # Stable: segments of one row keep their hull order even if two slopes round equal.
    order = np.argsort(-seg_slope, kind="stable")
    return TransportProblem(
        n_cells=int(loss.size),
        loss=loss,
        base_gain=base_gain,
        base_destination=np.asarray(base_destination, dtype=np.intp),
        segment_row=seg_row[order],
        segment_source=seg_source[order],
        segment_target=seg_target[order],
        segment_cost=seg_cost[order],
        segment_gain=seg_gain[order],
        segment_slope=seg_slope[order],
        support=support,
    )


def hull_vertices(problem):
    """Every row's hull vertices after its base: ``(row, cost, gain, destination)`` arrays.

    The segments of a row, taken in hull order, start at ``(0, base_gain)``; the vertices are
    their cumulative ends.
    """
    order = np.lexsort((-problem.segment_slope, problem.segment_row))
    row = problem.segment_row[order]
    cost = problem.segment_cost[order]
    gain = problem.segment_gain[order]
    start = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1]))) if row.size else row
    step = np.arange(row.size) - np.repeat(start, np.diff(np.append(start, row.size)))
    # Each row's own running sums, step by step: a vertex does not depend on other rows
    # (a cumulative sum over all rows would round each row's sums by its predecessors').
    vertex_cost = cost.copy()
    vertex_gain = problem.base_gain[row] + gain
    for k in range(1, int(step.max(initial=0)) + 1):
        at = np.flatnonzero(step == k)
        vertex_cost[at] = vertex_cost[at - 1] + cost[at]
        vertex_gain[at] = vertex_gain[at - 1] + gain[at]
    return row, vertex_cost, vertex_gain, problem.segment_target[order]


def combine_moves(first, second):
    """The audit problem whose allowed moves are those of ``first`` or of ``second``.

    Both problems must share their cells, losses and support. A source's best free move is
    the better of the two bases, and its hull the upper concave hull of the two hulls'
    vertices: the hull of a union of candidate moves is the hull of the union of the hulls.
    The FaiTH audit on a reference set joins the moves to the reference individuals with
    the moves to one's own counterfactual twins this way.

    Parameters
    ----------
    first, second : TransportProblem

    Returns
    -------
    TransportProblem
    """
    if (first.n_cells != second.n_cells or not np.array_equal(first.loss, second.loss)
            or not np.array_equal(first.support, second.support)):
        raise ValueError("combine_moves needs two problems on the same cells and support.")
    support = first.support
    take_second = second.base_gain > first.base_gain
    base_gain = np.where(take_second, second.base_gain, first.base_gain)
    base_destination = np.where(take_second, second.base_destination, first.base_destination)
    parts = [hull_vertices(first), hull_vertices(second)]
    row = np.concatenate([p[0] for p in parts])
    cost = np.concatenate([p[1] for p in parts])
    gain = np.concatenate([p[2] for p in parts]) - base_gain[row]
    dest = np.concatenate([p[3] for p in parts])
    keep = (cost > 0) & (gain > 0)
    row, cost, gain, dest = row[keep], cost[keep], gain[keep], dest[keep]
    if not row.size:
        return assemble_problem(first.loss, base_gain, base_destination, [], support=support)
    order = np.argsort(row, kind="stable")
    row, cost, gain, dest = row[order], cost[order], gain[order], dest[order]
    rows, start, width = np.unique(row, return_index=True, return_counts=True)
    column = np.arange(row.size) - np.repeat(start, width)
    position = np.repeat(np.arange(rows.size), width)
    shape = (rows.size, int(width.max()))
    cand_cost = np.full(shape, np.inf)
    cand_gain = np.full(shape, -np.inf)
    cand_dest = np.full(shape, first.n_cells, dtype=np.intp)
    cand_cost[position, column] = cost
    cand_gain[position, column] = gain + base_gain[row]
    cand_dest[position, column] = dest
    segments = hull_segments(
        rows, *sort_candidates(cand_cost, cand_gain, cand_dest), base_gain[rows],
        base_destination[rows],
    )
    return assemble_problem(first.loss, base_gain, base_destination, [segments], support=support)


def prepare_transport(
    loss, cost, forbidden=None, *, rtol=1e-12, memory_limit=DEFAULT_MEMORY_LIMIT
) -> TransportProblem:
    """Precompute the greedy solution structure of the FaiTH audit LP.

    Parameters
    ----------
    loss : array-like of shape (K,)
        Finite loss of the audited model at each cell, e.g. its 0-1 loss.
        ``R[i, j] = loss[j] - loss[i]`` is the loss gained by moving mass from cell ``i`` to
        cell ``j``.
    cost : array-like of shape (K, K)
        Transport cost ``C[i, j] >= 0`` with a zero diagonal. ``np.inf`` entries mark moves
        that are impossible, exactly like ``forbidden``. NaN and negative entries are rejected.
    forbidden : array-like of bool of shape (K, K), default=None
        ``True`` where a move is forbidden (by default in FaiTH: the two cells have different
        labels). The diagonal (staying put) cannot be forbidden. ``None`` forbids nothing.
    rtol : float, default=1e-12
        Cost entries ``<= rtol * max(C)`` (the largest finite cost; including the diagonal)
        are treated as exactly zero: the rounding noise of metric computations (e.g. two
        cells that differ only along sensitive directions of a projected metric) must not
        turn a free move into a costly one. The tolerance is relative, so that ``psi`` does
        not depend on the units of the cost: costs ``s C`` and budget ``s epsilon`` give the
        same values for every ``s > 0``. A diagonal entry above the tolerance is an error. A
        plan may exceed the budget by at most ``rtol * max(C)`` times the transported mass.
    memory_limit : int, float, str or None, default="2GiB"
        Budget of the construction's working set (about ``48 K²`` bytes): a larger problem is
        refused with :class:`~skfair_audit.faith.MemoryLimitError` before anything is
        allocated. Costs that come from a linear-map metric never need the dense matrix: use
        :func:`prepare_metric_transport`. None disables the check.

    Returns
    -------
    TransportProblem
        The hull segments of all rows, sorted by slope; evaluate it with
        :meth:`TransportProblem.value` and friends.

    Notes
    -----
    For each source cell ``i`` let ``b_i = max{R_ij : C_ij = 0, j allowed}`` (staying put
    gives 0) and take the upper concave hull of the allowed points ``(C_ij, R_ij)`` to the
    right of ``(0, b_i)``, keeping only rising segments (:func:`hull_segments`, shared with
    the nearest-neighbour construction :func:`prepare_metric_transport`). Each segment ``s``
    records its row, its start and end destinations, ``dc_s``, ``dr_s`` and slope
    ``dr_s / dc_s``. Then

    .. math::

        \\psi(f) = \\sum_i f_i b_i + \\text{greedy}(\\varepsilon),

    where the greedy spends the budget on the segments by decreasing slope, segment ``s`` of
    row ``i`` costing ``f_i dc_s`` and gaining ``f_i dr_s``, the last one fractionally
    (Sinha & Zoltners 1979). Setup costs ``O(K^2 log K)`` time and ``O(K^2)`` memory, in
    chunks of rows; the number of segments ``S`` is at most ``K (K - 1)`` and usually of order
    ``K``.

    References
    ----------
    .. [1] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020.
    .. [2] P. Sinha and A. A. Zoltners, "The multiple-choice knapsack problem",
       Operations Research 27(3), 1979.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._solver import prepare_transport
    >>> loss = np.array([0.0, 1.0, 0.0, 1.0])
    >>> cost = np.array([[0.0, 1.0, 0.0, 4.0],
    ...                  [1.0, 0.0, 4.0, 0.0],
    ...                  [0.0, 4.0, 0.0, 2.0],
    ...                  [4.0, 0.0, 1.0, 0.0]])
    >>> problem = prepare_transport(loss, cost)
    >>> problem.n_segments
    2
    >>> f = np.array([0.4, 0.1, 0.3, 0.2])
    >>> problem.value(f, 0.5)
    0.45
    >>> problem.curve(f)
    (array([0. , 0.4, 1. ]), array([0. , 0.4, 0.7]))
    >>> problem.dual_multipliers(f, 0.5)  # unique: the slope where the budget runs out
    (0.5, 0.5)
    >>> problem.dual_multipliers(f, 0.4)  # a kink of epsilon -> psi
    (0.5, 1.0)
    >>> problem.adversarial_distribution(f, 0.5)
    array([0.  , 0.5 , 0.25, 0.25])
    """
    loss = np.asarray(loss, dtype=float)
    if loss.ndim != 1 or loss.size == 0:
        raise ValueError(f"loss must be a non-empty 1-D array, got shape {loss.shape}.")
    if not np.all(np.isfinite(loss)):
        raise ValueError("loss must be finite (no NaN or inf).")
    n_cells = loss.size
    rtol = _check_tolerance(rtol, "rtol")
    check_memory(
        dense_transport_bytes(n_cells),
        memory_limit,
        f"The dense transport problem on K = {n_cells:,} cells",
        "Build it from the points of a linear-map metric with prepare_metric_transport, which "
        "never forms a K x K matrix",
    )

    cost = np.array(cost, dtype=float)
    if cost.shape != (n_cells, n_cells):
        raise ValueError(
            f"cost must have shape (K, K) = ({n_cells}, {n_cells}) to match loss, got {cost.shape}."
        )
    if np.isnan(cost).any():
        raise ValueError(
            "cost must not contain NaN (use np.inf or forbidden for impossible moves)."
        )
    if (cost < 0).any():
        raise ValueError(f"cost must be non-negative; its smallest entry is {float(cost.min())!r}.")
    finite = cost[np.isfinite(cost)]
    atol = rtol * float(finite.max()) if finite.size else 0.0
    diagonal = np.diagonal(cost)
    if (diagonal > atol).any():
        raise ValueError(
            f"cost must have a zero diagonal (staying put is free); the largest diagonal entry "
            f"is {float(diagonal.max())!r} > rtol * max(cost) = {atol!r}."
        )

    if forbidden is None:
        forbidden = np.zeros((n_cells, n_cells), dtype=bool)
    else:
        forbidden = np.asarray(forbidden)
        if forbidden.shape != (n_cells, n_cells):
            raise ValueError(
                f"forbidden must have shape ({n_cells}, {n_cells}) like cost, "
                f"got {forbidden.shape}."
            )
        if forbidden.dtype != bool:
            if not np.isin(forbidden, (0, 1)).all():
                raise ValueError("forbidden must be a boolean mask (or contain only 0 and 1).")
            forbidden = forbidden.astype(bool)
        if np.diagonal(forbidden).any():
            raise ValueError(
                "forbidden must be False on the diagonal: staying put is always allowed; "
                f"cells {np.flatnonzero(np.diagonal(forbidden)).tolist()} are marked forbidden."
            )

    cost[cost <= atol] = 0.0
    allowed = ~forbidden & np.isfinite(cost)
    del forbidden
    rows = np.arange(n_cells)
    base_gain = np.zeros(n_cells)
    base_destination = rows.copy()
    parts = []
    chunk = max(1, CHUNK_ELEMENTS // n_cells)
    for start in range(0, n_cells, chunk):
        block = rows[start:start + chunk]
        c, ok = cost[block], allowed[block]
        gain = loss[None, :] - loss[block, None]
        # Best free destination; staying put wins ties (its gain is exactly 0 <= base gain).
        free_gain = np.where(ok & (c == 0.0), gain, -np.inf)
        free_gain[np.arange(block.size), block] = 0.0
        best = free_gain.max(axis=1)
        base_gain[block] = best
        base_destination[block] = np.where(best > 0, free_gain.argmax(axis=1), block)
        del free_gain
        candidate = ok & (c > 0) & (gain > best[:, None])
        width = int(candidate.sum(axis=1).max()) if block.size else 0
        if width == 0:
            continue
        # The candidates of each row, left-aligned (their order does not matter: sorted next).
        r_idx, j_idx = np.nonzero(candidate)
        column = np.arange(r_idx.size) - np.searchsorted(r_idx, r_idx)
        cand_cost = np.full((block.size, width), np.inf)
        cand_gain = np.full((block.size, width), -np.inf)
        cand_dest = np.full((block.size, width), n_cells, dtype=np.intp)
        cand_cost[r_idx, column] = c[r_idx, j_idx]
        cand_gain[r_idx, column] = gain[r_idx, j_idx]
        cand_dest[r_idx, column] = j_idx
        parts.append(
            hull_segments(
                block, *sort_candidates(cand_cost, cand_gain, cand_dest), best,
                base_destination[block],
            )
        )
    return assemble_problem(loss, base_gain, base_destination, parts)


def _greedy(base, spent, gained, slope_at, epsilon):
    """``psi`` of each row of a batch from prefix sums along the segments in slope order.

    ``spent`` and ``gained`` are the cumulative costs and gains (``B x W``, non-decreasing
    along a row, so the segments that fit the budget form a prefix); the leftover budget is
    spent on the next segment at its slope, ``slope_at(index)``.
    """
    width = spent.shape[1]
    n_full = np.count_nonzero(spent <= epsilon, axis=1)
    last = np.maximum(n_full - 1, 0)[:, None]
    has_full = n_full > 0
    spent_full = np.where(has_full, np.take_along_axis(spent, last, 1)[:, 0], 0.0)
    gained_full = np.where(has_full, np.take_along_axis(gained, last, 1)[:, 0], 0.0)
    partial = n_full < width
    slope_next = slope_at(np.minimum(n_full, width - 1))
    return base + gained_full + np.where(partial, (epsilon - spent_full) * slope_next, 0)


@dataclass(frozen=True, eq=False, repr=False)
class TransportProblem:
    """Greedy structure of the FaiTH audit LP for fixed losses, costs and forbidden moves.

    Built by :func:`prepare_transport` (dense costs) or :func:`prepare_metric_transport`
    (points of a linear-map metric, no ``K x K`` matrix); independent of the cell frequencies
    ``f`` and of the budget ``epsilon``, so one instance serves every bootstrap replicate. All
    arrays are read-only.

    Attributes
    ----------
    n_cells : int
        Number of cells ``K`` (every cell is a possible destination).
    loss : ndarray of shape (K,)
        Loss at each cell.
    base_gain : ndarray of shape (K,)
        ``b_i``: the best gain of a free (zero-cost, allowed) move out of cell ``i``, >= 0.
    base_destination : ndarray of shape (K,)
        The free destination attaining ``base_gain`` (``i`` itself on ties).
    segment_row, segment_source, segment_target : ndarray of int, shape (S,)
        Source cell of each hull segment, and the destinations at its start and end vertex.
    segment_cost, segment_gain, segment_slope : ndarray of float, shape (S,)
        ``dc > 0``, ``dr > 0`` and ``dr / dc`` of each segment, sorted by slope (descending).
    support : ndarray of int, shape (n_support,)
        The source cells whose rows were built, ascending (all cells unless the problem was
        restricted to the cells that can carry audit mass). Frequency vectors must vanish
        outside the support; a bootstrap resample of the audit counts always does. Outside the
        support ``base_gain`` is 0 and ``base_destination`` the cell itself.
    segment_position : ndarray of int, shape (S,)
        Position of ``segment_row`` in ``support``: the index of a segment's source in a
        frequency vector given ``on_support``.

    Notes
    -----
    ``value`` and ``dual_value`` take a batch ``f`` of shape ``(B, K)`` or, with
    ``on_support=True``, ``(B, n_support)``; they cost ``O(B S)`` time and evaluate the batch in
    chunks of rows, so that their working memory stays below ``6 * CHUNK_ELEMENTS`` floats
    (about 100 MiB) whatever ``B``.
    """

    n_cells: int
    loss: np.ndarray
    base_gain: np.ndarray
    base_destination: np.ndarray
    segment_row: np.ndarray
    segment_source: np.ndarray
    segment_target: np.ndarray
    segment_cost: np.ndarray
    segment_gain: np.ndarray
    segment_slope: np.ndarray
    support: np.ndarray | None = None
    segment_position: np.ndarray = field(init=False)

    def __post_init__(self):
        for name in (
            "loss",
            "base_gain",
            "base_destination",
            "segment_row",
            "segment_source",
            "segment_target",
            "segment_cost",
            "segment_gain",
            "segment_slope",
        ):
            array = np.array(getattr(self, name))
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        if self.support is None:
            support = np.arange(self.n_cells, dtype=np.intp)
        else:
            support = np.asarray(self.support, dtype=np.intp)
            if support.size > 1 and not (support[1:] > support[:-1]).all():
                support = np.unique(support)  # sorted distinct cells; usually given so
            if support.size and (support[0] < 0 or support[-1] >= self.n_cells):
                raise ValueError(f"support must hold cell indices in [0, {self.n_cells}).")
        position = np.searchsorted(support, self.segment_row).astype(np.intp)
        if self.support is not None and position.size and (support.size == 0 or not (
                support[np.minimum(position, support.size - 1)] == self.segment_row).all()):
            raise ValueError("every segment's row must be in the support.")
        for name, array in (("support", support), ("segment_position", position)):
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        outside = np.ones(self.n_cells, dtype=bool)
        outside[support] = False
        object.__setattr__(self, "_outside", np.flatnonzero(outside))
        object.__setattr__(self, "_support_base_gain", self.base_gain[support])

    def __repr__(self):
        restricted = (
            f", n_support={self.support.size}" if self.support.size < self.n_cells else ""
        )
        return (
            f"TransportProblem(n_cells={self.n_cells}, n_segments={self.n_segments}"
            f"{restricted})"
        )

    @property
    def n_segments(self) -> int:
        """Number ``S`` of hull segments over all rows."""
        return int(self.segment_slope.size)

    def restrict(self, rows) -> TransportProblem:
        """The same problem with only the rows of ``rows`` (e.g. the cells with audit rows).

        Evaluations of frequency vectors that vanish outside ``rows`` are unchanged; they get
        cheaper, and a bootstrap draws on ``rows`` only.

        Parameters
        ----------
        rows : array-like of int or bool mask of shape (K,)
            Cells to keep; they must be in the current ``support``.

        Returns
        -------
        TransportProblem
        """
        rows = np.asarray(rows)
        rows = np.flatnonzero(rows) if rows.dtype == bool else np.unique(rows.astype(np.intp))
        if rows.size and (rows[0] < 0 or rows[-1] >= self.n_cells):
            raise ValueError(f"rows must hold cell indices in [0, {self.n_cells}).")
        if not np.isin(rows, self.support).all():
            raise ValueError("rows must be part of the problem's support.")
        keep = np.isin(self.segment_row, rows)
        inside = np.zeros(self.n_cells, dtype=bool)
        inside[rows] = True
        return TransportProblem(
            n_cells=self.n_cells,
            loss=self.loss,
            base_gain=np.where(inside, self.base_gain, 0.0),
            base_destination=np.where(inside, self.base_destination, np.arange(self.n_cells)),
            segment_row=self.segment_row[keep],
            segment_source=self.segment_source[keep],
            segment_target=self.segment_target[keep],
            segment_cost=self.segment_cost[keep],
            segment_gain=self.segment_gain[keep],
            segment_slope=self.segment_slope[keep],
            support=rows,
        )

    # ------------------------------------------------------------------ input checks
    def _frequencies(self, f, *, nonnegative: bool, on_support: bool = False):
        """``f`` as a 2-D batch over the support (and whether it was a single vector)."""
        f = np.asarray(f, dtype=float)
        width = self.support.size if on_support else self.n_cells
        if f.ndim not in (1, 2) or f.shape[-1] != width:
            what = f"n_support = {width}" if on_support else f"K = {width}"
            raise ValueError(f"f must have shape (K,) or (B, K) with {what}, got {f.shape}.")
        if not np.all(np.isfinite(f)):
            raise ValueError("f must be finite (no NaN or inf).")
        if nonnegative and (f < 0).any():
            raise ValueError(
                "f must be non-negative (a frequency vector); use dual_value for signed "
                "perturbations."
            )
        single = f.ndim == 1
        f = f[None, :] if single else f
        if not on_support and self._outside.size:
            if (f[:, self._outside] != 0).any():
                raise ValueError(
                    f"f has mass on cells outside the support of this problem (its rows were "
                    f"built for {self.support.size} of the {self.n_cells} cells); rebuild it "
                    "with rows covering every cell that can carry mass."
                )
            f = f[:, self.support]
        return f, single

    def _single(self, f) -> np.ndarray:
        """A single non-negative frequency vector of length K (checked against the support)."""
        g, single = self._frequencies(f, nonnegative=True)
        if not single:
            raise ValueError(f"f must be a single frequency vector of shape ({self.n_cells},).")
        if self._outside.size:
            full = np.zeros(self.n_cells)
            full[self.support] = g[0]
            return full
        return g[0]

    def _chunks(self, n_rows):
        """Row slices of a batch whose ``rows x S`` temporaries stay below CHUNK_ELEMENTS."""
        step = max(1, CHUNK_ELEMENTS // max(self.n_segments, 1))
        return [slice(start, start + step) for start in range(0, n_rows, step)]

    # ------------------------------------------------------------------ primal value
    def value(self, f, epsilon, *, on_support=False):
        """Audit value ``psi(f)`` for one frequency vector or a batch of them.

        Parameters
        ----------
        f : array-like of shape (K,) or (B, K)
            Non-negative cell frequencies (need not sum to one: ``psi`` is positively
            homogeneous in ``f``).
        epsilon : float
            Transport budget, finite and >= 0.
        on_support : bool, default=False
            ``f`` holds only the frequencies of the ``support`` cells, shape ``(n_support,)``
            or ``(B, n_support)`` (what a bootstrap of the audit counts draws).

        Returns
        -------
        float or ndarray of shape (B,)

        Notes
        -----
        With ``w_bs = f_{b, row(s)} dc_s`` and prefix sums ``W_bt`` along the sorted segments,
        the first ``n_b = #{t : W_bt <= epsilon}`` segments fit entirely and segment
        ``n_b + 1`` is taken for the leftover budget at its slope. Time is ``O(B S)``; memory
        is bounded by evaluating the batch in chunks of rows.
        """
        return self._evaluate(f, epsilon, self._value_batch, True, on_support)

    def _evaluate(self, f, epsilon, kernel, nonnegative, on_support):
        """``kernel`` on a batch of frequency vectors, chunk by chunk."""
        epsilon = check_epsilon(epsilon)
        f, single = self._frequencies(f, nonnegative=nonnegative, on_support=on_support)
        out = np.empty(f.shape[0])
        for rows in self._chunks(f.shape[0]):
            out[rows] = kernel(f[rows], epsilon)
        return float(out[0]) if single else out

    def _prefix_sums(self, f):
        """``f·b``, the mass of each segment's row, and the cumulative costs and gains."""
        mass = f[:, self.segment_position]
        return (
            row_dot(f, self._support_base_gain),
            mass,
            np.cumsum(mass * self.segment_cost, axis=1),
            np.cumsum(mass * self.segment_gain, axis=1),
        )

    def _value_batch(self, f, epsilon):
        if not self.n_segments:
            return row_dot(f, self._support_base_gain)
        total, _, spent, gained = self._prefix_sums(f)
        return _greedy(total, spent, gained, lambda t: self.segment_slope[t], epsilon)

    def value_of_resamples(self, positions, epsilon):
        """``psi`` of resampled audit rows, given as the support positions of their cells.

        ``positions[b]`` holds the cells (positions in ``support``) of the ``m`` rows of
        replicate ``b``; its frequency vector is their counts divided by ``m``. Equals
        ``value(counts / m, epsilon, on_support=True)`` up to rounding, in ``O(m log m)`` time
        per replicate instead of ``O(S)``: only the segments of rows that were drawn are
        read. This is what makes the m-out-of-n bootstrap of a large audit cheap.

        Parameters
        ----------
        positions : array-like of int of shape (B, m)
            Support positions of the resampled rows of each replicate.
        epsilon : float
            Transport budget, finite and >= 0.

        Returns
        -------
        ndarray of shape (B,)
        """
        epsilon = check_epsilon(epsilon)
        positions = np.asarray(positions)
        if positions.ndim != 2 or positions.dtype.kind not in "iu":
            raise ValueError("positions must be a 2-D array of support positions (B, m).")
        n_rep, m = positions.shape
        if not m:
            raise ValueError("each replicate must hold at least one row.")
        if positions.size and (positions.min() < 0 or positions.max() >= self.support.size):
            raise ValueError(f"positions must lie in [0, {self.support.size}).")
        start_of, ranks = self._segments_by_position()
        out = np.empty(n_rep)
        # Replicates in chunks so that the expanded segments stay within CHUNK_ELEMENTS.
        per_replicate = m * max(1, -(-self.n_segments // max(self.support.size, 1)))
        step = max(1, CHUNK_ELEMENTS // (4 * per_replicate))
        for first in range(0, n_rep, step):
            block = np.sort(positions[first:first + step], axis=1)
            out[first:first + step] = self._sparse_values(block, m, epsilon, start_of, ranks)
        return out

    def _segments_by_position(self):
        """Segments grouped by the support position of their row (in slope order within)."""
        cached = self.__dict__.get("_by_position")
        if cached is None:
            order = np.argsort(self.segment_position, kind="stable")
            start_of = np.searchsorted(self.segment_position[order],
                                       np.arange(self.support.size + 1))
            cached = (start_of, order)
            object.__setattr__(self, "_by_position", cached)
        return cached

    def _sparse_values(self, block, m, epsilon, start_of, ranks):
        n_rep = block.shape[0]
        new = np.ones(block.shape, dtype=bool)
        new[:, 1:] = block[:, 1:] != block[:, :-1]
        rep, col = np.nonzero(new)
        # Run lengths: the distance to the next run start (or the end of the row).
        flat = rep * m + col
        ends = np.append(flat[1:], n_rep * m)
        ends = np.where(np.append(rep[1:], n_rep) != rep, (rep + 1) * m, ends)
        weight = (ends - flat) / m
        position = block[rep, col]
        base = np.bincount(rep, weights=weight * self._support_base_gain[position],
                           minlength=n_rep)
        n_seg = start_of[position + 1] - start_of[position]
        if not n_seg.sum():
            return base
        owner = np.repeat(rep, n_seg)
        within = np.arange(n_seg.sum()) - np.repeat(np.cumsum(n_seg) - n_seg, n_seg)
        segment = ranks[np.repeat(start_of[position], n_seg) + within]
        mass = np.repeat(weight, n_seg)
        order = np.lexsort((segment, owner))
        owner, segment, mass = owner[order], segment[order], mass[order]
        # Each replicate's segments left-aligned in slope order; zero padding is neutral.
        width = int(np.bincount(owner, minlength=n_rep).max())
        column = np.arange(owner.size) - np.searchsorted(owner, owner)
        cost = np.zeros((n_rep, width))
        gain = np.zeros((n_rep, width))
        slope = np.zeros((n_rep, width))
        cost[owner, column] = mass * self.segment_cost[segment]
        gain[owner, column] = mass * self.segment_gain[segment]
        slope[owner, column] = self.segment_slope[segment]
        return _greedy(
            base, np.cumsum(cost, axis=1), np.cumsum(gain, axis=1),
            lambda t: np.take_along_axis(slope, t[:, None], 1)[:, 0], epsilon,
        )

    # ------------------------------------------------------------------ dual value
    def dual_value(self, f, epsilon, *, on_support=False):
        """Dual formula of the audit value, defined for any real ``f``.

        .. math::

            \\min_{\\lambda \\ge 0} \\; \\lambda \\varepsilon + \\sum_i f_i u_i(\\lambda),
            \\qquad u_i(\\lambda) = \\max_{j \\text{ allowed}} R_{ij} - \\lambda C_{ij}.

        For ``f >= 0`` it equals :meth:`value` (LP duality). For signed ``f`` (the numerical
        bootstrap perturbs the pmf and may leave the simplex) it extends ``psi`` as the
        minimum of the same affine functions of ``f``.

        Parameters
        ----------
        f : array-like of shape (K,) or (B, K)
            Real vector(s); negative entries are allowed (but not outside the support).
        epsilon : float
            Transport budget, finite and >= 0.
        on_support : bool, default=False
            ``f`` holds only the entries of the ``support`` cells (see :meth:`value`).

        Returns
        -------
        float or ndarray of shape (B,)

        Notes
        -----
        The objective is piecewise linear in ``lambda`` with breakpoints at the segment slopes,
        so the minimum is attained in ``{0} ∪ {slope_t}``. With segments sorted by slope,
        ``sum_i f_i u_i(slope_t) = f·b + sum_{s < t} f_{row(s)} (dr_s - slope_t dc_s)`` (tied
        slopes contribute zero), computed from prefix sums in ``O(B S)``.
        """
        return self._evaluate(f, epsilon, self._dual_batch, False, on_support)

    def _dual_batch(self, f, epsilon):
        if not self.n_segments:
            return row_dot(f, self._support_base_gain)
        base, mass, spent, gained = self._prefix_sums(f)
        at_zero = base + gained[:, -1]
        spent_before = spent - mass * self.segment_cost
        gained_before = gained - mass * self.segment_gain
        at_slopes = gained_before + self.segment_slope * (epsilon - spent_before)
        return np.minimum(at_zero, base + at_slopes.min(axis=1))

    # ------------------------------------------------------------------ kinks and duals
    def _groups(self, f: np.ndarray):
        """Slopes and cumulative costs/gains at the ends of equal-slope groups of segments
        that carry mass under ``f`` (segments of empty rows cost and gain nothing)."""
        weight = f[self.segment_row]
        spent = weight * self.segment_cost
        keep = spent > 0
        slopes = self.segment_slope[keep]
        ends = np.flatnonzero(np.append(slopes[1:] != slopes[:-1], True)) if slopes.size else []
        spent_cum = np.cumsum(spent[keep])[ends]
        gained_cum = np.cumsum((weight * self.segment_gain)[keep])[ends]
        return slopes[ends], spent_cum, gained_cum

    def dual_multipliers(self, f, epsilon, *, rtol=1e-12) -> tuple[float, float]:
        """Interval ``[lambda_low, lambda_high]`` of optimal multipliers of the budget.

        Parameters
        ----------
        f : array-like of shape (K,)
            Non-negative cell frequencies.
        epsilon : float
            Transport budget, finite and >= 0.
        rtol : float, default=1e-12
            ``epsilon`` counts as exactly at a kink when it is within
            ``rtol * max(epsilon, total cost of all segments)`` of a cumulative segment cost.

        Returns
        -------
        lambda_low, lambda_high : float
            The optimal set of the dual; the multiplier (and the derivative of ``psi`` in
            ``f``) is unique iff they are equal. ``lambda_high`` may be ``np.inf``.

        Notes
        -----
        Let ``sigma_1 > ... > sigma_m`` be the distinct slopes of the segments with mass,
        ``P_k`` the total cost of the groups ``1..k`` (``P_0 = 0``), ``sigma_0 = inf`` and
        ``sigma_{m+1} = 0``. The dual objective has slope ``epsilon - P_k`` on
        ``(sigma_{k+1}, sigma_k)``, hence the optimal set is ``{sigma_k}`` when
        ``P_{k-1} < epsilon < P_k``, ``[sigma_{k+1}, sigma_k]`` when ``epsilon = P_k``
        (a kink of ``epsilon -> psi``; ``epsilon = 0`` gives ``[sigma_1, inf)``) and
        ``{0}`` when the budget is slack (``epsilon > P_m``).
        """
        epsilon = check_epsilon(epsilon)
        rtol = _check_tolerance(rtol, "rtol")
        f = self._single(f)
        slopes, spent, _ = self._groups(f)
        sigma = np.concatenate(([np.inf], slopes, [0.0]))
        totals = np.concatenate(([0.0], spent))
        tol = rtol * max(epsilon, totals[-1])
        at_kink = np.flatnonzero(np.abs(epsilon - totals) <= tol)
        if at_kink.size:
            return float(sigma[at_kink[-1] + 1]), float(sigma[at_kink[0]])
        k = int(np.searchsorted(totals, epsilon, side="right"))
        return float(sigma[k]), float(sigma[k])

    # ------------------------------------------------------------------ value curve
    def curve(self, f) -> tuple[np.ndarray, np.ndarray]:
        """Breakpoints of the concave, piecewise-linear curve ``epsilon -> psi(f)``.

        Parameters
        ----------
        f : array-like of shape (K,)
            Non-negative cell frequencies.

        Returns
        -------
        epsilons, values : ndarray of shape (m + 1,)
            ``epsilons[0] = 0`` and one breakpoint per group of equal-slope segments with
            mass; ``psi`` is linear between breakpoints and constant (``values[-1]``) beyond
            the last one, where the budget is no longer binding.
        """
        f = self._single(f)
        _, spent, gained = self._groups(f)
        base = float(f @ self.base_gain)
        return np.concatenate(([0.0], spent)), base + np.concatenate(([0.0], gained))

    def value_curve(self, f, epsilons) -> np.ndarray:
        """``psi(f)`` at many budgets, by interpolating :meth:`curve`.

        Parameters
        ----------
        f : array-like of shape (K,)
            Non-negative cell frequencies.
        epsilons : array-like of float
            Finite non-negative budgets, any shape.

        Returns
        -------
        ndarray of the shape of ``epsilons``
        """
        epsilons = np.asarray(epsilons, dtype=float)
        if not np.all(np.isfinite(epsilons)) or (epsilons < 0).any():
            raise ValueError("epsilons must be finite and non-negative.")
        breaks, values = self.curve(f)
        return np.interp(epsilons, breaks, values)

    # ------------------------------------------------------------------ optimal plan
    def _destinations(self, f: np.ndarray, epsilon: float):
        """Final destination of every row, plus the split ``(row, source, target, share)``
        of the one fractional segment (or ``None``)."""
        destination = self.base_destination.copy()
        n_seg = self.n_segments
        if not n_seg:
            return destination, None
        spent = np.cumsum(f[self.segment_row] * self.segment_cost)
        n_full = int(np.count_nonzero(spent <= epsilon))
        if n_full:
            # The taken segments of a row are a prefix of its hull: keep the last one.
            last = np.full(self.n_cells, -1)
            np.maximum.at(last, self.segment_row[:n_full], np.arange(n_full))
            moved = last >= 0
            destination[moved] = self.segment_target[last[moved]]
        if n_full == n_seg:
            return destination, None
        row = int(self.segment_row[n_full])
        leftover = epsilon - (spent[n_full - 1] if n_full else 0.0)
        share = min(max(leftover / (f[row] * self.segment_cost[n_full]), 0.0), 1.0)
        split = (row, int(self.segment_source[n_full]), int(self.segment_target[n_full]), share)
        return destination, split

    def plan_entries(self, f, epsilon):
        """An optimal transport plan ``Pi`` as its non-zero entries (no ``K x K`` array).

        Each cell ships its whole mass to one destination, except at most one cell, which
        splits its mass between the two ends of the segment where the budget runs out.

        Parameters
        ----------
        f : array-like of shape (K,)
            Non-negative cell frequencies.
        epsilon : float
            Transport budget, finite and >= 0.

        Returns
        -------
        source, target : ndarray of int
            The moves ``Pi[source, target] > 0`` (staying put is ``source == target``), sorted
            by source, then target.
        mass : ndarray of float
            ``Pi[source, target]``: ``Pi 1 = f``, ``<C, Pi> <= epsilon``, zero on forbidden moves
            and ``<R, Pi> = psi(f)``.
        """
        epsilon = check_epsilon(epsilon)
        f = self._single(f)
        destination, split = self._destinations(f, epsilon)
        source = np.flatnonzero(f > 0)
        target, mass = destination[source], f[source]
        if split is not None:
            row, start, end, share = split
            at = int(np.searchsorted(source, row))
            parts = [(start, f[row] * (1.0 - share)), (end, f[row] * share)]
            parts = [(t, m) for t, m in parts if m > 0]
            source = np.concatenate([source[:at], [row] * len(parts), source[at + 1:]])
            target = np.concatenate([target[:at], [t for t, _ in parts], target[at + 1:]])
            mass = np.concatenate([mass[:at], [m for _, m in parts], mass[at + 1:]])
        order = np.lexsort((target, source))
        return source[order].astype(np.intp), target[order].astype(np.intp), mass[order]

    def plan(self, f, epsilon, *, memory_limit=DEFAULT_MEMORY_LIMIT) -> np.ndarray:
        """An optimal transport plan ``Pi`` as a dense ``K x K`` array.

        Parameters
        ----------
        f : array-like of shape (K,)
            Non-negative cell frequencies.
        epsilon : float
            Transport budget, finite and >= 0.
        memory_limit : int, float, str or None, default="2GiB"
            The dense plan takes ``8 K²`` bytes; larger plans are refused with
            :class:`~skfair_audit.faith.MemoryLimitError` (use :meth:`plan_entries`).

        Returns
        -------
        ndarray of shape (K, K)
            ``Pi >= 0`` with ``Pi 1 = f``, ``<C, Pi> <= epsilon``, zero on forbidden moves and
            ``<R, Pi> = psi(f)``; the entries of :meth:`plan_entries`.
        """
        check_memory(
            8 * self.n_cells**2,
            memory_limit,
            f"The dense {self.n_cells:,} x {self.n_cells:,} transport plan",
            "Use plan_entries(f, epsilon), which returns its non-zero entries only",
        )
        source, target, mass = self.plan_entries(f, epsilon)
        plan = np.zeros((self.n_cells, self.n_cells))
        plan[source, target] = mass
        return plan

    def adversarial_distribution(self, f, epsilon) -> np.ndarray:
        """The worst-case distribution ``Q = Pi^T 1`` of an optimal plan.

        ``n * (Q - f_n)`` is the change in counts shown by the paper's heat maps.

        Parameters
        ----------
        f : array-like of shape (K,)
            Non-negative cell frequencies.
        epsilon : float
            Transport budget, finite and >= 0.

        Returns
        -------
        ndarray of shape (K,)
        """
        epsilon = check_epsilon(epsilon)
        f = self._single(f)
        destination, split = self._destinations(f, epsilon)
        q = np.bincount(destination, weights=f, minlength=self.n_cells)
        if split is not None:
            row, source, target, share = split
            q[source] -= f[row] * share
            q[target] += f[row] * share
        return q
