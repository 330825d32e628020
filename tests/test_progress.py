"""Progress on long work (``skfair_audit._progress``): one mechanism, switched by ``verbose``.

Bootstraps advance a bar batch by batch, model selection (candidate, fold) by (candidate,
fold), partitioned audits partition by partition; silent by default, on in the command line,
plain text without tqdm; and a bar never changes a result, whatever ``n_jobs``.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from skfair_audit import _progress
from skfair_audit._resampling import MultinomialCounts, resample

pd = pytest.importorskip("pandas")


def _trail(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"race": rng.choice(["A", "B", "C"], n), "sex": rng.choice(["F", "M"], n),
                          "y": rng.integers(0, 2, n)})
    frame["y_pred"] = np.where(rng.random(n) < np.where(frame.race == "C", 0.7, 0.85),
                               frame.y, 1 - frame.y)
    return frame


def _no_tqdm(monkeypatch):
    """As if tqdm were not installed."""
    for name in ("tqdm", "tqdm.auto", "tqdm.std"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_progress_never_changes_a_result(n_jobs, capsys):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from skfair_audit.faith import FaithAuditor
    from skfair_audit.group import GroupDisparityAuditor, certify_bounds
    from skfair_audit.model_selection import FairModelSelector

    draw = MultinomialCounts(np.array([0.2, 0.3, 0.5]), n_trials=50)
    runs = [resample(lambda c: c @ np.arange(3.0), draw, 300, batch_size=64, random_state=1,
                     n_jobs=n_jobs, verbose=v) for v in (0, 1)]
    np.testing.assert_array_equal(*runs)

    trail = _trail()
    bounds = [certify_bounds(trail.y, trail.y_pred, trail[["race", "sex"]], metric="error_rate",
                             n_resamples=300, batch_size=64, random_state=0, n_jobs=n_jobs,
                             verbose=v) for v in (0, 1)]
    for attribute in ("lower", "upper", "bootstrap_distribution"):
        np.testing.assert_array_equal(getattr(bounds[0], attribute),
                                      getattr(bounds[1], attribute))

    X, y = trail[["race", "sex"]], trail.y.to_numpy()
    model = make_pipeline(OneHotEncoder(), LogisticRegression())
    group = [GroupDisparityAuditor(model, protected=["race"], procedure="bounds",
                                   n_resamples=200, random_state=0, n_jobs=n_jobs,
                                   verbose=v).fit(X, y).audit(X, y) for v in (0, 1)]
    np.testing.assert_array_equal(group[0].lower, group[1].lower)

    faith = [FaithAuditor(model, protected=["sex"], n_resamples=200, batch_size=64,
                          random_state=0, n_jobs=n_jobs, verbose=v).fit(X, y).audit(X, y)
             for v in (0, 1)]
    assert faith[0].summary() == faith[1].summary()
    np.testing.assert_array_equal(faith[0].bootstrap_distribution,
                                  faith[1].bootstrap_distribution)

    selections = [FairModelSelector(model, param_grid={"logisticregression__C": [0.1, 1.0]},
                                    delta=0.1, protected=["sex"], cv=2, on_none="fairest",
                                    auditor=FaithAuditor(None, n_resamples=50), random_state=0,
                                    n_jobs=n_jobs, verbose=v).fit(X, y) for v in (0, 1)]
    for key in ("mean_test_error", "lower_bound", "upper_bound", "passes"):
        np.testing.assert_array_equal(selections[0].cv_results_[key],
                                      selections[1].cv_results_[key])
    err = capsys.readouterr().err
    assert "300/300" in err and "200/200" in err and "4/4" in err


def test_silent_by_default(capsys):
    from skfair_audit.group import certify_bounds

    trail = _trail()
    certify_bounds(trail.y, trail.y_pred, trail[["race"]], metric="error_rate",
                   n_resamples=200, batch_size=50, random_state=0)
    assert capsys.readouterr().err == ""


def test_bootstrap_bar_counts_replicates_batch_by_batch(monkeypatch):
    """The bar advances by each batch's replicates, in order, to the total."""
    steps = []

    class Recorder:
        def __init__(self, total, desc, unit):
            self.total, self.desc, self.unit = total, desc, unit

        def update(self, n=1):
            steps.append(n)

        def close(self):
            steps.append(("closed", self.total, self.desc, self.unit))

    monkeypatch.setattr(_progress, "_tqdm", Recorder)
    draw = MultinomialCounts(np.array([0.5, 0.5]), n_trials=10)
    resample(lambda c: c[:, 0], draw, 250, batch_size=100, random_state=0, verbose=1)
    assert steps == [100, 100, 50, ("closed", 250, "bootstrap", "resample")]


def test_plain_text_without_tqdm(monkeypatch, capsys):
    _no_tqdm(monkeypatch)
    monkeypatch.setattr(_progress, "TEXT_INTERVAL", 0.0)
    bar = _progress.progress_bar(3, "bootstrap", unit="resample", verbose=1)
    assert isinstance(bar, _progress._TextBar)
    draw = MultinomialCounts(np.array([0.5, 0.5]), n_trials=10)
    resample(lambda c: c[:, 0], draw, 250, batch_size=100, random_state=0, verbose=1)
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "bootstrap: 100/250 resamples (40%)", "bootstrap: 200/250 resamples (80%)",
        "bootstrap: 250/250 resamples (100%)", "bootstrap: 250/250 resamples (100%)"]


def test_text_bar_is_rate_limited(capsys):
    bar = _progress._TextBar(1000, "work", "step", interval=3600)
    for _ in range(1000):
        bar.update(1)
    bar.close()
    bar.close()
    assert capsys.readouterr().err.splitlines()[0].startswith("work: 1000/1000 steps (100%)")


def test_notebook_without_ipywidgets_gets_the_text_bar(monkeypatch):
    tqdm_auto = pytest.importorskip("tqdm.auto")
    from tqdm.std import tqdm as text_tqdm

    def widget(*args, **kwargs):  # what tqdm.notebook does without ipywidgets
        raise ImportError("IProgress not found. Please update jupyter and ipywidgets.")

    monkeypatch.setattr(tqdm_auto, "tqdm", widget)
    bar = _progress.progress_bar(10, "bootstrap", verbose=1)
    assert type(bar) is _progress._TextBar and type(bar) is not text_tqdm
    bar.close()


def test_partitioned_audits_count_partitions(capsys):
    from skfair_audit.scale import partitioned_certify_bounds, partitioned_flag_groups

    trail = _trail()
    chunks = [trail.iloc[i:i + 1000] for i in range(0, 3000, 1000)]
    options = dict(label="y", prediction="y_pred", protected=["race", "sex"],
                   metric="error_rate")
    quiet = partitioned_certify_bounds(chunks, n_resamples=200, random_state=0, **options)
    capsys.readouterr()
    loud = partitioned_certify_bounds(chunks, n_resamples=200, random_state=0, verbose=1,
                                      **options)
    np.testing.assert_array_equal(quiet.lower, loud.lower)
    err = capsys.readouterr().err
    assert "partitions summarised" in err and "3/3" in err and "200/200" in err
    flags = partitioned_flag_groups(iter(chunks), verbose=1, **options)  # unknown length
    assert "3partition" in capsys.readouterr().err.replace(" ", "")
    assert flags.flagged.tolist() == partitioned_flag_groups(chunks, **options).flagged.tolist()


def test_dask_local_scheduler_counts_partitions(capsys):
    dd = pytest.importorskip("dask.dataframe")
    from skfair_audit.scale import partitioned_cell_counts, summarize_trail

    trail = _trail()
    frame = dd.from_pandas(trail, npartitions=4)
    options = dict(label="y", prediction="y_pred", protected=["race", "sex"],
                   metric="error_rate")
    quiet = summarize_trail(frame, **options).certify_bounds(n_resamples=100, random_state=0)
    capsys.readouterr()
    loud = summarize_trail(frame, verbose=1, **options).certify_bounds(n_resamples=100,
                                                                      random_state=0)
    np.testing.assert_array_equal(quiet.upper, loud.upper)
    assert "4/4" in capsys.readouterr().err

    from skfair_audit.faith import GridSpace

    space = GridSpace.from_data(trail[["race"]], trail.y, ["race"])
    counts = partitioned_cell_counts(frame[["race", "y"]], space, label="y", verbose=1)
    np.testing.assert_array_equal(counts, space.counts(trail[["race"]], trail.y))
    assert "4/4" in capsys.readouterr().err


def test_command_line_shows_bars_unless_quiet(tmp_path, capsys):
    from skfair_audit.cli._main import main

    path = tmp_path / "trail.csv"
    _trail().to_csv(path, index=False)
    argv = ["group", str(path), "--label", "y", "--prediction", "y_pred", "--protected", "race",
            "sex", "--procedure", "bounds", "--n-resamples", "300", "--metric", "error_rate"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "bootstrap" in err and "300/300" in err
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_in_a_kernel_without_ipywidgets_one_quiet_line_per_run(monkeypatch, capsys):
    # Was: tqdm's red TqdmWarning ("IProgress not found") and, in the saved notebook, one line
    # per redraw of its text bar (31 lines for the selector's 30 fits).
    import importlib.util
    import types
    import warnings

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    ipython = types.ModuleType("IPython")  # a running kernel, as IPython reports it
    ipython.get_ipython = lambda: types.SimpleNamespace(config={"IPKernelApp": {}})
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in _progress.track(range(30), 30, "30 candidates × 1 fold", unit="fit",
                                 verbose=1):
            pass
    err = capsys.readouterr().err
    assert "\r" not in err and err.count("\n") == 1, repr(err)
    assert err.startswith("30 candidates × 1 fold: 30/30 fits (100%)")
