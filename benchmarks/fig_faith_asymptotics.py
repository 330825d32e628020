"""Figure 1 analogue: the sampling law of the FaiTH statistic against its asymptotic law.

Usage::

    python benchmarks/fig_faith_asymptotics.py [--samples 5000] [--n 5000]

On the instances of ``bench_faith_validity.py`` (144-cell COMPAS-like grid: ``gaussian``,
``kink`` and ``kink-strong``), draws
``samples`` audit samples ``counts ~ Mult(n, f*)`` and plots the histogram of
``sqrt(n) (psi(f_n) - psi(f*))`` against its limit (Xue, Yurochkin & Sun 2020, Theorem 3.1):

* Gaussian regime (unique dual ``lambda*``): ``N(0, Var_{f*}[u_{lambda*}])`` with
  ``u_i(lambda) = max_{j allowed} R_ij - lambda C_ij`` computed directly from ``R`` and ``C``;
* kink (optimal duals ``Lambda = [lambda_low, lambda_high]``):
  ``min_{lambda in Lambda} <Z, u(lambda)>``, ``Z ~ N(0, diag f* - f* f*^T)``, simulated. For
  fixed ``Z`` the map ``lambda -> <Z, u(lambda)>`` is piecewise linear with breakpoints at the
  slopes of the rows' hulls, so the minimum over the segment is taken over its endpoints and the
  hull slopes inside it.

Writes ``benchmarks/results/faith_asymptotics.png`` and ``faith_asymptotics.json`` (moments and
quantiles of both laws, and KS distances). Runs in a few seconds.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from _common import RESULTS, Run, write_results
from _faith_data import instances
from scipy import stats

SEED = 20241130


def u_of_lambda(loss, cost, forbidden, lam):
    """``u_i(lambda) = max_{j allowed} R_ij - lambda C_ij`` straight from the definition."""
    gain = loss[None, :] - loss[:, None]
    allowed = ~forbidden & np.isfinite(cost)
    with np.errstate(invalid="ignore"):
        values = np.where(allowed, gain - lam * np.where(allowed, cost, 0.0), -np.inf)
    return values.max(axis=1)


def candidate_lambdas(loss, cost, forbidden, low, high):
    """Endpoints of ``[low, high]`` and every pairwise slope ``dR / dC`` strictly inside."""
    gain = loss[None, :] - loss[:, None]
    allowed = ~forbidden & np.isfinite(cost)
    # Breakpoints of u_i are crossings of two lines R_ij - lam C_ij, R_ik - lam C_ik.
    slopes = set()
    for i in range(len(loss)):
        c, r = cost[i, allowed[i]], gain[i, allowed[i]]
        dc = c[:, None] - c[None, :]
        dr = r[:, None] - r[None, :]
        ok = dc > 0
        slopes.update((dr[ok] / dc[ok]).tolist())
    inside = [s for s in slopes if low < s < high]
    return np.array(sorted({low, high, *inside}))


def limit_law(case, n_draws, rng):
    loss, cost, forbidden, f = case["loss"], case["cost"], case["forbidden"], case["f_star"]
    low, high = case["dual_interval"]
    lambdas = candidate_lambdas(loss, cost, forbidden, low, high)
    u = np.stack([u_of_lambda(loss, cost, forbidden, lam) for lam in lambdas], axis=1)
    # Z = sqrt(n)(f_n - f*) in the limit: multinomial covariance, sampled as G - f <1, G>.
    g = rng.standard_normal((n_draws, f.size)) * np.sqrt(f)
    z = g - np.outer(g.sum(axis=1), f)
    draws = (z @ u).min(axis=1)
    variance = float(f @ u[:, 0] ** 2 - (f @ u[:, 0]) ** 2)
    return draws, lambdas, variance


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5_000)
    parser.add_argument("--n", type=int, default=5_000)
    parser.add_argument("--limit-draws", type=int, default=200_000)
    args = parser.parse_args(argv)
    run = Run(__file__, argv, packages=("matplotlib",))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = instances()
    seeds = np.random.SeedSequence(SEED).spawn(2 * len(cases))
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 3.8), constrained_layout=True)
    summary = {"n": args.n, "samples": args.samples, "seed": SEED, "instances": {}}
    for k, (case, ax) in enumerate(zip(cases, axes, strict=True)):
        rng_sample = np.random.default_rng(seeds[2 * k])
        counts = rng_sample.multinomial(args.n, case["f_star"], size=args.samples)
        values = case["problem"].value(counts / args.n, case["epsilon"])
        scaled = np.sqrt(args.n) * (values - case["truth"])
        limit, lambdas, variance = limit_law(
            case, args.limit_draws, np.random.default_rng(seeds[2 * k + 1])
        )
        grid = np.linspace(*np.quantile(np.r_[scaled, limit], [0.0005, 0.9995]), 400)
        ax.hist(scaled, bins=60, density=True, alpha=0.45, color="C0",
                label=rf"$\sqrt{{n}}(\psi(f_n)-\psi(f^*))$, n={args.n}")
        ax.plot(grid, stats.gaussian_kde(limit)(grid), color="C3", lw=2,
                label=r"limit $\min_{\lambda\in\Lambda}\langle Z,u(\lambda)\rangle$")
        if case["name"] == "gaussian":
            ax.plot(grid, stats.norm.pdf(grid, scale=np.sqrt(variance)), "k--", lw=1,
                    label=r"$N(0, \mathrm{Var}_{f^*}[u_{\lambda^*}])$")
        ax.axvline(0.0, color="grey", lw=0.8)
        ax.axvline(limit.mean(), color="C3", lw=0.8, ls=":",
                   label=f"limit mean {limit.mean():.3f}")
        low, high = case["dual_interval"]
        ax.set_title(
            f"{case['name']}: eps={case['epsilon']:.4f}, "
            + (rf"$\lambda^*$={low:.3g}" if low == high else rf"$\Lambda$=[{low:.3g}, {high:.3g}]")
        )
        ax.legend(fontsize=7)
        ax.set_xlabel(r"$\sqrt{n}\,(\psi(f_n)-\psi(f^*))$")
        quantiles = [0.025, 0.05, 0.5, 0.95, 0.975]
        summary["instances"][case["name"]] = {
            "epsilon": case["epsilon"],
            "truth": case["truth"],
            "dual_interval": [low, high],
            "lambdas_evaluated": lambdas.tolist(),
            "sample_mean": float(scaled.mean()),
            "sample_sd": float(scaled.std(ddof=1)),
            "sample_skewness": float(stats.skew(scaled)),
            "sample_quantiles": dict(zip(map(str, quantiles),
                                         np.quantile(scaled, quantiles).tolist(), strict=True)),
            "limit_mean": float(limit.mean()),
            "limit_sd": float(limit.std(ddof=1)),
            "limit_skewness": float(stats.skew(limit)),
            "limit_quantiles": dict(zip(map(str, quantiles),
                                        np.quantile(limit, quantiles).tolist(), strict=True)),
            "gaussian_limit_sd": float(np.sqrt(variance)) if low == high else None,
            "ks_sample_vs_limit": float(stats.ks_2samp(scaled, limit).statistic),
        }
    axes[0].set_ylabel("density")
    RESULTS.mkdir(exist_ok=True)
    fig.savefig(run.path(), dpi=130)
    write_results(run, summary)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
