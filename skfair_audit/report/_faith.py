"""The report section of a FaiTH audit (individual fairness)."""

from __future__ import annotations

from ._report import Figure, Section, Table


def faith_section(result, *, title="Individual fairness: FaiTH audit", key="faith",
                  description="", heatmap_rows=None, heatmap_columns=None, max_moves=10,
                  plot=True, conditional_on=None):
    """Section of a :class:`~skfair_audit.faith.FaithResult`: decision, bounds, moves, heat map.

    Built from the result's protocol (:class:`~skfair_audit.results.AuditResult`): its
    verdict, notes, key figures, guarantee, table (the moves of the worst-case plan) and
    figure (the heat map), plus the table of its fair metric's free directions.

    Parameters
    ----------
    result : FaithResult
    title, key : str
    description : str
        What was audited (model, data, fair metric), in plain words.
    heatmap_rows, heatmap_columns : list of str, optional
        Features on the heat map's rows and columns (see ``FaithResult.plot``).
    max_moves : int
        Largest moves of the adversarial plan to tabulate.
    plot : bool
        Embed the heat map (needs matplotlib).
    conditional_on : str, optional
        What the guarantee is conditional on beyond the fitted model, in a sentence (e.g.
        how the verdict varies over other train/audit splits); appended to the guarantee.

    Returns
    -------
    Section
    """
    paragraphs = [description] if description else []
    verdict = result.verdict()
    if verdict.gated:
        paragraphs.append(verdict.details)
    paragraphs.extend(result.notes())
    moves = result.table()
    tables = _metric_tables(result)
    if moves.rows:
        tables.append(Table(
            f"Largest moves of the worst-case plan (of {len(moves.rows)}): who would be "
            "treated worse in another cell", moves.labels,
            tuple((source, target, round(count, 1), mass)
                  for source, target, count, mass in moves.rows[:max_moves]),
        ))
    figures = []
    shown = result.figure(rows=heatmap_rows, columns=heatmap_columns) if plot else None
    if shown is not None:
        figures.append(Figure.draw(f"{key}_heatmap", *shown))
    guarantee = result.guarantee() + (f" {conditional_on}" if conditional_on else "")
    return Section(key=key, title=title, guarantee=guarantee,
                   paragraphs=tuple(paragraphs), summary=result.key_figures(),
                   tables=tuple(tables), figures=tuple(figures))


def _metric_tables(result):
    """The sources of the metric's free directions, with the AUC of their regressions."""
    diagnostics = result.metric_diagnostics
    if diagnostics is None or not diagnostics.sources:
        return []
    return [Table(
        f"Fair metric ({diagnostics.metric}): {diagnostics.n_free} of the "
        f"{diagnostics.n_non_protected} directions in which the non-protected features vary are "
        "free. Candidate sensitive directions, how well the features predict each protected "
        "level (cross-validated AUC), and the free directions each brought",
        diagnostics.table().labels, diagnostics.table().rows,
    )]
