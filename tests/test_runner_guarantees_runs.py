"""What the runner guarantees about what a run writes (issue 37), on copies of the tiny test notebook:
a sweep keeps every value's result, its cache lies under ``--out``, its files get the user's umask,
its kernels talk over encrypted channels, and an interrupted run leaves no kernel connection file
and no empty folder (docs/guarantees.md). Each test starts one or two kernels (a few seconds each).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from hgutils import runner

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture()
def probe(tmp_path: Path) -> Path:
    """The tiny notebook plus a cell that stores an entry in the cache (``cached("probe", x, ...)``)."""
    nb = nbformat.read(TINY, as_version=4)
    nb.cells.append(
        nbformat.v4.new_code_cell(
            'import torch\nfrom hgutils.repro import cached\ncached("probe", x, lambda: torch.ones(3))'
        )
    )
    path = tmp_path / "notebooks" / "probe.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return path


def test_a_sweep_keeps_each_signs_result_and_writes_only_under_out(tmp_path, probe, monkeypatch, capfd):
    monkeypatch.delenv("HGUTILS_CACHE", raising=False)
    out = tmp_path / "sweep"
    res = runner.sweep(probe, {"x": [-1, 1]}, out=out, echo=lambda s: None)
    assert [d.name for d in res.ran] == ["x=-1", "x=1"] and not res.failed
    for d, x in zip(res.ran, (-1, 1)):
        assert json.loads((d / "run.json").read_text())["key"]["parameters"]["x"] == x
    again = runner.sweep(probe, {"x": [-1]}, out=out, echo=lambda s: None)
    assert [d.name for d in again.skipped] == ["x=-1"] and not again.ran
    # the cache of the run is under --out, not in the repository
    assert len(list((out / ".cache" / "probe").glob("*.pt"))) == 2
    assert not (REPO / ".cache" / "probe").exists()
    # files under the user's umask (not 0600), and Jupyter's plain-TCP warning never printed
    mask = os.umask(0)
    os.umask(mask)
    modes = {p.relative_to(out).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_file()}
    assert modes and set(modes.values()) == {0o666 & ~mask}, modes
    assert "without encryption" not in capfd.readouterr().err


def _kernel_started(pid: int) -> bool:
    try:
        return any("ipykernel" in " ".join(c.cmdline()) for c in psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return False


def test_an_interrupt_leaves_no_connection_file_and_no_empty_folder(tmp_path):
    nbdir, tmp, out = tmp_path / "notebooks", tmp_path / "tmp", tmp_path / "runs"
    nbdir.mkdir()
    tmp.mkdir()
    (nbdir / "01_tiny.ipynb").write_bytes(TINY.read_bytes())
    cmd = [sys.executable, "-m", "hgutils", "reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke"]
    cmd += ["--out", str(out), "-p", "sleep", "60"]
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        t0 = time.monotonic()
        while not _kernel_started(proc.pid):
            assert time.monotonic() - t0 < 120, "no kernel started"
            time.sleep(0.2)
        time.sleep(2.0)  # the kernel is up and has read its connection file
        proc.send_signal(signal.SIGINT)
        text, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, text
    assert sorted(p.name for p in tmp.rglob("*")) == []  # no leftover tmp*.json connection file, no staging folder
    assert not out.exists()  # the run created it and completed nothing in it
