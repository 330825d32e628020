"""The user guide's fragment on fair model selection over fairlearn's mitigators.

Reads ``benchmarks/results/selector_fairlearn.json`` (``benchmarks/bench_selector_fairlearn.py``):
the metadata block of ``benchmarks/_common.py`` (``command``, ``machine``, ``versions`` with
``fairlearn``), then

- ``config``: ``seed``, ``resamples``, ``epsilon0``, ``alpha``, ``delta``, ``n_folds``,
  ``adult_rows``, ``held_out_share``, ``metric``, ``target``;
- ``datasets``: ``{"COMPAS": ..., "Adult": ...}``, each with ``rows`` (``selection``,
  ``held_out``), ``protected``, ``n_features``, ``fold_confidence_level``, ``candidates``
  (one dict per candidate: ``candidate``, ``validation_error``, ``statistic``,
  ``lower_bound``, ``upper_bound``, ``passes``), ``chosen`` and ``most_accurate`` (indices),
  ``held_out_chosen`` / ``held_out_most_accurate`` (``error``, ``worst_disparity``,
  ``worst_disparity_upper``, ``certified``, ``groups``, ``selection_rates``), ``seconds``,
  and on COMPAS ``faith`` (``delta``, ``candidates``, ``chosen``: the FaiTH criterion);
- ``elapsed_seconds``.

Plugged into ``make_reproduction_tables.py``'s ``render_all`` by one import and one entry.
:data:`READS` lists every key it reads (``a.b`` nests, ``a[]`` is an item of the list ``a``)
and its JSON type; the test suite checks it against the committed file.
"""

from __future__ import annotations

from _render_common import GENERATED, GUIDE, load, table

FRAGMENT = GUIDE / "selector_fairlearn_results.inc"

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    'selector_fairlearn.json': {
        'command': 'str',
        'config': 'object',
        'config.alpha': 'float',
        'config.epsilon0': 'float',
        'config.n_folds': 'int',
        'config.resamples': 'int',
        'datasets': 'object',
        'datasets.Adult': 'object',
        'datasets.Adult.candidates': 'list',
        'datasets.Adult.candidates[]': 'object',
        'datasets.Adult.candidates[].candidate': 'str',
        'datasets.Adult.candidates[].passes': 'bool',
        'datasets.Adult.candidates[].statistic': 'float',
        'datasets.Adult.candidates[].upper_bound': 'float',
        'datasets.Adult.candidates[].validation_error': 'float',
        'datasets.Adult.chosen': 'int',
        'datasets.Adult.fold_confidence_level': 'float',
        'datasets.Adult.held_out_chosen': 'object',
        'datasets.Adult.held_out_chosen.certified': 'bool',
        'datasets.Adult.held_out_chosen.error': 'float',
        'datasets.Adult.held_out_chosen.groups': 'list',
        'datasets.Adult.held_out_chosen.groups[]': 'str',
        'datasets.Adult.held_out_chosen.selection_rates': 'list',
        'datasets.Adult.held_out_chosen.selection_rates[]': 'float',
        'datasets.Adult.held_out_chosen.worst_disparity': 'float',
        'datasets.Adult.held_out_chosen.worst_disparity_upper': 'float',
        'datasets.Adult.held_out_most_accurate': 'object',
        'datasets.Adult.held_out_most_accurate.certified': 'bool',
        'datasets.Adult.held_out_most_accurate.error': 'float',
        'datasets.Adult.held_out_most_accurate.groups': 'list',
        'datasets.Adult.held_out_most_accurate.groups[]': 'str',
        'datasets.Adult.held_out_most_accurate.selection_rates': 'list',
        'datasets.Adult.held_out_most_accurate.selection_rates[]': 'float',
        'datasets.Adult.held_out_most_accurate.worst_disparity': 'float',
        'datasets.Adult.held_out_most_accurate.worst_disparity_upper': 'float',
        'datasets.Adult.most_accurate': 'int',
        'datasets.Adult.n_features': 'int',
        'datasets.Adult.protected': 'str',
        'datasets.Adult.rows': 'object',
        'datasets.Adult.rows.held_out': 'int',
        'datasets.Adult.rows.selection': 'int',
        'datasets.COMPAS': 'object',
        'datasets.COMPAS.candidates': 'list',
        'datasets.COMPAS.candidates[]': 'object',
        'datasets.COMPAS.candidates[].candidate': 'str',
        'datasets.COMPAS.candidates[].passes': 'bool',
        'datasets.COMPAS.candidates[].statistic': 'float',
        'datasets.COMPAS.candidates[].upper_bound': 'float',
        'datasets.COMPAS.candidates[].validation_error': 'float',
        'datasets.COMPAS.chosen': 'int',
        'datasets.COMPAS.faith': 'object',
        'datasets.COMPAS.faith.candidates': 'list',
        'datasets.COMPAS.faith.candidates[]': 'object',
        'datasets.COMPAS.faith.candidates[].candidate': 'str',
        'datasets.COMPAS.faith.candidates[].lower_bound': 'float',
        'datasets.COMPAS.faith.candidates[].passes': 'bool',
        'datasets.COMPAS.faith.candidates[].statistic': 'float',
        'datasets.COMPAS.faith.candidates[].validation_error': 'float',
        'datasets.COMPAS.faith.chosen': 'int',
        'datasets.COMPAS.faith.delta': 'float',
        'datasets.COMPAS.fold_confidence_level': 'float',
        'datasets.COMPAS.held_out_chosen': 'object',
        'datasets.COMPAS.held_out_chosen.certified': 'bool',
        'datasets.COMPAS.held_out_chosen.error': 'float',
        'datasets.COMPAS.held_out_chosen.groups': 'list',
        'datasets.COMPAS.held_out_chosen.groups[]': 'str',
        'datasets.COMPAS.held_out_chosen.selection_rates': 'list',
        'datasets.COMPAS.held_out_chosen.selection_rates[]': 'float',
        'datasets.COMPAS.held_out_chosen.worst_disparity': 'float',
        'datasets.COMPAS.held_out_chosen.worst_disparity_upper': 'float',
        'datasets.COMPAS.held_out_most_accurate': 'object',
        'datasets.COMPAS.held_out_most_accurate.certified': 'bool',
        'datasets.COMPAS.held_out_most_accurate.error': 'float',
        'datasets.COMPAS.held_out_most_accurate.groups': 'list',
        'datasets.COMPAS.held_out_most_accurate.groups[]': 'str',
        'datasets.COMPAS.held_out_most_accurate.selection_rates': 'list',
        'datasets.COMPAS.held_out_most_accurate.selection_rates[]': 'float',
        'datasets.COMPAS.held_out_most_accurate.worst_disparity': 'float',
        'datasets.COMPAS.held_out_most_accurate.worst_disparity_upper': 'float',
        'datasets.COMPAS.most_accurate': 'int',
        'datasets.COMPAS.n_features': 'int',
        'datasets.COMPAS.protected': 'str',
        'datasets.COMPAS.rows': 'object',
        'datasets.COMPAS.rows.held_out': 'int',
        'datasets.COMPAS.rows.selection': 'int',
        'elapsed_seconds': 'float',
        'machine': 'object',
        'machine.cpus': 'int',
        'machine.load_average_end': 'list',
        'machine.load_average_end[]': 'float',
        'machine.load_average_start': 'list',
        'machine.load_average_start[]': 'float',
        'versions': 'object',
        'versions.fairlearn': 'str',
        'versions.scikit-learn': 'str',
    },
}


def _yes(flag):
    return "yes" if flag else "no"


def _held_out(audit):
    rates = ", ".join(f"{group} {rate:.3f}" for group, rate in zip(
        audit["groups"], audit["selection_rates"], strict=True))
    return (f"error {audit['error']:.3f}, selection rates {rates}, worst disparity "
            f"{audit['worst_disparity']:.3f} (upper bound {audit['worst_disparity_upper']:.3f}: "
            f"{'certified' if audit['certified'] else 'not certified'})")


def _dataset(name, res, config):
    rows = res["candidates"]
    chosen, accurate = rows[res["chosen"]], rows[res["most_accurate"]]
    out = [f"**{name}** ({res['rows']['selection']:,} rows for the selection, "
           f"{res['rows']['held_out']:,} held out; protected ``{res['protected']}``; "
           f"{res['n_features']} features; per-fold level "
           f"{100 * res['fold_confidence_level']:.1f}%):\n"]
    table_rows = [
        [row["candidate"], f"{row['validation_error']:.3f}", f"{row['statistic']:.3f}",
         f"{row['upper_bound']:.3f}", _yes(row["passes"]),
         "**chosen**" if k == res["chosen"] else "—"]
        for k, row in enumerate(rows)
    ]
    out.append(table(["candidate", "validation error", "worst disparity (mean of folds)",
                       "worst fold's upper bound", "certified", "choice"], table_rows))
    n_pass = sum(row["passes"] for row in rows)
    if chosen["passes"]:
        verdict = (f"{n_pass} of {len(rows)} candidates are certified; the most accurate "
                   f"of them is **{chosen['candidate']}** (validation error "
                   f"{chosen['validation_error']:.3f})")
    else:
        verdict = (f"no candidate is certified; the fairest, {chosen['candidate']}, is kept "
                   "(``on_none='fairest'``)")
    if res["most_accurate"] == res["chosen"]:
        contrast = "it is also the most accurate candidate."
    else:
        contrast = (f"the most accurate candidate, {accurate['candidate']} (validation error "
                    f"{accurate['validation_error']:.3f}), is "
                    f"{'certified' if accurate['passes'] else 'not certified'} (upper bound "
                    f"{accurate['upper_bound']:.3f} against ε₀ = {config['epsilon0']:g}).")
    out.append(f"\n{verdict}; {contrast} On the held-out rows, the chosen model: "
               f"{_held_out(res['held_out_chosen'])}; the most accurate one: "
               f"{_held_out(res['held_out_most_accurate'])}.\n")
    faith = res.get("faith")
    if faith:
        f_rows = faith["candidates"]
        f_chosen = f_rows[faith["chosen"]]
        passing = [row["candidate"] for row in f_rows if row["passes"]]
        mitigators = [row for row in f_rows if not row["candidate"].startswith("l1")]
        parts = "; ".join(
            f"{row['candidate']} ψ̂ = {row['statistic']:.3f} (mean of folds), worst fold's "
            f"lower bound {row['lower_bound']:.3f} ({'passes' if row['passes'] else 'rejected'})"
            for row in mitigators)
        out.append(
            f"\nThe same candidates under the FaiTH criterion (δ = {faith['delta']:g}, ε = 0): "
            f"{len(passing)} of {len(f_rows)} pass and **{f_chosen['candidate']}** is chosen "
            f"(validation error {f_chosen['validation_error']:.3f}). The mitigators: {parts}. "
            "Group fairness of the selection rates and individual fairness (moving a person "
            "to the other group, the rest fixed) are different requirements.\n")
    return "\n".join(out)


def render_selector():
    """``{path: text}`` of the fragment (for ``render_all``)."""
    data = load("selector_fairlearn.json")
    config, versions, machine = data["config"], data["versions"], data["machine"]
    head = (
        f"``{data['command']}`` (fairlearn {versions['fairlearn']}, scikit-learn "
        f"{versions['scikit-learn']}; {data['elapsed_seconds']:.0f} s on "
        f"{machine['cpus']} shared cores, load average "
        f"{machine['load_average_start'][0]:.1f} at the start and "
        f"{machine['load_average_end'][0]:.1f} at the end). Criterion: every group's "
        f"selection rate within ±{config['epsilon0']:g} of the overall rate, simultaneous "
        f"bounds at {100 * (1 - config['alpha']):.0f}% over {config['n_folds']} folds, "
        f"B = {config['resamples']}.\n"
    )
    body = [_dataset(name, res, config) for name, res in data["datasets"].items()]
    return {FRAGMENT: GENERATED + "\n" + head + "\n" + "\n".join(body)}
