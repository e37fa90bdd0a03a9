"""Checkpoints read from files: a folder per training run, or the files themselves.

:func:`~hgutils.weightspace.zoo.checkpoints.zoo_from_checkpoints` accepts paths wherever it accepts
checkpoints:

- a **file** (``str`` or ``os.PathLike``) is one checkpoint, read with
  ``torch.load(path, map_location="cpu", weights_only=True)`` (:func:`load_checkpoint`): tensors and
  plain containers only, so a file can never run code when it is read;
- a **folder** is one trajectory: its checkpoint files (:data:`CHECKPOINT_SUFFIXES`), sorted by the
  training step written in their names -- the last number of the name, ``step_00040.pt`` -> 40,
  ``epoch=3-step=120.ckpt`` -> 120 (:func:`step_in_name`, :func:`folder_checkpoints`); those steps
  become the zoo's ``steps`` unless ``steps=`` is given, which then chooses the files of those steps.

A training loop that saves ``torch.save(net.state_dict(), folder / f"step_{step:05d}.pt")`` gives
such a folder (``docs/your-own-networks.md``). Every problem is one ``ValueError`` naming the path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

__all__ = ["CHECKPOINT_SUFFIXES", "folder_checkpoints", "is_path", "load_checkpoint", "step_in_name"]

#: The file endings a folder's checkpoints have (``torch.save`` files; Lightning's ``.ckpt``).
CHECKPOINT_SUFFIXES: tuple[str, ...] = (".pt", ".pth", ".ckpt")

_NUMBER = re.compile(r"\d+")


def is_path(value: Any) -> bool:
    """Whether ``value`` names a file or folder (``str``, ``bytes`` or ``os.PathLike``)."""
    return isinstance(value, (str, bytes, os.PathLike))


def step_in_name(path: str | os.PathLike) -> int | None:
    """The training step a checkpoint's file name records: the last number in it (``None`` if none)."""
    found = _NUMBER.findall(Path(path).name)
    return int(found[-1]) if found else None


def folder_checkpoints(
    folder: str | os.PathLike, steps: Sequence[int] | None = None, where: str = "trajectory"
) -> tuple[list[Path], list[int]]:
    """The checkpoint files of ``folder`` sorted by the step in their names, and those steps.

    With ``steps``, only the files of those steps, in that order. Raises ``ValueError`` naming the
    folder (``where`` says which trajectory) when it holds no checkpoint file, a name has no number,
    two files record the same step, or a requested step has no file.
    """
    folder = Path(os.fsdecode(folder))
    files = sorted(
        p for p in folder.iterdir() if p.is_file() and p.suffix in CHECKPOINT_SUFFIXES and not p.name.startswith(".")
    )
    if not files:
        raise ValueError(
            f"{where}: folder {str(folder)!r} holds no checkpoint file (names ending in "
            f"{', '.join(CHECKPOINT_SUFFIXES)})"
        )
    by_step: dict[int, Path] = {}
    for f in files:
        s = step_in_name(f)
        if s is None:
            raise ValueError(
                f"{where}: cannot read a training step from the file name {f.name!r} in {str(folder)!r} (a folder's "
                "checkpoints are sorted by the last number in their names, e.g. step_00040.pt); rename it, or pass "
                "the list of files in training order instead of the folder"
            )
        if s in by_step:
            raise ValueError(
                f"{where}: {by_step[s].name!r} and {f.name!r} in {str(folder)!r} both record step {s}; "
                "keep one file per step"
            )
        by_step[s] = f
    if steps is None:
        order = sorted(by_step)
    else:
        order = [int(s) for s in steps]
        missing = [s for s in order if s not in by_step]
        if missing:
            raise ValueError(
                f"{where}: folder {str(folder)!r} has no checkpoint for step {missing[0]} (steps=); its files "
                f"record steps {sorted(by_step)}"
            )
    return [by_step[s] for s in order], order


def load_checkpoint(path: str | os.PathLike, where: str = "checkpoint") -> Mapping[str, Any]:
    """One checkpoint file, read with ``torch.load(..., map_location="cpu", weights_only=True)``.

    Raises ``ValueError`` naming the file when it does not exist, cannot be read that way (not a
    ``torch.save`` file, or it holds objects other than tensors and plain containers), or holds no
    mapping (a ``state_dict``).
    """
    p = Path(os.fsdecode(path))
    if not p.is_file():
        what = "is a folder (a folder is a whole trajectory, not one snapshot)" if p.is_dir() else "does not exist"
        raise ValueError(f"{where}: the checkpoint file {str(p)!r} {what}")
    try:
        obj = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as err:  # unpickling errors come in many types
        first = re.sub(r"\x1b\[[0-9;]*m", "", (str(err).strip().splitlines() or [""])[0]).split(". ")[0][:160]
        raise ValueError(
            f"{where}: {str(p)!r} cannot be read with torch.load(weights_only=True) ({type(err).__name__}: {first}); "
            "save checkpoints with torch.save(net.state_dict(), path)"
        ) from None
    if not isinstance(obj, Mapping):
        raise ValueError(
            f"{where}: {str(p)!r} holds a {type(obj).__name__}; expected a state_dict "
            "(save checkpoints with torch.save(net.state_dict(), path))"
        )
    return obj
