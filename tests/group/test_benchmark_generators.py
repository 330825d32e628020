"""The synthetic generators of the group-audit benchmarks have exact, correctly named truth."""

import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate

from skfair_audit.group import intersections, intervals

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "_group_synthetic.py"
_spec = importlib.util.spec_from_file_location("_group_synthetic", _PATH)
synth = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("_group_synthetic", synth)
_spec.loader.exec_module(synth)


@pytest.mark.parametrize("config", ["null", "alternative"])
def test_categorical_truth_matches_brute_force(config):
    model = synth.categorical_design(config)
    truth = model.truth()
    assert len(truth) == 9 + 26 + 24
    atoms = list(itertools.product(range(2), range(3), range(4)))
    prob = {a: synth.MARGINALS[0][a[0]] * synth.MARGINALS[1][a[1]] * synth.MARGINALS[2][a[2]]
            for a in atoms}
    theta = sum(prob[a] * model.error_prob[a] for a in atoms)
    assert model.theta == pytest.approx(theta, abs=1e-15)
    for name, (p_g, mean, eps) in truth.items():
        fixed = dict(part.split("=") for part in name.split(" & "))
        members = [a for a in atoms
                   if all(a["ABC".index(k)] == int(v) for k, v in fixed.items())]
        p_ref = sum(prob[a] for a in members)
        mean_ref = sum(prob[a] * model.error_prob[a] for a in members) / p_ref
        assert p_g == pytest.approx(p_ref, abs=1e-14)
        assert mean == pytest.approx(mean_ref, abs=1e-14)
        assert eps == pytest.approx(mean_ref - theta, abs=1e-14)
    if config == "null":
        assert max(abs(v[2]) for v in truth.values()) < 1e-14


def test_categorical_names_and_sample_agree_with_library():
    model = synth.categorical_design("alternative")
    data = model.sample(60_000, np.random.default_rng(0))
    groups = intersections(data["attributes"], depth=3)
    assert set(groups.names) == set(model.truth())
    assert np.array_equal(data["loss"], (data["y"] != data["y_pred"]).astype(float))
    # empirical group means are within 5 binomial standard errors of the truth
    for j, name in enumerate(groups.names):
        mask = groups.mask(j)
        p_g, mean, _ = model.truth()[name]
        se = np.sqrt(mean * (1 - mean) / mask.sum())
        assert abs(data["loss"][mask].mean() - mean) < 5 * se + 1e-12


def test_negative_rate_keeps_the_truth_for_the_false_positive_rate():
    # The small-groups regime of bench_group_validity: y = 0 in a share negative_rate of the
    # rows, independent of the atoms and the errors, so the false positive rate of each
    # group (on the negatives) has the error-rate truth; the default draw is unchanged.
    model = synth.categorical_design("alternative")
    default = model.sample(500, np.random.default_rng(3))
    assert np.array_equal(default["y"],
                          model.sample(500, np.random.default_rng(3), negative_rate=None)["y"])
    data = model.sample(200_000, np.random.default_rng(1), negative_rate=0.21)
    negative = data["y"] == 0
    assert abs(negative.mean() - 0.21) < 5 * np.sqrt(0.21 * 0.79 / negative.size)
    groups = intersections(data["attributes"], depth=3)
    fpr = (data["y_pred"] == 1) & negative
    for j, name in enumerate(groups.names):
        mask = groups.mask(j) & negative
        _, mean, _ = model.truth()[name]
        se = np.sqrt(mean * (1 - mean) / mask.sum())
        assert abs(fpr[mask].mean() - mean) < 5 * se + 1e-12


@pytest.mark.parametrize("config", ["null", "alternative"])
def test_interval_truth_matches_quadrature(config):
    model = synth.interval_design(config)
    truth = model.truth()
    assert len(truth) == 1275
    edges = model.edges
    rng = np.random.default_rng(1)
    for a, b in [(0, 50), (34, 35), (30, 40)] + [tuple(sorted(rng.choice(51, 2, replace=False)))
                                                 for _ in range(20)]:
        closing = "]" if b == 50 else ")"
        name = f"x in [{edges[a]:g}, {edges[b]:g}{closing}"
        ref, _ = integrate.quad(model.p, edges[a], edges[b], epsabs=1e-13, epsrel=1e-13)
        p_i, mean, eps = truth[name]
        assert p_i == pytest.approx((b - a) / 50)
        assert mean == pytest.approx(ref / (edges[b] - edges[a]), abs=1e-12)
        assert eps == pytest.approx(mean - 0.1, abs=1e-15)


def test_interval_names_and_sample_agree_with_library():
    model = synth.interval_design("alternative")
    data = model.sample(50_000, np.random.default_rng(2))
    groups = intervals(data["x"], grid=model.edges)
    assert set(groups.names) == set(model.truth())
    j = groups.index("x in [3, 4)")
    mask = groups.mask(j)
    mean = model.truth()["x in [3, 4)"][1]
    se = np.sqrt(mean * (1 - mean) / mask.sum())
    assert abs(data["loss"][mask].mean() - mean) < 5 * se


def test_bad_config_raises():
    with pytest.raises(ValueError, match="config"):
        synth.categorical_design("other")
    with pytest.raises(ValueError, match="config"):
        synth.interval_design("other")
