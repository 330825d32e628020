"""``bench_progress.py`` → ``doc/user_guide/progress_results.inc`` (the notebooks page).

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import load, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "progress.json": {
        "jobs": "object",
        "jobs.FaiTH audit": "object",
        "jobs.FaiTH audit.identical": "bool",
        "jobs.FaiTH audit.longest_wait_s": "float",
        "jobs.FaiTH audit.moves": "int",
        "jobs.FaiTH audit.ratio": "float",
        "jobs.FaiTH audit.time_silent_s": "float",
        "jobs.FaiTH audit.time_with_bar_s": "float",
        "jobs.group bootstrap": "object",
        "jobs.group bootstrap.identical": "bool",
        "jobs.group bootstrap.longest_wait_s": "float",
        "jobs.group bootstrap.moves": "int",
        "jobs.group bootstrap.ratio": "float",
        "jobs.group bootstrap.time_silent_s": "float",
        "jobs.group bootstrap.time_with_bar_s": "float",
        "jobs.model selection": "object",
        "jobs.model selection.identical": "bool",
        "jobs.model selection.longest_wait_s": "float",
        "jobs.model selection.moves": "int",
        "jobs.model selection.ratio": "float",
        "jobs.model selection.time_silent_s": "float",
        "jobs.model selection.time_with_bar_s": "float",
        "machine": "object",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "repeat": "int",
        "sizes": "object",
        "sizes.faith": "int",
        "sizes.group": "int",
        "sizes.selection": "int",
    },
}


def progress_guide():
    d = load("progress.json")
    m = d["machine"]
    rows = [
        [name, f"{d['sizes'][key]:,}", f"{j['moves']}", f"{j['longest_wait_s']:.2f} s",
         f"{j['time_silent_s']:.2f} s", f"{j['time_with_bar_s']:.2f} s", f"{j['ratio']:.2f}",
         "yes" if j["identical"] else "NO"]
        for (name, j), key in zip(d["jobs"].items(), ("group", "faith", "selection"),
                                  strict=True)
    ]
    return (
        "``bench_progress.py``: each job run with a stand-in for the bar that records when it "
        "moves, then without the bar and with tqdm's bar (writing to ``/dev/null``), "
        f"alternated, best of {d['repeat']} each, in the same run (load average "
        f"{m['load_average_start'][0]:.1f} at the start, {m['load_average_end'][0]:.1f} at "
        "the end: the machine was shared, so ratios near 1 are within its noise).\n\n"
        + table(["job", "rows", "moves", "longest wait", "silent", "with the bar",
                 "ratio", "same result"], rows)
    )
