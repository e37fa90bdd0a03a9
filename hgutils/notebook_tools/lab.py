"""``make lab``: JupyterLab on the repository, opened at ``notebooks/``, with this environment's kernel.

The notebooks name the kernel ``python3``. :func:`ensure_kernel` makes that name resolve to the
running interpreter (the project's ``.venv``) by installing its kernelspec into the environment
when it points elsewhere; :func:`lab_command` is the server's command line. The server's root is
the repository (so a notebook's links to ``../results/medium/...`` open), its start page the
``notebooks/`` folder. Progress bars (``hgutils.progress.progress``, ``tqdm.auto``) render as
widgets there because ``ipywidgets`` is installed; the runner and the tests set
``HGUTILS_PROGRESS=0``, so executed copies carry none.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from hgutils.runner.notebooks import REPO_ROOT

KERNEL_NAME = "python3"


def kernel_argv(name: str = KERNEL_NAME) -> list[str]:
    """The command line of the kernelspec ``name`` as Jupyter resolves it here (``[]`` if there is none)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        return list(KernelSpecManager().get_kernel_spec(name).argv)
    except NoSuchKernel:
        return []


def kernel_display_name(name: str = KERNEL_NAME) -> str | None:
    """The display name of kernelspec ``name`` (``None`` if there is none)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        return KernelSpecManager().get_kernel_spec(name).display_name
    except NoSuchKernel:
        return None


def ensure_kernel(name: str = KERNEL_NAME) -> bool:
    """Make kernelspec ``name`` start this interpreter, under the display name the notebooks store;
    return whether it had to be (re)installed.

    The notebooks store ``"Python 3 (ipykernel)"`` (:data:`hgutils.runner.notebook_cleaning.KERNELSPEC`):
    JupyterLab writes the kernel's spec into a notebook when the kernel starts, so a kernel of
    another display name would mark every notebook modified on open.
    """
    from hgutils.runner.notebook_cleaning import KERNELSPEC

    argv = kernel_argv(name)
    if argv and argv[0] == sys.executable and kernel_display_name(name) == KERNELSPEC["display_name"]:
        return False
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ipykernel",
            "install",
            "--sys-prefix",
            "--name",
            name,
            "--display-name",
            KERNELSPEC["display_name"],
        ],
        check=True,
        capture_output=True,
    )
    argv = kernel_argv(name)
    if not argv or argv[0] != sys.executable:
        raise RuntimeError(
            f"kernelspec {name!r} still starts {argv[:1] or 'nothing'} after installing it for {sys.executable}; "
            "a kernelspec of that name in a folder Jupyter searches first shadows it (`jupyter kernelspec list`)"
        )
    return True


def lab_command(extra: Sequence[str] = (), repo_root: Path = REPO_ROOT) -> list[str]:
    """``python -m jupyterlab`` rooted at the repository, opening ``notebooks/``, plus ``extra`` options.

    As root (a container's default user) ``--allow-root`` is added, without which the server refuses
    to start; it still listens on localhost only, behind a token, unless ``extra`` says otherwise.
    """
    root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={repo_root}",
        "--LabApp.default_url=/lab/tree/notebooks",
        *root,
        *extra,
    ]


def run_lab(extra: Sequence[str] = (), repo_root: Path = REPO_ROOT) -> None:
    """Ensure the kernel, then replace this process by JupyterLab (Ctrl-C reaches the server directly)."""
    ensure_kernel()
    cmd = lab_command(extra, repo_root)
    os.execv(cmd[0], cmd)
