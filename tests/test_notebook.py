"""The notebook of ``doc/examples`` runs in a real Jupyter kernel, as a user would run it.

nbclient executes every cell in an IPython kernel (ipykernel's own kernel spec, on this
Python); its outputs must hold the results' HTML summaries (verdict, guarantee, figure) and
the progress bars of the bootstraps and of the model selection.
"""

from __future__ import annotations

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = (pathlib.Path(__file__).resolve().parent.parent / "doc" / "examples"
            / "audit_in_a_notebook.ipynb")


def _outputs(cell, kind):
    """Text of the cell's outputs of one kind: "text/html", "stderr" or "stdout"."""
    out = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream" and output["name"] == kind:
            out.append(output["text"])
        elif kind in output.get("data", {}):
            out.append(output["data"][kind])
    return "".join(out)


@pytest.mark.real_data
def test_notebook_runs_and_shows_summaries_and_progress(compas_bunch, tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(o["output_type"] != "error" for cell in code for o in cell.outputs)
    faith, flags, bounds, selector, report = (_outputs(code[k], "text/html")
                                              for k in (1, 2, 3, 4, 5))
    for html in (faith, flags, bounds, selector):
        assert 'class="skfair-result"' in html and "Verdict:" in html
        assert "Guarantee." in html and '<img src="data:image/png;base64,' in html
    assert "FaithResult: individual fairness (FaiTH)" in faith
    assert "verdict unfair" in flags and "race=African-American" in flags
    assert "FairModelSelector: δ-fair model selection" in selector
    assert "sk-top-container" in selector  # scikit-learn's diagram stays
    assert "COMPAS audit" in report and "<section" in report
    # progress: the bootstraps (1,000 and 2,000 resamples) and the 30 candidates × 1 fold
    assert "bootstrap" in _outputs(code[1], "stderr")
    assert "1000/1000" in _outputs(code[1], "stderr")
    assert "2000/2000" in _outputs(code[3], "stderr")
    progress = _outputs(code[4], "stderr")
    assert "30 candidates × 1 fold" in progress and "30/30" in progress
    assert "bootstrap:" not in _outputs(code[2], "stderr")  # flagging has no bootstrap
