"""The FaiTH audit LP from nearest neighbours: exact, ``O(K)`` memory, no ``K x K`` matrix.

For a metric that is the Euclidean distance between mapped points,
``c(z_i, z_j) = |p_i - p_j| ** exponent`` (the linear-map metrics: sensitive subspace,
Mahalanobis, Euclidean on chosen columns), the greedy solver of :mod:`._solver` needs, per
source cell, only the vertices of the upper concave hull of its ``(cost, gain)`` points. Among the
allowed destinations at one loss level only the *cheapest* one can be a vertex, and it is the
nearest neighbour of the source among the points at that level. So the hulls come from
nearest-neighbour queries (a k-d tree per group of allowed destinations and per loss level),
with a certificate that no unseen destination could change them:

* loss levels with a single value: the nearest destination is the only candidate; the query
  grows until the next unseen one is strictly farther (exact ties broken by the smallest cell
  index, as the dense construction does);
* losses with many values (log-loss, user losses): the values of a group are split into a
  binary tree of ranges (:class:`_LevelTree`); a source starts from the ranges above its own
  loss and accepts a range when the hull at the smallest cost an unseen destination of the
  range could have already lies above the range's best gain (``gain <= top loss - own
  loss``); otherwise it asks a leaf for more neighbours (fourfold) or descends into the
  range's two halves.

The result is the same :class:`~._solver.TransportProblem` as the dense construction: equal
hulls, equal segments, equal plans. Costs of the pairs it uses are computed by the same
formula as :func:`dense_metric_costs` (sequential sums of squared coordinate gaps, the rounding
rule of :func:`~._metric._rounding_zeros` for zero-cost moves, then the exponent), so ties
and free moves are decided identically by both.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.spatial import cKDTree
from sklearn.frozen import FrozenEstimator

from .._resampling import DEFAULT_MEMORY_LIMIT, check_memory
from ._metric import _ROUNDING_FACTOR, _check_exponent, _power_of_distance, _rounding_zeros
from ._sample_space import _unique_rows
from ._solver import _check_tolerance, assemble_problem, hull_segments, sort_candidates

__all__ = [
    "dense_metric_costs", "metric_points", "prepare_metric_transport",
    "prepare_small_group_transport",
]

_EPS = np.finfo(np.float64).eps

#: Sources whose nearest-neighbour candidates are processed together (bounds memory).
SOURCE_CHUNK = 2**15

#: First number of neighbours asked per (source, node) for nodes with one loss value and with
#: several; a leaf's ``k`` grows fourfold until its certificate holds.
FIRST_K = 2
FIRST_K_RANGE = 4

#: Bytes per cell the construction holds (indices, losses, groups, bases, tree nodes).
BYTES_PER_CELL = 96


# --------------------------------------------------------------------------- pair costs
def squared_norms(points):
    """``|p|^2`` of every point, summed coordinate by coordinate (the order of every path)."""
    points = np.asarray(points, dtype=np.float64)
    out = np.zeros(points.shape[0])
    for k in range(points.shape[1]):
        out += points[:, k] * points[:, k]
    return out


def squared_gaps(a, b):
    """``|a - b|^2`` for aligned rows (broadcasting), coordinate by coordinate.

    One summation order for the dense matrix and for the pairs the neighbour search picks,
    so that both see bitwise-equal costs (equal ties, equal free moves).
    """
    out = None
    for k in range(a.shape[-1]):
        gap = a[..., k] - b[..., k]
        out = gap * gap if out is None else out + gap * gap
    if out is None:
        return np.zeros(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]))
    return out


def pair_costs(points, sq_norm, i, j, exponent):
    """Costs ``|p_i - p_j| ** exponent`` of the point pairs ``(i, j)`` (arrays of one shape)."""
    squared = squared_gaps(points[i], points[j])
    squared[_rounding_zeros(squared, sq_norm[i], sq_norm[j])] = 0.0
    return _power_of_distance(squared, exponent)


def dense_metric_costs(points, exponent=2, point_index=None):
    """Dense ``K x K`` costs ``|p_i - p_j| ** exponent``, by the formula of the sparse path.

    The reference the nearest-neighbour construction is tested against (and the dense path's
    cost for points): ``prepare_transport(loss, dense_metric_costs(points), forbidden)`` equals
    ``prepare_metric_transport(loss, points, ...)`` with the corresponding groups.

    Parameters
    ----------
    points : array-like of shape (P, r)
    exponent : float, default=2
    point_index : array-like of int of shape (K,), default=None
        Point of each cell (default: cell ``k`` is point ``k``).

    Returns
    -------
    ndarray of shape (K, K)
    """
    points = np.asarray(points, dtype=np.float64)
    exponent = _check_exponent(exponent)
    index = np.arange(points.shape[0]) if point_index is None else np.asarray(point_index)
    sq_norm = squared_norms(points)
    cost = pair_costs(points, sq_norm, index[:, None], index[None, :], exponent)
    cost[np.arange(index.size), np.arange(index.size)] = 0.0
    return cost


# --------------------------------------------------------------------------- metric points
def _unwrap(metric):
    return metric.estimator if isinstance(metric, FrozenEstimator) else metric


def metric_points(metric, X, *, check_rows=64):
    """Points where a fitted metric's cost is ``|p - p'| ** exponent``, or None.

    A metric qualifies when it has ``transform`` and ``exponent`` and its ``cost_matrix`` is
    ``|transform(a) - transform(b)| ** exponent`` (checked on up to ``check_rows`` rows of
    ``X``): the linear-map metrics of this package (sensitive subspace, Mahalanobis, Euclidean
    on columns) and any metric built the same way. Precomputed and callable metrics do not.

    For a linear (or affine) map ``x -> x M`` the points are coordinates in an orthonormal
    basis of the map's range, ``x U_r S_r`` from the SVD ``M = U S V^T`` (``r`` = numerical
    rank): the distances are those of the map, in ``r`` dimensions. Coordinates of ``x`` that
    the map ignores (zero rows of ``M``, e.g. protected attributes under the sensitive-subspace
    projector, columns left out of a Euclidean metric) are dropped before the product, so that
    rows which differ only there share one point exactly.

    Parameters
    ----------
    metric : fitted metric object (or a FrozenEstimator around one)
    X : array-like of shape (n, d)
        The numeric encoding of the cells' features (``space.encode_feature_cells()``).
    check_rows : int, default=64
        Rows on which ``cost_matrix`` is compared with the points' costs.

    Returns
    -------
    (points, point_index, exponent) or None
        ``points`` of shape (P, r); ``point_index`` of shape (n,) maps each row of ``X`` to
        its point.
    """
    base = _unwrap(metric)
    if not (hasattr(base, "transform") and hasattr(base, "exponent")
            and hasattr(base, "cost_matrix")):
        return None
    exponent = _check_exponent(base.exponent)
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    basis = np.asarray(metric.transform(np.eye(d)), dtype=np.float64)
    origin = np.asarray(metric.transform(np.zeros((1, d))), dtype=np.float64)
    points = point_index = None
    if basis.ndim == 2 and basis.shape[0] == d and origin.shape == (1, basis.shape[1]):
        matrix = basis - origin
        probe = X[_probe_rows(n, check_rows)]
        mapped = np.asarray(metric.transform(probe), dtype=np.float64)
        scale = max(1.0, float(np.abs(mapped).max(initial=0.0)))
        if np.allclose(probe @ matrix + origin, mapped, rtol=0, atol=1e-10 * scale):
            points, point_index = _linear_points(X, matrix)
    if points is None:
        # Not affine (or not checkable): the map's outputs themselves, one per distinct row.
        rows, point_index = _unique_rows(X)
        points = np.asarray(metric.transform(rows), dtype=np.float64)
    probe = _probe_rows(n, check_rows)
    expected = np.asarray(metric.cost_matrix(X[probe]), dtype=np.float64)
    ours = dense_metric_costs(points, exponent, point_index[probe])
    scale = max(1.0, float(np.abs(expected[np.isfinite(expected)]).max(initial=0.0)))
    if expected.shape != ours.shape or not np.allclose(ours, expected, rtol=1e-9,
                                                       atol=1e-9 * scale):
        return None
    return points, point_index, exponent


def _probe_rows(n, count):
    return np.unique(np.linspace(0, n - 1, num=min(n, count)).astype(np.intp))


def _linear_points(X, matrix):
    u, singular, _ = np.linalg.svd(matrix, full_matrices=False)
    top = float(singular.max(initial=0.0))
    tol = top * max(matrix.shape) * _EPS
    rank = int(np.count_nonzero(singular > tol)) if top > 0 else 0
    weights = u[:, :rank] * singular[:rank]
    # Coordinates the map ignores: equal rows up to them share one point, bit for bit.
    kept = np.flatnonzero(np.linalg.norm(matrix, axis=1) > tol) if rank else np.empty(0, int)
    keys, point_index = _unique_rows(X[:, kept])
    return keys @ weights[kept], point_index


# --------------------------------------------------------------------------- neighbours
class _Neighbours:
    """Exact k-nearest points of one bucket (a k-d tree), with a bound on the unseen ones."""

    def __init__(self, points):
        self.size = points.shape[0]
        self.dim = points.shape[1]
        self.tree = cKDTree(points if self.dim else np.zeros((self.size, 1)))
        # Relative slack between the tree's distances and ``squared_gaps``.
        self.slack = 1.0 - 32.0 * (self.dim + 4) * _EPS

    def query(self, queries, k, workers=1):
        """Indices of the ``k`` nearest points (by the tree), and a lower bound of the squared
        distance of every point not returned (``inf`` when all are returned)."""
        k = min(k, self.size)
        if not self.dim:
            queries = np.zeros((queries.shape[0], 1))
        distance, index = self.tree.query(queries, k=k, workers=workers)
        distance = np.asarray(distance, dtype=np.float64).reshape(queries.shape[0], k)
        index = np.asarray(index, dtype=np.intp).reshape(queries.shape[0], k)
        if k == self.size:
            return index, np.full(queries.shape[0], np.inf)
        return index, distance[:, -1] ** 2 * self.slack


class _Node:
    """Destinations of one group at a range of loss levels, one per distinct point; its k-d
    tree is built on first use."""

    def __init__(self, cells, loss, point_index, points, sq_norm):
        point = point_index[cells]
        # One destination per point: the highest loss, then the smallest cell (dense ties).
        order = np.lexsort((cells, -loss[cells], point))
        first = np.ones(order.size, dtype=bool)
        first[1:] = point[order][1:] != point[order][:-1]
        self.cells = cells[order[first]]
        self.points = point[order[first]]
        self.max_sq_norm = float(sq_norm[self.points].max())
        self.neighbours = _Neighbours(points[self.points])


class _LevelTree:
    """The destinations of one group, split by loss level into a binary tree of nodes.

    A node holds the destinations at a contiguous range of the group's sorted distinct loss
    levels. With few distinct levels every level is a leaf; with many, nodes are split at
    the median destination until they hold at most ``leaf_size`` destinations. A source with
    loss ``l`` starts from the nodes that cover the levels above ``l`` (a canonical cover: at
    most two nodes per depth) and descends into the children of a node whose certificate fails.
    """

    def __init__(self, members, loss, point_index, points, sq_norm, max_levels, leaf_size):
        self._args = (loss, point_index, points, sq_norm)
        level_loss = loss[members]
        self.levels = np.unique(level_loss)
        level = np.searchsorted(self.levels, level_loss)
        # Level index of every cell of the group (cells of other groups never show up).
        self.cell_level = np.full(loss.size, -1, dtype=np.intp)
        self.cell_level[members] = level
        order = np.argsort(level, kind="stable")
        self.members = members[order]
        self.member_level = level[order]
        starts = np.searchsorted(self.member_level, np.arange(self.levels.size + 1))
        split_all = self.levels.size <= max_levels
        lo, hi, parent, left, right = [0], [self.levels.size - 1], [-1], [], []
        node = 0
        while node < len(lo):
            a, b = lo[node], hi[node]
            count = starts[b + 1] - starts[a]
            if a < b and (split_all or count > leaf_size):
                middle = int(np.searchsorted(starts, starts[a] + count / 2.0))
                middle = min(max(middle, a + 1), b)
                left.append(len(lo))
                right.append(len(lo) + 1)
                lo += [a, middle]
                hi += [middle - 1, b]
                parent += [node, node]
            else:
                left.append(-1)
                right.append(-1)
            node += 1
        self.lo, self.hi = np.array(lo), np.array(hi)
        self.parent, self.left, self.right = np.array(parent), np.array(left), np.array(right)
        self.top = self.levels[self.hi]
        self.single = self.lo == self.hi
        self.size = starts[self.hi + 1] - starts[self.lo]
        self._starts = starts
        self._nodes = {}
        self._n_points = self.size.astype(np.intp)

    def node(self, i) -> _Node:
        if i not in self._nodes:
            start, stop = self._starts[self.lo[i]], self._starts[self.hi[i] + 1]
            self._nodes[i] = _Node(np.sort(self.members[start:stop]), *self._args)
            self._n_points[i] = self._nodes[i].neighbours.size
        return self._nodes[i]

    def n_points(self, nodes):
        """Distinct points of each node (its number of cells before the node is built)."""
        return self._n_points[nodes]

    def cover(self, first_level):
        """(source position, node) pairs covering, for each source, the levels from
        ``first_level`` (the first level above its loss) to the top."""
        order = np.argsort(first_level, kind="stable")
        q = first_level[order]
        parent_lo = np.where(self.parent >= 0, self.lo[np.maximum(self.parent, 0)], -1)
        leaf = self.left < 0
        src, nodes = [], []
        for i in range(self.lo.size):
            # Whole node above the loss, its parent not: the node is in the cover; a leaf that
            # straddles the loss is taken as well (its lower levels are useless, not wrong).
            low = parent_lo[i] + 1
            high = self.hi[i] if leaf[i] else self.lo[i]
            a, b = np.searchsorted(q, [max(low, 0), high + 1])
            if b > a:
                src.append(order[a:b])
                nodes.append(np.full(b - a, i, dtype=np.intp))
        if not src:
            return np.empty(0, np.intp), np.empty(0, np.intp)
        return np.concatenate(src).astype(np.intp), np.concatenate(nodes)


def prepare_metric_transport(
    loss,
    points,
    *,
    exponent=2,
    point_index=None,
    groups=None,
    rows=None,
    destinations=None,
    unsearched=None,
    max_levels=32,
    leaf_size=256,
    rtol=1e-12,
    memory_limit=DEFAULT_MEMORY_LIMIT,
    workers=1,
):
    """Prepare the FaiTH audit LP for costs ``|p_i - p_j| ** exponent`` without a ``K x K`` matrix.

    The exact equivalent of ``prepare_transport(loss, C, D)`` with
    ``C[i, j] = |points[point_index[i]] - points[point_index[j]]| ** exponent`` and ``D``
    forbidding moves between different ``groups``, built from nearest-neighbour queries in
    ``O(K)`` memory and, for losses with few distinct values (the 0-1 loss), ``O(K log K)``
    time.

    Parameters
    ----------
    loss : array-like of shape (K,)
        Loss of the audited model at each cell.
    points : array-like of shape (P, r)
        Mapped points (see :func:`metric_points`): the cost between two cells is the Euclidean
        distance of their points to the power ``exponent``.
    exponent : float, default=2
        Power of the distance in the cost.
    point_index : array-like of int of shape (K,), default=None
        Point of each cell; None means cell ``k`` is point ``k`` (then ``P = K``).
    groups : array-like of shape (K,), default=None
        Moves are allowed only between cells of the same group (FaiTH forbids label changes:
        the group of a cell is its label, crossed with the values of frozen features). None
        allows every move.
    rows : array-like of int or bool mask, default=None
        The source cells to build (the support of the frequencies to evaluate, e.g. the cells
        with audit rows: every bootstrap resample lives there). None builds every cell.
    destinations : array-like of int or bool mask, default=None
        The cells a source may move to (within its group); None: every cell. Staying put is
        always allowed. The FaiTH audit on a reference set fixes its destinations this way
        before the audit sample is seen (``FaithAuditor(space="reference")``).
    unsearched : array-like of int or bool mask, default=None
        Sources of ``rows`` left out of the search: they stay put in the result. For joining
        (:func:`combine_moves`) with another construction that already gives them a gain
        no destination here can beat; the joined problem is then exact.
    max_levels : int, default=32
        With at most this many distinct loss values in a group every value is searched on its
        own; with more, the values are split into a tree of ranges (see Notes).
    leaf_size : int, default=256
        Destinations below which a range of many loss values is not split further.
    rtol : float, default=1e-12
        Costs ``<= rtol`` times the largest cost are free moves, as in
        :func:`prepare_transport` (relative, so that the units of the metric do not matter;
        the largest cost is bounded by the diagonal of the points' bounding box).
    memory_limit : int, float, str or None, default="2GiB"
        Budget of the construction (linear in ``K``); refused beforehand when exceeded.
    workers : int, default=1
        Threads of each nearest-neighbour query (``-1``: all cores); the answers, and so the
        result, do not depend on it.

    Returns
    -------
    TransportProblem
        With ``support = rows``.

    Notes
    -----
    Zero-cost moves are the pairs whose squared distance is within rounding error of zero
    (:func:`~skfair_audit.faith._metric._rounding_zeros`, the rule of the dense cost matrix).
    Ties in cost at one gain are broken by the smallest destination cell, as in
    :func:`prepare_transport`; the segments, and hence values, curves and plans, are the
    dense construction's.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith import prepare_metric_transport, prepare_transport
    >>> rng = np.random.default_rng(0)
    >>> points = rng.normal(size=(200, 2))
    >>> loss = (points[:, 0] + rng.normal(size=200) > 0).astype(float)
    >>> label = rng.integers(0, 2, 200)
    >>> sparse = prepare_metric_transport(loss, points, groups=label)
    >>> dense = prepare_transport(
    ...     loss, ((points[:, None] - points[None]) ** 2).sum(-1), label[:, None] != label)
    >>> f = rng.dirichlet(np.ones(200))
    >>> bool(abs(sparse.value(f, 0.05) - dense.value(f, 0.05)) < 1e-12)
    True
    """
    loss, points, exponent, atol, point_index, groups, rows, is_destination = _checked(
        loss, points, exponent, rtol, point_index, groups, rows, destinations)
    n_cells = loss.size
    for name, value in (("max_levels", max_levels), ("leaf_size", leaf_size)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}.")
    check_memory(
        n_cells * BYTES_PER_CELL + points.nbytes * 4
        + _tree_bytes(n_cells, points.shape[1], loss, max_levels, leaf_size),
        memory_limit,
        f"The nearest-neighbour transport problem on K = {n_cells:,} cells",
        "Audit fewer cells (round continuous features or audit a sample)",
    )

    points, point_index = _merge_points(points, point_index, exponent, atol)
    sq_norm = squared_norms(points)
    base_gain = np.zeros(n_cells)
    base_destination = np.arange(n_cells, dtype=np.intp)
    parts = []
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.diff(groups[order])) + 1
    is_row = np.zeros(n_cells, dtype=bool)
    is_row[rows] = True
    if unsearched is not None:
        is_row[_check_rows(unsearched, n_cells)] = False
    for members in np.split(order, bounds):
        sources = members[is_row[members]]
        targets = members[is_destination[members]]
        if not sources.size or not targets.size or loss[targets].max() <= loss[sources].min():
            continue
        tree = _LevelTree(targets, loss, point_index, points, sq_norm, max_levels, leaf_size)
        for start in range(0, sources.size, SOURCE_CHUNK):
            chunk = sources[start:start + SOURCE_CHUNK]
            gain, dest, part = _settle(
                chunk, tree, loss, points, point_index, sq_norm, exponent, atol, workers
            )
            base_gain[chunk], base_destination[chunk] = gain, dest
            if part:
                parts.append(part)
    if parts:
        # Groups interleave the rows: put the segments back in row order (hull order within).
        row = np.concatenate([p["row"] for p in parts])
        by_row = np.argsort(row, kind="stable")
        parts = [{key: np.concatenate([p[key] for p in parts])[by_row] for key in parts[0]}]
    return assemble_problem(loss, base_gain, base_destination, parts, support=rows)


def prepare_small_group_transport(
    loss,
    points,
    groups,
    *,
    exponent=2,
    point_index=None,
    rows=None,
    destinations=None,
    rtol=1e-12,
    memory_limit=DEFAULT_MEMORY_LIMIT,
):
    """The FaiTH audit LP when every group of allowed moves is small: all pairs, no search.

    The same problem as :func:`prepare_metric_transport` with the same arguments, built by
    pairing each source with every destination of its group, which is faster when groups
    hold a handful of cells each (the counterfactual twins of an audit row: one cell per
    combination of protected levels). Costs are those of the dense construction
    (:func:`pair_costs`), so ties and free moves are decided identically.

    Parameters
    ----------
    loss : array-like of shape (K,)
    points : array-like of shape (P, r)
    groups : array-like of shape (K,)
        Moves are allowed only within a group.
    exponent, point_index, rows, destinations, rtol, memory_limit
        As in :func:`prepare_metric_transport`.

    Returns
    -------
    TransportProblem
    """
    loss, points, exponent, atol, point_index, groups, rows, is_destination = _checked(
        loss, points, exponent, rtol, point_index, groups, rows, destinations)
    n_cells = loss.size
    targets = np.flatnonzero(is_destination)
    targets = targets[np.argsort(groups[targets], kind="stable")]
    start = np.searchsorted(groups[targets], np.arange(groups.max() + 2 if n_cells else 1))
    width = np.diff(start)[groups[rows]]
    check_memory(
        int(width.sum()) * 64 + n_cells * BYTES_PER_CELL, memory_limit,
        f"The transport problem of {rows.size:,} sources within their groups",
        "Audit fewer cells",
    )
    sq_norm = squared_norms(points)
    base_gain = np.zeros(n_cells)
    base_destination = np.arange(n_cells, dtype=np.intp)
    parts = []
    for chunk in _row_chunks(width):
        sources = rows[chunk]
        owner = np.repeat(np.arange(sources.size), width[chunk])
        offset = np.arange(owner.size) - np.repeat(np.cumsum(width[chunk]) - width[chunk],
                                                   width[chunk])
        cells = targets[start[groups[sources]][owner] + offset]
        cost = pair_costs(points, sq_norm, point_index[sources][owner], point_index[cells],
                          exponent)
        cost[cost <= atol] = 0.0
        hull = _hulls(np.arange(sources.size), owner, cells, cost, loss, sources,
                      loss[sources])
        base_gain[sources] = hull["base_gain"]
        base_destination[sources] = hull["base_dest"]
        segments = hull["segments"]
        parts.append({key: segments[key] for key in ("row", "source", "target", "cost", "gain")})
    return assemble_problem(loss, base_gain, base_destination, parts, support=rows)


def _merge_points(points, point_index, exponent, atol):
    """One point per distinct location (ties at distance zero need no search), and a single
    point when no two points are more than a cost of ``atol`` apart: every move is then free
    (a degenerate metric, e.g. a projector that kills every direction of the data)."""
    if points.shape[0] > 1:
        extent = points.max(axis=0) - points.min(axis=0)
        diameter = np.sqrt(squared_gaps(extent, np.zeros_like(extent)))
        if _power_of_distance(np.array([(diameter * (1.0 + 1e-9)) ** 2]), exponent)[0] <= atol:
            return np.zeros((1, points.shape[1])), np.zeros_like(point_index)
    locations, location_of_point = _unique_rows(points)
    return locations, location_of_point[point_index]


def _check_index(point_index, n_cells, n_points):
    if point_index is None:
        if n_points != n_cells:
            raise ValueError(
                f"points has {n_points} rows but loss has {n_cells} cells; give point_index."
            )
        return np.arange(n_cells, dtype=np.intp)
    index = np.asarray(point_index)
    if index.shape != (n_cells,) or index.dtype.kind not in "iu":
        raise ValueError(f"point_index must be {n_cells} integers, got shape {index.shape}.")
    if index.size and (index.min() < 0 or index.max() >= n_points):
        raise ValueError(f"point_index must lie in [0, {n_points}).")
    return index.astype(np.intp)


def _checked(loss, points, exponent, rtol, point_index, groups, rows, destinations):
    """The arguments shared by the transport constructions of this module, validated:
    ``(loss, points, exponent, atol, point_index, groups, rows, destination mask)``."""
    loss = np.asarray(loss, dtype=np.float64)
    if loss.ndim != 1 or loss.size == 0:
        raise ValueError(f"loss must be a non-empty 1-D array, got shape {loss.shape}.")
    if not np.all(np.isfinite(loss)):
        raise ValueError("loss must be finite (no NaN or inf).")
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2:
        raise ValueError(f"points must be a 2-D array (P, r), got shape {points.shape}.")
    if not np.all(np.isfinite(points)):
        raise ValueError("points must be finite (no NaN or inf).")
    n_cells = loss.size
    exponent = _check_exponent(exponent)
    atol = _check_tolerance(rtol, "rtol") * _largest_cost(points, exponent)
    return (loss, points, exponent, atol, _check_index(point_index, n_cells, points.shape[0]),
            _check_groups(groups, n_cells), _check_rows(rows, n_cells),
            _destination_mask(destinations, n_cells))


def _destination_mask(destinations, n_cells):
    """Boolean mask of the allowed destinations (None: every cell)."""
    if destinations is None:
        return np.ones(n_cells, dtype=bool)
    mask = np.zeros(n_cells, dtype=bool)
    mask[_check_rows(destinations, n_cells)] = True
    return mask


def _check_groups(groups, n_cells):
    if groups is None:
        return np.zeros(n_cells, dtype=np.intp)
    groups = np.asarray(groups)
    if groups.shape != (n_cells,):
        raise ValueError(f"groups must have shape ({n_cells},), got {groups.shape}.")
    if groups.dtype.kind in "iu" and groups.size and 0 <= groups.min() and (
            groups.max() < 4 * n_cells):
        # Small non-negative codes: number the present ones in order, without a sort.
        present = np.bincount(groups) > 0
        return (np.cumsum(present) - 1)[groups].astype(np.intp)
    return np.unique(groups, return_inverse=True)[1].reshape(-1).astype(np.intp)


def _check_rows(rows, n_cells):
    if rows is None:
        return np.arange(n_cells, dtype=np.intp)
    rows = np.asarray(rows)
    if rows.dtype == bool:
        if rows.shape != (n_cells,):
            raise ValueError(f"a boolean rows mask must have shape ({n_cells},).")
        return np.flatnonzero(rows).astype(np.intp)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError("rows must be a 1-D array of cell indices or a boolean mask.")
    rows = rows.astype(np.intp)
    if rows.size > 1 and not (rows[1:] > rows[:-1]).all():
        rows = np.unique(rows)
    if rows.size and (rows[0] < 0 or rows[-1] >= n_cells):
        raise ValueError(f"rows must hold cell indices in [0, {n_cells}).")
    return rows


def _settle(sources, tree, loss, points, point_index, sq_norm, exponent, atol, workers=1):
    """Bases and hull segments of ``sources`` (ascending, one group): each (source, node) pair
    is queried, its certificate checked; a failing pair grows its ``k`` (leaf) or hands over
    to the node's children."""
    n_src = sources.size
    own_loss = loss[sources]
    own_point = point_index[sources]
    first_level = np.searchsorted(tree.levels, own_loss, side="right")
    pair_src, pair_node = tree.cover(first_level)
    by_src = np.lexsort((pair_node, pair_src))
    pair_src, pair_node = pair_src[by_src], pair_node[by_src]
    pair_k = _first_k(tree, pair_node)
    floor = np.zeros(pair_src.size)
    nearest = np.full(pair_src.size, np.inf)
    active = np.ones(pair_src.size, dtype=bool)
    store = (np.empty(0, np.intp), np.empty(0, np.intp), np.empty(0))
    base_gain = np.zeros(n_src)
    base_dest = sources.copy()
    parts = []
    pending = np.arange(pair_src.size)
    while pending.size:
        new = _query(pending, pair_src, pair_node, pair_k, tree, own_point, loss, points,
                     sq_norm, exponent, atol, floor, nearest, workers)
        requeried = np.zeros(pair_src.size, dtype=bool)
        requeried[pending] = True
        keep = ~requeried[store[0]]
        store = tuple(np.concatenate([old[keep], fresh])
                      for old, fresh in zip(store, new, strict=True))
        in_todo = np.zeros(n_src, dtype=bool)
        in_todo[pair_src[pending]] = True
        todo = np.flatnonzero(in_todo)
        failing = []
        # Hulls of a bounded number of candidates at a time.
        counts = np.bincount(pair_src[store[0]], minlength=n_src)[todo]
        for rows in _row_chunks(counts):
            part_todo = todo[rows]
            mine = np.zeros(n_src, dtype=bool)
            mine[part_todo] = True
            chosen = mine[pair_src[store[0]]]
            e_pair, e_cell, e_cost = (array[chosen] for array in store)
            owner = (np.cumsum(mine) - 1)[pair_src[e_pair]]
            hull = _hulls(part_todo, owner, e_cell, e_cost, loss, sources, own_loss)
            bad = _uncertified(part_todo, mine & in_todo, active, hull, pair_src, pair_node,
                               tree, floor, nearest, own_loss, loss)
            done = np.ones(part_todo.size, dtype=bool)
            done[np.searchsorted(part_todo, pair_src[bad])] = False
            base_gain[part_todo[done]] = hull["base_gain"][done]
            base_dest[part_todo[done]] = hull["base_dest"][done]
            segments = hull["segments"]
            settled = np.isin(segments["row"], sources[part_todo[done]])
            parts.append({key: segments[key][settled]
                          for key in ("row", "source", "target", "cost", "gain")})
            failing.append(bad)
        failing = np.concatenate(failing) if failing else np.empty(0, np.intp)
        # A failing leaf asks for more neighbours; a failing inner node for its children.
        leaf = tree.left[pair_node[failing]] < 0
        grow = failing[leaf]
        pair_k[grow] = np.minimum(pair_k[grow] * 4, tree.n_points(pair_node[grow]))
        split = failing[~leaf]
        active[split] = False
        children = np.concatenate([tree.left[pair_node[split]], tree.right[pair_node[split]]])
        n_old = pair_src.size
        pair_src = np.concatenate([pair_src, pair_src[split], pair_src[split]])
        pair_node = np.concatenate([pair_node, children])
        pair_k = np.concatenate([pair_k, _first_k(tree, children)])
        floor = np.concatenate([floor, np.zeros(children.size)])
        nearest = np.concatenate([nearest, np.full(children.size, np.inf)])
        active = np.concatenate([active, np.ones(children.size, dtype=bool)])
        pending = np.concatenate([grow, np.arange(n_old, pair_src.size)])
    if not parts:
        return base_gain, base_dest, {}
    row = np.concatenate([p["row"] for p in parts])
    by_row = np.argsort(row, kind="stable")
    return base_gain, base_dest, {
        key: np.concatenate([p[key] for p in parts])[by_row] for key in parts[0]
    }


def _first_k(tree, nodes):
    return np.minimum(np.where(tree.single[nodes], FIRST_K, FIRST_K_RANGE), tree.n_points(nodes))


def _row_chunks(counts, budget=2**21):
    """Slices of consecutive sources whose padded candidate matrices (rows x widest row) stay
    within ``budget`` elements; a single row always goes."""
    chunks, start = [], 0
    while start < counts.size:
        widest = np.maximum(np.maximum.accumulate(counts[start:]), 1)
        fits = np.arange(1, widest.size + 1) * widest <= budget
        n_fit = widest.size if fits.all() else int(np.argmin(fits))
        stop = start + max(1, n_fit)
        chunks.append(slice(start, stop))
        start = stop
    return chunks


def _query(pairs, pair_src, pair_node, pair_k, tree, own_point, loss, points, sq_norm,
           exponent, atol, floor, nearest, workers=1):
    """Ask each pair's node for its current number of neighbours.

    Returns the pairs, cells and exact costs of the answers that may matter: of each pair only
    its own Pareto front (cheapest first, each beating the loss of every cheaper answer; the
    smallest cell among equal cost and loss), which for a node with one loss value is the
    nearest answer alone. ``nearest`` gets the cost of each pair's nearest answer and ``floor``
    the smallest cost a destination not returned may have.
    """
    out_pair, out_cell, out_cost = [], [], []
    for i in np.unique(pair_node[pairs]):
        node = tree.node(i)
        mine = pairs[pair_node[pairs] == i]
        for k in np.unique(pair_k[mine]):
            ask = mine[pair_k[mine] == k]
            src_point = own_point[pair_src[ask]]
            index, unseen = node.neighbours.query(points[src_point], int(k), workers)
            cells = node.cells[index]
            cost = pair_costs(points, sq_norm, src_point[:, None], node.points[index],
                              exponent)
            cost[cost <= atol] = 0.0
            level = loss[cells]
            order = np.lexsort((cells, -level, cost), axis=-1)
            cells = np.take_along_axis(cells, order, 1)
            cost = np.take_along_axis(cost, order, 1)
            level = np.take_along_axis(level, order, 1)
            front = np.ones(cells.shape, dtype=bool)
            front[:, 1:] = level[:, 1:] > np.maximum.accumulate(level, axis=1)[:, :-1]
            rows, _ = np.nonzero(front)
            out_pair.append(ask[rows])
            out_cell.append(cells[front])
            out_cost.append(cost[front])
            nearest[ask] = cost[:, 0]
            # A destination not returned is free if its squared distance may round to zero.
            may_be_free = unseen <= (
                _ROUNDING_FACTOR * _EPS * (sq_norm[src_point] + node.max_sq_norm)
                * (1.0 + 1e-6)
            )
            low = _power_of_distance(unseen, exponent)
            floor[ask] = np.where(may_be_free | (low <= atol), 0.0, low)
    return (np.concatenate(out_pair), np.concatenate(out_cell), np.concatenate(out_cost))


def _hulls(todo, owner, cells, costs, loss, sources, own_loss):
    """Base and hull of each source ``sources[todo]`` from its candidates (``owner`` is the
    position in ``todo`` of each candidate's source)."""
    n = todo.size
    src_cells = sources[todo]
    gain = loss[cells] - own_loss[todo][owner]
    # Best free move (staying put, gain 0, wins ties), smallest cell among equal gains.
    free = (costs == 0.0) & (gain > 0)
    base_gain = np.zeros(n)
    np.maximum.at(base_gain, owner[free], gain[free])
    at_base = free & (gain == base_gain[owner])
    first = np.full(n, np.iinfo(np.intp).max, dtype=np.intp)
    np.minimum.at(first, owner[at_base], cells[at_base])
    base_dest = np.where(base_gain > 0, first, src_cells)
    candidate = (costs > 0) & (gain > base_gain[owner])
    c_owner = owner[candidate]
    order = np.argsort(c_owner, kind="stable")
    c_owner = c_owner[order]
    width = int(np.bincount(c_owner, minlength=n).max()) if c_owner.size else 0
    cand_cost = np.full((n, width), np.inf)
    cand_gain = np.full((n, width), -np.inf)
    cand_dest = np.full((n, width), loss.size, dtype=np.intp)
    column = np.arange(c_owner.size) - np.searchsorted(c_owner, c_owner)
    cand_cost[c_owner, column] = costs[candidate][order]
    cand_gain[c_owner, column] = gain[candidate][order]
    cand_dest[c_owner, column] = cells[candidate][order]
    segments = hull_segments(
        src_cells, *sort_candidates(cand_cost, cand_gain, cand_dest), base_gain, base_dest,
        return_hulls=True,
    )
    return {"base_gain": base_gain, "base_dest": base_dest, "segments": segments}


def _uncertified(todo, in_todo, active, hull, pair_src, pair_node, tree, floor, nearest,
                 own_loss, loss):
    """The active pairs of the sources in ``todo`` whose unseen destinations could still
    change the hull.

    A pair is settled when its node has been read entirely (``floor = inf``), or

    * one loss value in the node: the unseen destinations cost strictly more than the nearest
      one (no tie left unseen);
    * several values: the hull at the floor cost lies above the node's best gain (value
      certificate, with a rounding margin), and the floor exceeds the cost of every vertex (or
      the free base destination) at one of the node's levels (tie certificate).
    """
    pairs = np.flatnonzero(in_todo[pair_src] & active)
    node = pair_node[pairs]
    low = floor[pairs]
    ok = np.isinf(low)
    is_single = tree.single[node]
    check = ~ok & is_single
    ok[check] = low[check] > nearest[pairs[check]]
    multi = np.flatnonzero(~ok & ~is_single)
    if multi.size:
        seg = hull["segments"]
        row_of = np.searchsorted(todo, pair_src[pairs[multi]])
        height_of = seg["height"][row_of]
        # Gather each pair's hull at the width of its own class of heights, not the widest.
        widths = np.array([2, 8, 32, 128, seg["vertex_cost"].shape[1]])
        width_class = np.minimum(np.searchsorted(widths, height_of), widths.size - 1)
        for cls in np.unique(width_class):
            these = multi[width_class == cls]
            ok[these] = _hull_certificate(
                pairs[these], row_of[width_class == cls],
                min(int(widths[cls]), seg["vertex_cost"].shape[1]), seg,
                hull["base_gain"], pair_src, pair_node, tree, floor, own_loss,
            )
    return pairs[~ok]


def _tree_bytes(n_cells, dim, loss, max_levels, leaf_size):
    """Upper bound of the k-d trees' memory: every depth of a level tree holds every point."""
    n_levels = np.unique(loss).size
    if n_levels <= max_levels:
        depth = int(np.ceil(np.log2(max(n_levels, 1)))) + 1
    else:
        depth = int(np.ceil(np.log2(max(n_cells / leaf_size, 1)))) + 1
    return depth * n_cells * (8 * max(dim, 1) + 24)


def _hull_certificate(p, row, width, seg, base_gain, pair_src, pair_node, tree, floor,
                      own_loss):
    """Value and tie certificates of multi-level pairs ``p`` whose sources' hulls are the rows
    ``row`` of the vertex arrays (at most ``width`` vertices each)."""
    node = pair_node[p]
    v_cost = seg["vertex_cost"][row, :width]
    v_gain = seg["vertex_gain"][row, :width]
    v_dest = seg["vertex_destination"][row, :width]
    height = seg["height"][row]
    c = floor[p]
    t = np.count_nonzero(v_cost <= c[:, None], axis=1)  # >= 1: vertex 0 costs 0
    last = np.take_along_axis(v_gain, (height - 1)[:, None], 1)[:, 0]
    inner = t < height
    lo = np.maximum(t - 1, 0)[:, None]
    hi = np.minimum(t, width - 1)[:, None]
    x0, y0 = np.take_along_axis(v_cost, lo, 1)[:, 0], np.take_along_axis(v_gain, lo, 1)[:, 0]
    x1, y1 = np.take_along_axis(v_cost, hi, 1)[:, 0], np.take_along_axis(v_gain, hi, 1)[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        between = y0 + (c - x0) * ((y1 - y0) / (x1 - x0))
    h = np.where(inner, between, last)
    best = tree.top[node] - own_loss[pair_src[p]]
    value_ok = best <= h - _ROUNDING_FACTOR * _EPS * (np.abs(best) + np.abs(h))
    # Vertices at one of the node's levels (vertex 0 only if the base is a real move).
    valid = np.arange(width)[None, :] < height[:, None]
    valid[:, 0] &= base_gain[row] > 0
    v_level = tree.cell_level[np.where(valid, v_dest, 0)]
    from_here = valid & (v_level >= tree.lo[node][:, None]) & (v_level <= tree.hi[node][:, None])
    top_cost = np.where(from_here, v_cost, -np.inf).max(axis=1)
    return value_ok & (c > top_cost)


def _largest_cost(points, exponent):
    """An upper bound of every cost between the points: the bounding box's diagonal to the
    power ``exponent`` (the scale of the relative zero-cost tolerance)."""
    if points.shape[0] < 2:
        return 0.0
    extent = points.max(axis=0) - points.min(axis=0)
    return float(_power_of_distance(np.array([float(extent @ extent)]), exponent)[0])
