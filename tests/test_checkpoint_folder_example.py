"""docs/examples/checkpoint_folder.py (shown in docs/your-own-networks.md, "A folder of checkpoints") runs
as a reader runs it: a real training loop saves state_dicts into one folder per network, and
Zoo.from_checkpoints reads the folders (issue 51)."""

from __future__ import annotations

import os
import subprocess
import sys

from hgutils.repro import REPO_ROOT

SCRIPT = REPO_ROOT / "docs" / "examples" / "checkpoint_folder.py"


def test_the_checkpoint_folder_example_runs_and_prints_what_the_guide_says():
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in run.stdout.strip().splitlines())
    assert lines["steps read from the file names"] == "[0, 25, 50, 75, 100]"
    assert lines["W0 [networks, snapshots, out, in]"] == "(3, 5, 16, 2)"
    assert lines["the zoo's last network at its last step computes the trained net"] == "True"
    assert lines["the files of steps 0 and 50"] == "[0, 50]"
    assert "identical" not in run.stderr  # files are copies: no no-clone warning


def test_the_guide_shows_the_script_as_it_runs():
    page = (REPO_ROOT / "docs" / "your-own-networks.md").read_text(encoding="utf-8")
    blocks = page.split("```python\n")[1:]
    code = SCRIPT.read_text(encoding="utf-8")
    body = code[code.index('"""', 3) + 3 :].strip()
    assert any(b.split("```")[0].strip() == body for b in blocks), "docs/your-own-networks.md: example block differs"
