"""The user guide quotes ``benchmarks/results/faith_scale.json`` only through a generated file."""

import importlib.util
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _module():
    spec = importlib.util.spec_from_file_location(
        "make_faith_scale_figures", ROOT / "doc" / "make_faith_scale_figures.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scale_figures_are_up_to_date():
    committed = (ROOT / "doc" / "user_guide" / "faith_scale_figures.inc").read_text(
        encoding="utf-8"
    )
    assert _module().render() == committed, "run: python doc/make_faith_scale_figures.py"


def test_committed_benchmark_covers_the_acceptance_configurations():
    results = json.loads(
        (ROOT / "benchmarks" / "results" / "faith_scale.json").read_text(encoding="utf-8")
    )
    assert not results["quick"]
    sizes = {row["n"] for row in results["scaling"]}
    assert {1_000, 1_000_000} <= sizes
    paths = {(row["n"], row["path"]) for row in results["scaling"] if "audit_seconds" in row}
    assert (1_000, "dense") in paths and (1_000_000, "nearest") in paths
    assert results["adult"]["n"] == 45_222 and results["cli"]["n"] == 200_000
    assert all(len(row["load_average_before"]) == 3
               for row in results["scaling"] if "audit_seconds" in row)
    assert len(results["machine"]["load_average_start"]) == 3
