"""Speed of the tilt audits on 10^5 rows with B = 1,000, against the generic approach.

One audit per class, timed end to end (summary, bootstrap, bounds), on a synthetic audit
trail of ``--rows`` rows (``x ~ U(0, 5)``, a binary metric whose mean varies with ``x``):

* ``monotone`` exact (50 quantile bins, both directions: 1,225 pairs of half-lines per
  direction), and relaxed over every distinct value of ``x`` (10^5 cells);
* ``polynomial`` of degree 2 in one covariate (every distinct value a cell) and of degree 1
  in two;
* ``rkhs`` unscaled (the paper's §5) and rescaled (Appendix D), Gaussian kernel of bandwidth
  0.5.

The generic approach, timed on a few replicates in the same run and extrapolated to B:

* monotone: evaluate the bound process of every mixture of two half-lines from the row
  weights on a 33-point grid per pair (an approximation from below, which the exact method
  replaces);
* polynomial: maximise over the unit sphere of coefficients by BFGS from 20 random starts
  per replicate and end of the range (``scipy.optimize``);
* rescaled RKHS: the paper's computation, :math:`10^6` random directions per replicate in
  the span of the ``4 + k`` vectors (an approximation from below);
* unscaled RKHS: the paper's computation needs the ``n x n`` kernel Cholesky factor, which
  does not fit in memory at 10^5 rows (80 GB), and a product with it per replicate: its cost
  is extrapolated from 3,000 rows as :math:`n^3` and :math:`n^2`.

Writes ``benchmarks/results/tilt_speed.json`` (``--quick``: 2 x 10^4 rows, B = 200).

Usage::

    python benchmarks/bench_tilt_speed.py [--quick] [--rows 100000] [--resamples 1000]

Run time (2 shared cores): about 3 minutes.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402
from scipy import linalg  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

from skfair_audit.group import (  # noqa: E402
    monotone_tilt_bounds,
    polynomial_tilt_bounds,
    rkhs_tilt_bounds,
)
from skfair_audit.group._polynomial import legendre_features  # noqa: E402
from skfair_audit.group._rkhs import gaussian_kernel  # noqa: E402

COVERED = dict(metric=lambda y, p: p.astype(float), target=0.0, alternative="two-sided")


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    out = function(*args, **kwargs)
    return out, time.perf_counter() - start


def generic_monotone(x, L, bins, replicates, rng):
    """Seconds per replicate of the row-level evaluation of every pair of half-lines."""
    edges = np.quantile(x, np.linspace(0, 1, bins + 1))[1:-1]
    masks = np.stack([x >= e for e in [-np.inf, *edges]], axis=1).astype(float)  # n x m
    n, m = masks.shape
    grid = np.linspace(0, 1, 33)
    start = time.perf_counter()
    for _ in range(replicates):
        w = rng.multinomial(n, np.ones(n) / n).astype(float)
        best = 0.0
        for j in range(m):
            for k in range(j + 1, m):
                tilts = np.outer(masks[:, j], grid) + np.outer(masks[:, k], 1 - grid)
                mass = tilts.mean(axis=0)
                T = mass * ((w * L) @ tilts) / n - (L @ tilts) / n * (w @ tilts) / n
                best = max(best, float(np.max(T / mass)))
    return (time.perf_counter() - start) / replicates


def generic_polynomial(x, L, degree, replicates, rng):
    """Seconds per replicate of a multi-start maximisation over the coefficients."""
    z = 2 * (x - x.min()) / (x.max() - x.min()) - 1
    phi = legendre_features(z[:, None], degree)
    n = x.size
    start = time.perf_counter()
    for _ in range(replicates):
        w = rng.multinomial(n, np.ones(n) / n).astype(float)
        for e in (0.8, 1.0):
            def objective(c, w=w, e=e):
                t = (phi @ c) ** 2
                return -((w * (L - e) * t).sum() - ((L - e) * t).sum()) / t.sum()
            for _ in range(20):
                minimize(objective, rng.normal(size=phi.shape[1]), method="BFGS")
    return (time.perf_counter() - start) / replicates


def generic_rescaled_rkhs(rank, replicates, rng, directions=1_000_000):
    """Seconds per replicate of the paper's sampling: 10^6 random unit directions in the
    ``4 + k`` dimensional span, each scored by two quadratic forms (its numerator and the
    kernel part of its scale), as in fairaudit's ``_qr_student`` (k = the rank here)."""
    d = 4 + rank
    M1, M2 = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    start = time.perf_counter()
    for _ in range(replicates):
        for _ in range(0, directions, 100_000):
            S = rng.standard_normal((100_000, d))
            S /= np.linalg.norm(S, axis=1)[:, None]
            top = ((S @ M1) * S).sum(axis=1)
            scale = np.abs(S[:, 0]) * np.sqrt(np.abs(((S @ M2) * S).sum(axis=1)))
            np.max(top / np.maximum(scale, 1e-3))
    return (time.perf_counter() - start) / replicates


def generic_unscaled_rkhs(x_small, bandwidth, n_target, n_resamples):
    """Seconds of the paper's unscaled computation at ``n_target`` rows: an ``n x n`` kernel
    Cholesky factor (timed at ``len(x_small)`` rows, scaled as n^3) and, per replicate, the
    product of its transpose with the 4 basis vectors (scaled as n^2)."""
    m = x_small.size
    K = gaussian_kernel(x_small[:, None], x_small[:, None], bandwidth)
    start = time.perf_counter()
    root = linalg.cholesky(K + 1e-6 * np.eye(m), lower=True)
    chol = time.perf_counter() - start
    basis = np.random.default_rng(0).normal(size=(m, 4))
    start = time.perf_counter()
    for _ in range(5):
        np.linalg.qr(root.T @ np.linalg.qr(basis)[0])
    per_replicate = (time.perf_counter() - start) / 5
    return chol * (n_target / m) ** 3 + n_resamples * per_replicate * (n_target / m) ** 2


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--resamples", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n = args.rows or (20_000 if args.quick else 100_000)
    B = args.resamples or (200 if args.quick else 1000)
    rng = np.random.default_rng(args.seed)
    x = rng.uniform(0.0, 5.0, n)
    covered = (rng.random(n) < 0.93 - 0.02 * np.abs(x - 2.5)).astype(int)
    L = covered.astype(float)
    X2 = np.column_stack([x, rng.uniform(0.0, 1.0, n)])
    run = Run(__file__, argv, packages=("matplotlib",))
    common = dict(n_resamples=B, random_state=0)
    cases = {}

    def record(name, result, seconds, generic=None, note=""):
        cases[name] = {"seconds": seconds, "critical_value": float(result.critical_value),
                       "note": note}
        if generic is not None:
            per_replicate, how = generic
            cases[name].update({"generic_seconds_extrapolated": per_replicate * B,
                                "generic": how,
                                "ratio_generic_over_ours": per_replicate * B / seconds})
        print(name, {k: v for k, v in cases[name].items() if k != "note"}, flush=True)

    res, s = timed(monotone_tilt_bounds, covered, covered, x, **COVERED, bins=50,
                   method="exact", **common)
    record("monotone_exact_50_bins", res, s,
           (generic_monotone(x, L, 50, 1, rng), "every pair of half-lines on a 33-point grid, "
            "row level, 1 replicate timed"),
           "exact supremum over every monotone tilt constant on 50 quantile bins")
    res, s = timed(monotone_tilt_bounds, covered, covered, x, **COVERED, bins=None,
                   method="relaxed", **common)
    record("monotone_relaxed_every_value", res, s, None,
           f"relaxed supremum, every distinct value a cell ({res.cell_low.size:,} cells)")
    res, s = timed(polynomial_tilt_bounds, covered, covered, x, **COVERED, degree=2, **common)
    record("polynomial_degree_2", res, s,
           (generic_polynomial(x, L, 2, 1, rng), "BFGS from 20 starts per end of the range, "
            "1 replicate timed"),
           "sums of squares of polynomials of degree <= 2 in x")
    res, s = timed(polynomial_tilt_bounds, covered, covered, X2, **COVERED, degree=1, **common)
    record("polynomial_two_covariates_degree_1", res, s, None,
           "sums of squares of affine functions of (x1, x2)")
    res, s = timed(rkhs_tilt_bounds, x, covered, covered, **COVERED, bandwidth=0.5, **common)
    paper = generic_unscaled_rkhs(x[:3000], 0.5, n, B)
    record("rkhs_unscaled", res, s, (paper / B, "the paper's n x n kernel Cholesky and a "
                                               "QR per replicate, timed at 3,000 rows and "
                                               "scaled as n^3 and n^2"),
           f"kernel factor of rank {res.rank}")
    res, s = timed(rkhs_tilt_bounds, x, covered, covered, **COVERED, bandwidth=0.5,
                   scale="rescaled", **common)
    record("rkhs_rescaled", res, s,
           (generic_rescaled_rkhs(res.rank, 1, rng), "10^6 random directions per replicate "
            "(the paper's sampling, a lower bound of the supremum), 1 replicate timed"),
           f"refinement gap {res.refinement_gap:.3%}")
    out = {
        "rows": n, "n_resamples": B, "cases": cases,
        "threads": 1,
    }
    path = write_results(run, out, suffix="_quick" if args.quick else "")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
