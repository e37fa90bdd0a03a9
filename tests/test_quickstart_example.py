"""docs/examples/quickstart.py (embedded in the README and docs/your-own-networks.md) runs as a reader runs it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from hgutils.repro import REPO_ROOT

SCRIPT = REPO_ROOT / "docs" / "examples" / "quickstart.py"


def test_quickstart_runs_and_prints_what_it_promises():
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env["HGUTILS_PROGRESS"] = "0"
    run = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in run.stdout.strip().splitlines())
    recon = ast.literal_eval(lines["reconstruction of the 2 networks held out of training"])
    assert {"link_auc", "sign_acc", "sign_majority", "mag_r2", "mag_r2_block_mean"} <= set(recon)
    # 6 snapshots (steps 0..100 every 20); nodes: 2 + 16 + 16 + 2 neurons and 3 bias nodes; dim 8
    assert lines["node coordinates in the Poincaré ball"] == "(2, 6, 39, 8)"
    assert 0.0 < float(lines["MSA distance between networks 0 and 1 (hidden layer 2)"]) < 1.0
    # frequencies on the two axes and the diagonal: the identity, the half turn and the diagonal mirrors
    assert ast.literal_eval(lines["symmetries my PE lifts"]) == ["R0", "R180", "S45", "S135"]


def test_the_docs_page_shows_the_script_as_it_runs():
    """docs/your-own-networks.md carries the script's code verbatim (its docstring aside), so the two cannot drift."""
    page = (REPO_ROOT / "docs" / "your-own-networks.md").read_text(encoding="utf-8")
    blocks = page.split("```python\n")[1:]
    code = SCRIPT.read_text(encoding="utf-8")
    body = code[code.index('"""', 3) + 3 :].strip()
    assert any(b.split("```")[0].strip() == body for b in blocks), "docs/your-own-networks.md: quickstart block differs"
