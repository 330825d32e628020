"""Quick version of ``benchmarks/bench_faith_continuous_validity.py``.

The benchmark's truth (per-row ``c*`` by k-d tree queries, then a fractional knapsack) shares no
code with the package's transport problem; here it is checked against ``audit_value`` and
against a brute-force dual minimum, and a tiny run of the benchmark's audits must cover it.
"""

import pathlib
import runpy
import sys
from types import SimpleNamespace

import numpy as np
import pytest

BENCHMARK = (pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
             / "bench_faith_continuous_validity.py")


@pytest.fixture(scope="module")
def bench():
    # The script imports its helpers (``_common``, ``_faith_data``) from its own directory,
    # as ``python benchmarks/bench_faith_continuous_validity.py`` does.
    sys.path.insert(0, str(BENCHMARK.parent))
    try:
        return SimpleNamespace(**runpy.run_path(str(BENCHMARK), run_name="bench"))
    finally:
        sys.path.remove(str(BENCHMARK.parent))


@pytest.fixture(scope="module")
def instances(bench):
    out = {}
    for name, seed in zip(bench.INSTANCES, np.random.SeedSequence(11).spawn(2), strict=True):
        fit_seed, truth_seed = seed.spawn(2)
        auditor, reference = bench.build_instance(name, fit_seed, 199)
        truth = bench.population_truth(auditor, reference, truth_seed, 200_000, 1)
        out[name] = auditor, reference, truth
    return out


def test_knapsack_is_the_dual_minimum(bench):
    # ψ(ε) = min_λ λε + mean((1 − λ c*)₊ on rows that gain): the minimum is at λ = 0 or at
    # λ = 1/c for one of the costs, so a brute force over those is exact.
    rng = np.random.default_rng(0)
    c_star = np.where(rng.random(300) < 0.3, np.inf, rng.exponential(size=300))
    c_star[:20] = 0.0
    finite = c_star[np.isfinite(c_star)]
    for eps in (0.0, 0.01, 0.1, 0.4, 5.0):
        value, lam, _ = bench.knapsack(c_star, 300, [eps])[0]
        candidates = [0.0, *(1.0 / finite[finite > 0])]
        dual = min(l * eps + np.clip(1.0 - l * finite, 0.0, None).sum() / 300
                   for l in candidates)
        if eps == 0:  # the infimum is reached as λ → ∞: the free moves only
            dual = np.count_nonzero(finite == 0) / 300
        assert value == pytest.approx(dual, abs=1e-12)
        assert lam * eps + np.clip(1.0 - lam * finite, 0.0, None).sum() / 300 == pytest.approx(
            value, abs=1e-12)
    # budget_for inverts it
    for target in (0.2, 0.4, 0.6):
        eps = bench.budget_for(c_star, 300, target)
        assert bench.knapsack(c_star, 300, [eps])[0][0] == pytest.approx(target, abs=1e-12)


@pytest.mark.parametrize("name", ["protected_euclidean", "sensitive_subspace"])
def test_truth_code_computes_the_audits_estimand(bench, instances, name):
    auditor, reference, truth = instances[name]
    assert bench.cost_check(auditor, reference, np.random.SeedSequence(1)) < 1e-12
    check = bench.cross_check(auditor, reference, np.random.SeedSequence(2), truth["epsilons"])
    assert check["max_abs_difference"] < 1e-9
    # the budgets are where the truth says: ψ(0) < ψ(ε½) < ψ(ε95) < ψ(∞)
    psi = truth["truth"]
    assert psi[0] == pytest.approx(truth["psi_zero"])
    assert psi[0] < psi[1] < psi[2] < truth["psi_unlimited"]
    assert psi[2] == pytest.approx(0.95 * truth["psi_unlimited"], abs=0.01)


def test_tiny_run_covers_the_truth(bench, instances):
    # 20 audits at n = 1,000 and three budgets (60 intervals): a 95% interval misses more
    # than 12 times with probability below 1e-4; the sample-dependent estimand of the old
    # empirical space covered about 68% at a binding budget, which this would catch.
    auditor, _, truth = instances["protected_euclidean"]
    seeds = np.random.SeedSequence(3).spawn(20)
    audits, agrees = bench.run_chunk(auditor, 1_000, truth["epsilons"], seeds, 199,
                                     check_first=True)
    assert agrees is True
    covered = [(audits[:, k, 3] <= t) & (t <= audits[:, k, 4])
               for k, t in enumerate(truth["truth"])]
    assert np.sum(covered) >= 48
    # the audit value is centred on the truth: within 4 standard errors at every budget
    for k, t in enumerate(truth["truth"]):
        values = audits[:, k, 0]
        assert abs(values.mean() - t) <= 4 * values.std(ddof=1) / np.sqrt(len(values))
