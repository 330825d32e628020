"""The fairness monitor: confidence sequences over every group, updated batch by batch."""

from __future__ import annotations

import hashlib
import json
import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._utils import (
    PROBABILITY,
    STRING,
    Interval,
    Options,
    Predicate,
    check_params,
    import_optional,
    json_safe,
)
from ..group import get_metric, intersections, intervals
from ._batch import count_batch
from ._betting import (
    BET_CAP,
    MIX_POINTS,
    asymptotic_interval,
    expected_pairs,
    grid_interval,
    grid_points,
    hedged_log_capital,
    log_capital_step,
    mixture_log_capital,
    mixture_step,
    ons_update,
    paired_step,
    plugin_bet,
    weighted_ebh,
)
from ._result import MonitorResult
from ._state import StateFileError, read_state, write_state

#: Name of the stream of the overall rate (the target ``"overall"``).
OVERALL = "overall"
#: Snapshots of the confidence sequences kept for the plot (thinned by halves when full).
HISTORY = 128
_ALTERNATIVES = ("greater", "less", "two-sided")


def _is_column_list(value):
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(v, str) for v in value))


def _product_frame(levels):
    """Every combination of the levels (one row per cell), as a mapping of columns."""
    grids = np.meshgrid(*[np.arange(len(lv)) for lv in levels.values()], indexing="ij")
    return {col: np.asarray(lv, dtype=object)[g.ravel()]
            for (col, lv), g in zip(levels.items(), grids, strict=True)}


class FairnessMonitor(BaseEstimator):
    """Anytime-valid monitoring of a deployed model's group disparities.

    Follows an audit trail batch by batch (:meth:`partial_fit`) and keeps, for every group
    of the collection (all intersections of the ``protected`` columns up to ``depth``, or
    every interval of one covariate on ``grid``), a confidence sequence (CS) for the group's
    rate :math:`\\mu_G` of a 0/1 metric: intervals :math:`C_{G,t}` with

    .. math::

        P\\big(\\forall t, \\forall G: \\mu_G \\in C_{G,t}\\big) \\ge 1 - \\alpha,

    so every interval, flag and certificate may be read at any look, including a look
    chosen because of what earlier looks showed. Disparities
    :math:`\\varepsilon(G) = \\mu_G - \\theta` use a declared constant :math:`\\theta`, the
    overall rate or a reference group; an estimated :math:`\\theta` has its own CS and the
    disparity's CS is :math:`[\\ell_G - u_\\theta, u_G - \\ell_\\theta]`, valid whenever both
    CSs hold.

    Parameters
    ----------
    protected : list of str
        Protected columns of the batches (intersections), or one numeric column with
        ``grid`` (intervals).
    label, prediction : str
        Columns of the outcome and of the model's predicted label.
    metric : str
        A 0/1 metric of :func:`skfair_audit.group.get_metric`: ``"selection_rate"``,
        ``"fpr"``, ``"fnr"``, ``"tpr"``, ``"ppv"``, ``"error_rate"`` ...
    pos_label : object, optional
        Positive label (default 1 for 0/1 labels).
    target : float, "overall" or str
        The constant :math:`\\theta`, ``"overall"`` (the rate over every row) or the name of
        a reference group, e.g. ``"race=Caucasian"``.
    alternative : {"greater", "less", "two-sided"}
        Flag :math:`\\varepsilon(G) > \\varepsilon_0`, :math:`\\varepsilon(G) < \\varepsilon_0`
        or :math:`|\\varepsilon(G)| > \\varepsilon_0`.
    epsilon0 : float
        Tolerance :math:`\\varepsilon_0`.
    procedure : {"fwer", "fdr"}
        ``"fwer"``: flag a group when its disparity CS clears :math:`\\varepsilon_0` (every
        flag and certificate true together with probability :math:`\\ge 1 - \\alpha`, at all
        looks). ``"fdr"``: flag by weighted e-BH at level ``q`` on the groups' e-values.
    alpha : float
        Simultaneous level of the CSs.
    q : float
        False discovery rate of ``procedure="fdr"``.
    method : {"betting", "asymptotic"}
        Betting CSs (exact, default) or asymptotic CSs (Gaussian-mixture boundary; valid
        only in the large-sample limit, no e-values).
    depth : int, optional
        Most attributes fixed at once (default: all).
    levels : dict, optional
        Declared levels of every protected column. Groups made of declared levels are
        followed from the first batch; otherwise the first batch declares them (and is used
        only to register them).
    grid : array-like, optional
        Bin edges of the covariate (intervals between any two edges are the groups).
    new_level_share : float
        Share :math:`\\rho` of ``alpha`` (and of the e-BH weights) kept for groups that appear
        later (a new level of a protected attribute): the :math:`r`-th such group gets
        :math:`\\rho / (r (r + 1))`. ``0`` refuses new levels.
    grid_size : int
        Points of the grid of means of the betting CSs (resolution ``1 / grid_size``).
    paired : bool
        Also flag by paired betting tests of :math:`\\varepsilon(G)` against
        :math:`\\varepsilon_0` (Chugg et al. 2023; bet: ``paired_bet``), when
        the target is a reference group (for the groups disjoint from it) or the overall
        rate with ``epsilon0=0`` (each group against the rest). They detect sooner than two
        CSs compared; each group's share of α is then split equally between its CS and its
        test, except for a single declared comparison (see the notes).
    paired_bet : {"mixture+ons", "mixture", "ons"}
        Bet of the paired tests. ``"mixture"``: the average capital of 101 bettors with
        constant bets spread evenly from 0 to the cap (a uniform prior over the bets), exact
        from a batch's counts whatever the batch size. ``"ons"``: the online Newton step of
        Chugg et al., held fixed within a batch (with one row of each group per look, their
        test step for step); it adapts sooner to a disparity that appears late.
        ``"mixture+ons"`` (default): half of the capital on each, an average of two test
        supermartingales, within a factor 2 of the better one.
    model_id : str, optional
        Identifies the monitored model (e.g. a hash of its file); a saved state is refused
        by a monitor with another one.

    Attributes
    ----------
    n_looks_ : int
        Batches folded in.
    n_rows_ : int
        Rows folded in.
    names_ : list of str
        Streams followed: the groups, and ``"overall"`` with ``target="overall"``.

    Notes
    -----
    **α over groups.** Groups known before the first bet (declared levels, or those of the
    first batch) share :math:`(1 - \\rho)\\alpha` equally (the overall stream counts as one
    group); the :math:`r`-th group to appear later gets :math:`\\alpha\\rho/(r(r+1))`, and
    bets only from the batch after the one it appeared in. Its slot is fixed before its
    first bet, so Ville's inequality applies to every slot and the union bound gives the
    simultaneous guarantee. Running intersections keep the CSs nested.

    **One declared comparison.** When the collection is one group :math:`A` and the
    reference group :math:`B` it is paired with, and no group may appear later
    (``new_level_share=0``), :math:`A` is flagged by its paired test alone, at the level
    :math:`\\alpha_{AB} = \\alpha (w_A + w_B)` of both shares, and the CSs keep their whole
    shares :math:`\\alpha w_A` and :math:`\\alpha w_B` (no split). A wrong flag needs
    :math:`H_0` true and the test's capital to reach :math:`1/\\alpha_{AB}` (probability
    :math:`\\le \\alpha_{AB}` by Ville's inequality); a wrong certificate needs :math:`H_0`
    false and a CS to miss (probability :math:`\\le \\alpha w_A + \\alpha w_B`). Only one of
    the two is possible, whatever the truth, so the flag and the certificate are true
    together, at every look, with probability :math:`\\ge 1 - \\alpha_{AB}`; separately, the
    CSs hold at every look with probability :math:`\\ge 1 - \\alpha_{AB}`. These are two
    statements at level :math:`\\alpha_{AB}`, not one joint statement: the flag may come
    before the disparity CS clears :math:`\\varepsilon_0` (the test is the more powerful).
    With one row of each group per look and ``paired_bet="ons"`` the test is Chugg et al.'s
    test step for step.

    **e-BH.** The e-value of :math:`H_0: \\varepsilon(G) \\le \\varepsilon_0` (greater) is the
    long capital :math:`K^+_t(\\theta + \\varepsilon_0)`, a supermartingale under the null,
    so its value at any stopping time :math:`\\tau` has :math:`E \\le 1`; weighted e-BH at
    :math:`\\tau` controls :math:`E[V_\\tau / \\max(R_\\tau, 1)] \\le q` whatever the dependence
    between overlapping groups. This is the FDR of the set flagged *at the look you act
    on* (the look may be chosen by any rule using the data so far); the set of groups ever
    flagged has no such guarantee. With an estimated target the capital is evaluated at
    the CS bound :math:`u_\\theta + \\varepsilon_0` and the bound becomes :math:`q +
    \\alpha_\\theta` (:math:`\\alpha_\\theta` the target's share of α).

    References
    ----------
    .. [1] I. Waudby-Smith and A. Ramdas (2024). Estimating means of bounded random
       variables by betting. JRSS-B 86(1).
    .. [2] R. Wang and A. Ramdas (2022). False discovery rate control with e-values. JRSS-B
       84(3).
    .. [3] I. Waudby-Smith, D. Arbour, R. Sinha, E. H. Kennedy and A. Ramdas (2024).
       Time-uniform central limit theory and asymptotic confidence sequences. Ann. Statist.
    .. [4] B. Chugg, S. Cortes-Gomez, B. Wilder and A. Ramdas (2023). Auditing fairness by
       betting. NeurIPS.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> mon = FairnessMonitor(["sex"], metric="selection_rate", levels={"sex": ["F", "M"]},
    ...                       epsilon0=0.1)
    >>> for _ in range(5):
    ...     sex = rng.choice(["F", "M"], 500)
    ...     batch = pd.DataFrame({"sex": sex, "y": rng.integers(0, 2, 500),
    ...                           "y_pred": (rng.random(500) < 0.3).astype(int)})
    ...     mon = mon.partial_fit(batch)
    >>> res = mon.result()
    >>> res.n_looks, bool(res.flagged.any())
    (5, False)
    """

    _parameter_constraints = {
        "protected": [STRING, Predicate(_is_column_list, "a list of column names")],
        "label": [STRING],
        "prediction": [STRING],
        "metric": [STRING],
        "pos_label": [None, STRING, Interval("integral"), Interval("real")],
        "target": [Interval("real"), STRING],
        "alternative": [Options(_ALTERNATIVES)],
        "epsilon0": [Interval("real")],
        "procedure": [Options(("fwer", "fdr"))],
        "alpha": [PROBABILITY],
        "q": [PROBABILITY],
        "method": [Options(("betting", "asymptotic"))],
        "depth": [None, Interval("integral", 1, None)],
        "levels": [None, Predicate(lambda v: isinstance(v, dict), "a dict of level lists")],
        "grid": [None, Predicate(lambda v: np.ndim(v) == 1 and len(v) >= 2,
                                 "an array of >= 2 bin edges")],
        "new_level_share": [Interval("real", 0, 1, closed="left")],
        "grid_size": [Interval("integral", 10, 100_000)],
        "paired": [Options((True, False))],
        "paired_bet": [Options(("mixture+ons", "mixture", "ons"))],
        "model_id": [None, STRING],
    }

    def __init__(self, protected, *, label="y", prediction="y_pred", metric="selection_rate",
                 pos_label=None, target="overall", alternative="greater", epsilon0=0.0,
                 procedure="fwer", alpha=0.05, q=0.1, method="betting", depth=None,
                 levels=None, grid=None, new_level_share=0.1, grid_size=500, paired=True,
                 paired_bet="mixture+ons", model_id=None):
        self.protected = protected
        self.label = label
        self.prediction = prediction
        self.metric = metric
        self.pos_label = pos_label
        self.target = target
        self.alternative = alternative
        self.epsilon0 = epsilon0
        self.procedure = procedure
        self.alpha = alpha
        self.q = q
        self.method = method
        self.depth = depth
        self.levels = levels
        self.grid = grid
        self.new_level_share = new_level_share
        self.grid_size = grid_size
        self.paired = paired
        self.paired_bet = paired_bet
        self.model_id = model_id

    # ------------------------------------------------------------------ configuration
    def _columns(self):
        return [self.protected] if isinstance(self.protected, str) else list(self.protected)

    def _validate(self):
        check_params(self.get_params(deep=False), self._parameter_constraints,
                     type(self).__name__)
        metric = get_metric(self.metric)
        self._metric_name = metric.name
        if self.grid is not None:
            if len(self._columns()) != 1:
                raise ValueError("grid (intervals of a covariate) takes one protected column.")
            if self.levels is not None:
                raise ValueError("levels go with categorical columns, not with grid.")
            edges = np.asarray(self.grid, dtype=float)
            if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
                raise ValueError("grid must be strictly increasing finite bin edges.")
        if self.levels is not None:
            missing = [c for c in self._columns() if c not in self.levels]
            if missing or set(self.levels) - set(self._columns()):
                raise ValueError(f"levels must list the levels of exactly the protected "
                                 f"columns {self._columns()}.")
            for col, lv in self.levels.items():
                if len(lv) == 0 or len(set(lv)) != len(lv):
                    raise ValueError(f"levels of {col!r} must be a non-empty list of "
                                     "distinct values.")
        if not -1.0 < float(self.epsilon0) < 1.0:
            raise ValueError(f"epsilon0 must be in (-1, 1) (a difference of rates), got "
                             f"{self.epsilon0!r}.")
        if self.procedure == "fdr" and self.method == "asymptotic":
            raise ValueError("procedure='fdr' needs e-values: use method='betting'.")
        if isinstance(self.target, str) and self.target != OVERALL and self.grid is None \
                and "=" not in self.target:
            raise ValueError(f"target must be a number, 'overall' or a group name such as "
                             f"'race=Caucasian', got {self.target!r}.")

    def fingerprint(self) -> str:
        """SHA-256 of the parameters: a saved state is used only by the same monitor.

        Returns
        -------
        str
        """
        params = json_safe(self.get_params(deep=False))
        text = json.dumps(params, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def _spec(self):
        return {"label": self.label, "prediction": self.prediction,
                "protected": self._columns(), "metric": self.metric,
                "pos_label": self.pos_label,
                "grid": None if self.grid is None else [float(v) for v in self.grid]}

    # ------------------------------------------------------------------ state
    def _init_state(self):
        self._validate()
        self.n_looks_ = 0
        self.n_rows_ = 0
        self.labels_ = []
        self.levels_ = None
        self.names_ = []
        self._weights = np.zeros(0)
        self._registered = np.zeros(0, dtype=np.int64)
        self._n = np.zeros(0, dtype=np.int64)
        self._k = np.zeros(0, dtype=np.int64)
        self._low = np.zeros(0)
        self._high = np.zeros(0)
        self._max_log_e = np.zeros(0)
        self._t_log = np.zeros((0, 2))
        self._t_lam = np.zeros((0, 2))
        self._t_a = np.zeros((0, 2))
        self._t_mix = np.zeros((0, 2, 0 if self.paired_bet == "ons" else MIX_POINTS))
        self._t_max = np.zeros(0)
        self._since = np.zeros(0, dtype=np.int64)
        self._n_initial = 0
        self._n_new = 0
        g = self.grid_size + 1 if self.method == "betting" else 0
        self._log_up = np.zeros((0, g))
        self._log_down = np.zeros((0, g))
        self._hist_look = np.zeros(0, dtype=np.int64)
        self._hist_rows = np.zeros(0, dtype=np.int64)
        self._hist_low = np.zeros((0, 0), dtype=np.float32)
        self._hist_high = np.zeros((0, 0), dtype=np.float32)
        self._stride = 1
        self._collection = None
        if self.grid is not None:
            edges = np.asarray(self.grid, dtype=float)
            self._register_levels({self._columns()[0]: list(range(edges.size - 1))}, look=0)
        elif self.levels is not None:
            self._register_levels({c: list(self.levels[c]) for c in self._columns()}, look=0)
        if (self.levels_ is not None and isinstance(self.target, str)
                and self.target != OVERALL and self.target not in self.names_):
            raise ValueError(f"the reference group {self.target!r} is not a group of the "
                             "collection.")

    def _build_collection(self, levels):
        if self.grid is not None:
            edges = np.asarray(self.grid, dtype=float)
            mids = (edges[:-1] + edges[1:]) / 2
            return intervals(mids, grid=edges, name=self._columns()[0])
        return intersections(_product_frame(levels), depth=self.depth)

    def _register_levels(self, levels, look):
        """Rebuild the groups over ``levels`` and register the new ones at ``look``."""
        collection = self._build_collection(levels)
        known = set(self.names_)
        new = [n for n in collection.names if n not in known]
        initial = self.levels_ is None
        if initial and self.target == OVERALL:
            new = [OVERALL, *new]
        self.levels_ = levels
        self._collection = collection
        if self.grid is None:
            frame = _product_frame(levels)
            keys = list(zip(*frame.values(), strict=True)) if frame else []
            self._cell_index = {k: i for i, k in enumerate(keys)}
            self._cell_rows = collection.cell_of_row
        else:
            self._cell_index = None
        self._stream_of_group = None
        if not new:
            return
        s = len(new)
        if initial:
            self._n_initial = s
            weights = np.full(s, (1.0 - self.new_level_share) / s)
        else:
            r = self._n_new + np.arange(1, s + 1)
            weights = self.new_level_share / (r * (r + 1.0))
            self._n_new += s
        self.names_ = [*self.names_, *new]
        self._weights = np.concatenate([self._weights, weights])
        self._registered = np.concatenate([self._registered, np.full(s, look)])
        self._n = np.concatenate([self._n, np.zeros(s, dtype=np.int64)])
        self._k = np.concatenate([self._k, np.zeros(s, dtype=np.int64)])
        self._low = np.concatenate([self._low, np.zeros(s)])
        self._high = np.concatenate([self._high, np.ones(s)])
        self._max_log_e = np.concatenate([self._max_log_e, np.zeros(s)])
        self._t_log = np.concatenate([self._t_log, np.zeros((s, 2))])
        self._t_lam = np.concatenate([self._t_lam, np.zeros((s, 2))])
        self._t_a = np.concatenate([self._t_a, np.ones((s, 2))])
        self._t_mix = np.concatenate([self._t_mix, np.zeros((s, *self._t_mix.shape[1:]))])
        self._t_max = np.concatenate([self._t_max, np.zeros(s)])
        self._since = np.concatenate([self._since, np.full(s, -1, dtype=np.int64)])
        pad = np.zeros((s, self._log_up.shape[1]))
        self._log_up = np.concatenate([self._log_up, pad])
        self._log_down = np.concatenate([self._log_down, pad])
        hpad = np.full((s, self._hist_low.shape[1]), np.nan, dtype=np.float32)
        self._hist_low = np.concatenate([self._hist_low, hpad])
        self._hist_high = np.concatenate([self._hist_high, hpad])

    # ------------------------------------------------------------------ updates
    def _new_levels(self, counts):
        """New levels of every protected column in the batch (in sorted order)."""
        if self.grid is not None:
            return {}
        found = {c: counts["levels"].get(c, set()) for c in self._columns()}
        if self.levels_ is None:
            return {c: sorted(v, key=lambda x: (str(type(x)), x)) for c, v in found.items()}
        new = {}
        for col, values in found.items():
            extra = values - set(self.levels_[col])
            if extra:
                new[col] = sorted(extra, key=lambda x: (str(type(x)), x))
        return new

    def _check_labels(self, counts):
        labels = sorted(set(self.labels_) | counts["labels"], key=lambda x: (str(type(x)), x))
        if len(labels) > 2:
            raise ValueError(
                f"new label(s) {sorted(set(counts['labels']) - set(self.labels_), key=str)} "
                f"in the batch: the monitor has seen {self.labels_} and a 0/1 metric needs "
                "two labels.")
        return labels

    def fit(self, X, y=None, y_pred=None):
        """Start a new monitor from one batch (forgets any earlier state).

        Parameters
        ----------
        X, y, y_pred
            As in :meth:`partial_fit`.

        Returns
        -------
        self
        """
        self._init_state()
        return self.partial_fit(X, y, y_pred)

    def partial_fit(self, X, y=None, y_pred=None):
        """Fold one batch of the audit trail into the monitor (one look).

        The batch is counted first and checked completely (columns, missing values, labels,
        new levels) before the state changes: a bad batch raises ``ValueError`` and leaves
        the monitor as it was.

        Parameters
        ----------
        X : DataFrame, path (CSV / Parquet) or Dask DataFrame
            The batch, with the ``label``, ``prediction`` and ``protected`` columns; or,
            with ``y`` and ``y_pred``, a DataFrame of the protected columns only.
        y, y_pred : array-like, optional
            Outcomes and predicted labels when ``X`` holds only the protected columns.

        Returns
        -------
        self
        """
        if not hasattr(self, "n_looks_"):
            self._init_state()
        if y is not None or y_pred is not None:
            if y is None or y_pred is None:
                raise ValueError("give both y and y_pred, or neither (a whole batch in X).")
            pd = import_optional("pandas", "monitor arrays")
            X = pd.DataFrame(X).assign(**{self.label: np.asarray(y),
                                          self.prediction: np.asarray(y_pred)})
        counts = count_batch(X, self._spec())
        return self._fold(counts)

    def _fold(self, counts):
        labels = self._check_labels(counts)
        new_levels = self._new_levels(counts)
        if new_levels and self.levels_ is not None and self.new_level_share == 0:
            raise ValueError(f"new level(s) {new_levels} of the protected columns, and "
                             "new_level_share=0 leaves no α for new groups.")
        if isinstance(self.target, str) and self.target != OVERALL and new_levels:
            names = set(self._build_collection(self._merged(new_levels)).names)
            if self.target not in names:
                raise ValueError(f"the reference group {self.target!r} is not a group of "
                                 "the collection.")
        # --- the batch is valid: update the state
        look = self.n_looks_ + 1
        self.labels_ = labels
        if new_levels:
            self._register_levels(self._merged(new_levels), look)
        n_b, k_b = self._stream_counts(counts)
        active = (self._registered < look) & (n_b > 0)
        if self.method == "betting" and active.any():
            idx = np.flatnonzero(active)
            lam = plugin_bet(self._n[idx], self._k[idx], n_b[idx], self._alphas()[idx])
            d_up, d_down = log_capital_step(k_b[idx], n_b[idx] - k_b[idx], lam, self._grid())
            self._log_up[idx] += d_up
            self._log_down[idx] += d_down
        if self._paired_on():
            self._paired_update(look, n_b, k_b, counts["total"])
        self._n[active] += n_b[active]
        self._k[active] += k_b[active]
        self.n_looks_ = look
        self.n_rows_ += counts["rows"]
        low, high = self._current_intervals()
        self._low = np.maximum(self._low, np.where(np.isnan(low), self._low, low))
        self._high = np.minimum(self._high, np.where(np.isnan(high), self._high, high))
        crossed = self._low > self._high  # only on the event the guarantee excludes
        self._low[crossed] = self._high[crossed] = (self._low[crossed]
                                                    + self._high[crossed]) / 2
        idx, flagged_groups, e_values = self._flags()
        flagged = np.zeros(len(self.names_), dtype=bool)
        flagged[idx] = flagged_groups
        self._since = np.where(flagged, np.where(self._since < 0, look, self._since), -1)
        if self.method == "betting":
            with np.errstate(divide="ignore"):
                self._max_log_e[idx] = np.maximum(self._max_log_e[idx], np.log(e_values))
        self._record_history(look)
        return self

    def _merged(self, new_levels):
        if self.levels_ is None:
            return new_levels
        return {c: [*self.levels_[c], *new_levels.get(c, [])] for c in self._columns()}

    def _grid(self):
        return grid_points(self.grid_size)

    def _alphas(self):
        """Each stream's level for its CS (half its share when it has a paired test, unless
        the test is the single comparison)."""
        if not self._paired_on() or self._single_comparison():
            return self.alpha * self._weights
        return self.alpha * self._weights * np.where(self._partners() != -1, 0.5, 1.0)

    def _single_comparison(self):
        """One declared comparison: the only group, paired with a reference group, and no
        group may appear later (``new_level_share=0``). Its test then flags alone, at the
        level of both shares (see the class notes)."""
        if (not self._paired_on() or self.target == OVERALL
                or float(self.new_level_share) != 0.0):
            return False
        idx = self._group_streams()
        return idx.size == 1 and bool(self._partners()[idx[0]] >= 0)

    def _comparison_alpha(self):
        """Level of the single comparison's test (0 when there is none)."""
        if not self._single_comparison():
            return 0.0
        j = self._group_streams()[0]
        return float(self.alpha * (self._weights[j]
                                   + self._weights[self.names_.index(self.target)]))

    def _signed_test(self):
        """Two-sided test of equal rates by ONS: one bettor of either sign (Chugg et al.);
        the mixture always hedges two one-sided mixtures."""
        return self.alternative == "two-sided" and float(self.epsilon0) == 0.0

    def _paired_on(self):
        if not self.paired or self.method != "betting":
            return False
        if isinstance(self.target, str):
            return self.target != OVERALL or float(self.epsilon0) == 0.0
        return False

    def _partners(self):
        """Partner of every stream in its paired test: a stream index, ``-2`` (the rest of
        the rows) or ``-1`` (no test)."""
        key = (len(self.names_), self.target)
        if getattr(self, "_partners_key", None) == key:
            return self._partner_of
        partner = np.full(len(self.names_), -1, dtype=np.intp)
        col = self._collection
        if col is not None and self._paired_on():
            pos = {n: j for j, n in enumerate(col.names)}
            if self.target == OVERALL:
                partner[[j for j, n in enumerate(self.names_) if n in pos]] = -2
            elif self.target in pos:
                ref = col.cell_membership[:, pos[self.target]]
                r = self.names_.index(self.target)
                for j, n in enumerate(self.names_):
                    if n in pos and n != self.target and not np.any(
                            col.cell_membership[:, pos[n]] & ref):
                        partner[j] = r
        self._partners_key = key
        self._partner_of = partner
        return partner

    def _paired_sides(self):
        """Boundaries ``(d⁺, d⁻)`` of the two one-sided paired tests."""
        eps = float(self.epsilon0)
        if self.alternative == "two-sided":
            return abs(eps), -abs(eps)
        return eps, eps

    def _paired_update(self, look, n_b, k_b, total):
        partner = self._partners()
        ok = (partner != -1) & (self._registered < look)
        ref = partner >= 0
        ok[ref] &= self._registered[partner[ref]] < look
        idx = np.flatnonzero(ok)
        if not idx.size:
            return
        p = partner[idx]
        n_p = np.where(p >= 0, n_b[np.maximum(p, 0)], total[0] - n_b[idx])
        k_p = np.where(p >= 0, k_b[np.maximum(p, 0)], total[1] - k_b[idx])
        _, up, down, same = expected_pairs(n_b[idx], k_b[idx], n_p, k_p)
        signed = self._signed_test()
        sides = tuple(zip((1.0, -1.0), self._paired_sides(), strict=True))
        if self.paired_bet != "ons":
            for col, (side, d) in enumerate(sides):
                self._t_mix[idx, col] += mixture_step(up, down, same,
                                                      BET_CAP / (1.0 + side * d), d, side)
        for col, (side, d) in enumerate(sides[:1] if signed else sides):
            if self.paired_bet == "mixture":
                break
            cap = BET_CAP / (1.0 + side * d)
            lam = self._t_lam[idx, col]
            inc, grad, grad2 = paired_step(up, down, same, lam, d, side)
            self._t_log[idx, col] += inc
            self._t_lam[idx, col], self._t_a[idx, col] = ons_update(
                lam, self._t_a[idx, col], grad, grad2, cap, signed=signed)
        self._t_max[idx] = np.maximum(self._t_max[idx], self._test_log_e(idx))

    def _test_log_e(self, idx):
        """Log e-value of the paired test of every stream ``idx`` at this look: the ONS
        bettor's, the mixture's, or the log of their average (``"mixture+ons"``)."""
        parts = []
        if self.paired_bet != "mixture":
            parts.append(self._sides_log_e(self._t_log[idx], self._signed_test()))
        if self.paired_bet != "ons":
            parts.append(self._sides_log_e(mixture_log_capital(self._t_mix[idx]), False))
        return parts[0] if len(parts) == 1 else hedged_log_capital(*parts)

    def _sides_log_e(self, log_k, signed):
        """The alternative's e-value from the log-capitals ``(n, 2)`` of the two sides."""
        if self.alternative == "greater" or signed:
            return log_k[:, 0]
        if self.alternative == "less":
            return log_k[:, 1]
        return hedged_log_capital(log_k[:, 0], log_k[:, 1])

    def _stream_counts(self, counts):
        """``(n, k)`` of every stream in the batch."""
        s = len(self.names_)
        n_b = np.zeros(s, dtype=np.int64)
        k_b = np.zeros(s, dtype=np.int64)
        col = self._collection
        if col is not None and counts["cells"]:
            cell_n = np.zeros(col.n_cells)
            cell_k = np.zeros(col.n_cells)
            for key, (n, k) in counts["cells"].items():
                if self.grid is not None:
                    cell = key[0]
                else:
                    cell = self._cell_rows[self._cell_index[key]]
                if cell < col.n_cells:
                    cell_n[cell] += n
                    cell_k[cell] += k
            pos = self._group_positions()
            n_b[pos] = np.rint(col.group_sums(cell_n)).astype(np.int64)
            k_b[pos] = np.rint(col.group_sums(cell_k)).astype(np.int64)
        if self.target == OVERALL and self.names_:
            n_b[0], k_b[0] = counts["total"]
        return n_b, k_b

    def _group_positions(self):
        if self._stream_of_group is None:
            index = {n: i for i, n in enumerate(self.names_)}
            self._stream_of_group = np.array([index[n] for n in self._collection.names],
                                             dtype=np.intp)
        return self._stream_of_group

    def _current_intervals(self):
        if self.method == "betting":
            return grid_interval(self._log_up, self._log_down, np.log(1.0 / self._alphas()),
                                 self._grid())
        return asymptotic_interval(self._n, self._k, self._alphas())

    def _record_history(self, look):
        if look % self._stride:
            return
        if self._hist_look.size >= HISTORY:
            keep = slice(1, None, 2)  # looks that are multiples of the doubled stride
            self._stride *= 2
            self._hist_look = self._hist_look[keep]
            self._hist_rows = self._hist_rows[keep]
            self._hist_low = self._hist_low[:, keep]
            self._hist_high = self._hist_high[:, keep]
            if look % self._stride:
                return
        self._hist_look = np.append(self._hist_look, look)
        self._hist_rows = np.append(self._hist_rows, self.n_rows_)
        self._hist_low = np.column_stack([self._hist_low, self._low.astype(np.float32)])
        self._hist_high = np.column_stack([self._hist_high, self._high.astype(np.float32)])

    # ------------------------------------------------------------------ results
    def _target_interval(self, low, high):
        """``(point, low, high, alpha share)`` of the target θ."""
        if isinstance(self.target, numbers.Real) and not isinstance(self.target, bool):
            t = float(self.target)
            return t, np.full_like(low[0:1], t), np.full_like(low[0:1], t), 0.0
        if self.target not in self.names_:
            return math.nan, np.full(1, np.nan), np.full(1, np.nan), 0.0
        j = self.names_.index(self.target)
        point = self._k[j] / self._n[j] if self._n[j] else math.nan
        return point, low[..., j:j + 1], high[..., j:j + 1], float(self._alphas()[j])

    def result(self) -> MonitorResult:
        """The monitor at the current look: every group's CS, flags and the guarantee.

        Returns
        -------
        MonitorResult
        """
        check_is_fitted(self, "n_looks_")
        idx, flagged, e_values, (d_low, d_high, certified) = self._flags(details=True)
        point, _, _, t_alpha = self._target_interval(self._low, self._high)
        n, k = self._n[idx], self._k[idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(n > 0, k / np.maximum(n, 1), np.nan)
        eps = float(self.epsilon0)
        with np.errstate(divide="ignore", over="ignore"):
            pvalues = (np.minimum(1.0, np.exp(-self._max_log_e[idx]))
                       if self.method == "betting" else np.full(idx.size, np.nan))
        hist = self._history(idx)
        return MonitorResult(
            names=tuple(self.names_[j] for j in idx), sizes=n, values=values,
            low=self._low[idx], high=self._high[idx], disparities=values - point,
            disparity_low=d_low, disparity_high=d_high, flagged=np.asarray(flagged),
            certified=np.asarray(certified),
            flagged_since=np.where(self._since[idx] > 0, self._since[idx], -1),
            e_values=e_values, pvalues=pvalues, alphas=self._alphas()[idx],
            registered=self._registered[idx], metric=self._metric_name,
            target=self._target_words(), target_value=point, target_alpha=t_alpha,
            alternative=self.alternative, epsilon0=eps, alpha=float(self.alpha),
            q=float(self.q), procedure=self.procedure, method=self.method,
            n_rows=int(self.n_rows_), n_looks=int(self.n_looks_), history=hist,
            paired_tests=int((self._partners()[idx] != -1).sum()),
            comparison_alpha=self._comparison_alpha(),
        )

    def _group_streams(self):
        """Positions of the groups among the streams (the target's own stream left out)."""
        key = (len(self.names_), self.target)
        if getattr(self, "_groups_key", None) != key:
            self._groups_key = key
            self._groups_idx = np.asarray(
                [j for j, n in enumerate(self.names_) if n not in (OVERALL, self.target)],
                dtype=np.intp)
        return self._groups_idx

    def _flags(self, details=False):
        """``(group positions, flagged, e-values[, (disparity CS, certified)])``."""
        idx = self._group_streams()
        _, t_low, t_high, _ = self._target_interval(self._low, self._high)
        d_low = self._low[idx] - t_high
        d_high = self._high[idx] - t_low
        eps = float(self.epsilon0)
        if self.alternative == "greater":
            cs_flag, certified = d_low > eps, d_high <= eps
        elif self.alternative == "less":
            cs_flag, certified = d_high < eps, d_low >= eps
        else:
            cs_flag = (d_low > abs(eps)) | (d_high < -abs(eps))
            certified = (d_low >= -abs(eps)) & (d_high <= abs(eps))
        e_values = self._e_values(idx, t_low, t_high)
        tested = self._partners()[idx] != -1
        if tested.any():
            e_values = np.where(tested, np.exp(self._test_log_e(idx)), e_values)
            single = self._comparison_alpha()
            if single:  # the test alone flags, with both shares (see the class notes)
                cs_flag = self._t_max[idx] >= np.log(1.0 / single)
            else:
                test_alpha = self.alpha * self._weights[idx] * 0.5
                cs_flag = cs_flag | (tested & (self._t_max[idx] >= np.log(1.0 / test_alpha)))
        if self.procedure == "fdr" and idx.size:
            flagged = weighted_ebh(e_values, self._weights[idx], self.q)
        else:
            flagged = cs_flag
        if details:
            return idx, flagged, e_values, (d_low, d_high, certified)
        return idx, flagged, e_values

    def _target_words(self):
        if isinstance(self.target, str):
            return ("the overall rate" if self.target == OVERALL
                    else f"the rate of {self.target}")
        return f"the constant {float(self.target):g}"

    def _e_values(self, idx, t_low, t_high):
        if self.method != "betting" or idx.size == 0:
            return np.ones(idx.size)
        g = self.grid_size
        eps = float(self.epsilon0)

        def up_at(m0):  # K⁺ at the grid point at or above m0 (<= K⁺(m0))
            j = np.clip(np.ceil(np.nan_to_num(m0, nan=1.0) * g - 1e-9), 0, g).astype(int)
            return self._log_up[idx, j]

        def down_at(m0):  # K⁻ at the grid point at or below m0 (<= K⁻(m0))
            j = np.clip(np.floor(np.nan_to_num(m0, nan=0.0) * g + 1e-9), 0, g).astype(int)
            return self._log_down[idx, j]

        if self.alternative == "greater":
            log_e = up_at(t_high + eps)
        elif self.alternative == "less":
            log_e = down_at(t_low + eps)
        else:
            log_e = hedged_log_capital(up_at(t_high + abs(eps)), down_at(t_low - abs(eps)))
        return np.exp(log_e) * np.ones(idx.size)

    def _history(self, idx):
        if self._hist_look.size == 0:
            return {"looks": np.zeros(0, dtype=np.int64), "rows": np.zeros(0, dtype=np.int64),
                    "low": np.zeros((idx.size, 0)), "high": np.zeros((idx.size, 0))}
        low = self._hist_low.astype(float)
        high = self._hist_high.astype(float)
        if isinstance(self.target, numbers.Real) and not isinstance(self.target, bool):
            t_low = t_high = float(self.target)
        elif self.target in self.names_:
            j = self.names_.index(self.target)
            t_low, t_high = low[j], high[j]
        else:
            t_low = t_high = np.nan
        return {"looks": self._hist_look.copy(), "rows": self._hist_rows.copy(),
                "low": low[idx] - t_high, "high": high[idx] - t_low}

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        """Write the state to ``path`` (``.npz``) atomically (see the module notes).

        Parameters
        ----------
        path : str or pathlib.Path
        """
        check_is_fitted(self, "n_looks_")
        meta = {
            "fingerprint": self.fingerprint(),
            "params": json_safe(self.get_params(deep=False)),
            "names": self.names_, "labels": self.labels_,
            "levels": None if self.levels_ is None else [[c, list(self.levels_[c])]
                                                         for c in self._columns()],
            "n_looks": self.n_looks_, "n_rows": self.n_rows_, "n_initial": self._n_initial,
            "n_new": self._n_new, "stride": self._stride,
        }
        arrays = {
            "weights": self._weights, "registered": self._registered, "n": self._n,
            "k": self._k, "low": self._low, "high": self._high, "max_log_e": self._max_log_e,
            "since": self._since, "log_up": self._log_up, "log_down": self._log_down,
            "t_log": self._t_log, "t_lam": self._t_lam, "t_a": self._t_a, "t_max": self._t_max,
            "t_mix": self._t_mix,
            "hist_look": self._hist_look, "hist_rows": self._hist_rows,
            "hist_low": self._hist_low, "hist_high": self._hist_high,
        }
        write_state(path, meta, arrays)

    @classmethod
    def load(cls, path, *, expected=None):
        """A monitor from a state file written by :meth:`save`.

        Parameters
        ----------
        path : str or pathlib.Path
        expected : FairnessMonitor, optional
            The monitor the caller means to continue: the file is refused
            (:class:`StateFileError`) unless it was written by a monitor with the same
            parameters (model, metric, columns, collection, levels ...).

        Returns
        -------
        FairnessMonitor
        """
        meta, arrays = read_state(path)
        params = dict(meta["params"])
        if expected is not None and meta["fingerprint"] != expected.fingerprint():
            mine = json_safe(expected.get_params(deep=False))
            differ = sorted(k for k in set(mine) | set(params) if mine.get(k) != params.get(k))
            raise StateFileError(
                f"{str(path)!r} was written by another monitor (different {', '.join(differ)}"
                f": e.g. {differ[0]}={params.get(differ[0])!r} in the file, "
                f"{mine.get(differ[0])!r} here); refusing to mix their evidence."
                if differ else f"{str(path)!r} was written by another monitor.")
        protected = params.pop("protected")
        monitor = cls(protected, **params)
        if monitor.fingerprint() != meta["fingerprint"]:
            raise StateFileError(f"{str(path)!r}: its parameters do not match its fingerprint.")
        monitor._init_state()
        if meta["levels"] is not None:
            levels = {c: list(v) for c, v in meta["levels"]}
            monitor.levels_ = None
            monitor.names_ = []
            monitor._register_state(levels, meta, arrays)
        return monitor

    def _register_state(self, levels, meta, arrays):
        self._register_levels(levels, look=0)
        if list(self.names_) != list(meta["names"]):
            # groups registered in several batches: same names, file order
            index = {n: i for i, n in enumerate(meta["names"])}
            if set(index) != set(self.names_):
                raise StateFileError("the state file's groups do not match its levels.")
        self.names_ = list(meta["names"])
        self._stream_of_group = None
        self._partners_key = self._groups_key = None
        for name in ("weights", "registered", "n", "k", "low", "high", "max_log_e", "since",
                     "log_up", "log_down", "hist_look", "hist_rows", "hist_low", "hist_high",
                     "t_log", "t_lam", "t_a", "t_max", "t_mix"):
            setattr(self, f"_{name}", np.array(arrays[name]))
        self.labels_ = list(meta["labels"])
        self.n_looks_ = int(meta["n_looks"])
        self.n_rows_ = int(meta["n_rows"])
        self._n_initial = int(meta["n_initial"])
        self._n_new = int(meta["n_new"])
        self._stride = int(meta["stride"])



