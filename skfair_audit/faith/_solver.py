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
from dataclasses import dataclass

import numpy as np

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


def _upper_hull(cost: np.ndarray, gain: np.ndarray, base_gain: float) -> list[int]:
    """Indices of the vertices (after ``(0, base_gain)``) of the rising upper concave hull.

    ``cost > 0`` and ``gain > base_gain`` are assumed. Collinear middle points are dropped, so
    consecutive slopes are strictly decreasing.
    """
    # Pareto front: cost ascending, gain strictly increasing (ties in cost: best gain first).
    order = np.lexsort((-gain, cost))
    r = gain[order]
    previous_best = np.concatenate(([base_gain], np.maximum.accumulate(r)[:-1]))
    front = order[r > previous_best]
    hull_c, hull_r, hull_idx = [0.0], [base_gain], [-1]
    for k in front.tolist():
        x2, y2 = float(cost[k]), float(gain[k])
        while len(hull_idx) >= 2:
            x0, y0, x1, y1 = hull_c[-2], hull_r[-2], hull_c[-1], hull_r[-1]
            # Pop the middle vertex unless (x0,y0) -> (x1,y1) -> (x2,y2) turns strictly right.
            if (x1 - x0) * (y2 - y0) - (y1 - y0) * (x2 - x0) >= 0:
                hull_c.pop()
                hull_r.pop()
                hull_idx.pop()
            else:
                break
        hull_c.append(x2)
        hull_r.append(y2)
        hull_idx.append(k)
    return hull_idx[1:]


def prepare_transport(loss, cost, forbidden=None, *, atol=1e-12) -> TransportProblem:
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
    atol : float, default=1e-12
        Cost entries ``<= atol`` (including the diagonal) are treated as exactly zero: the
        rounding noise of metric computations (e.g. two cells that differ only along sensitive
        directions of a projected metric) must not turn a free move into a costly one. A
        diagonal entry larger than ``atol`` is an error. A plan may then exceed the budget by
        at most ``atol`` times the transported mass.

    Returns
    -------
    TransportProblem
        The hull segments of all rows, sorted by slope; evaluate it with
        :meth:`TransportProblem.value` and friends.

    Notes
    -----
    For each source cell ``i`` let ``b_i = max{R_ij : C_ij = 0, j allowed}`` (staying put
    gives 0) and take the upper concave hull of the allowed points ``(C_ij, R_ij)`` to the
    right of ``(0, b_i)``, keeping only rising segments. Each segment ``s`` records its row,
    its start and end destinations, ``dc_s``, ``dr_s`` and slope ``dr_s / dc_s``. Then

    .. math::

        \\psi(f) = \\sum_i f_i b_i + \\text{greedy}(\\varepsilon),

    where the greedy spends the budget on the segments by decreasing slope, segment ``s`` of
    row ``i`` costing ``f_i dc_s`` and gaining ``f_i dr_s``, the last one fractionally
    (Sinha & Zoltners 1979). Setup costs ``O(K^2 log K)``; the number of segments ``S`` is at
    most ``K (K - 1)`` and usually of order ``K``.

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
    atol = _check_tolerance(atol, "atol")

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
    diagonal = np.diagonal(cost)
    if (diagonal > atol).any():
        raise ValueError(
            f"cost must have a zero diagonal (staying put is free); the largest diagonal entry "
            f"is {float(diagonal.max())!r} > atol={atol!r}."
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
    gain = loss[None, :] - loss[:, None]
    rows = np.arange(n_cells)

    # Best free destination; staying put wins ties (its gain is exactly 0 <= base gain).
    free_gain = np.where(allowed & (cost == 0.0), gain, -np.inf)
    free_gain[rows, rows] = 0.0
    base_gain = free_gain.max(axis=1)
    base_destination = np.where(base_gain > 0, free_gain.argmax(axis=1), rows)

    candidates = allowed & (cost > 0) & (gain > base_gain[:, None])
    seg_row, seg_source, seg_target, seg_cost, seg_gain = [], [], [], [], []
    for i in np.flatnonzero(candidates.any(axis=1)).tolist():
        destinations = np.flatnonzero(candidates[i])
        c_i, r_i = cost[i, destinations], gain[i, destinations]
        vertices = destinations[_upper_hull(c_i, r_i, float(base_gain[i]))]
        path = np.concatenate(([base_destination[i]], vertices))
        path_cost = np.concatenate(([0.0], cost[i, vertices]))
        path_gain = np.concatenate(([base_gain[i]], gain[i, vertices]))
        seg_row.append(np.full(vertices.size, i))
        seg_source.append(path[:-1])
        seg_target.append(path[1:])
        seg_cost.append(np.diff(path_cost))
        seg_gain.append(np.diff(path_gain))

    def _cat(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype=dtype)

    seg_row = _cat(seg_row, np.intp)
    seg_source = _cat(seg_source, np.intp)
    seg_target = _cat(seg_target, np.intp)
    seg_cost = _cat(seg_cost, float)
    seg_gain = _cat(seg_gain, float)
    seg_slope = seg_gain / seg_cost if seg_cost.size else np.empty(0)
    # Stable: segments of one row keep their hull order even if two slopes round equal.
    order = np.argsort(-seg_slope, kind="stable")

    return TransportProblem(
        n_cells=n_cells,
        loss=loss,
        base_gain=base_gain,
        base_destination=base_destination.astype(np.intp),
        segment_row=seg_row[order],
        segment_source=seg_source[order],
        segment_target=seg_target[order],
        segment_cost=seg_cost[order],
        segment_gain=seg_gain[order],
        segment_slope=seg_slope[order],
    )


@dataclass(frozen=True, eq=False, repr=False)
class TransportProblem:
    """Greedy structure of the FaiTH audit LP for fixed losses, costs and forbidden moves.

    Built by :func:`prepare_transport`; independent of the cell frequencies ``f`` and of the
    budget ``epsilon``, so one instance serves every bootstrap replicate. All arrays are
    read-only.

    Attributes
    ----------
    n_cells : int
        Number of cells ``K``.
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

    def __repr__(self):
        return f"TransportProblem(n_cells={self.n_cells}, n_segments={self.n_segments})"

    @property
    def n_segments(self) -> int:
        """Number ``S`` of hull segments over all rows."""
        return int(self.segment_slope.size)

    # ------------------------------------------------------------------ input checks
    def _frequencies(self, f, *, nonnegative: bool) -> tuple[np.ndarray, bool]:
        f = np.asarray(f, dtype=float)
        if f.ndim not in (1, 2) or f.shape[-1] != self.n_cells:
            raise ValueError(
                f"f must have shape (K,) or (B, K) with K = {self.n_cells}, got {f.shape}."
            )
        if not np.all(np.isfinite(f)):
            raise ValueError("f must be finite (no NaN or inf).")
        if nonnegative and (f < 0).any():
            raise ValueError(
                "f must be non-negative (a frequency vector); use dual_value for signed "
                "perturbations."
            )
        single = f.ndim == 1
        return (f[None, :] if single else f), single

    def _single(self, f) -> np.ndarray:
        f, single = self._frequencies(f, nonnegative=True)
        if not single:
            raise ValueError(f"f must be a single frequency vector of shape ({self.n_cells},).")
        return f[0]

    # ------------------------------------------------------------------ primal value
    def value(self, f, epsilon):
        """Audit value ``psi(f)`` for one frequency vector or a batch of them.

        Parameters
        ----------
        f : array-like of shape (K,) or (B, K)
            Non-negative cell frequencies (need not sum to one: ``psi`` is positively
            homogeneous in ``f``).
        epsilon : float
            Transport budget, finite and >= 0.

        Returns
        -------
        float or ndarray of shape (B,)

        Notes
        -----
        With ``w_bs = f_{b, row(s)} dc_s`` and prefix sums ``W_bt`` along the sorted segments,
        the first ``n_b = #{t : W_bt <= epsilon}`` segments fit entirely and segment
        ``n_b + 1`` is taken for the leftover budget at its slope. Time and memory are
        ``O(B S)``; split large batches.
        """
        epsilon = check_epsilon(epsilon)
        f, single = self._frequencies(f, nonnegative=True)
        total = f @ self.base_gain
        n_seg = self.n_segments
        if n_seg:
            mass = f[:, self.segment_row]
            spent = np.cumsum(mass * self.segment_cost, axis=1)
            gained = np.cumsum(mass * self.segment_gain, axis=1)
            # ``spent`` is non-decreasing, so the segments that fit form a prefix.
            n_full = np.count_nonzero(spent <= epsilon, axis=1)
            last = np.maximum(n_full - 1, 0)[:, None]
            has_full = n_full > 0
            spent_full = np.where(has_full, np.take_along_axis(spent, last, 1)[:, 0], 0.0)
            gained_full = np.where(has_full, np.take_along_axis(gained, last, 1)[:, 0], 0.0)
            partial = n_full < n_seg
            slope_next = self.segment_slope[np.minimum(n_full, n_seg - 1)]
            total = total + gained_full + np.where(partial, (epsilon - spent_full) * slope_next, 0)
        return float(total[0]) if single else total

    # ------------------------------------------------------------------ dual value
    def dual_value(self, f, epsilon):
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
            Real vector(s); negative entries are allowed.
        epsilon : float
            Transport budget, finite and >= 0.

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
        epsilon = check_epsilon(epsilon)
        f, single = self._frequencies(f, nonnegative=False)
        base = f @ self.base_gain
        if not self.n_segments:
            out = base
        else:
            mass = f[:, self.segment_row]
            spent = np.cumsum(mass * self.segment_cost, axis=1)
            gained = np.cumsum(mass * self.segment_gain, axis=1)
            at_zero = base + gained[:, -1]
            spent_before = spent - mass * self.segment_cost
            gained_before = gained - mass * self.segment_gain
            at_slopes = gained_before + self.segment_slope * (epsilon - spent_before)
            out = np.minimum(at_zero, base + at_slopes.min(axis=1))
        return float(out[0]) if single else out

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

    def plan(self, f, epsilon) -> np.ndarray:
        """An optimal transport plan ``Pi`` (dense ``K x K``).

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
        ndarray of shape (K, K)
            ``Pi >= 0`` with ``Pi 1 = f``, ``<C, Pi> <= epsilon``, zero on forbidden moves and
            ``<R, Pi> = psi(f)``.
        """
        epsilon = check_epsilon(epsilon)
        f = self._single(f)
        destination, split = self._destinations(f, epsilon)
        plan = np.zeros((self.n_cells, self.n_cells))
        plan[np.arange(self.n_cells), destination] = f
        if split is not None:
            row, source, target, share = split
            plan[row, source] = f[row] * (1.0 - share)
            plan[row, target] = f[row] * share
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
