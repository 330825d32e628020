"""Betting confidence sequences for Bernoulli rates, updated from counts.

For a stream of :math:`X_i \\in \\{0, 1\\}` with mean :math:`m`, the two capital processes
(Waudby-Smith & Ramdas 2024)

.. math::

    K^+_t(m) = \\prod_{i \\le t} (1 + \\lambda^+_i(m) (X_i - m)), \\qquad
    K^-_t(m) = \\prod_{i \\le t} (1 - \\lambda^-_i(m) (X_i - m)),

with predictable bets :math:`\\lambda^+_i(m) = \\min(\\hat\\lambda_i, c/m)` and
:math:`\\lambda^-_i(m) = \\min(\\hat\\lambda_i, c/(1-m))`, are non-negative martingales at the
true mean; their average :math:`K_t = (K^+_t + K^-_t)/2` (the hedged capital) crosses
:math:`1/\\alpha` with probability at most :math:`\\alpha` by Ville's inequality. The bet
:math:`\\hat\\lambda` is held fixed within a batch (chosen from the counts before the batch and
the group's size in the batch), so a batch enters the log-capital only through its counts of
ones :math:`k` and zeros :math:`z`:

.. math::

    \\log K^+(m) \\mathrel{+}= k \\log(1 + \\lambda^+(m)(1 - m)) + z \\log(1 - \\lambda^+(m) m).

Each factor is non-increasing in :math:`m` for :math:`K^+` and non-decreasing for :math:`K^-`,
so on a grid :math:`m_0 < \\dots < m_G` the cell :math:`[m_j, m_{j+1}]` can hold the true mean
only if :math:`(K^+(m_{j+1}) + K^-(m_j))/2 < 1/\\alpha`: dropping the other cells never drops
the truth unless the capital at the truth crossed, and the reported interval is the hull of
the remaining cells.
"""

from __future__ import annotations

import math

import numpy as np

#: Truncation of the bets: the capital never loses more than this share in one step.
BET_CAP = 0.5


def grid_points(grid_size: int) -> np.ndarray:
    """The ``grid_size + 1`` equally spaced means ``0, 1/G, ..., 1``."""
    return np.linspace(0.0, 1.0, int(grid_size) + 1)


def plugin_bet(n0, k0, batch, alpha):
    """Predictable plug-in bet of a batch (Waudby-Smith & Ramdas 2024, eq. (26)).

    .. math::

        \\hat\\lambda = \\sqrt{\\frac{2 \\log(2/\\alpha)}{\\hat\\sigma^2\\, t \\log(1 + t)}},
        \\qquad t = n_0 + (b + 1)/2,

    with :math:`\\hat\\sigma^2 = (1/4 + \\sum_i (X_i - \\hat\\mu)^2)/(n_0 + 1)` from the
    ``n0`` earlier observations (``k0`` ones) and :math:`\\hat\\mu = (1/2 + k_0)/(n_0 + 1)`;
    ``batch`` (:math:`b`) is the group's size in the batch, which the bet may use.

    Parameters
    ----------
    n0, k0, batch : array-like of int
    alpha : array-like of float
        Each stream's level.

    Returns
    -------
    ndarray of float
    """
    n0 = np.asarray(n0, dtype=float)
    k0 = np.asarray(k0, dtype=float)
    mu = (0.5 + k0) / (n0 + 1.0)
    ss = k0 * (1.0 - mu) ** 2 + (n0 - k0) * mu**2
    var = (0.25 + ss) / (n0 + 1.0)
    t = n0 + (np.asarray(batch, dtype=float) + 1.0) / 2.0
    return np.sqrt(2.0 * np.log(2.0 / np.asarray(alpha, dtype=float))
                   / (var * t * np.log1p(t)))


def _bets(lam, m):
    """``(λ⁺(m), λ⁻(m))`` broadcast over ``lam[..., None]`` and the means ``m``."""
    lam = np.asarray(lam, dtype=float)[..., None]
    with np.errstate(divide="ignore"):
        up = np.minimum(lam, BET_CAP / m)
        down = np.minimum(lam, BET_CAP / (1.0 - m))
    return up, down


def log_capital_step(ones, zeros, lam, m):
    """Increments of ``(log K⁺, log K⁻)`` for a batch with fixed bets, on the means ``m``.

    Parameters
    ----------
    ones, zeros : array-like of shape (n_streams,)
        Counts of ones and zeros of every stream in the batch.
    lam : array-like of shape (n_streams,)
        The batch's bets :math:`\\hat\\lambda`.
    m : ndarray of shape (n_means,) or (n_streams, 1)
        The means at which the capital is tracked (a grid, or each stream's true mean).

    Returns
    -------
    up, down : ndarray of shape (n_streams, n_means)
    """
    up, down = _bets(lam, m)
    k = np.asarray(ones, dtype=float)[..., None]
    z = np.asarray(zeros, dtype=float)[..., None]
    d_up = k * np.log1p(up * (1.0 - m)) + z * np.log1p(-up * m)
    d_down = k * np.log1p(-down * (1.0 - m)) + z * np.log1p(down * m)
    return d_up, d_down


def hedged_log_capital(log_up, log_down):
    """``log((K⁺ + K⁻) / 2)``."""
    return np.logaddexp(log_up, log_down) - math.log(2.0)


def grid_interval(log_up, log_down, log_threshold, m):
    """Hull of the grid cells that may hold the mean (see the module's notes).

    Parameters
    ----------
    log_up, log_down : ndarray of shape (n_streams, G + 1)
    log_threshold : ndarray of shape (n_streams,)
        :math:`\\log(1/\\alpha_s)` of every stream.
    m : ndarray of shape (G + 1,)

    Returns
    -------
    low, high : ndarray of shape (n_streams,)
        ``nan`` where every cell is excluded (only on the event the guarantee excludes).
    """
    a, b = log_up[:, 1:], log_down[:, :-1]
    threshold = np.asarray(log_threshold, dtype=float)[:, None]
    top = np.maximum(a, b)
    # log((e^a + e^b)/2) lies in [top - log 2, top]: exact arithmetic only in that band
    alive = top < threshold
    band = np.nonzero(~alive & (top < threshold + math.log(2.0)))
    if band[0].size:
        alive[band] = hedged_log_capital(a[band], b[band]) < threshold[band[0], 0]
    any_alive = alive.any(axis=1)
    first = np.argmax(alive, axis=1)
    last = alive.shape[1] - 1 - np.argmax(alive[:, ::-1], axis=1)
    low = np.where(any_alive, m[first], np.nan)
    high = np.where(any_alive, m[last + 1], np.nan)
    return low, high


def asymptotic_interval(n, k, alpha, t_opt=1000.0):
    """Asymptotic confidence sequence with a Gaussian-mixture boundary.

    Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas (2024), Theorem 2.2:

    .. math::

        \\hat\\mu_t \\pm \\hat\\sigma_t \\sqrt{\\frac{2(t\\rho^2 + 1)}{t^2\\rho^2}
        \\log\\frac{\\sqrt{t\\rho^2 + 1}}{\\alpha}}, \\qquad
        \\rho^2 = \\frac{-2\\log\\alpha + \\log(1 - 2\\log\\alpha)}{t^\\star},

    with the plug-in :math:`\\hat\\sigma_t^2 = \\hat\\mu_t(1 - \\hat\\mu_t)`, clipped to [0, 1].
    Valid only as :math:`t \\to \\infty` (coverage may fall short on small groups).

    Parameters
    ----------
    n, k : array-like of int
    alpha : array-like of float
    t_opt : float
        The time :math:`t^\\star` at which the boundary is tightest.

    Returns
    -------
    low, high : ndarray
    """
    n = np.asarray(n, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.asarray(k, dtype=float) / n
        rho2 = (-2.0 * np.log(alpha) + np.log1p(-2.0 * np.log(alpha))) / t_opt
        var = mu * (1.0 - mu)
        radius = np.sqrt(var * 2.0 * (n * rho2 + 1.0) / (n**2 * rho2)
                         * np.log(np.sqrt(n * rho2 + 1.0) / alpha))
        low = np.where(n > 0, np.clip(mu - radius, 0.0, 1.0), 0.0)
        high = np.where(n > 0, np.clip(mu + radius, 0.0, 1.0), 1.0)
    return low, high


def weighted_ebh(e_values, weights, q):
    """Weighted e-BH (Wang & Ramdas 2022): the largest set ``R`` with
    :math:`w_j e_j \\ge 1/(q |R|)` for every ``j`` in ``R``.

    With weights summing to at most one the false discovery rate is at most ``q`` whatever
    the dependence between the e-values: :math:`\\mathrm{FDR} \\le q \\sum_{j \\in H_0} w_j
    E[e_j] \\le q`. Equal weights ``1/K`` give the e-BH procedure.

    Parameters
    ----------
    e_values, weights : ndarray of shape (n,)
    q : float

    Returns
    -------
    ndarray of bool of shape (n,)
    """
    score = np.asarray(weights, dtype=float) * np.asarray(e_values, dtype=float)
    order = np.argsort(-score, kind="stable")
    ranked = score[order]
    k = np.arange(1, ranked.size + 1)
    ok = np.flatnonzero(ranked * q * k >= 1.0)
    flagged = np.zeros(ranked.size, dtype=bool)
    if ok.size:
        flagged[order[: ok[-1] + 1]] = True
    return flagged


def simulate_crossings(counts, truth, alpha):
    """Earliest look at which each stream's hedged capital *at its true mean* reaches
    :math:`1/\\alpha_s` (``-1``: never), from per-look counts.

    This is the event that makes a grid confidence sequence of the monitor miss (it can
    miss only if this happens), computed from counts alone: validity simulations draw the
    counts of every look directly, e.g. binomial counts per group, and never build rows.
    Memory is that of one look.

    Parameters
    ----------
    counts : iterable of (ones, sizes)
        For every look, the ones and the rows of every stream in the look's batch, arrays
        of the shape of ``truth`` (e.g. ``(n_replications, n_streams)``); a generator is
        consumed once.
    truth : ndarray of shape (..., n_streams)
        True means.
    alpha : ndarray of shape (n_streams,)
        Level of every stream (its share of the simultaneous level).

    Returns
    -------
    ndarray of int of the shape of ``truth``

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> sizes = [np.full((1000, 1), 50) for _ in range(100)]
    >>> looks = ((rng.binomial(s, 0.3), s) for s in sizes)
    >>> first = simulate_crossings(looks, np.full((1000, 1), 0.3), np.array([0.1]))
    >>> bool((first >= 0).mean() <= 0.1)
    True
    """
    truth = np.asarray(truth, dtype=float)
    threshold = np.log(1.0 / np.asarray(alpha, dtype=float))
    shape = truth.shape
    log_up = np.zeros(shape)
    log_down = np.zeros(shape)
    n = np.zeros(shape)
    k = np.zeros(shape)
    first = np.full(shape, -1, dtype=np.int64)
    m = truth[..., None]
    for look, (ones, sizes) in enumerate(counts):
        b = np.asarray(sizes, dtype=float)
        o = np.asarray(ones, dtype=float)
        lam = plugin_bet(n, k, b, alpha)
        d_up, d_down = log_capital_step(o, b - o, lam, m)
        log_up += d_up[..., 0]
        log_down += d_down[..., 0]
        n += b
        k += o
        crossed = (hedged_log_capital(log_up, log_down) >= threshold) & (first < 0)
        first[crossed] = look
    return first


#: Step size of the online Newton step (Cutkosky & Orabona 2018; Chugg et al. 2023).
ONS_STEP = 2.0 / (2.0 - math.log(3.0))


def expected_pairs(n_g, k_g, n_p, k_p):
    """Expected numbers of pair types when the rows of a group and of its partner are
    matched at random: ``p = min(n_g, n_p)`` pairs, with ``(1, 0)``, ``(0, 1)`` and equal
    outcomes in the expected proportions :math:`\\hat q_g (1 - \\hat q_p)`,
    :math:`(1 - \\hat q_g) \\hat q_p` and the rest.

    Parameters
    ----------
    n_g, k_g, n_p, k_p : array-like
        Rows and ones of the group and of its partner in the batch.

    Returns
    -------
    pairs, up, down, same : ndarray
        ``g_t = x_t - y_t`` is ``+1``, ``-1`` and ``0`` in ``up``, ``down`` and ``same`` of the
        ``pairs`` pairs (in expectation over the matching).
    """
    n_g = np.asarray(n_g, dtype=float)
    n_p = np.asarray(n_p, dtype=float)
    pairs = np.minimum(n_g, n_p)
    with np.errstate(invalid="ignore", divide="ignore"):
        q_g = np.where(n_g > 0, np.asarray(k_g, dtype=float) / n_g, 0.0)
        q_p = np.where(n_p > 0, np.asarray(k_p, dtype=float) / n_p, 0.0)
    up = pairs * q_g * (1.0 - q_p)
    down = pairs * (1.0 - q_g) * q_p
    return pairs, up, down, pairs - up - down


def paired_step(up, down, same, lam, d, side):
    """Log-capital increment and ONS gradient sums of the paired test for one batch.

    The bettor on side ``+1`` tests :math:`\\mu_G - \\mu_P \\le d` with factors
    :math:`1 + \\lambda (g - d)`, the bettor on side ``-1`` tests :math:`\\mu_G - \\mu_P \\ge d`
    with :math:`1 - \\lambda (g - d)`, :math:`\\lambda \\ge 0` fixed in the batch. The
    increment is the expectation of the log-capital over a random matching of the rows,
    :math:`E_\\pi \\sum \\log f \\le \\log E_\\pi \\prod f` (Jensen): a lower bound of the
    capital of the average over matchings, whose factor has conditional expectation at most
    one under the null; so the process is a test supermartingale.

    Parameters
    ----------
    up, down, same : ndarray
        Expected pair types (:func:`expected_pairs`).
    lam : ndarray
        Bets (non-negative; of either sign for the signed two-sided test with ``d = 0``).
    d : float or ndarray
        The null's boundary.
    side : {+1, -1}

    Returns
    -------
    increment, grad, grad2 : ndarray
        Log-capital increment, sum of the gradients of :math:`-\\log f` in :math:`\\lambda`
        and sum of their squares.
    """
    out = np.zeros_like(np.asarray(lam, dtype=float))
    grad = np.zeros_like(out)
    grad2 = np.zeros_like(out)
    for count, g in ((up, 1.0), (down, -1.0), (same, 0.0)):
        x = side * (g - d)
        factor = 1.0 + lam * x
        out += count * np.log(factor)
        z = -x / factor
        grad += count * z
        grad2 += count * z * z
    return out, grad, grad2


def ons_update(lam, a, grad, grad2, cap, signed=False):
    """One online-Newton step of the bet from a batch's gradient sums.

    :math:`A \\leftarrow A + \\sum z^2`, :math:`\\lambda \\leftarrow \\mathrm{clip}(\\lambda -
    c \\sum z / A, 0, \\mathrm{cap})` with :math:`c = 2 / (2 - \\log 3)`; the lower end is
    ``-cap`` for a ``signed`` bettor (the two-sided test of equal rates).

    Parameters
    ----------
    lam, a, grad, grad2, cap : ndarray
    signed : bool

    Returns
    -------
    lam, a : ndarray
    """
    a = a + grad2
    lam = np.clip(lam - ONS_STEP * grad / a, -cap if signed else 0.0, cap)
    return lam, a


#: Constant bettors of the mixture bet of the paired tests: ``MIX_POINTS`` equally spaced
#: bets from 0 to the cap, equal weights (a uniform prior over the bets).
MIX_POINTS = 101


def mixture_step(up, down, same, cap, d, side):
    """Log-capital increments of the constant bettors of a paired test for one batch.

    The mixture bet (an alternative to the online Newton step) follows :math:`J` bettors
    with constant bets :math:`\\lambda_j = c\\, j / (J - 1)`, :math:`j = 0, \\dots, J - 1`
    (:math:`c` the cap), each with factors :math:`1 + \\lambda_j s (g - d)` on side
    :math:`s`, and holds their average capital

    .. math::

        K_t = \\frac1J \\sum_j \\prod_{i \\le t} (1 + \\lambda_j s (g_i - d)).

    A constant bet is predictable whatever the batches, so each bettor's expected
    log-capital over a random matching of the batch's rows (as in :func:`paired_step`) is
    exact from the counts, with nothing held fixed in a batch: each bettor is a test
    supermartingale under the null, and so is their average (weights fixed in advance).
    Against the best constant bet in hindsight the average loses about
    :math:`\\tfrac12 \\log t` (Laplace's method), the regret of a uniform prior.

    Parameters
    ----------
    up, down, same : ndarray of shape (n_streams,)
        Expected pair types (:func:`expected_pairs`).
    cap : float
        Largest bet (keeps every factor at least ``1 - BET_CAP``).
    d : float
        The null's boundary.
    side : {+1, -1}

    Returns
    -------
    ndarray of shape (n_streams, MIX_POINTS)
    """
    lam = cap * np.linspace(0.0, 1.0, MIX_POINTS)
    out = 0.0
    for count, g in ((up, 1.0), (down, -1.0), (same, 0.0)):
        out = out + np.asarray(count, dtype=float)[..., None] * np.log1p(lam * side * (g - d))
    return out


def mixture_log_capital(log_k):
    """``log`` of the average capital of the bettors (last axis)."""
    top = np.max(log_k, axis=-1)
    return top + np.log(np.mean(np.exp(log_k - top[..., None]), axis=-1))
