"""The package as a user meets it: import, version, README quick start, CI, command line."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

import skfair_audit

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _readme_command(name):
    path = ROOT / ".ci" / "readme_command.py"
    spec = importlib.util.spec_from_file_location("readme_command", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.readme_command(name)


def test_version():
    assert isinstance(skfair_audit.__version__, str)
    assert skfair_audit.__version__[0].isdigit()


def test_import_is_light():
    code = (
        "import sys, skfair_audit; "
        "heavy = [m for m in ('pandas', 'matplotlib', 'dask', 'distributed') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute"):
        skfair_audit.not_a_thing  # noqa: B018


def test_readme_quick_start_has_two_commands_and_ci_runs_the_test_one():
    main, test = _readme_command("main"), _readme_command("test")
    assert "pip install" in main and "demo" in main
    assert "pip install" in test and "pytest" in test
    ci = (ROOT / ".ci" / "run").read_text()
    # CI evaluates the README's own test command (read from the README at run time).
    assert "readme_command.py test" in ci and 'eval "$test_cmd"' in ci
    assert "SKFAIR_AUDIT_DATA" in ci and "shared/data" in ci
    readme = (ROOT / "README.md").read_text()
    assert "SKFAIR_AUDIT_DATA" in readme


def test_readme_says_offline_first_and_step_1_installs_what_the_command_line_needs():
    # Was: the offline note came after the commands that download; step 1 installed
    # ".[pandas,plot]", without skops, which `skfair-audit faith` needs to load a model.
    import re

    readme = (ROOT / "README.md").read_text()
    quick = readme[readme.index("## Quick start"):readme.index("## Reproducing the papers")]
    offline = quick.index("SKFAIR_AUDIT_DATA")
    assert offline < quick.index("<!-- command: main -->") < quick.index("<!-- command: test -->")
    assert "Offline" in quick[:offline + 200]
    extras = re.search(r'"\.\[([a-z,]+)\]"', _readme_command("main")).group(1).split(",")
    pyproject = (ROOT / "pyproject.toml").read_text()
    optional = pyproject.split("[project.optional-dependencies]")[1].split("\n[")[0]
    declared = set(re.findall(r"^(\w+) = \[", optional, re.M))
    assert {"pandas", "plot", "skops"} <= set(extras) <= declared
    assert re.search(r'^skops = \["skops>=', optional, re.M)


def _extras_of_pyproject():
    """``{extra: set of package names}`` of pyproject.toml (no versions, no extras)."""
    import re

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {extra: {re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower()
                    for requirement in requirements}
            for extra, requirements in project["optional-dependencies"].items()}


def test_readme_extras_table_lists_what_each_extra_installs():
    # Was: the `test` row omitted numpydoc, nbformat and distributed.
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Installation extras"):].split("\n\n")[1]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1]
    extras = _extras_of_pyproject()
    assert set(rows) == set(extras)
    for extra, packages in extras.items():
        if extra == "all":
            assert rows[extra] == "everything above"
            assert extras["all"] == {"skfair_audit"}  # a self-reference to the others
            continue
        listed = {p.strip().lower() for p in rows[extra].split(",")}
        assert listed == packages, (extra, listed ^ packages)


def test_docs_give_no_path_of_one_machine():
    # Was: `export SKFAIR_AUDIT_DATA=../shared/data` in the README and
    # `SKFAIR_AUDIT_DATA=/work/shared/data` / `/tmp/fa/bin/python` in benchmark docstrings.
    import re

    pages = [ROOT / "README.md", *(ROOT / "benchmarks").glob("*.py"),
             *(ROOT / "doc" / "examples").glob("*.py")]
    pattern = re.compile(r"(?<![\w.])(/work/|/tmp/|/root/|/home/\w|\.\./shared)")
    found = {str(p.relative_to(ROOT)): pattern.findall(p.read_text(encoding="utf-8"))
             for p in pages}
    assert not {page: hits for page, hits in found.items() if hits}


def test_readme_says_how_long_the_tests_take():
    import re

    readme = (ROOT / "README.md").read_text()
    test = readme[readme.index("<!-- command: test -->"):readme.index("## Reproducing")]
    assert re.search(r"takes about \d+ minutes", test), test


def test_cli_help_and_errors(capsys, monkeypatch, tmp_path, closed_port_url):
    import dataclasses

    from skfair_audit.cli._main import EXIT_ERROR, main
    from skfair_audit.datasets import _compas

    # No data and no network: one line on stderr, exit code 2, no traceback.
    offline = dataclasses.replace(_compas.COMPAS_TWO_YEARS, url=closed_port_url)
    monkeypatch.setattr(_compas, "COMPAS_TWO_YEARS", offline)

    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "Exit codes" in capsys.readouterr().out
    code = main(["demo", "--data-home", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == EXIT_ERROR
    # progress lines first, then the error in one line
    assert err.splitlines()[-1].startswith("skfair-audit: error:") and "Traceback" not in err


@pytest.mark.real_data
def test_demo_runs_on_real_data(compas_bunch, capsys, tmp_path, parse_report):
    """The README's main job end to end (``--fast``: fewer resamples, candidates, splits)."""
    import json
    import re

    from skfair_audit.cli._demo import DEMO_EPSILONS, N_SPLITS_FAST
    from skfair_audit.cli._main import EXIT_PASS, main
    from skfair_audit.faith import FaithAuditor

    output = tmp_path / "report"
    assert main(["demo", "--fast", "--output", str(output)]) == EXIT_PASS
    out, err = capsys.readouterr()
    assert "5,278 defendants" in out and "6,172 defendants" in out
    assert "delta = 0.04" in out
    # FaiTH at eps = 0 (the default budget) and at the documented eps > 0 of the COMPAS
    # Table 1 benchmark, on the headline split and over several splits
    assert DEMO_EPSILONS[0] == FaithAuditor(None).epsilon == 0.0 < DEMO_EPSILONS[1]
    assert "FaiTH audit (uniform bounds, n=1584, K=144 cells, epsilon=0)" in out
    assert "FaiTH audit (uniform bounds, n=1584, K=144 cells, epsilon=0.1)" in out
    assert f"Over {N_SPLITS_FAST} train/audit splits (seeds 0-{N_SPLITS_FAST - 1}" in out
    assert "conditional on one fitted model" in out
    # the paper's PPV comparison: African-American minus Caucasian PPV is +0.0547
    assert "+0.0547" in out
    assert "3 group(s) flagged: sex=Female;" in out
    assert "13 of 72 non-empty groups flagged: race=African-American;" in out
    assert "Report written to" in out and "FaiTH" in err  # progress on stderr
    assert "m-out-of-n" not in err  # the progress names the method that runs (uniform)

    parsed = parse_report((output / "report.html").read_text(), folder=output)
    # two heat maps, the splits, PPV bounds, two flag plots, trade-off
    assert len(parsed.images) == 7
    assert all(i["src"].startswith("data:image/png;base64,iVBORw0KGgo") for i in parsed.images)
    report = json.loads((output / "report.json").read_text())
    sections = {s["key"]: s for s in report["sections"]}
    assert list(sections) == ["data", "faith", "faith_eps1", "faith_splits", "ppv_bounds",
                              "ppv_flags", "fpr_flags", "selection"]
    assert report["command"].startswith("skfair-audit demo --fast")
    # what to install to rerun it: the data loaders and the figures (was a bare
    # "pip install .", which exits 2 in a fresh environment: pandas is required)
    assert report["install"].startswith('python -m pip install ".[pandas,plot]"')
    markdown = (output / "report.md").read_text()
    assert markdown.startswith("# skfair_audit demonstration")
    links = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", markdown)
    assert len(links) == 7 and all((output / link).is_file() for link in links)
    # the guarantee says what it is conditional on, and the verdict's share over the splits
    splits = sections["faith_splits"]
    rows = splits["tables"][0]["rows"]
    assert [r[0] for r in rows] == list(range(N_SPLITS_FAST))
    rejected = sum(r[4] for r in rows)
    assert f"rejected for the models of {rejected} of {N_SPLITS_FAST} splits" in \
        sections["faith"]["guarantee"]
    assert "about this one fitted model" in sections["faith"]["guarantee"]
    assert f"rejected for the models of {rejected} of {N_SPLITS_FAST}" in report["outcome"]
    headline = sections["faith"]["summary"]
    assert rows[0][2] == headline["statistic ψ̂"] and rows[0][3] == headline[
        "one-sided lower bound"]
    assert sections["faith_eps1"]["summary"]["ε (budget)"] == 0.1
    # the data section shows the rate of the data it describes (the terminal's 0.470)
    data = sections["data"]["summary"]
    assert f"{data['FaiTH data: two-year recidivism rate']:.3f}" == "0.470"
    assert f"two-year recidivism rate: {compas_bunch.target.mean():.3f}" in out
    assert f"{data['group-audit data: two-year recidivism rate']:.4f}" == "0.4551"
    # the FPR figure shows the 13 flagged groups first, and says so
    caption = sections["fpr_flags"]["figures"][0]["caption"]
    assert "the 13 group(s) flagged first (red)" in caption and "lowest" not in caption
