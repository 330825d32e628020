import numpy as np
import pytest

from skfair_audit.group import (
    GroupBound,
    certify_bounds,
    certify_threshold,
    equalized_odds,
    flag_groups,
)
from skfair_audit.results import ConfidenceInterval


def _trail(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B"], n)
    y = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < np.where(race == "A", 0.25, 0.1), 1 - y, y)
    return {"race": race}, y, y_pred


def test_bounds_result_frame_and_queries():
    pytest.importorskip("pandas")
    groups, y, y_pred = _trail()
    res = certify_bounds(y, y_pred, groups, metric="fpr", alternative="two-sided",
                         n_resamples=100, random_state=0)
    frame = res.to_frame()
    assert list(frame.index) == ["race=A", "race=B"]
    assert {"size", "value", "estimate", "lower", "upper", "scale"} <= set(frame.columns)
    np.testing.assert_array_equal(frame["lower"].to_numpy(), res.lower)
    b = res.bound(0)
    assert isinstance(b, GroupBound) and b.group == "race=A"
    assert isinstance(res.confidence_interval("race=A"), ConfidenceInterval)
    assert "GroupBoundsResult" in repr(res)
    with pytest.raises(AttributeError):
        res.alpha = 0.5


def test_other_results_frames():
    pytest.importorskip("pandas")
    groups, y, y_pred = _trail()
    cert = certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.0,
                             n_resamples=100, random_state=0)
    assert "certified" in cert.to_frame().columns
    assert cert.is_certified("race=A") is True
    flags = flag_groups(y, y_pred, groups, metric="fpr")
    frame = flags.to_frame()
    assert {"pvalue", "adjusted_pvalue", "flagged", "se"} <= set(frame.columns)
    assert flags.is_flagged(np.asarray(groups["race"] == "A"))
    eo = equalized_odds(y, y_pred, groups, n_resamples=100, random_state=0)
    assert list(eo.to_frame().columns) == ["worst_disparity"]


def test_plots_return_axes():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups, y, y_pred = _trail()
    res = certify_bounds(y, y_pred, groups, metric="fpr", n_resamples=100, random_state=0)
    ax = res.plot()
    # two-sided bounds: the group whose interval excludes 0 first, then by |disparity|
    top = int(np.argmax(np.abs(res.estimates)))
    assert [t.get_text() for t in ax.get_yticklabels()][0] == res.names[top]
    flags = flag_groups(y, y_pred, groups, metric="fpr")
    assert flags.plot() is not None
    cert = certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.0,
                             n_resamples=100, random_state=0)
    assert cert.plot() is not None
    plt.close("all")


def _many_groups(n=20_000, seed=3):
    """60 groups (age x region x sex), a few with a much higher false-positive rate."""
    rng = np.random.default_rng(seed)
    groups = {"age": rng.choice([f"a{k}" for k in range(5)], n),
              "region": rng.choice([f"r{k}" for k in range(6)], n),
              "sex": rng.choice(["f", "m"], n)}
    y = np.zeros(n, dtype=int)
    bad = (groups["age"] == "a0") & (groups["region"] == "r0")
    y_pred = (rng.random(n) < np.where(bad, 0.45, 0.2)).astype(int)
    return groups, y, y_pred


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_flag_plot_shows_the_flagged_groups_first(alternative):
    # Was: the plot drew the 40 *lowest* estimates whatever the alternative, so with
    # alternative="greater" none of the flagged groups appeared.
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups, y, y_pred = _many_groups()
    if alternative == "less":
        y_pred = 1 - y_pred  # the bad pocket now has the lowest FPR
    epsilon0 = {"greater": 0.05, "less": -0.05, "two-sided": 0.05}[alternative]
    flags = flag_groups(y, y_pred, groups, metric="fpr", epsilon0=epsilon0,
                        alternative=alternative, q=0.1)
    flagged = [n for n, f in zip(flags.names, flags.flagged, strict=True) if f]
    assert 0 < len(flagged) < 20 and int(flags.active.sum()) > 40
    order = flags.plot_order(max_groups=20)
    assert [flags.names[j] for j in order[:len(flagged)]] == sorted(
        flagged, key=lambda name: {"greater": -1, "less": 1, "two-sided": -1}[alternative]
        * (abs(flags.estimates[flags.names.index(name)]) if alternative == "two-sided"
           else flags.estimates[flags.names.index(name)]))
    rest = flags.estimates[order[len(flagged):]]
    step = np.diff(np.abs(rest) if alternative == "two-sided" else rest)
    assert np.all(step <= 0) if alternative != "less" else np.all(step >= 0)
    ax = flags.plot(max_groups=20)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[:len(flagged)] == [flags.names[j] for j in order[:len(flagged)]]
    assert ax.yaxis_inverted()  # the first group at the top
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["flagged"]
    caption = flags.describe_plot(max_groups=20)
    assert caption.startswith(f"20 of {int(flags.active.sum())} non-empty groups")
    assert f"the {len(flagged)} group(s) flagged first (red)" in caption
    plt.close("all")


def test_plot_order_of_certificates_bounds_and_equalized_odds():
    groups, y, y_pred = _many_groups()
    cert = certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.05,
                             alternative="less", n_resamples=200, random_state=0)
    failing = set(cert.verdict().groups)
    order = cert.plot_order(max_groups=len(failing) + 3)
    assert {cert.names[j] for j in order[:len(failing)]} == failing
    bounds = certify_bounds(y, y_pred, groups, metric="fpr", alternative="lower",
                            n_resamples=200, random_state=0)
    excluding = bounds.active & (bounds.lower > 0)
    assert 0 < excluding.sum() < 20
    order = bounds.plot_order(max_groups=40)
    assert set(order[:int(excluding.sum())]) == set(np.flatnonzero(excluding))
    assert "with bounds excluding 0 first" in bounds.describe_plot()
    # a gated bounds audit puts the groups failing the gate first
    gated = bounds.verdict(-0.1)
    assert 0 < len(gated.groups) < 40
    assert ({bounds.names[j] for j in bounds.plot_order(40, epsilon0=-0.1)[:len(gated.groups)]}
            == set(gated.groups))
    eo = equalized_odds(np.r_[y, 1 - y], np.r_[y_pred, y_pred],
                        {k: np.r_[v, v] for k, v in groups.items()}, epsilon0=0.05,
                        n_resamples=100, random_state=0)
    failing = set(eo.verdict().groups)
    assert failing
    order = eo.plot_order(max_groups=len(failing))
    assert {eo.names[j] for j in order} == failing
    # without a threshold the verdict names no group: the caption and the notebook display
    # say so (was: a TypeError formatting epsilon0=None)
    eo_bounds = equalized_odds(np.r_[y, 1 - y], np.r_[y_pred, y_pred],
                               {k: np.r_[v, v] for k, v in groups.items()},
                               n_resamples=100, random_state=0)
    assert "(no group named by the verdict: bounds only" in eo_bounds.describe_plot()
    assert "no group named" in eo_bounds._repr_html_()


def test_guarantee_of_adaptive_bounds_warns_about_groups_below_the_measured_size():
    # Was: the same guarantee sentence with a finite w0, whose bounds studentise each group
    # by its own standard deviation and were measured far below the nominal coverage when
    # groups are small (bench_group_validity.py --regime small-groups).
    from skfair_audit.group._results import MIN_ROWS_ADAPTIVE_SCALE

    rng = np.random.default_rng(1)
    n = 600
    size = max(MIN_ROWS_ADAPTIVE_SCALE // 2, 2)
    race = np.where(np.arange(n) < size, "tiny", rng.choice(["A", "B"], n))
    y = np.zeros(n, dtype=int)
    y_pred = (rng.random(n) < 0.2).astype(int)
    common = dict(metric="fpr", n_resamples=50, random_state=0)
    adaptive = certify_bounds(y, y_pred, {"race": race}, w0=0.01, **common)
    assert adaptive.sizes.min() < MIN_ROWS_ADAPTIVE_SCALE
    text = adaptive.guarantee()
    assert "finite w0 (0.01)" in text and f"fewer than {MIN_ROWS_ADAPTIVE_SCALE} rows" in text
    assert "1 of the groups" in text
    for quiet in (certify_bounds(y, y_pred, {"race": race}, **common),  # w0 = inf
                  certify_bounds(y, y_pred, {"race": race}, scale="unscaled", **common),
                  certify_bounds(y[size:], y_pred[size:], {"race": race[size:]}, w0=0.01,
                                 **common)):  # no small group
        assert "finite w0" not in quiet.guarantee()
