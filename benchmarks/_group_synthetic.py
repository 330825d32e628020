"""Synthetic audit trails with exact group disparities, shared by the group-audit benchmarks.

Two designs, each with a ``"null"`` configuration (no disparity at all) and an
``"alternative"`` one (some groups truly off by a known amount):

* :class:`CategoricalDesign`: three categorical attributes ``A`` (2 levels), ``B`` (3) and
  ``C`` (4), independent, with known marginals; the 24 atoms ``(a, b, c)`` have known
  probabilities :math:`\\pi_{abc}` and known error probabilities :math:`p_{abc}`. The metric is
  the error rate ``L = 1{y_pred != y}`` and the target the overall error rate. The collection is
  every intersection up to depth 3: 2 + 3 + 4 = 9 marginal groups, 6 + 8 + 12 = 26 pairs and
  24 triples, 59 groups. For a group ``G`` (a set of atoms)

  .. math::

      \\epsilon(G) = \\frac{\\sum_{a \\in G} \\pi_a p_a}{\\sum_{a \\in G} \\pi_a}
                    - \\sum_a \\pi_a p_a ,

  exactly.
* :class:`IntervalDesign`: ``x ~ U(0, 5)``, 50 equal bins of width 0.1, so 1,275 intervals
  ``[g_a, g_b)`` with endpoints on the grid; ``L = 1{miscovered} ~ Bernoulli(p(x))`` with
  ``p(x) = base + h exp(-(x - c)^2 / (2 s^2))`` and the known target ``theta = base``.
  The truth of an interval is the exact integral of ``p`` over it (error functions):
  ``E[L | x in I] = (1/|I|) int_I p(x) dx`` because ``x`` is uniform.

Row names follow :func:`skfair_audit.group.intersections` / :func:`~skfair_audit.group.intervals`
(``"A=0 & C=3"``, ``"x in [0.3, 1.2)"``), so the truth is looked up by group name.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import erf

__all__ = ["CategoricalDesign", "IntervalDesign", "categorical_design", "interval_design"]

# --- categorical attributes --------------------------------------------------------------

ATTRIBUTES = ("A", "B", "C")
LEVELS = (2, 3, 4)
MARGINALS = (
    np.array([0.55, 0.45]),
    np.array([0.40, 0.35, 0.25]),
    np.array([0.30, 0.30, 0.20, 0.20]),
)
BASE_ERROR = 0.15


def _alternative_errors() -> np.ndarray:
    """Error probabilities of the alternative: two elevated pockets of atoms."""
    p = np.full(LEVELS, BASE_ERROR)
    p[:, 2, 3] += 0.30  # B=2 & C=3: much worse (+30 points)
    p[1, :, 0] += 0.15  # A=1 & C=0: worse (+15 points)
    return p


@dataclass(frozen=True)
class CategoricalDesign:
    """Three independent categorical attributes with per-atom error probabilities.

    Attributes
    ----------
    error_prob : ndarray of shape (2, 3, 4)
        :math:`p_{abc} = P(L = 1 \\mid A=a, B=b, C=c)`.
    depth : int
        Intersections up to this many attributes (3: all 59 groups).
    config : str
        ``"null"`` or ``"alternative"`` (a label only).
    """

    error_prob: np.ndarray
    depth: int = 3
    config: str = "null"
    atom_prob: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        prob = MARGINALS[0][:, None, None] * MARGINALS[1][None, :, None] * MARGINALS[2]
        object.__setattr__(self, "atom_prob", prob)

    @property
    def theta(self) -> float:
        """True target: the overall error rate."""
        return float(np.sum(self.atom_prob * self.error_prob))

    def groups(self):
        """``[(name, atom mask of shape (2, 3, 4))]`` of every intersection, in library order."""
        out = []
        for k in range(1, self.depth + 1):
            for subset in itertools.combinations(range(len(ATTRIBUTES)), k):
                for combo in itertools.product(*(range(LEVELS[a]) for a in subset)):
                    mask = np.ones(LEVELS, dtype=bool)
                    for a, c in zip(subset, combo, strict=True):
                        index = [slice(None)] * len(LEVELS)
                        index[a] = np.arange(LEVELS[a]) != c
                        mask[tuple(index)] = False
                    name = " & ".join(
                        f"{ATTRIBUTES[a]}={c}" for a, c in zip(subset, combo, strict=True)
                    )
                    out.append((name, mask))
        return out

    def truth(self) -> dict:
        """``{name: (P(G), E[L | G], epsilon(G))}`` exactly, from the atom probabilities."""
        theta = self.theta
        table = {}
        for name, mask in self.groups():
            p_g = float(self.atom_prob[mask].sum())
            mean = float((self.atom_prob * self.error_prob)[mask].sum() / p_g)
            table[name] = (p_g, mean, mean - theta)
        return table

    def sample(self, n: int, rng: np.random.Generator, negative_rate=None) -> dict:
        """An audit trail of ``n`` rows: attributes (int codes), ``y`` and ``y_pred``.

        Atom counts are multinomial, errors binomial within each atom; rows are shuffled.
        ``y`` is independent of the attributes and of the errors: ``y = 0`` with probability
        ``negative_rate`` (``None``: fair coin flips, drawn as ``rng.integers(0, 2, n)``).
        The false positive rate of an atom is then its error probability, so the disparities
        of the false positive rate (on the negatives) are those of :meth:`truth`, and a group
        of probability ``P(G)`` holds about ``n P(G) negative_rate`` negatives.
        """
        counts = rng.multinomial(n, self.atom_prob.ravel())
        errors = rng.binomial(counts, self.error_prob.ravel())
        atom = np.repeat(np.arange(counts.size), counts)
        # within each atom, the first `errors` rows are errors
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        loss = (np.arange(n) - starts) < np.repeat(errors, counts)
        order = rng.permutation(n)
        atom, loss = atom[order], loss[order]
        codes = np.unravel_index(atom, LEVELS)
        y = (rng.integers(0, 2, n) if negative_rate is None
             else (rng.random(n) >= negative_rate).astype(np.int64))
        y_pred = np.where(loss, 1 - y, y)
        return {
            "attributes": {name: c.astype(np.int64) for name, c in zip(ATTRIBUTES, codes,
                                                                       strict=True)},
            "y": y,
            "y_pred": y_pred,
            "loss": loss.astype(float),
        }


def categorical_design(config: str = "null", depth: int = 3) -> CategoricalDesign:
    """The ``"null"`` (every error probability 0.15) or ``"alternative"`` design."""
    if config == "null":
        return CategoricalDesign(np.full(LEVELS, BASE_ERROR), depth, "null")
    if config == "alternative":
        return CategoricalDesign(_alternative_errors(), depth, "alternative")
    raise ValueError(f"config must be 'null' or 'alternative', got {config!r}.")


# --- intervals of a continuous covariate ---------------------------------------------------


@dataclass(frozen=True)
class IntervalDesign:
    """``x ~ U(low, high)``, ``L ~ Bernoulli(p(x))`` with a Gaussian bump over ``base``.

    Attributes
    ----------
    base : float
        Baseline miscoverage probability, also the (known) target.
    height, center, width : float
        Bump ``height * exp(-(x - center)^2 / (2 width^2))`` (``height = 0``: null).
    """

    base: float = 0.1
    height: float = 0.0
    center: float = 3.5
    width: float = 0.3
    low: float = 0.0
    high: float = 5.0
    n_bins: int = 50
    config: str = "null"

    @property
    def theta(self) -> float:
        return self.base

    @property
    def edges(self) -> np.ndarray:
        return np.linspace(self.low, self.high, self.n_bins + 1)

    def p(self, x):
        x = np.asarray(x, dtype=float)
        return self.base + self.height * np.exp(-((x - self.center) ** 2) / (2 * self.width**2))

    def integral(self, a, b):
        """Exact :math:`\\int_a^b p(x)\\,dx`."""
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        s = self.width * math.sqrt(2.0)
        bump = self.height * self.width * math.sqrt(math.pi / 2.0) * (
            erf((b - self.center) / s) - erf((a - self.center) / s)
        )
        return self.base * (b - a) + bump

    def truth(self) -> dict:
        """``{name: (P(I), E[L | I], epsilon(I))}`` for all grid intervals, exactly."""
        edges = self.edges
        m = edges.size - 1
        table = {}
        for a in range(m):
            for b in range(a + 1, m + 1):
                lo, hi = edges[a], edges[b]
                mean = float(self.integral(lo, hi) / (hi - lo))
                closing = "]" if b == m else ")"
                name = f"x in [{lo:g}, {hi:g}{closing}"
                table[name] = ((hi - lo) / (self.high - self.low), mean, mean - self.theta)
        return table

    def sample(self, n: int, rng: np.random.Generator) -> dict:
        """``x``, ``y`` and ``y_pred`` with ``L = 1{y_pred != y}`` (miscoverage)."""
        x = rng.uniform(self.low, self.high, n)
        loss = rng.random(n) < self.p(x)
        y = rng.integers(0, 2, n)
        y_pred = np.where(loss, 1 - y, y)
        return {"x": x, "y": y, "y_pred": y_pred, "loss": loss.astype(float)}


def interval_design(config: str = "null") -> IntervalDesign:
    """``"null"``: p(x) = 0.1; ``"alternative"``: a +0.25 bump at x = 3.5 (sd 0.3)."""
    if config == "null":
        return IntervalDesign(config="null")
    if config == "alternative":
        return IntervalDesign(height=0.25, config="alternative")
    raise ValueError(f"config must be 'null' or 'alternative', got {config!r}.")
