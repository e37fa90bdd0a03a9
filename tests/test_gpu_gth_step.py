"""benchmarks/gpu_gth_step.py: its CPU toy run writes every eager entry with positive timings, and bad
arguments are refused with one ``error:`` line before anything is written (docs/gpu.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_gth_step.py"


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HGUTILS_PROGRESS="0")
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def test_tiny_cpu_run_times_every_eager_entry(tmp_path):
    r = _run([str(tmp_path), "--device", "cpu", "--tiny"])
    assert r.returncode == 0, r.stderr[-2000:]
    rep = json.loads((tmp_path / "gth_step.json").read_text())
    assert (rep["device"], rep["T"], rep["batch"]) == ("cpu", 3, 4)
    assert set(rep["entries"]) == {f"{c} {s}" for c in ("default", "large") for s in ("reconstruction", "joint")}
    for key, e in rep["entries"].items():
        assert e["status"] == "ok", (key, e)
        assert 0 < e["step_ms_range"][0] <= e["step_ms"] <= e["step_ms_range"][1], (key, e)
        assert e["snapshots_per_s"] == pytest.approx(4 * 3 / (e["step_ms"] / 1000), rel=0.01)
    assert not list(tmp_path.glob("*.tmp"))  # written atomically


def test_only_runs_the_named_entries(tmp_path):
    r = _run([str(tmp_path), "--device", "cpu", "--tiny", "--only", "large joint"])
    assert r.returncode == 0, r.stderr[-2000:]
    assert list(json.loads((tmp_path / "gth_step.json").read_text())["entries"]) == ["large joint"]


@pytest.mark.parametrize(
    "args",
    [
        ["--device", "tpu"],
        ["--device", "cpu", "--T", "0"],
        ["--device", "cpu", "--minutes", "0"],
        ["--device", "cpu", "--batch", "1"],
        ["--device", "cpu", "--only", "default joint,bogus"],
    ]
    + ([] if torch.cuda.is_available() else [["--device", "cuda"]]),
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, args):
    out = tmp_path / "out"
    r = _run([str(out), *args])
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()
