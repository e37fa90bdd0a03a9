"""``make lab`` starts JupyterLab on notebooks/ with the venv's kernel; progress bars are widgets there;
a committed notebook opened and saved through the server comes back byte for byte.

The server test runs what ``make lab`` runs (``python -m hgutils.notebook_tools lab``) on a free
loopback port with a token, in private Jupyter config/data/runtime folders, fetches ``/lab`` and
``/api/kernelspecs`` and stops it through ``/api/shutdown``. The round-trip test serves a copy of
``notebooks/`` and ``results/medium/`` the same way, reads every notebook through the contents API
(where jupytext's contents manager merges each notebook with its script) and writes it back, and
checks that the metadata JupyterLab writes when the kernel starts (its kernelspec, the kernel's
``language_info``) is already what the notebooks store: either difference marks a notebook
modified on open.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hgutils.repro import REPO_ROOT

pytest.importorskip("jupyterlab", reason="jupyterlab is not installed (make venv installs it)")

STARTUP_S = 90


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str, method: str = "GET", body: dict | None = None) -> tuple[int, str, str]:
    headers = {"Authorization": f"token {token}", "Content-Type": "application/json"}
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, method=method, headers=headers, data=data)
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.status, resp.geturl(), resp.read().decode("utf-8", "replace")


def _serve(cmd: list[str], tmp_path: Path, token: str, base: str) -> subprocess.Popen:
    log = tmp_path / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=_isolated_env(tmp_path), stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + STARTUP_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if _get(f"{base}/api/status", token)[0] == 200:
                return proc
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            proc.terminate()
            pytest.fail(f"jupyter lab did not answer within {STARTUP_S} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _isolated_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[var] = str(tmp_path / var.lower())
    return env


def test_make_lab_runs_the_lab_command():
    mk = (REPO_ROOT / "Makefile").read_text()
    recipe = mk.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert "$(PY) -m hgutils.notebook_tools lab $(LAB_ARGS)" in recipe


def test_jupyter_lab_serves_the_notebooks_with_the_venv_kernel(tmp_path):
    port, token = _free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "lab.log"
    cmd = [sys.executable, "-m", "hgutils.notebook_tools", "lab", "--no-browser", "--ip=127.0.0.1"]
    cmd += [f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=_isolated_env(tmp_path), stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if _get(f"{base}/api/status", token)[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"jupyter lab did not answer within {STARTUP_S} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)

        status, _, page = _get(f"{base}/lab", token)
        assert status == 200 and "jupyter-config-data" in page
        # tqdm.auto renders widgets only when Lab has the ipywidgets manager; the jupytext extension pairs .py files
        assert "@jupyter-widgets/jupyterlab-manager" in page and "jupyterlab-jupytext" in page

        specs = json.loads(_get(f"{base}/api/kernelspecs", token)[2])
        assert specs["default"] == "python3"
        argv = specs["kernelspecs"]["python3"]["spec"]["argv"]
        assert argv[0] == sys.executable, f"the python3 kernel starts {argv[0]}, not this venv's {sys.executable}"

        # rooted at the repository, opening on notebooks/
        _, landed, _ = _get(f"{base}/", token)
        assert landed.split("?")[0].endswith("/lab/tree/notebooks")
        listing = json.loads(_get(f"{base}/api/contents/notebooks", token)[2])
        names = {c["name"] for c in listing["content"]}
        assert {p.name for p in (REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")} <= names

        assert _get(f"{base}/api/shutdown", token, method="POST")[0] == 200
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_progress_bars_are_widgets_in_a_kernel_and_absent_when_switched_off(tmp_path):
    """In a Jupyter kernel tqdm.auto draws an ipywidgets bar; ``HGUTILS_PROGRESS=0`` (the runner) draws none."""
    import nbformat
    from nbclient import NotebookClient

    widget, off = (
        nbformat.v4.new_code_cell(
            f"import os\nos.environ['HGUTILS_PROGRESS'] = '{flag}'\n"
            "from hgutils.progress import progress\n_ = [i for i in progress(range(3), desc='zoo')]"
        )
        for flag in ("1", "0")
    )
    nb = nbformat.v4.new_notebook(cells=[widget, off])
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    mimes = [set(o.get("data", {})) for o in nb.cells[0].outputs]
    assert any("application/vnd.jupyter.widget-view+json" in m for m in mimes), nb.cells[0].outputs
    assert not any(o.get("name") == "stderr" for o in nb.cells[0].outputs), "a text bar instead of a widget"
    assert nb.cells[1].outputs == []


def test_progress_bars_are_text_outside_jupyter():
    """In a terminal (no kernel) the same call draws a text bar on stderr; ``HGUTILS_PROGRESS=0`` draws none."""
    code = (
        "import os, sys\nfrom hgutils.progress import progress\n"
        "for flag, desc in (('1', 'shown'), ('0', 'hidden')):\n"
        "    os.environ['HGUTILS_PROGRESS'] = flag\n"
        "    for _ in progress(range(3), desc=desc, mininterval=0): pass\n"
        "    sys.stderr.write('<end>')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    shown, hidden, _ = res.stderr.split("<end>")
    assert "shown:" in shown and "3/3" in shown
    assert hidden == ""


def _kernel_language_info() -> dict:
    """The ``language_info`` the ``python3`` kernel reports (what JupyterLab stores on kernel start)."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        return kc.kernel_info(reply=True, timeout=60)["content"]["language_info"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_committed_notebooks_open_and_save_unchanged_in_jupyterlab(tmp_path):
    import shutil

    from hgutils.notebook_tools.lab import lab_command

    repo = tmp_path / "repo"
    folders = {"notebooks": REPO_ROOT / "notebooks", "results/medium": REPO_ROOT / "results" / "medium"}
    books = []
    for rel, src in folders.items():
        (repo / rel).mkdir(parents=True)
        # notebooks first, their jupytext scripts after (as `make sync` writes them)
        for f in sorted(src.glob("[0-9][0-9]_*.ipynb")) + sorted(src.glob("*.py")) + sorted(src.glob("*.toml")):
            shutil.copy2(f, repo / rel / f.name)
            if f.suffix == ".ipynb":
                books.append(f"{rel}/{f.name}")
    assert len(books) >= 7
    before = {p.relative_to(repo).as_posix(): p.read_bytes() for p in repo.rglob("*") if p.is_file()}

    port, token = _free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    cmd = lab_command(["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0"], repo)
    proc = _serve([*cmd, f"--IdentityProvider.token={token}"], tmp_path, token, base)
    try:
        spec = json.loads(_get(f"{base}/api/kernelspecs", token)[2])["kernelspecs"]["python3"]["spec"]
        lab_kernelspec = {"name": "python3", "display_name": spec["display_name"], "language": spec["language"]}
        for rel in books:
            model = json.loads(_get(f"{base}/api/contents/{rel}?content=1&type=notebook", token)[2])
            meta = model["content"]["metadata"]
            assert meta["kernelspec"] == lab_kernelspec, f"{rel}: JupyterLab rewrites the kernelspec on kernel start"
            body = {"type": "notebook", "format": "json", "content": model["content"]}
            assert _get(f"{base}/api/contents/{rel}", token, "PUT", body)[0] == 200
        assert _get(f"{base}/api/shutdown", token, method="POST")[0] == 200
        proc.wait(timeout=30)
    finally:
        _stop(proc)
    after = {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in repo.rglob("*")
        if p.is_file() and ".ipynb_checkpoints" not in p.parts
    }
    assert sorted(after) == sorted(before), "saving created or removed files"
    changed = [rel for rel in before if after[rel] != before[rel]]
    assert not changed, f"opening and saving in JupyterLab rewrote {changed}"
    # on kernel start JupyterLab writes the kernel's language_info: equal to the stored one, no change
    info = _kernel_language_info()
    for rel in books:
        stored = json.loads(before[rel])["metadata"].get("language_info")
        assert stored == info, f"{rel}: stored language_info {stored} differs from the kernel's {info}"


def test_progress_never_warns_in_a_kernel_without_ipywidgets(tmp_path):
    """tqdm.auto warns "IProgress not found" on import where ipywidgets is missing (the stored stderr of
    earlier runs); ``progress`` does not import it: no output when off, a text bar when on."""
    import nbformat
    from nbclient import NotebookClient

    hide = "import sys\nsys.modules['ipywidgets'] = None  # as in a kernel without ipywidgets\nimport os\n"
    cells = [
        nbformat.v4.new_code_cell(
            hide + f"os.environ['HGUTILS_PROGRESS'] = '{flag}'\n"
            "from hgutils.progress import progress\n_ = [i for i in progress(range(3), desc='zoo', mininterval=0)]"
        )
        for flag in ("0", "1")
    ]
    cells.append(nbformat.v4.new_code_cell(hide + "import warnings\nwarnings.simplefilter('always')\nimport tqdm.auto"))
    nb = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    off, on, control = (c.outputs for c in nb.cells)
    assert off == []
    text = "".join(o.get("text", "") for o in on)
    assert "zoo" in text and "3/3" in text and "IProgress" not in text
    assert "IProgress not found" in "".join(o.get("text", "") for o in control)  # what tqdm.auto does there
