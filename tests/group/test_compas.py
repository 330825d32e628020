"""Real-data checks of the group audit on COMPAS (ProPublica filter, 6,172 rows).

Reference results: Cherian & Candès (2024), §3.2.2 (Figure 5) and §4.2.2 (Figure 6), as
summarised in ``shared/notes/group-audit-math.md``. The model audited is the COMPAS rule
"high risk" = ``decile_score >= 5`` (2,751 rows).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from skfair_audit.group import GroupDisparityAuditor, certify_bounds, flag_groups

pytestmark = pytest.mark.real_data

SENSITIVE = ["race", "sex", "age_cat"]


class DecileRule(ClassifierMixin, BaseEstimator):
    """The COMPAS decision rule: predict recidivism when ``decile_score >= cutoff``."""

    def __init__(self, cutoff=5):
        self.cutoff = cutoff

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return (X["decile_score"].to_numpy() >= self.cutoff).astype(int)


@pytest.fixture(scope="module")
def compas(compas_propublica):
    frame = compas_propublica.frame
    X = frame[["decile_score", *SENSITIVE]]
    y = compas_propublica.target.to_numpy()
    return X, y


def test_audit_trail_sizes(compas):
    X, y = compas
    assert len(y) == 6172
    assert int((X["decile_score"] >= 5).sum()) == 2751


def test_african_american_ppv_exceeds_caucasian_ppv(compas):
    """Paper: a 90% two-sided (95% one-sided) bound certifies that high-risk African-American
    defendants recidivate at least 1.87 points more often than high-risk Caucasians."""
    X, y = compas
    auditor = GroupDisparityAuditor(
        DecileRule(), metric="ppv", protected=["race"], target="race=Caucasian",
        procedure="bounds", alternative="two-sided", alpha=0.1, n_resamples=2000,
        random_state=0,
    ).fit(X, y)
    result = auditor.audit(X, y)
    bound = result.bound("race=African-American")
    assert bound.size == 1829  # African-American defendants among the 2,751 high-risk
    assert bound.estimate == pytest.approx(0.0547, abs=5e-4)
    # Monte Carlo error of the bootstrap quantile at B = 2000 is about 5e-4
    assert bound.lower == pytest.approx(0.0187, abs=0.005)
    assert bound.lower > 0
    # the Caucasian reference group has disparity 0 by construction
    assert result.bound("race=Caucasian").estimate == 0.0
    # the estimator is a thin layer over the functional API
    same = certify_bounds(y, X["decile_score"] >= 5, X[["race"]], metric="ppv",
                          pos_label=True, target="race=Caucasian", alternative="two-sided",
                          alpha=0.1, n_resamples=2000, random_state=0)
    assert same.bound("race=African-American").lower == bound.lower


def test_ppv_flagging_finds_the_three_nested_female_groups(compas):
    """Paper: flag groups with PPV >= 5 points below the overall PPV at FDR 10%: Female,
    Female & <25, Caucasian & Female & <25 (and only those)."""
    X, y = compas
    auditor = GroupDisparityAuditor(
        DecileRule(), metric="ppv", protected=SENSITIVE, procedure="flag",
        epsilon0=-0.05, alternative="less", q=0.1,
    ).fit(X, y)
    with pytest.warns(UserWarning, match="single row"):
        result = auditor.audit(X, y)
    flagged = {name for name, f in zip(result.names, result.flagged, strict=True) if f}
    assert flagged == {
        "sex=Female",
        "sex=Female & age_cat=Less than 25",
        "race=Caucasian & sex=Female & age_cat=Less than 25",
    }
    assert result.target == pytest.approx(np.mean(y[X["decile_score"] >= 5]))


def test_fpr_flagging_localises_the_disparity_among_the_young(compas):
    """Paper: among non-recidivists, groups whose FPR is >= 5 points above the overall FPR
    (FDR 10%): nearly every under-25 group, and several African-American groups."""
    X, y = compas
    y_pred = (X["decile_score"] >= 5).astype(int).to_numpy()
    with pytest.warns(UserWarning, match="single row"):
        result = flag_groups(y, y_pred, X[["race", "age_cat", "sex"]], metric="fpr",
                             epsilon0=0.05, alternative="greater", q=0.1)
    negatives = y == 0
    assert result.n == int(negatives.sum())
    assert result.target == pytest.approx(np.mean(y_pred[negatives]))
    frame = result.to_frame()
    frame = frame[frame["size"] > 0]
    young = frame[frame.index.str.contains("age_cat=Less than 25")]
    old = frame[frame.index.str.contains("age_cat=Greater than 45")]
    black = frame[frame.index.str.contains("race=African-American")]
    assert young.loc["age_cat=Less than 25", "flagged"]
    # most under-25 groups are flagged (6 of the 7 with at least 100 non-recidivists) ...
    assert young[young["size"] >= 100]["flagged"].mean() >= 0.75
    assert young["flagged"].sum() > len(young) / 2
    # ... several African-American groups are, and no group over 45 is
    assert black["flagged"].sum() >= 5
    assert black.loc["race=African-American", "flagged"]
    assert not old["flagged"].any()
    # the estimator gives the same flags
    auditor = GroupDisparityAuditor(DecileRule(), metric="fpr", procedure="flag",
                                    protected=["race", "age_cat", "sex"],
                                    epsilon0=0.05, q=0.1).fit(X, y)
    with pytest.warns(UserWarning, match="single row"):
        via_estimator = auditor.audit(X, y)
    np.testing.assert_array_equal(via_estimator.flagged, result.flagged)


@pytest.mark.filterwarnings("ignore:2 group\\(s\\) have a single row")
def test_fpr_flag_plot_shows_the_flagged_groups_first(compas):
    """The demo's FPR flagging: the plot draws the 13 flagged groups (race=African-American
    at +0.12 among them) first; it used to draw the 40 lowest, none of them flagged."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = compas
    flags = flag_groups(y, (X["decile_score"] >= 5).astype(int), X[SENSITIVE], metric="fpr",
                        epsilon0=0.05, alternative="greater", q=0.1)
    flagged = {n for n, f in zip(flags.names, flags.flagged, strict=True) if f}
    assert len(flagged) == 13 and "race=African-American" in flagged
    ax = flags.plot(max_groups=40)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 40 and set(labels[:13]) == flagged
    shown = flags.estimates[[flags.names.index(n) for n in labels]]
    assert np.all(np.diff(shown[13:]) <= 0)  # then by decreasing disparity
    plt.close("all")
