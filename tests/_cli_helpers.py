"""Helpers the runner's command-line tests share: the files under a folder, the one error line, and the live
processes a test run started (found by the marker in their environment)."""

from __future__ import annotations

from pathlib import Path

import psutil


def files_under(root: Path) -> list[str]:
    """Every path below ``root``, relative and sorted (``[]`` when it does not exist)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def one_error_line(err: str) -> str:
    """The single ``error: ...`` line a refused command prints on stderr (asserts there is one)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def marked_processes(marker: str) -> list[psutil.Process]:
    """Live processes whose environment carries ``HGUTILS_TEST_MARKER=marker`` (everything a test's run started
    inherits it); zombies and processes that vanish or deny access while being read are left out."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("HGUTILS_TEST_MARKER") == marker and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found
