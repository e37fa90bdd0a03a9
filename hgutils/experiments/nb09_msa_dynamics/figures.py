"""Notebook 09's figures: the task, the training curves, the similarity matrices side by side, the separation
scores of every measure, and the coded geometry over the delay (time x time MSA and each network's drift)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.ticker import MaxNLocator

from hgutils.dynamics.task import AngleMemoryTask
from hgutils.dynamics.training import TrainedStack
from hgutils.experiments.nb09_msa_dynamics.preset import ARCH_NAMES
from hgutils.plotting import use_style

#: one colour per (architecture, stage) group, never reused
GROUP_COLOURS = {
    "rnn trained": "#1b6ca8",
    "rnn untrained": "#8fc1e3",
    "ssm trained": "#c2410c",
    "ssm untrained": "#f5a97f",
}


def group_label(group: str) -> str:
    """``"rnn trained"`` -> ``"RNN trained"``."""
    arch, stage = group.split(" ", 1)
    return f"{ARCH_NAMES[arch]} {stage}"


def plot_task(task: AngleMemoryTask, angles: torch.Tensor, examples: dict[str, torch.Tensor]) -> plt.Figure:
    """One trial: the inputs over time (left) and, per architecture, the target and a trained network's
    outputs for the first item's (cos, sin) (right); the delay is shaded."""
    use_style()
    x = task.inputs(angles[None])[0].numpy()
    y = task.targets(angles[None])[0].numpy()
    t = np.arange(task.n_steps)
    fig, axes = plt.subplots(
        1, 1 + len(examples), figsize=(4.6 * (1 + len(examples)), 4.0), sharex=True, layout="constrained"
    )
    cmap = plt.get_cmap("viridis")
    for c in range(x.shape[1]):
        lab = "go cue" if c == x.shape[1] - 1 else f"item {c // 2 + 1} {'cos' if c % 2 == 0 else 'sin'}"
        axes[0].step(t, x[:, c] + 1.2 * c, where="post", color=cmap(c / max(1, x.shape[1] - 1)), label=lab)
    axes[0].set_yticks([])
    axes[0].set_title("inputs (channels offset)")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=7, ncol=3)
    for ax, (arch, out) in zip(axes[1:], examples.items()):
        o = out.numpy()
        for c, ls in ((0, "-"), (1, "--")):
            ax.plot(t, y[:, c], color="0.3", ls=ls, lw=2.5, alpha=0.5, label=f"target {'cos' if c == 0 else 'sin'} θ₁")
            ax.plot(
                t,
                o[:, c],
                color=GROUP_COLOURS[f"{arch} trained"],
                ls=ls,
                lw=1.2,
                label=f"output {'cos' if c == 0 else 'sin'} θ₁",
            )
        ax.set_title(f"{ARCH_NAMES[arch]} (seed 0): report of item 1")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=7, ncol=2)
    for ax in axes:
        ax.axvspan(task.stim_end - 0.5, task.delay_end - 0.5, color="0.85", alpha=0.5, lw=0)
        ax.set_xlabel("time step (grey: the delay)")
    return fig


def plot_training_curves(stacks: dict[str, TrainedStack], title: str = "") -> plt.Figure:
    """Training and validation loss per epoch of every network, one panel per architecture; a dot marks
    each network's best validation epoch (the weights kept)."""
    use_style()
    fig, axes = plt.subplots(1, len(stacks), figsize=(5.2 * len(stacks), 3.6), squeeze=False)
    for ax, (arch, st) in zip(axes.flat, stacks.items()):
        col = GROUP_COLOURS[f"{arch} trained"]
        ep = np.arange(1, st.val_loss.shape[0] + 1)
        for n in range(st.val_loss.shape[1]):
            ax.plot(ep, st.train_loss[:, n].numpy(), color="0.6", lw=0.7)
            ax.plot(ep, st.val_loss[:, n].numpy(), color=col, lw=1.0)
        best = st.log.best_epoch
        if best >= 0:
            ax.plot([best + 1] * st.val_loss.shape[1], st.val_loss[best].numpy(), "o", color=col, ms=3)
        ax.plot([], [], color="0.6", label="training (with input noise)")
        ax.plot([], [], color=col, label="validation")
        ax.set_yscale("log")
        ax.set_xlabel("epoch")
        ax.set_ylabel("report MSE")
        ax.set_title(f"{ARCH_NAMES[arch]}: {st.val_loss.shape[1]} seeds" + (f" · {title}" if title else ""))
        ax.legend(loc="upper right")
    fig.tight_layout()
    return fig


def _blocks(meta: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for i, m in enumerate(meta):
        if out and out[-1][0] == m["group"]:
            out[-1] = (m["group"], out[-1][1], i + 1)
        else:
            out.append((m["group"], i, i + 1))
    return out


def plot_similarity_panels(
    mats: dict[str, np.ndarray], meta: list[dict[str, Any]], scores: pd.DataFrame | None = None, own_scale: bool = False
) -> plt.Figure:
    """The similarity matrices side by side (viridis, a colour bar each), labelled by group, the group
    boundaries drawn; titles carry the architecture and training AUCs. Colours span [0, 1], or with
    ``own_scale`` each measure's own [min S, 1]."""
    use_style()
    n = len(mats)
    fig, axes = plt.subplots(1, n, figsize=(4.3 * n, 4.4), squeeze=False)
    blocks = _blocks(meta)
    centres = [(a + b - 1) / 2 for _, a, b in blocks]
    labels = [group_label(g) for g, *_ in blocks]
    for k, (ax, (name, S)) in enumerate(zip(axes.flat, mats.items())):
        vmin = float(np.min(S)) if own_scale else 0.0
        im = ax.imshow(S, vmin=vmin, vmax=1.0, cmap="viridis", interpolation="nearest")
        ax.grid(False)
        for _, a, _ in blocks[1:]:
            ax.axhline(a - 0.5, color="w", lw=1.2)
            ax.axvline(a - 0.5, color="w", lw=1.2)
        ax.set_xticks(centres, labels, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(centres, labels if k == 0 else [""] * len(labels), fontsize=8)
        title = name
        if scores is not None:
            title += (
                f"\narch. AUC {scores.loc[name, 'architecture AUC']:.2f} · "
                f"training AUC {scores.loc[name, 'training AUC']:.2f}"
            )
        ax.set_title(title, fontsize=10)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="similarity")
    fig.tight_layout()
    return fig


def plot_separation(scores: pd.DataFrame, replicates: list[pd.DataFrame] | None, column: str = "AUC") -> plt.Figure:
    """Each measure's score (``AUC`` or ``ratio``) on the architecture and the training splits, with its
    leave-one-seed-out jackknife standard error when ``replicates`` are given."""
    use_style()
    splits = ("architecture", "training")
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    colours = {"architecture": "#3b528b", "training": "#5ec962"}
    x = np.arange(len(scores.index))
    for j, sp in enumerate(splits):
        col = f"{sp} {column}"
        v = scores[col].to_numpy(dtype=float)
        err = None
        if replicates:
            loo = np.array([r[col].to_numpy(dtype=float) for r in replicates])
            n = len(loo)
            err = np.sqrt((n - 1) / n * ((loo - loo.mean(0)) ** 2).sum(0))
        ax.bar(x + (j - 0.5) * 0.38, v, 0.36, yerr=err, color=colours[sp], label=f"{sp} split", capsize=3)
    if column == "AUC":
        ax.axhline(0.5, color="0.4", ls=":", lw=1)
        ax.set_ylim(0, 1.05)
    else:
        ax.axhline(1.0, color="0.4", ls=":", lw=1)
    ax.set_xticks(x, list(scores.index))
    ax.set_ylabel(f"separation ({column})")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"separation of the groups by each measure ({column}; ± jackknife se)")
    fig.tight_layout()
    return fig


def plot_drift(temporal: np.ndarray, meta: list[dict[str, Any]], drifts: np.ndarray) -> plt.Figure:
    """Top: each group's mean time x time MSA of the coded geometry over the delay (sequential colour
    map, one shared scale and colour bar). Bottom left: MSA between the first delay step and each later
    one, per network (a line per seed, one colour per group). Bottom right: each network's drift."""
    use_style()
    groups = list(dict.fromkeys(m["group"] for m in meta))
    fig = plt.figure(figsize=(3.3 * len(groups), 7.0), layout="constrained")
    gs = fig.add_gridspec(2, len(groups), height_ratios=[1.0, 0.9])
    vmax = float(max(temporal.max(), 1e-6))
    im = None
    for k, grp in enumerate(groups):
        ax = fig.add_subplot(gs[0, k])
        idx = [i for i, m in enumerate(meta) if m["group"] == grp]
        im = ax.imshow(temporal[idx].mean(0), vmin=0.0, vmax=vmax, cmap="magma_r", interpolation="nearest")
        ax.grid(False)
        ax.set_title(group_label(grp), fontsize=10)
        ax.set_xlabel("delay step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if k == 0:
            ax.set_ylabel("delay step")
    fig.colorbar(im, ax=fig.axes[: len(groups)], fraction=0.02, pad=0.02, label="MSA distance of the coded geometry")
    half = max(1, len(groups) // 2)
    ax1 = fig.add_subplot(gs[1, :half])
    for grp in groups:
        idx = [i for i, m in enumerate(meta) if m["group"] == grp]
        for j, i in enumerate(idx):
            ax1.plot(temporal[i, 0], color=GROUP_COLOURS[grp], lw=1.0, label=group_label(grp) if j == 0 else None)
    ax1.set_xlabel("delay step")
    ax1.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax1.set_ylabel("MSA to the first delay step")
    ax1.legend(loc="upper left", fontsize=8)
    ax2 = fig.add_subplot(gs[1, half:])
    for k, grp in enumerate(groups):
        v = [drifts[i] for i, m in enumerate(meta) if m["group"] == grp]
        ax2.scatter(np.full(len(v), k) + np.linspace(-0.12, 0.12, len(v)), v, color=GROUP_COLOURS[grp], s=18)
        ax2.hlines(np.mean(v), k - 0.25, k + 0.25, color=GROUP_COLOURS[grp], lw=2)
    ax2.set_xticks(range(len(groups)), [group_label(g) for g in groups], rotation=20, ha="right")
    ax2.set_ylabel("drift (mean MSA over step pairs)")
    ax2.set_ylim(0, None)
    return fig


__all__ = [
    "GROUP_COLOURS",
    "group_label",
    "plot_drift",
    "plot_separation",
    "plot_similarity_panels",
    "plot_task",
    "plot_training_curves",
]
