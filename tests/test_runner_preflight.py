"""Pre-flight checks before any notebook starts, one run per output root, Ctrl-C from the first moment,
``claims`` reading what ``reproduce`` wrote, and a device run that used the CPU saying so.

Every refused run: exit status 2, one ``error:`` line, nothing written. The notebooks run here are
copies of tests/notebooks/tiny_claims.ipynb (a few seconds each).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import psutil
import pytest
from _cli_helpers import files_under, marked_processes, one_error_line

from hgutils import runner
from hgutils.__main__ import main
from hgutils.presets import Preset
from hgutils.runner import preflight
from hgutils.runner.preflight import LOCK_NAME, RunLock, check_device, check_writable

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
REPO = Path(__file__).resolve().parent.parent
CPU_ONLY = {"version": "2.13.0+cpu", "cuda": None, "hip": None}
CUDA_BUILD = {"version": "2.13.0+cu128", "cuda": "12.8", "hip": None}


@pytest.fixture()
def nbdir(tmp_path: Path) -> Path:
    d = tmp_path / "notebooks"
    d.mkdir()
    shutil.copy(TINY, d / "01_tiny.ipynb")
    return d


# --------------------------------------------------------------------------------------------
# the device
# --------------------------------------------------------------------------------------------
def test_torch_build_is_read_without_importing_torch():
    code = (
        "import sys; from hgutils.runner.preflight import torch_build; b = torch_build(); print('torch' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert res.stdout.strip() == "False", res.stderr
    import torch

    build = preflight.torch_build()
    assert build["version"] == torch.__version__ and build["cuda"] == torch.version.cuda


def test_check_device():
    assert check_device("cpu") == "cpu"
    with pytest.raises(
        ValueError, match=r"CPU-only build \(no CUDA\); install a CUDA build of torch with `make torch-cuda`"
    ):
        check_device("cuda", build=lambda: CPU_ONLY)
    with pytest.raises(ValueError, match="torch==2.13.0` from PyPI"):
        check_device("cuda:0", build=lambda: CPU_ONLY)
    with pytest.raises(ValueError, match=r"built for CUDA 12.8 but sees no GPU"):
        check_device("cuda", build=lambda: CUDA_BUILD, cuda_devices=lambda: 0)
    assert check_device("cuda", build=lambda: CUDA_BUILD, cuda_devices=lambda: 1) == "cuda"
    assert check_device("cuda:0", build=lambda: CUDA_BUILD, cuda_devices=lambda: 1) == "cuda:0"
    with pytest.raises(ValueError, match=r"this machine has 1 CUDA device\(s\), cuda:0 to cuda:0"):
        check_device("cuda:1", build=lambda: CUDA_BUILD, cuda_devices=lambda: 1)
    with pytest.raises(ValueError, match="must be 'cpu', 'cuda', 'cuda:N' or 'mps'"):
        check_device("gpu")
    if sys.platform != "darwin":
        with pytest.raises(ValueError, match="no usable MPS backend"):
            check_device("mps", build=lambda: CPU_ONLY, mps_available=lambda: True)


# --------------------------------------------------------------------------------------------
# pre-flight errors from the command line: exit 2, one line, nothing written
# --------------------------------------------------------------------------------------------
def test_each_preflight_error_is_one_line_exit_2_and_writes_nothing(tmp_path, nbdir, capsys, monkeypatch):
    monkeypatch.setattr(preflight, "torch_build", lambda: CPU_ONLY)  # whatever torch this machine has
    out = tmp_path / "runs"
    base = ["--notebook-dir", str(nbdir), "--scale", "smoke"]
    commands = (["reproduce", *base], ["sweep", "01", *base[:2], "-p", "x", "1,2"])

    # a device that is not available: the install step is named
    for cmd in commands:
        assert main([*cmd, "--out", str(out), "--device", "cuda"]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert "--device cuda" in line and "CPU-only build" in line and "make torch-cuda" in line
    assert not out.exists()

    # an output root that cannot be written (below a file: refused even for root)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for cmd in commands:
        assert main([*cmd, "--out", str(blocker / "runs")]) == 2
        assert "cannot be written (Not a directory)" in one_error_line(capsys.readouterr().err)
    assert files_under(tmp_path) == ["a-file", "notebooks", "notebooks/01_tiny.ipynb"]

    # an output root used by a running run: a lock naming a live process
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        out.mkdir()
        lock = {
            "pid": holder.pid,
            "host": os.uname().nodename,
            "process_started": psutil.Process(holder.pid).create_time(),
            "started": "2026-01-01T00:00:00",
            "command": "reproduce --scale medium",
        }
        (out / LOCK_NAME).write_text(json.dumps(lock))
        before = {p: p.read_bytes() for p in out.rglob("*")}
        for cmd in commands:
            assert main([*cmd, "--out", str(out)]) == 2
            line = one_error_line(capsys.readouterr().err)
            assert f"is in use by another run: `reproduce --scale medium` (PID {holder.pid} on" in line
        assert {p: p.read_bytes() for p in out.rglob("*")} == before
    finally:
        holder.kill()
        holder.wait()


def test_a_stale_lock_is_taken_over_with_a_note(tmp_path, nbdir, capsys):
    out = tmp_path / "runs"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = {"pid": dead.pid, "host": os.uname().nodename, "started": "2026-01-01T00:00:00", "command": "sweep 05"}
    (out / LOCK_NAME).write_text(json.dumps(stale))
    assert main(["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"note: took over the lock of {out}: its run, PID {dead.pid} (`sweep 05`" in text
    assert "is no longer running" in text
    assert not (out / LOCK_NAME).exists() and (out / "smoke" / "01_tiny.run.json").exists()
    # a PID that now belongs to another process (started later) is not the owner either
    me = psutil.Process()
    lock = RunLock(out, "test")
    reused = {"pid": me.pid, "host": os.uname().nodename, "process_started": me.create_time() - 100}
    assert not preflight.lock_is_live(reused) and preflight.lock_is_live(reused | {"process_started": me.create_time()})
    with lock:
        assert json.loads((out / LOCK_NAME).read_text())["pid"] == os.getpid()
        with pytest.raises(ValueError, match="is in use by another run: `test`"):
            RunLock(out, "other").acquire()
    assert not (out / LOCK_NAME).exists()


def test_check_writable_removes_what_it_created_when_the_run_stops(tmp_path):
    root = tmp_path / "a" / "b" / "runs"
    created = check_writable(root)
    assert created == [tmp_path / "a", tmp_path / "a" / "b", root] and root.is_dir()
    with pytest.raises(KeyboardInterrupt), RunLock(root, "test", created=created):
        raise KeyboardInterrupt
    assert not (tmp_path / "a").exists()


# --------------------------------------------------------------------------------------------
# Ctrl-C / SIGTERM from the first moment; a second run on a locked root
# --------------------------------------------------------------------------------------------
_marked = marked_processes


def _wait_for(condition, timeout: float, what: str) -> None:
    t0 = time.monotonic()
    while not condition():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def _start(nbdir: Path, out: Path, marker: str, ignore_sigint: bool = False) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "hgutils", "reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke"]
    cmd += ["--out", str(out), "-p", "sleep", "60"]
    env = dict(os.environ, HGUTILS_TEST_MARKER=marker)
    # a shell starts a background job with SIGINT ignored; the runner must still honour it
    pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    pipe = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    return subprocess.Popen(cmd, cwd=REPO, env=env, preexec_fn=pre, **pipe)


@pytest.mark.parametrize(
    ("sig", "ignore_sigint"),
    [(signal.SIGINT, False), (signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["sigint", "sigint-ignored-by-the-shell", "sigterm"],
)
def test_a_signal_at_one_second_exits_130_leaving_no_process_and_nothing_written(tmp_path, nbdir, sig, ignore_sigint):
    out, marker = tmp_path / "runs", uuid.uuid4().hex
    proc = _start(nbdir, out, marker, ignore_sigint)
    try:
        time.sleep(1.0)
        proc.send_signal(sig)
        text, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, text
    assert "interrupted" in text
    _wait_for(lambda: not _marked(marker), 20, "every process of the run to exit")
    assert [f for f in files_under(out) if f != "smoke"] == []  # no lock, no partial result, no CLAIMS.md


def test_a_second_reproduce_on_a_locked_root_exits_2(tmp_path, nbdir, capsys):
    out, marker = tmp_path / "runs", uuid.uuid4().hex
    proc = _start(nbdir, out, marker)
    try:
        _wait_for((out / LOCK_NAME).exists, 60, "the first run to take the lock")
        held = json.loads((out / LOCK_NAME).read_text())
        assert held["pid"] == proc.pid and held["command"].startswith("reproduce --scale smoke")
        assert main(["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke", "--out", str(out)]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert f"{out} is in use by another run: `reproduce --scale smoke" in line and f"(PID {proc.pid} on" in line
        proc.send_signal(signal.SIGINT)
        text, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, text
    assert not (out / LOCK_NAME).exists()
    _wait_for(lambda: not _marked(marker), 20, "every process of the run to exit")


# --------------------------------------------------------------------------------------------
# claims after reproduce; a device run that computed on the CPU
# --------------------------------------------------------------------------------------------
def test_claims_reads_the_root_reproduce_writes(tmp_path, nbdir, capsys):
    from hgutils.runner.claims_report import PUBLISHED_ROOT, RUN_ROOT, claims_root

    assert RUN_ROOT == runner.DEFAULT_RUN_ROOT and PUBLISHED_ROOT == REPO / "results"
    out = tmp_path / "runs"
    assert main(["claims", "--scale", "smoke", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"no smoke ledgers under {out}/smoke/" in line and "writes them under results/runs/smoke/" in line
    assert not out.exists()
    assert main(["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke", "--out", str(out)]) == 0
    capsys.readouterr()
    (out / "smoke" / "CLAIMS.md").unlink()
    assert main(["claims", "--scale", "smoke", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| 99_tiny | 2 | 0 | 0 | 0 | 0 | 0 | 2 |" in text and "| 99_tiny | twice-x | **holds** |" in text
    assert f"written: {out}/smoke/CLAIMS.md" in text and (out / "smoke" / "CLAIMS.md").exists()
    # without --out: the run root reproduce writes by default; --published and --update-readme: results/
    assert claims_root() == RUN_ROOT and claims_root(update_readme=True) == PUBLISHED_ROOT


@dataclass(frozen=True)
class CpuOnly(Preset):
    """A preset whose notebook computes on the CPU whatever ``device`` says (as notebook 05's)."""

    x: float = 1.0
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"smoke": {}, "medium": {}, "paper": {}}
    DEVICES: ClassVar[tuple[str, ...]] = ("cpu",)


def test_a_cuda_run_of_a_cpu_notebook_says_so_in_the_plan_the_progress_and_the_ledger(tmp_path, nbdir):
    lines: list[str] = []
    res = runner.reproduce(
        "smoke",
        device="cuda",
        out=tmp_path / "runs",
        notebook_dir=nbdir,
        preset_lookup=lambda nb: CpuOnly,
        device_check=lambda d: d,  # stands in for a machine with a GPU
        echo=lines.append,
    )
    text = "\n".join(lines)
    assert "1. 01_tiny" in text and "runs on the CPU: CpuOnly.DEVICES = ('cpu',) (asked: cuda)" in text
    assert "01_tiny done on cpu, although cuda was asked for in" in text
    assert res.records[0].device == "cpu, although cuda was asked for"
    assert "| 01_tiny |" in res.table() and "| cpu, although cuda was asked for |" in res.table()
    ledger = json.loads((tmp_path / "runs" / "smoke" / "99_tiny" / "claims.json").read_text())
    assert ledger["device"]["requested"] == "cuda" and ledger["device"]["used"] == ["cpu"]
    assert ledger["device"]["cells"] and all(v == ["cpu"] for v in ledger["device"]["cells"].values())
    record = json.loads((tmp_path / "runs" / "smoke" / "01_tiny.run.json").read_text())
    assert record["device"] == "cpu, although cuda was asked for"


class _SlowBackend:
    """Stands in for a backend: polls ``tick`` while its one job "runs", then yields the result."""

    def __init__(self, on_poll) -> None:
        self.on_poll, self.cancelled, self.polls = on_poll, False, 0

    def run(self, jobs, on_start=None, tick=None):
        for _ in range(5):
            self.polls += 1
            self.on_poll()
            if tick is not None:
                tick()
        for job in jobs:
            yield job, "result"

    def cancel(self) -> None:
        self.cancelled = True


def test_a_signal_whose_exception_python_swallowed_still_interrupts_the_run():
    # CI once caught SIGINT inside logging's at-fork hook, where Python prints the handler's
    # KeyboardInterrupt ("Exception ignored in _releaseLock") and carries on: the run then finished
    # and exited 0. The guard keeps the signal on record and the polling loop raises it again.
    from hgutils.runner.backends import run_jobs

    def swallowed_sigint() -> None:
        if backend.polls == 2:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # the handler runs here and raises
            except KeyboardInterrupt:
                pass  # what an "Exception ignored in ..." context does with it

    backend, done = _SlowBackend(swallowed_sigint), []
    assert run_jobs(["job"], backend, lambda job, result: done.append(job)) is True
    assert backend.cancelled and done == [] and backend.polls == 2


def test_without_a_signal_the_loop_runs_every_job():
    from hgutils.runner.backends import run_jobs

    backend, done = _SlowBackend(lambda: None), []
    assert run_jobs(["a", "b"], backend, lambda job, result: done.append(job)) is False
    assert done == ["a", "b"] and not backend.cancelled
