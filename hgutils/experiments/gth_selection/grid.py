"""The declared grid of GTH-GMN's selection (:class:`SelectionGrid`): protocol x size x learning rate, and for
the ``two_stage`` protocol the head read from the frozen embedding (:data:`HEADS`)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hgutils.weightspace.metanets.gth_gmn.config import PROTOCOLS, SIZES

#: the heads a ``two_stage`` cell can train on the frozen embedding: ``"sized"`` -- a linear head on the
#: leading principal components, as many as
#: :func:`~hgutils.weightspace.metanets.gth_gmn.config.frozen_head_components` allows (at least
#: ``networks_per_param`` training networks per head parameter, never fewer than
#: :data:`~hgutils.weightspace.metanets.gth_gmn.config.MIN_HEAD_COMPONENTS` components); ``"mlp"`` -- the
#: unsized two-layer MLP head every meta-network has (:class:`~hgutils.weightspace.metanets.heads.TaskHead`)
HEADS: tuple[str, ...] = ("sized", "mlp")
#: the head of a grid that declares none: today's sized head (notebooks 02 and 03)
DEFAULT_HEADS: tuple[str, ...] = ("sized",)
#: the ``head`` entry of a cell whose protocol trains the task through the encoder (one head: the model's MLP)
END_TO_END = "mlp (end to end)"


@dataclass(frozen=True)
class SelectionGrid:
    """The declared grid: every ``protocols x sizes x lrs`` cell, each run for ``steps`` optimiser steps
    (``None``: the final runs' budget, each cell to its own plateau). A ``two_stage`` cell trains one row per
    head of ``heads`` (:data:`HEADS`) on the same stage 1 (the heads differ after it); its ``"sized"`` head keeps
    ``networks_per_param`` training networks per head parameter. The other protocols train the model's MLP head
    through the encoder, one row per cell."""

    protocols: tuple[str, ...] = PROTOCOLS
    sizes: tuple[str, ...] = tuple(SIZES)
    lrs: tuple[float, ...] = (1e-3,)
    steps: int | None = None
    networks_per_param: float = 10.0
    heads: tuple[str, ...] = DEFAULT_HEADS

    def __post_init__(self) -> None:
        bad_p = [p for p in self.protocols if p not in PROTOCOLS]
        bad_s = [s for s in self.sizes if s not in SIZES]
        if not self.protocols or not self.sizes or not self.lrs or bad_p or bad_s:
            raise ValueError(
                f"a grid needs protocols from {PROTOCOLS}, sizes from {tuple(SIZES)} and learning rates, none "
                f"empty; got {self.protocols}, {self.sizes}, {self.lrs}"
            )
        if any(not lr > 0 for lr in self.lrs) or (self.steps is not None and self.steps < 1):
            raise ValueError(f"learning rates must be > 0 and steps >= 1; got {self.lrs}, {self.steps}")
        if not self.heads or any(h not in HEADS for h in self.heads) or len(set(self.heads)) != len(self.heads):
            raise ValueError(f"heads must be distinct entries of {HEADS}, at least one; got {self.heads}")
        if not self.networks_per_param > 0:
            raise ValueError(f"networks_per_param must be > 0; got {self.networks_per_param}")
        if len(set(self.cells())) != len(self.cells()):
            raise ValueError(f"the grid lists a cell twice: {self}")

    def cells(self) -> list[tuple[str, str, float]]:
        """``(protocol, size, lr)`` of every trained configuration, in the declared order (the tie-break order)."""
        return list(itertools.product(self.protocols, self.sizes, [float(lr) for lr in self.lrs]))

    def heads_of(self, protocol: str) -> tuple[str, ...]:
        """The heads a cell of ``protocol`` reads: ``heads`` for ``two_stage``, :data:`END_TO_END` otherwise."""
        return self.heads if protocol == "two_stage" else (END_TO_END,)

    def choices(self) -> list[tuple[str, str, float, str]]:
        """``(protocol, size, lr, head)`` of every row of the table, in the declared order: each cell of
        :meth:`cells`, a ``two_stage`` one once per head."""
        return [(p, s, lr, h) for p, s, lr in self.cells() for h in self.heads_of(p)]

    @property
    def has_head_choice(self) -> bool:
        """Whether the grid declares heads other than today's (the table then shows a ``head`` column)."""
        return tuple(self.heads) != DEFAULT_HEADS

    def overrides(self, protocol: str, size: str, head: str | None = None) -> dict[str, Any]:
        """The :class:`~hgutils.weightspace.metanets.gth_gmn.GTHGMNConfig` overrides of a cell (``head``: one of
        :meth:`heads_of`; ``None`` -- the first declared)."""
        out: dict[str, Any] = {"protocol": protocol, **SIZES[size]}
        if protocol != "two_stage":
            return out
        head = self.heads[0] if head is None else head
        if head not in self.heads:
            raise ValueError(f"head {head!r} is not one of this grid's heads {self.heads}")
        out["head_networks_per_param"] = self.networks_per_param if head == "sized" else None
        return out

    def cache_key(self) -> dict[str, Any]:
        """The grid's part of a table's cache key: its fields, without ``heads`` while they are the default
        (a grid declared before the head choice keeps its key)."""
        key = {
            "protocols": tuple(self.protocols),
            "sizes": tuple(self.sizes),
            "lrs": tuple(self.lrs),
            "steps": self.steps,
            "networks_per_param": self.networks_per_param,
        }
        return key if not self.has_head_choice else {**key, "heads": tuple(self.heads)}


def grid_of(settings: Any) -> SelectionGrid:
    """The grid a :class:`~hgutils.experiments.weightspace_protocol.ComparisonSettings` preset declares:
    ``gth_protocols x gth_sizes x select_lr_grid`` (empty: the baselines' ``lr_grid``, else ``lr``) for
    ``select_steps`` steps per cell, with the preset's ``gth_heads`` for ``two_stage`` cells where it declares
    them (notebook 01), else :data:`DEFAULT_HEADS`."""
    lrs = tuple(settings.select_lr_grid) or tuple(settings.lr_grid) or (settings.lr,)
    heads = tuple(getattr(settings, "gth_heads", DEFAULT_HEADS))
    return SelectionGrid(
        tuple(settings.gth_protocols), tuple(settings.gth_sizes), lrs, settings.select_steps, heads=heads
    )
