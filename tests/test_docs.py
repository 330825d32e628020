"""The documentation's examples run (on the real data, which CI always has)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "doc" / "examples").glob("*.py"))


def test_there_are_examples():
    assert EXAMPLES


@pytest.mark.real_data
@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, compas_bunch, tmp_path):
    out = tmp_path / "figure.png"
    done = subprocess.run(
        [sys.executable, str(script), str(out)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.exists() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _tables_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_reproduction_tables", ROOT / "doc" / "make_reproduction_tables.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reproduction_page_is_up_to_date():
    # The page quotes the committed results only through this script.
    module = _tables_module()
    committed = (ROOT / "doc" / "reproduction_tables.rst").read_text(encoding="utf-8")
    assert module.render() == committed, "run: python doc/make_reproduction_tables.py"


def test_fair_metric_page_is_up_to_date():
    # "Choosing a fair metric" quotes bench_fair_metric_compas.py only through the script.
    for path, text in _tables_module().render_fair_metric().items():
        assert path.read_text(encoding="utf-8") == text, (
            "run: python doc/make_reproduction_tables.py")
