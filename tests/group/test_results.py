import numpy as np
import pytest

from skfair_audit.group import (
    GroupBound,
    certify_bounds,
    certify_threshold,
    equalized_odds,
    flag_groups,
)
from skfair_audit.utils import ConfidenceInterval


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
    assert [t.get_text() for t in ax.get_yticklabels()] == ["race=B", "race=A"]
    flags = flag_groups(y, y_pred, groups, metric="fpr")
    assert flags.plot() is not None
    cert = certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.0,
                             n_resamples=100, random_state=0)
    assert cert.plot() is not None
    plt.close("all")
