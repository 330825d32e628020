"""FairnessMonitor: betting confidence sequences, alarms, updates, state and errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

from skfair_audit.monitor import FairnessMonitor, MonitorResult, StateFileError, simulate_crossings
from skfair_audit.monitor._betting import (
    grid_interval,
    grid_points,
    log_capital_step,
    plugin_bet,
    weighted_ebh,
)

LEVELS = {"sex": ["F", "M"], "race": ["a", "b", "c"]}


def _batch(rng, n, p_pos=0.3, shift=0.0, races=("a", "b", "c")):
    race = rng.choice(list(races), n)
    sex = rng.choice(["F", "M"], n)
    p = p_pos + shift * (race == "c")
    return pd.DataFrame({"sex": sex, "race": race, "y": rng.integers(0, 2, n),
                         "y_pred": (rng.random(n) < p).astype(int)})


def _monitor(**kw):
    params = dict(metric="selection_rate", levels=LEVELS, target=0.3, epsilon0=0.0,
                  grid_size=100)
    params.update(kw)
    return FairnessMonitor(["sex", "race"], **params)


def test_count_shortcut_equals_row_by_row_capital():
    """The capital from counts is the product over the rows (independent reference)."""
    rng = np.random.default_rng(1)
    mon = _monitor()
    m = grid_points(100)
    ref_up = np.zeros(m.size)
    ref_down = np.zeros(m.size)
    n0 = k0 = 0
    j = mon_index = None
    for _ in range(6):
        batch = _batch(rng, int(rng.integers(20, 200)))
        rows = batch.loc[batch["race"] == "c", "y_pred"].to_numpy()
        mon.partial_fit(batch)
        if mon_index is None:
            mon_index = mon.names_.index("race=c")
            j = mon_index
        lam = plugin_bet(n0, k0, rows.size, mon.alpha * mon._weights[j])
        for x in rows:  # one factor per row, at every grid point
            up = np.minimum(lam, 0.5 / np.where(m > 0, m, np.nan))
            up = np.where(m > 0, up, lam)
            down = np.minimum(lam, 0.5 / np.where(m < 1, 1 - m, np.nan))
            down = np.where(m < 1, down, lam)
            ref_up += np.log(1 + up * (x - m))
            ref_down += np.log(1 - down * (x - m))
        n0 += rows.size
        k0 += int(rows.sum())
    np.testing.assert_allclose(mon._log_up[j], ref_up, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(mon._log_down[j], ref_down, rtol=1e-10, atol=1e-9)
    assert mon._n[j] == n0 and mon._k[j] == k0


def test_simulation_shortcut_matches_row_level_monitor():
    """simulate_crossings on the counts reproduces the monitor's capital at the truth, and the
    monitor's interval leaves the truth only after the simulated capital crossed."""
    rng = np.random.default_rng(7)
    alpha = 0.5  # large, so that crossings happen in a small test
    n_streams, n_looks, truth = 40, 30, 0.3
    ones = np.zeros((n_looks, n_streams, 1))
    sizes = np.zeros((n_looks, n_streams, 1))
    misses = np.full(n_streams, -1)
    for s in range(n_streams):
        mon = FairnessMonitor(["g"], metric="selection_rate", levels={"g": ["A"]},
                              target=0.0, alpha=alpha, grid_size=10, new_level_share=0.0)
        for look in range(n_looks):
            n = int(rng.integers(5, 40))
            pred = (rng.random(n) < truth).astype(int)
            mon.partial_fit(pd.DataFrame({"g": ["A"] * n, "y": pred, "y_pred": pred}))
            ones[look, s, 0], sizes[look, s, 0] = pred.sum(), n
            low, high = mon._low[0], mon._high[0]
            if misses[s] < 0 and not low <= truth <= high:
                misses[s] = look
        j = int(round(truth * 10))
        # capital at the grid point equal to the truth, from counts alone
        lu = ld = 0.0
        n0 = k0 = 0
        for look in range(n_looks):
            lam = plugin_bet(n0, k0, sizes[look, s, 0], alpha)
            du, dd = log_capital_step([ones[look, s, 0]], [sizes[look, s, 0] - ones[look, s, 0]],
                                      [lam], np.array([truth]))
            lu += du[0, 0]
            ld += dd[0, 0]
            n0 += sizes[look, s, 0]
            k0 += ones[look, s, 0]
        assert mon._log_up[0, j] == pytest.approx(lu, rel=1e-12, abs=1e-12)
        assert mon._log_down[0, j] == pytest.approx(ld, rel=1e-12, abs=1e-12)
    first = simulate_crossings(zip(ones, sizes, strict=True), np.full((n_streams, 1), truth),
                               np.array([alpha]))[:, 0]
    for s in range(n_streams):
        if misses[s] >= 0:
            assert 0 <= first[s] <= misses[s]
    assert (first >= 0).any()  # the test can see crossings


def test_time_uniform_coverage_quick():
    """P(some stream's capital at the truth ever crosses) <= alpha (quick simulation)."""
    rng = np.random.default_rng(3)
    n_streams, n_groups, n_looks, alpha = 400, 8, 300, 0.1
    p = rng.dirichlet(np.ones(n_groups) * 0.7)
    truth = rng.uniform(0.05, 0.95, n_groups)
    sizes = rng.multinomial(100, p, size=(n_looks, n_streams))
    ones = rng.binomial(sizes, truth)
    first = simulate_crossings(zip(ones, sizes, strict=True),
                               np.broadcast_to(truth, (n_streams, n_groups)),
                               np.full(n_groups, alpha / n_groups))
    rate = (first >= 0).any(axis=1).mean()
    assert rate <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / n_streams)


def test_grid_interval_contains_truth_when_capital_below_threshold():
    m = grid_points(20)
    lam = plugin_bet([50], [10], [100], [0.05])
    up, down = log_capital_step([25], [75], lam, m)
    low, high = grid_interval(up, down, np.log([20.0]), m)
    assert low[0] <= 0.25 <= high[0]
    assert 0.0 < low[0] and high[0] < 1.0


def test_weighted_ebh_equal_weights_is_ebh():
    rng = np.random.default_rng(0)
    for _ in range(50):
        e = rng.exponential(5, 12)
        q = 0.2
        got = weighted_ebh(e, np.full(12, 1 / 12), q)
        # e-BH: reject the k largest, k = max{k : e_(k) >= K / (q k)}
        srt = np.sort(e)[::-1]
        ks = [k for k in range(1, 13) if srt[k - 1] >= 12 / (q * k)]
        expect = np.zeros(12, bool)
        if ks:
            expect[np.argsort(-e, kind="stable")[: max(ks)]] = True
        np.testing.assert_array_equal(got, expect)


def test_flags_a_true_disparity_and_not_others():
    rng = np.random.default_rng(2)
    mon = _monitor(target="overall", epsilon0=0.02)
    for _ in range(40):
        mon.partial_fit(_batch(rng, 2000, shift=0.15))
    res = mon.result()
    assert isinstance(res, MonitorResult)
    flagged = {n for n, f in zip(res.names, res.flagged, strict=True) if f}
    assert "race=c" in flagged
    assert all("race=c" in n for n in flagged)
    assert res.flagged_since[res.names.index("race=c")] > 0
    frame = res.to_frame()
    assert frame.loc[0, "group"] in flagged
    assert "simultaneously" in res.guarantee()
    assert "<div" in res._repr_html_()
    ci = res.confidence_interval()
    assert np.all(ci.low <= ci.high)


def test_fdr_reference_target_and_asymptotic():
    rng = np.random.default_rng(4)
    fdr = _monitor(target="race=a", procedure="fdr", epsilon0=0.02)
    asym = _monitor(target="race=a", method="asymptotic", epsilon0=0.02)
    for _ in range(40):
        batch = _batch(rng, 2000, shift=0.15)
        fdr.partial_fit(batch)
        asym.partial_fit(batch)
    for res in (fdr.result(), asym.result()):
        assert "race=a" not in res.names
        assert res.flagged[res.names.index("race=c")]
    assert "expected share" in fdr.result().guarantee()
    assert "large-sample" in asym.result().guarantee()
    # the asymptotic CS is narrower than the betting one on a large group
    j = fdr.result().names.index("race=b")
    width = lambda r: r.disparity_high[j] - r.disparity_low[j]  # noqa: E731
    assert width(asym.result()) < width(fdr.result())
    with pytest.raises(ValueError, match="e-values"):
        _monitor(procedure="fdr", method="asymptotic").partial_fit(_batch(rng, 10))


def test_new_levels_get_their_own_share():
    rng = np.random.default_rng(5)
    mon = _monitor(new_level_share=0.2)
    mon.partial_fit(_batch(rng, 500))
    n_initial = len(mon.names_)
    mon.partial_fit(_batch(rng, 500, races=("a", "b", "c", "d")))
    new = mon.names_[n_initial:]
    assert set(new) == {"race=d", "sex=F & race=d", "sex=M & race=d"}
    w = mon._weights
    np.testing.assert_allclose(w[:n_initial], 0.8 / n_initial)
    r = np.arange(1, 4)
    np.testing.assert_allclose(w[n_initial:], 0.2 / (r * (r + 1)))
    assert w.sum() < 1
    j = mon.names_.index("race=d")
    assert mon._n[j] == 0  # bets from the next look on
    mon.partial_fit(_batch(rng, 500, races=("d",)))
    assert mon._n[j] == 500
    strict = _monitor(new_level_share=0.0)
    strict.partial_fit(_batch(rng, 100))
    with pytest.raises(ValueError, match="new level"):
        strict.partial_fit(_batch(rng, 100, races=("a", "z")))


def test_first_batch_registers_undeclared_levels():
    rng = np.random.default_rng(6)
    mon = _monitor(levels=None)
    mon.partial_fit(_batch(rng, 300))
    assert mon._n.sum() == 0 and len(mon.names_) == 11
    mon.partial_fit(_batch(rng, 300))
    assert mon._n[mon.names_.index("sex=F")] > 0


def test_intervals_of_a_covariate():
    rng = np.random.default_rng(8)
    mon = FairnessMonitor(["age"], metric="selection_rate", grid=[18, 30, 45, 70],
                          target="overall", epsilon0=0.0)
    for _ in range(20):
        age = rng.uniform(18, 70, 1000)
        pred = (rng.random(1000) < np.where(age < 30, 0.5, 0.3)).astype(int)
        mon.partial_fit(pd.DataFrame({"age": age, "y": pred, "y_pred": pred}))
    res = mon.result()
    assert len(res.names) == 6
    assert res.flagged[res.names.index("age in [18, 30)")]


def test_dask_batch_equals_pandas_bit_for_bit():
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(9)
    a, b = _monitor(), _monitor()
    for _ in range(5):
        batch = _batch(rng, 3000, shift=0.1)
        a.partial_fit(batch)
        b.partial_fit(dd.from_pandas(batch, npartitions=4))
    for name in ("_log_up", "_log_down", "_low", "_high", "_n", "_k"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_parquet_and_csv_paths(tmp_path):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(10)
    batch = _batch(rng, 500)
    batch.to_parquet(tmp_path / "b.parquet")
    batch.to_csv(tmp_path / "b.csv", index=False)
    a, b, c = _monitor(), _monitor(), _monitor()
    a.partial_fit(batch)
    b.partial_fit(tmp_path / "b.parquet")
    c.partial_fit(str(tmp_path / "b.csv"))
    np.testing.assert_array_equal(a._log_up, b._log_up)
    np.testing.assert_array_equal(a._log_up, c._log_up)


@pytest.mark.parametrize("bad, match", [
    (lambda b: b.drop(columns="race"), "no column"),
    (lambda b: b.assign(race=b["race"].where(b.index != 3, None)), "missing"),
    (lambda b: b.assign(y_pred=np.where(b.index == 3, 2, b["y_pred"])), "label"),
])
def test_bad_batches_leave_state_unchanged(bad, match):
    rng = np.random.default_rng(11)
    mon = _monitor()
    mon.partial_fit(_batch(rng, 500))
    before = {k: np.copy(v) for k, v in vars(mon).items() if isinstance(v, np.ndarray)}
    looks = mon.n_looks_
    with pytest.raises(ValueError, match=match):
        mon.partial_fit(bad(_batch(rng, 500)))
    assert mon.n_looks_ == looks
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(mon, k), v)


def test_new_label_after_first_batches_is_refused():
    rng = np.random.default_rng(12)
    mon = FairnessMonitor(["sex"], label="y", prediction="y_pred", metric="error_rate",
                          levels={"sex": ["F", "M"]})
    mon.partial_fit(pd.DataFrame({"sex": ["F", "M"] * 5, "y": ["no", "yes"] * 5,
                                  "y_pred": ["no"] * 10}))
    with pytest.raises(ValueError, match="new label"):
        mon.partial_fit(pd.DataFrame({"sex": ["F", "M"], "y": ["no", "maybe"],
                                      "y_pred": ["no", "no"]}))
    del rng


def test_save_load_round_trip_and_refusals(tmp_path):
    rng = np.random.default_rng(13)
    mon = _monitor(procedure="fdr", target="overall", model_id="sha256:abc")
    for _ in range(4):
        mon.partial_fit(_batch(rng, 800, shift=0.1))
    path = tmp_path / "state.npz"
    mon.save(path)
    back = FairnessMonitor.load(path, expected=_monitor(procedure="fdr", target="overall",
                                                        model_id="sha256:abc"))
    pd.testing.assert_frame_equal(back.result().to_frame(), mon.result().to_frame())
    batch = _batch(rng, 800)
    back.partial_fit(batch)
    mon.partial_fit(batch)
    np.testing.assert_array_equal(back._log_up, mon._log_up)
    # another model, another collection
    with pytest.raises(StateFileError, match="model_id"):
        FairnessMonitor.load(path, expected=_monitor(procedure="fdr", target="overall",
                                                     model_id="sha256:other"))
    with pytest.raises(StateFileError, match="depth"):
        FairnessMonitor.load(path, expected=_monitor(procedure="fdr", target="overall",
                                                     model_id="sha256:abc", depth=1))
    data = path.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(StateFileError, match="corrupted or truncated"):
        FairnessMonitor.load(tmp_path / "trunc.npz")
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    (tmp_path / "flip.npz").write_bytes(bytes(flipped))
    with pytest.raises(StateFileError, match="corrupted"):
        FairnessMonitor.load(tmp_path / "flip.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(StateFileError):
        FairnessMonitor.load(tmp_path / "text.npz")
    assert not list(tmp_path.glob(".*.tmp"))


def test_state_size_is_small_for_72_intersections(tmp_path):
    rng = np.random.default_rng(14)
    levels = {"a": list("pqrs"), "b": list("xyz"), "c": ["u", "v"]}  # 4+3+2+12+8+6+24 = 59
    mon = FairnessMonitor(["a", "b", "c"], metric="selection_rate", levels=levels)
    n = 1000
    mon.partial_fit(pd.DataFrame({k: rng.choice(v, n) for k, v in levels.items()}
                                 | {"y": rng.integers(0, 2, n), "y_pred": rng.integers(0, 2, n)}))
    mon.save(tmp_path / "s.npz")
    assert (tmp_path / "s.npz").stat().st_size < 1 << 20


_WRITER = textwrap.dedent("""
    import sys, numpy as np, pandas as pd
    from skfair_audit.monitor import FairnessMonitor
    path = sys.argv[1]
    rng = np.random.default_rng(0)
    mon = FairnessMonitor(["g"], metric="selection_rate", levels={"g": list("abcdefgh")},
                          grid_size=4000)
    print("ready", flush=True)
    while True:
        n = 200
        pred = rng.integers(0, 2, n)
        mon.partial_fit(pd.DataFrame({"g": rng.choice(list("abcdefgh"), n), "y": pred,
                                      "y_pred": pred}))
        mon.save(path)
""")


def test_crash_mid_write_leaves_the_last_complete_state(tmp_path):
    """Kill a writer at random points: the file always loads, as a complete state."""
    rng = np.random.default_rng(15)
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    path = tmp_path / "state.npz"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    loaded = []
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, str(script), str(path)],
                                stdout=subprocess.PIPE, env=env)
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(float(rng.uniform(0.2, 0.8)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        if path.exists():
            mon = FairnessMonitor.load(path)
            assert mon._log_up.shape == (9, 4001)  # overall + 8 groups
            assert mon._n[0] == 200 * mon.n_looks_
            loaded.append(mon.n_looks_)
    assert loaded, "the writer never completed a save"


def test_estimator_conventions_and_parameter_errors():
    from sklearn.base import clone

    mon = _monitor(alpha=0.1)
    assert clone(mon).get_params() == mon.get_params()
    assert clone(mon).fingerprint() == mon.fingerprint()
    rng = np.random.default_rng(16)
    mon.partial_fit(_batch(rng, 200))
    mon.partial_fit(_batch(rng, 200))
    assert mon.n_looks_ == 2
    assert mon.fit(_batch(rng, 200)) is mon and mon.n_looks_ == 1  # fit starts afresh
    assert not hasattr(clone(mon), "n_looks_")
    for bad, match in (({"alpha": 1.5}, "alpha"), ({"procedure": "bh"}, "procedure"),
                       ({"epsilon0": 1.0}, "epsilon0"), ({"metric": "nope"}, "unknown metric"),
                       ({"grid": [0, 1], "levels": None}, "one protected column"),
                       ({"target": "Caucasian"}, "group name")):
        with pytest.raises(ValueError, match=match):
            _monitor(**bad).partial_fit(_batch(rng, 50))
    with pytest.raises(ValueError, match="continuous|0/1"):
        FairnessMonitor(["sex"], metric="squared_error", levels={"sex": ["F", "M"]}).partial_fit(
            _batch(rng, 50))
    with pytest.raises(ValueError, match="reference group"):
        _monitor(target="race=zz", levels=None).partial_fit(_batch(rng, 50))
    with pytest.raises(ValueError, match="reference group"):
        _monitor(target="race=zz").partial_fit(_batch(rng, 50))


@pytest.mark.parametrize("protected, params", [
    (["age"], {"grid": [18, 30, 45, 70]}),
    (["s"], {"method": "asymptotic"}),
    (["s"], {"target": "s=a", "procedure": "fdr"}),
    (["s"], {"target": "s=a", "alternative": "two-sided", "paired_bet": "ons"}),
])
def test_round_trip_of_every_kind(tmp_path, protected, params):
    rng = np.random.default_rng(17)

    def batch():
        n = 300
        pred = rng.integers(0, 2, n)
        cols = ({"age": rng.uniform(18, 70, n)} if protected == ["age"]
                else {"s": rng.choice(["a", "b", "c"], n)})
        return pd.DataFrame({**cols, "y": pred, "y_pred": pred})

    mon = FairnessMonitor(protected, **params)
    for _ in range(4):
        mon.partial_fit(batch())
    mon.save(tmp_path / "s.npz")
    back = FairnessMonitor.load(tmp_path / "s.npz", expected=FairnessMonitor(protected, **params))
    pd.testing.assert_frame_equal(back.result().to_frame(), mon.result().to_frame())
    nxt = batch()
    back.partial_fit(nxt)
    mon.partial_fit(nxt)
    for name in ("_low", "_high", "_t_log", "_t_mix", "_t_lam", "_log_up", "_n"):
        np.testing.assert_array_equal(getattr(back, name), getattr(mon, name))
