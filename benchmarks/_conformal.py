"""The simulated conformal-prediction trail shared by the conformal, tilt and RKHS benchmarks.

``x ~ U(0, 5)``, ``y = Poisson(sin^2 x + 0.1) + 0.03 x Z + 25 1{U < 0.01} Z'``; a split
conformalized quantile regression (CQR) is fitted on training and calibration samples and
audited on a third sample. ``bench_conformal_coverage.py``, ``bench_conformal_tilts.py`` and
``bench_rkhs_audit.py`` audit the same trails (same seeds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats
from sklearn.ensemble import GradientBoostingRegressor

GRID = np.linspace(0.0, 5.0, 51)

K_MAX = 40  # Poisson(<= 1.1) mass beyond 40 is < 1e-40


def simulate(rng, n):
    """``x ~ U(0, 5)``, ``y = Poisson(sin^2 x + 0.1) + 0.03 x Z + 25 1{U < 0.01} Z'``."""
    x = rng.uniform(0.0, 5.0, n)
    y = (rng.poisson(np.sin(x) ** 2 + 0.1) + 0.03 * x * rng.standard_normal(n)
         + 25.0 * (rng.random(n) < 0.01) * rng.standard_normal(n))
    return x, y


@dataclass(frozen=True)
class CQR:
    """Split conformalized quantile regression at level ``1 - miscoverage``."""

    lower_model: object
    upper_model: object
    offset: float

    @classmethod
    def fit(cls, x_train, y_train, x_cal, y_cal, *, miscoverage=0.1, random_state=0):
        models = [
            GradientBoostingRegressor(loss="quantile", alpha=a, random_state=random_state)
            .fit(x_train[:, None], y_train)
            for a in (miscoverage / 2, 1 - miscoverage / 2)
        ]
        lo, hi = (m.predict(x_cal[:, None]) for m in models)
        scores = np.sort(np.maximum(lo - y_cal, y_cal - hi))
        k = int(np.ceil((1 - miscoverage) * (scores.size + 1)))
        offset = scores[min(k, scores.size) - 1]
        return cls(models[0], models[1], float(offset))

    def predict(self, x):
        """``[q_lo(x) - Q, q_hi(x) + Q]``; where the two fitted quantiles cross (the interval
        is empty) it is returned as the point ``[lo, lo]``, which covers ``y`` with
        probability 0 (``y`` has a continuous noise component), so that
        ``get_metric("coverage")``, which rejects ``low > high``, scores it 0."""
        raw = self.predict_raw(x)
        return np.column_stack([raw[:, 0], np.maximum(raw[:, 0], raw[:, 1])])

    def predict_raw(self, x):
        x = np.asarray(x, dtype=float)[:, None]
        return np.column_stack([self.lower_model.predict(x) - self.offset,
                                self.upper_model.predict(x) + self.offset])

    def crossing_fraction(self, x):
        raw = self.predict_raw(x)
        return float(np.mean(raw[:, 0] > raw[:, 1]))


def conditional_coverage(x, interval):
    """Exact ``P(lo <= Y <= hi | X = x)`` under the generating model (for ``x > 0``).

    Given ``x`` and ``K ~ Poisson(sin^2 x + 0.1)``, the noise is ``N(0, (0.03x)^2)`` with
    probability 0.99 and ``N(0, (0.03x)^2 + 625)`` with probability 0.01.
    """
    lam = np.sin(x) ** 2 + 0.1
    k = np.arange(K_MAX + 1)[:, None]
    pk = stats.poisson.pmf(k, lam[None, :])
    lo, hi = interval[:, 0][None, :], interval[:, 1][None, :]
    out = np.zeros(x.size)
    for weight, sd in ((0.99, 0.03 * x), (0.01, np.sqrt((0.03 * x) ** 2 + 625.0))):
        mass = stats.norm.cdf((hi - k) / sd) - stats.norm.cdf((lo - k) / sd)
        out += weight * (pk * mass).sum(axis=0)
    return out


def true_bin_coverage(cqr, points_per_bin=400):
    """Coverage of each 0.1 bin: midpoint rule over ``x`` (uniform, so bins weigh equally)."""
    width = np.diff(GRID)
    u = (np.arange(points_per_bin) + 0.5) / points_per_bin
    x = (GRID[:-1, None] + width[:, None] * u[None, :]).ravel()
    cov = conditional_coverage(x, cqr.predict(x))
    return cov.reshape(GRID.size - 1, points_per_bin).mean(axis=1), x, cov


def conformal_trail(seed, *, n_train, n_cal, n_audit):
    """One replicate's data and model: split CQR fitted on simulated training and calibration
    samples, an audit sample, and the seed left for the audit's bootstrap.

    The tilt and RKHS benchmarks audit the same trails (same seeds).

    Returns
    -------
    cqr, x_audit, y_audit, bootstrap_seed
    """
    data_seed, model_seed, boot_seed = seed.spawn(3)
    rng = np.random.default_rng(data_seed)
    x_t, y_t = simulate(rng, n_train)
    x_c, y_c = simulate(rng, n_cal)
    x_a, y_a = simulate(rng, n_audit)
    cqr = CQR.fit(x_t, y_t, x_c, y_c, miscoverage=0.1,
                  random_state=int(model_seed.generate_state(1)[0] % 2**31))
    return cqr, x_a, y_a, boot_seed
