"""The README's library example runs as it stands, and the README's total medium time is the presets' sum.

The example is the fenced ``python`` block between ``<!-- LIBRARY-EXAMPLE:START -->`` and
``<!-- LIBRARY-EXAMPLE:END -->``; it is executed in a fresh interpreter with the repository on the path.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

from hgutils.runner.notebooks import driver_module, numbered_notebooks

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
START, END = "<!-- LIBRARY-EXAMPLE:START -->", "<!-- LIBRARY-EXAMPLE:END -->"


def readme_example() -> str:
    """The code of the README's library example (the one fenced python block between the markers)."""
    assert START in README and END in README, f"README has no {START} ... {END} block"
    blocks = re.findall(r"```python\n(.*?)```", README.split(START, 1)[1].split(END, 1)[0], re.S)
    assert len(blocks) == 1, f"expected one python block between the library-example markers; got {len(blocks)}"
    return blocks[0]


def test_readme_library_example_runs():
    code = readme_example()
    lines = [ln for ln in code.splitlines() if ln.strip()]
    assert 10 <= len(lines) <= 15, f"the README's library example should be 10-15 lines; it has {len(lines)}"
    assert "from hgutils" in code
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HGUTILS_PROGRESS="0")
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, f"the README's library example failed:\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), "the README's library example printed nothing"


def test_readme_states_the_measured_total_medium_time():
    costs = {}
    for nb in numbered_notebooks():
        preset = getattr(importlib.import_module(driver_module(nb)), "CONFIG", None)
        cost = getattr(preset, "COST_MINUTES", {}).get("medium")
        if cost is not None:
            costs[nb.stem[:2]] = cost
    assert costs, "no notebook preset records a medium COST_MINUTES"
    total = round(sum(costs.values()))
    assert f"about {total} min" in README, f"README should state the medium total, about {total} min"
    listed = ", ".join(f"{k} {round(v)}" for k, v in sorted(costs.items()))
    assert f"({'`COST_MINUTES`'} in each notebook's preset: {listed} minutes)" in README, (
        f"README's per-notebook medium times should read: {listed}"
    )


def test_readme_is_a_landing_page():
    lines = README.splitlines()
    assert len(lines) <= 200, f"the README is {len(lines)} lines; the manual belongs in docs/"
    longest = max(len(ln) for ln in lines if not ln.startswith(("| [", "@", "[![")))
    assert longest <= 200, f"a README line of {longest} characters outside the generated tables and citations"
