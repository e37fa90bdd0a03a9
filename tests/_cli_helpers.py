"""Helpers the runner's command-line tests share: the files under a folder, and the one error line."""

from __future__ import annotations

from pathlib import Path


def files_under(root: Path) -> list[str]:
    """Every path below ``root``, relative and sorted (``[]`` when it does not exist)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def one_error_line(err: str) -> str:
    """The single ``error: ...`` line a refused command prints on stderr (asserts there is one)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]
