"""Ctrl-C stops a sweep: queued points cancelled, kernels and workers gone, completed points intact, exit 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from _cli_helpers import marked_processes

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
REPO = Path(__file__).resolve().parent.parent


def _wait_for(condition, timeout: float, what: str) -> None:
    t0 = time.monotonic()
    while not condition():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


_marked = marked_processes


def _kernels(pid: int) -> list[psutil.Process]:
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for c in kids:
        try:
            if "ipykernel" in " ".join(c.cmdline()):
                out.append(c)
        except psutil.Error:
            continue
    return out


@pytest.mark.parametrize("where", [["--jobs", "2"], ["--cluster", "local:2"]], ids=["local", "dask"])
def test_sigint_cancels_the_sweep_and_leaves_no_orphan(tmp_path, where):
    out = tmp_path / "sweep"
    marker = uuid.uuid4().hex
    env = dict(os.environ, HGUTILS_TEST_MARKER=marker)
    cmd = [sys.executable, "-m", "hgutils", "sweep", str(TINY), "-p", "sleep", "0,60,61"]
    cmd += [*where, "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        done = out / "smoke" / "sleep=0" / "run.json"
        _wait_for(done.exists, 120, "the first point to complete")
        # the two other points are now running (one per worker), each in a kernel
        _wait_for(lambda: len(_kernels(proc.pid)) == 2, 60, "two running kernels")
        started = _marked(marker)
        assert len(started) >= 5  # the CLI, two workers, two kernels (and Dask's helpers)
        proc.send_signal(signal.SIGINT)
        text, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, text
    assert "1 ran, 0 skipped (already complete for this scale and code), 0 failed, 2 not run (interrupted)" in text
    assert "interrupted: rerun the same command to resume" in text
    # the completed point is intact and still complete; the interrupted ones left nothing
    record = json.loads(done.read_text())
    for rel, size in record["files"].items():
        assert (done.parent / rel).stat().st_size == size
    assert sorted(p.name for p in (out / "smoke").iterdir()) == ["sleep=0"]
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]
    # no process the sweep started survives it (workers, kernels)
    _wait_for(lambda: not _marked(marker), 15, "every process of the sweep to exit")
