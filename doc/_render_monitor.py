"""``bench_monitor_validity.py``, ``bench_monitor_power.py``, ``bench_monitor_speed.py`` and
``bench_monitor_real.py`` → ``doc/user_guide/monitoring_results.inc``.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

import math

from _render_common import load, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "monitor_validity.json": {
        "alpha": "float",
        "batch": "int",
        "command": "str",
        "epsilon0": "float",
        "fdr": "object",
        "fdr.n_nonnull_groups": "int",
        "fdr.n_null_groups": "int",
        "fdr.q": "float",
        "fdr.seconds": "float",
        "fdr.times": "object",
        "fdr.times.first_alarm": "object",
        "fdr.times.first_alarm.fdr": "float",
        "fdr.times.first_alarm.mc_se": "float",
        "fdr.times.first_alarm.mean_flagged_when_reached": "float",
        "fdr.times.first_alarm.share_reached": "float",
        "fdr.times.five_flags": "object",
        "fdr.times.five_flags.fdr": "float",
        "fdr.times.five_flags.mc_se": "float",
        "fdr.times.five_flags.mean_flagged_when_reached": "float",
        "fdr.times.five_flags.share_reached": "float",
        "fdr.times.look_1000": "object",
        "fdr.times.look_1000.fdr": "float",
        "fdr.times.look_1000.mc_se": "float",
        "fdr.times.look_1000.mean_flagged_when_reached": "float",
        "fdr.times.look_1000.share_reached": "float",
        "fdr.times.look_10000": "object",
        "fdr.times.look_10000.fdr": "float",
        "fdr.times.look_10000.mc_se": "float",
        "fdr.times.look_10000.mean_flagged_when_reached": "float",
        "fdr.times.look_10000.share_reached": "float",
        "fwer": "object",
        "fwer.mc_se": "float",
        "fwer.seconds": "float",
        "fwer.share_some_group_outside": "float",
        "group_probability_range": "list",
        "looks": "int",
        "machine": "object",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "n_groups": "int",
        "naive": "object",
        "naive.looks_checked": "list",
        "naive.mc_se": "float",
        "naive.mc_se_from_10000_rows": "float",
        "naive.miss_rate_per_look": "list",
        "naive.n_resamples": "int",
        "naive.seconds": "float",
        "naive.share_some_group_outside": "float",
        "naive.share_some_group_outside_from_10000_rows": "float",
        "naive.streams": "int",
        "rows_per_stream": "int",
        "streams": "int",
        "theta": "float",
    },
    "monitor_power.json": {
        "alpha": "float",
        "base_rate": "float",
        "batch": "int",
        "command": "str",
        "elapsed_seconds": "float",
        "machine": "object",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "max_rows": "int",
        "mixture_bettors": "int",
        "null": "object",
        "null.chugg_ons": "object",
        "null.chugg_ons.mc_se": "float",
        "null.chugg_ons.reps": "int",
        "null.chugg_ons.share_alarmed": "float",
        "null.monitor_batch": "object",
        "null.monitor_batch.mc_se": "float",
        "null.monitor_batch.reps": "int",
        "null.monitor_batch.share_alarmed": "float",
        "null.monitor_batch_room_for_new_groups": "object",
        "null.monitor_batch_room_for_new_groups.mc_se": "float",
        "null.monitor_batch_room_for_new_groups.reps": "int",
        "null.monitor_batch_room_for_new_groups.share_alarmed": "float",
        "null.monitor_mixture_batch": "object",
        "null.monitor_mixture_batch.mc_se": "float",
        "null.monitor_mixture_batch.reps": "int",
        "null.monitor_mixture_batch.share_alarmed": "float",
        "null.monitor_mixture_one_pair_per_look": "object",
        "null.monitor_mixture_one_pair_per_look.mc_se": "float",
        "null.monitor_mixture_one_pair_per_look.reps": "int",
        "null.monitor_mixture_one_pair_per_look.share_alarmed": "float",
        "null.monitor_one_pair_per_look": "object",
        "null.monitor_one_pair_per_look.mc_se": "float",
        "null.monitor_one_pair_per_look.reps": "int",
        "null.monitor_one_pair_per_look.share_alarmed": "float",
        "null.monitor_ons_batch": "object",
        "null.monitor_ons_batch.mc_se": "float",
        "null.monitor_ons_batch.reps": "int",
        "null.monitor_ons_batch.share_alarmed": "float",
        "power": "list",
        "power[].chugg_ons": "object",
        "power[].chugg_ons.median_rows": "float",
        "power[].chugg_ons.share_alarmed": "float",
        "power[].delta": "float",
        "power[].fixed_horizon_oracle_rows": "int",
        "power[].fixed_horizon_power_at_oracle_rows": "float",
        "power[].monitor_batch": "object",
        "power[].monitor_batch.median_rows": "float",
        "power[].monitor_batch.share_alarmed": "float",
        "power[].monitor_batch_room_for_new_groups": "object",
        "power[].monitor_batch_room_for_new_groups.median_rows": "float",
        "power[].monitor_batch_room_for_new_groups.share_alarmed": "float",
        "power[].monitor_mixture_batch": "object",
        "power[].monitor_mixture_batch.median_rows": "float",
        "power[].monitor_mixture_batch.share_alarmed": "float",
        "power[].monitor_mixture_one_pair_per_look": "object",
        "power[].monitor_mixture_one_pair_per_look.median_rows": "float",
        "power[].monitor_mixture_one_pair_per_look.share_alarmed": "float",
        "power[].monitor_one_pair_per_look": "object",
        "power[].monitor_one_pair_per_look.median_rows": "float",
        "power[].monitor_one_pair_per_look.share_alarmed": "float",
        "power[].monitor_ons_batch": "object",
        "power[].monitor_ons_batch.median_rows": "float",
        "power[].monitor_ons_batch.share_alarmed": "float",
        "power[].ons_one_pair_per_look_identical_to_chugg": "bool",
        "power[].ratio_chugg_ons_to_oracle": "float",
        "power[].ratio_monitor_batch_room_for_new_groups_to_ons": "float",
        "power[].ratio_monitor_batch_to_ons": "float",
        "power[].ratio_monitor_batch_to_oracle": "float",
        "power[].ratio_monitor_mixture_batch_to_ons": "float",
        "power[].ratio_monitor_mixture_one_pair_per_look_to_ons": "float",
        "power[].ratio_monitor_one_pair_per_look_to_ons": "float",
        "power[].ratio_monitor_one_pair_per_look_to_oracle": "float",
        "power[].ratio_monitor_ons_batch_to_ons": "float",
        "reps": "int",
        "share_with_new_levels": "float",
        "shift": "list",
        "shift[].change_at_rows": "int",
        "shift[].chugg_ons": "object",
        "shift[].chugg_ons.false_alarm_before_change": "float",
        "shift[].chugg_ons.mc_se": "float",
        "shift[].chugg_ons.median_rows": "float",
        "shift[].chugg_ons.share_alarmed": "float",
        "shift[].delta": "float",
        "shift[].monitor_batch": "object",
        "shift[].monitor_batch.false_alarm_before_change": "float",
        "shift[].monitor_batch.mc_se": "float",
        "shift[].monitor_batch.median_rows": "float",
        "shift[].monitor_batch.share_alarmed": "float",
        "shift[].monitor_mixture_batch": "object",
        "shift[].monitor_mixture_batch.median_rows": "float",
        "shift[].monitor_mixture_batch.share_alarmed": "float",
        "shift[].monitor_ons_batch": "object",
        "shift[].monitor_ons_batch.median_rows": "float",
        "shift[].monitor_ons_batch.share_alarmed": "float",
    },
    "monitor_speed.json": {
        "batch": "int",
        "command": "str",
        "dask_batches_checked": "int",
        "dask_bit_identical": "bool",
        "grid_size": "int",
        "groups": "int",
        "machine": "object",
        "machine.cpus": "int",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "median_seconds_groupby_count": "float",
        "median_seconds_update": "float",
        "ratio_median_update_to_groupby": "float",
        "ratio_total_update_to_groupby": "float",
        "rows": "int",
        "state_file_bytes": "int",
        "streams": "int",
    },
    "monitor_real.json": {
        "adult": "object",
        "adult.batch": "int",
        "adult.fwer": "object",
        "adult.fwer.first_flag": "object",
        "adult.fwer.first_flag.sex=Female & race=Black": "object",
        "adult.fwer.first_flag.sex=Female & race=Black.rows": "int",
        "adult.fwer.flagged": "list",
        "adult.rows": "int",
        "adult.train_rows": "int",
        "compas": "object",
        "compas.batch": "int",
        "compas.fdr": "object",
        "compas.fdr.flagged": "list",
        "compas.first_date": "str",
        "compas.fwer": "object",
        "compas.fwer.first_flag": "object",
        "compas.fwer.first_flag.age_cat=Less than 25": "object",
        "compas.fwer.first_flag.age_cat=Less than 25.rows": "int",
        "compas.fwer.first_flag.race=African-American & age_cat=25 - 45": "object",
        "compas.fwer.first_flag.race=African-American & age_cat=25 - 45.rows": "int",
        "compas.fwer.first_flag.race=African-American & age_cat=Less than 25": "object",
        "compas.fwer.first_flag.race=African-American & age_cat=Less than 25.rows": "int",
        "compas.fwer.first_flag.race=African-American & sex=Female & age_cat=Less than 25":
            "object",
        "compas.fwer.first_flag.race=African-American & sex=Female & age_cat=Less than 25.rows":
            "int",
        "compas.fwer.first_flag.race=African-American & sex=Male & age_cat=25 - 45": "object",
        "compas.fwer.first_flag.race=African-American & sex=Male & age_cat=25 - 45.rows": "int",
        "compas.fwer.first_flag.race=African-American & sex=Male & age_cat=Less than 25": "object",
        "compas.fwer.first_flag.race=African-American & sex=Male & age_cat=Less than 25.rows":
            "int",
        "compas.fwer.first_flag.race=Caucasian & sex=Female & age_cat=Less than 25": "object",
        "compas.fwer.first_flag.race=Caucasian & sex=Female & age_cat=Less than 25.rows": "int",
        "compas.fwer.first_flag.sex=Female & age_cat=Less than 25": "object",
        "compas.fwer.first_flag.sex=Female & age_cat=Less than 25.rows": "int",
        "compas.fwer.flagged": "list",
        "compas.fwer.target_value": "float",
        "compas.last_date": "str",
        "compas.rows": "int",
    },
}


def _share(p, se):
    return f"{pct(p)} ± {pct(se)}"


def monitoring_guide():
    """The monitoring page's results: validity, the naive way, power, shift, speed, data."""
    val = load("monitor_validity.json")
    out = [".. _monitoring_results:\n", section("Results", "-")]
    fw, fdr, naive = val["fwer"], val["fdr"], val["naive"]
    scaled = val["streams"] < 1000 or val["looks"] < 10_000
    out.append(
        f"**Time-uniform validity** (``{val['command'].strip()}``"
        + (", reduced sizes" if scaled else "") + f"): {val['streams']:,} simulated streams "
        f"of {val['rows_per_stream']:,} rows each, a look after every {val['batch']} rows "
        f"({val['looks']:,} looks), {val['n_groups']} groups (all intersections of three "
        f"attributes, group shares from {pct(val['group_probability_range'][0], 2)} to "
        f"{pct(val['group_probability_range'][1])}), target the overall rate, level "
        f"α = {val['alpha']:g}.\n")
    ok = fw["share_some_group_outside"] <= val["alpha"] + 2 * fw["mc_se"]
    out.append(table(
        ["procedure", "share of streams with a miss at some look", "bound", "within"],
        [["betting confidence sequences (capital at the truth crossed)",
          _share(fw["share_some_group_outside"], fw["mc_se"]), f"α = {val['alpha']:g}",
          "yes" if ok else "NO"],
         [f"fixed-sample simultaneous bootstrap bounds (B = {naive['n_resamples']}) "
          f"recomputed at {len(naive['looks_checked'])} looks ({naive['streams']} streams)",
          _share(naive["share_some_group_outside"], naive["mc_se"]), f"α = {val['alpha']:g}",
          "yes" if naive["share_some_group_outside"] <= val["alpha"] + 2 * naive["mc_se"]
          else "NO"],
         [f"the same, looks from {10_000:,} rows on only",
          _share(naive["share_some_group_outside_from_10000_rows"],
                 naive["mc_se_from_10000_rows"]), f"α = {val['alpha']:g}",
          "yes" if naive["share_some_group_outside_from_10000_rows"]
          <= val["alpha"] + 2 * naive["mc_se_from_10000_rows"] else "NO"]]))
    per_look = naive["miss_rate_per_look"]
    out.append(
        f"\nThe betting row counts a stream as missed as soon as some stream's capital at its "
        "true rate crosses its threshold, an event that contains every miss of the grid "
        "confidence sequences. The naive bounds are each valid at one fixed size (their miss "
        f"rate at a single look ranges from {pct(min(per_look))} to {pct(max(per_look))} over "
        "the looks checked); read at every look they miss far more often, and the share "
        "only grows with more looks.\n")
    out.append(
        f"\n**FDR of e-BH at stopping times** (constant target {val['theta']:g}, "
        f"ε₀ = {val['epsilon0']:g}, q = {fdr['q']:g}; {fdr['n_null_groups']} groups on the "
        f"boundary of their null, {fdr['n_nonnull_groups']} above it):\n")
    names = {"first_alarm": "the first look with a flag", "five_flags":
             "the first look with at least 5 flags (a user's rule)"}
    rows = []
    for key, cell in fdr["times"].items():
        label = (names[key] if key in names
                 else f"the fixed look {int(key.split('_')[1]):,}")
        rows.append([label, _share(cell["fdr"], cell["mc_se"]), pct(cell["share_reached"]),
                     f"{cell['mean_flagged_when_reached']:.1f}",
                     "yes" if cell["fdr"] <= fdr["q"] + 2 * cell["mc_se"] else "NO"])
    out.append(table(["stopping time", "FDR", "streams reaching it", "groups flagged (mean)",
                      "≤ q + 2 se"], rows))
    out.append(
        f"\nRun time: {fw['seconds'] / 60:.1f} min (FWER), {fdr['seconds'] / 60:.1f} min "
        f"(FDR), {naive['seconds'] / 60:.1f} min (naive), on 2 shared cores (load average "
        f"{val['machine']['load_average_start'][0]:.1f} at the start, "
        f"{val['machine']['load_average_end'][0]:.1f} at the end).\n")
    power = load("monitor_power.json")
    batch = power["batch"]
    out.append(
        f"\n**Power on two groups** (``{power['command'].strip()}``; {power['reps']} "
        f"replications, base rate {power['base_rate']:g}, rows of the two groups in equal "
        f"numbers, α = {power['alpha']:g}, target the reference group, two-sided, "
        f"ε₀ = 0; median rows until the alarm, share of replications alarmed, capped at "
        f"{power['max_rows']:,} rows). Chugg et al.'s setting is one observation of each "
        "group per step: the monitor is run there with one row of each group per look, and "
        f"also in batches of {batch} rows. \"Declared\": one declared comparison (levels "
        "declared, ``new_level_share=0``: the test flags alone, at the whole α). "
        f"\"Defaults\": {1 - 2 * power['share_with_new_levels']:.0%} of α kept for new "
        "groups (``new_level_share=0.1``), so the group's share is split between its CS and "
        "its test. Bets: the default ``mixture+ons``, the mixture of "
        f"{power['mixture_bettors']} constant bettors alone, Chugg et al.'s ONS alone.\n")

    def med(cell):
        m = cell["median_rows"]
        return "not reached" if m is None else f"{m:,.0f} ({pct(cell['share_alarmed'], 0)})"

    def ratio(x):
        return "—" if x is None else f"{x:.2f}"

    variants = [("monitor_one_pair_per_look", "one pair per look, declared"),
                ("monitor_mixture_one_pair_per_look", "the same, mixture bet"),
                ("monitor_batch", f"batches of {batch}, declared"),
                ("monitor_mixture_batch", f"batches of {batch}, mixture bet"),
                ("monitor_ons_batch", f"batches of {batch}, ONS bet"),
                ("monitor_batch_room_for_new_groups", f"batches of {batch}, defaults")]
    out.append(table(
        ["disparity", "Chugg et al. ONS", *(f"monitor: {label}" for _, label in variants),
         "oracle fixed n", "fixed-n power at it"],
        [[f"{r['delta'] * 100:g} points", med(r["chugg_ons"]),
          *(med(r[key]) for key, _ in variants), f"{r['fixed_horizon_oracle_rows']:,}",
          pct(r["fixed_horizon_power_at_oracle_rows"], 0)] for r in power["power"]]))
    out.append("\nRatios of the median rows (below 1: the monitor alarms sooner than Chugg et "
               "al.'s test):\n")
    out.append(table(
        ["disparity", *(f"{label} / ONS" for _, label in variants), "ONS / oracle",
         "one pair per look / oracle", f"batches of {batch} / oracle"],
        [[f"{r['delta'] * 100:g} points",
          *(ratio(r[f"ratio_{key}_to_ons"]) for key, _ in variants),
          ratio(r["ratio_chugg_ons_to_oracle"]),
          ratio(r["ratio_monitor_one_pair_per_look_to_oracle"]),
          ratio(r["ratio_monitor_batch_to_oracle"])] for r in power["power"]]))
    same = all(r["ons_one_pair_per_look_identical_to_chugg"] for r in power["power"])

    def span(key):
        vals = [r[f"ratio_{key}_to_ons"] for r in power["power"] if r[f"ratio_{key}_to_ons"]]
        return f"{min(vals):.2f}–{max(vals):.2f}"

    null = power["null"]

    def null_cell(key):
        c = null[key]
        return f"{_share(c['share_alarmed'], c['mc_se'])} ({c['reps']:,} replications)"

    out.append(
        "\nWith ``paired_bet=\"ons\"`` and one pair per look the monitor "
        + ("alarmed at exactly the row of Chugg et al.'s test in every replication (it is "
           "their test step for step)" if same else
           "did NOT alarm at the same row as Chugg et al.'s test in every replication")
        + ". With the default bet the declared comparison needs "
        f"{span('monitor_one_pair_per_look')} times the rows of their test with one pair per "
        f"look, and {span('monitor_batch')} times in batches of {batch} rows (the ONS bet "
        f"alone in batches: {span('monitor_ons_batch')}; an ONS bet is held fixed within a "
        "batch, a constant bettor loses nothing to batching). With room for new groups: "
        f"{span('monitor_batch_room_for_new_groups')}. The ratios to the oracle's fixed "
        "horizon are the price of anytime validity: the oracle knows the disparity in "
        "advance and looks once, at the size where 80% of its audits detect it, whereas a "
        "median is the size by which half of the monitors have alarmed (and they go on "
        "looking). Without a disparity, alarms up to "
        f"{power['max_rows']:,} rows (false alarms; α = {power['alpha']:g}): Chugg et al. "
        f"{null_cell('chugg_ons')}; one pair per look, declared "
        f"{null_cell('monitor_one_pair_per_look')}; the same with the mixture bet "
        f"{null_cell('monitor_mixture_one_pair_per_look')}; batches, declared "
        f"{null_cell('monitor_batch')}; mixture bet {null_cell('monitor_mixture_batch')}; "
        f"ONS bet {null_cell('monitor_ons_batch')}; defaults "
        f"{null_cell('monitor_batch_room_for_new_groups')}. Run time "
        f"{power['elapsed_seconds'] / 60:.1f} min (load average "
        f"{power['machine']['load_average_start'][0]:.1f} at the start, "
        f"{power['machine']['load_average_end'][0]:.1f} at the end).\n")
    shift = power["shift"]
    out.append(f"\n**Distribution shift**: the disparity appears after "
               f"{shift[0]['change_at_rows']:,} rows; monitor in batches of {batch}, "
               "declared.\n")
    out.append(table(
        ["disparity", "monitor: alarms before the change", "delay after it (median rows)",
         "mixture bet: delay", "ONS bet: delay", "Chugg et al.: alarms before",
         "Chugg et al.: delay"],
        [[f"{r['delta'] * 100:g} points",
          _share(r["monitor_batch"]["false_alarm_before_change"], r["monitor_batch"]["mc_se"]),
          med(r["monitor_batch"]), med(r["monitor_mixture_batch"]),
          med(r["monitor_ons_batch"]),
          _share(r["chugg_ons"]["false_alarm_before_change"], r["chugg_ons"]["mc_se"]),
          med(r["chugg_ons"])] for r in shift]))

    def delay_ratio(r, key):
        a, b = r[key]["median_rows"], r["chugg_ons"]["median_rows"]
        return a / b if a and b else math.nan

    mix = [delay_ratio(r, "monitor_mixture_batch") for r in shift]
    dflt = [delay_ratio(r, "monitor_batch") for r in shift]
    out.append(
        f"\nAfter a late change the mixture alone waits {min(mix):.2f}–{max(mix):.2f} times "
        "Chugg et al.'s delay: while there is no disparity its bettors with large bets lose "
        "capital, which they must win back, whereas the ONS bet stays near zero and moves "
        f"when the disparity comes. The default bet, half on each, waits {min(dflt):.2f}–"
        f"{max(dflt):.2f} times their delay.\n")
    speed = load("monitor_speed.json")
    out.append(
        f"\n**Speed** (``{speed['command'].strip()}``): {speed['rows']:,} rows in batches "
        f"of {speed['batch']:,} over {speed['groups']} intersections (+ the overall rate: "
        f"{speed['streams']} confidence sequences, grid of {speed['grid_size']} points). "
        f"Median update {speed['median_seconds_update'] * 1e3:.2f} ms against "
        f"{speed['median_seconds_groupby_count'] * 1e3:.2f} ms for a pandas groupby-count of "
        f"the same batch, timed alternately in one run: ratio "
        f"{speed['ratio_median_update_to_groupby']:.2f}× (totals "
        f"{speed['ratio_total_update_to_groupby']:.2f}×; load average "
        f"{speed['machine']['load_average_start'][0]:.1f} at the start, "
        f"{speed['machine']['load_average_end'][0]:.1f} at the end, "
        f"{speed['machine']['cpus']} shared "
        f"cores). State file: {speed['state_file_bytes'] / 2**10:,.0f} KiB. "
        f"{speed['dask_batches_checked']} batches as Dask DataFrames of 4 partitions gave "
        + ("a state identical bit for bit to the same rows in memory."
           if speed["dask_bit_identical"] else "a DIFFERENT state from the rows in memory.")
        + "\n")
    real = load("monitor_real.json")
    c, a = real["compas"], real["adult"]

    def first(block, name):
        return f"{block['first_flag'][name]['rows']:,}"

    out.append(
        f"\n**COMPAS replayed in screening-date order** ({c['rows']:,} rows from "
        f"{c['first_date']} to {c['last_date']}, a look every {c['batch']} rows; FPR of the "
        f"rule ``decile_score >= 5``, target the overall FPR "
        f"{c['fwer']['target_value']:.3f}, flag groups more than 5 points above it): "
        f"{len(c['fwer']['flagged'])} groups flagged with FWER control at 5% and "
        f"{len(c['fdr']['flagged'])} with e-BH at q = 0.1. Flagged (FWER), with the rows "
        "seen when first flagged: "
        + "; ".join(f"{n} ({first(c['fwer'], n)})" for n in c["fwer"]["flagged"]) + ".\n")
    out.append("\n.. image:: ../../benchmarks/results/monitor_real_compas.png\n"
               "   :alt: COMPAS FPR disparity confidence sequences over the rows seen\n")
    out.append(
        f"\n**UCI Adult in a fixed random order** ({a['rows']:,} rows, a look every "
        f"{a['batch']} rows; selection rate of a logistic regression trained on "
        f"{a['train_rows']:,} other rows; absolute disparity above 5 points flagged, FWER 5%): "
        + (", ".join(f"{n} (from {first(a['fwer'], n)} rows)" for n in a["fwer"]["flagged"])
           or "no group") + " flagged.\n")
    out.append("\n.. image:: ../../benchmarks/results/monitor_real_adult.png\n"
               "   :alt: UCI Adult selection-rate disparity confidence sequences\n")
    return "\n".join(out)

