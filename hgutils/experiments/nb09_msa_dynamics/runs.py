"""Notebook 09's runs: the angle splits, training each architecture's networks (a stack of seeds at once),
the untrained controls, the hidden states on the analysis window and the similarity matrices of every
measure, and one experiment from end to end (the protocol: the package docstring)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from hgutils.dynamics.models import init_params, outputs, representation, subset
from hgutils.dynamics.task import AngleMemoryTask, angle_grid, sample_angles
from hgutils.dynamics.training import TrainedStack, train_stack
from hgutils.experiments.nb09_msa_dynamics.preset import ARCHS, DynamicsConfig
from hgutils.loop import Budget, combine_gates
from hgutils.progress import progress
from hgutils.similarity.baselines import linear_cka_matrix, rsa_matrix
from hgutils.similarity.dynamical import dsa_matrix
from hgutils.similarity.input_time import (
    coded_metrics,
    input_time_metrics,
    input_time_msa,
    temporal_msa,
    trajectory_jacobians,
)


def arch_seeds(arch: str, n_seeds: int, offset: int = 0) -> list[int]:
    """Distinct initialisation seeds per architecture (``offset`` selects another seed set)."""
    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {ARCHS}; got {arch!r}")
    return [100_000 * offset + 1000 * (1 + ARCHS.index(arch)) + s for s in range(n_seeds)]


def angle_splits(cfg: DynamicsConfig, seed: int = 0) -> dict[str, Tensor]:
    """Training and validation trials (random angle tuples), the held-out ``grid`` (MSA's points, the
    learnability check) and the held-out ``dsa`` trials."""
    g = torch.Generator().manual_seed(seed)
    return {
        "train": sample_angles(cfg.n_train, cfg.n_items, g),
        "val": sample_angles(cfg.n_val, cfg.n_items, g),
        "grid": angle_grid(cfg.grid, cfg.n_items),
        "dsa": sample_angles(cfg.dsa_trials, cfg.n_items, g),
    }


def init_stack(arch: str, cfg: DynamicsConfig, seeds: list[int]) -> dict[str, Tensor]:
    """The initial parameters of ``arch``'s networks under ``cfg``."""
    task = cfg.task
    if arch == "rnn":
        kw: dict[str, float] = {"gain": cfg.rnn_gain}
    else:
        kw = {"r_min": cfg.ssm_r_min, "r_max": cfg.ssm_r_max, "max_phase": cfg.ssm_max_phase}
    return init_params(arch, seeds, task.n_inputs, task.n_outputs, cfg.hidden, **kw)


def train_architecture(
    arch: str, cfg: DynamicsConfig, splits: dict[str, Tensor], seed: int = 0, offset: int = 0
) -> TrainedStack:
    """Train ``n_seeds`` networks of ``arch`` at once (:func:`hgutils.dynamics.train_stack`, early stopping
    on the validation trials, learnability on the held-out grid)."""
    seeds = arch_seeds(arch, cfg.n_seeds, offset)
    return train_stack(
        init_stack(arch, cfg, seeds),
        cfg.task,
        splits["train"],
        splits["val"],
        splits["grid"],
        Budget(epochs=cfg.max_epochs, patience=cfg.patience),
        max_error_deg=cfg.max_error_deg,
        desc=arch.upper(),
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        input_noise=cfg.input_noise,
        clip=cfg.clip,
        seed=seed + 7 * offset + ARCHS.index(arch),
    )


def arch_gate(stack: TrainedStack, arch: str) -> dict[str, Any]:
    """The learnability check of an architecture's networks, for ``Claims.add(trained=...)``: trained iff
    every network passed; ``capped`` when its run stopped at the epoch budget while improving."""
    g = combine_gates({f"seed {i}": x for i, x in enumerate(stack.gates)}, summary="count", noun="networks")
    return {**g, "capped": stack.capped, "arch": arch}


def window(task: AngleMemoryTask) -> slice:
    """The analysis window: the steps of the delay, where the input is off and the memory is held."""
    return slice(task.stim_end, task.delay_end)


def _states_fn(params: dict[str, Tensor], task: AngleMemoryTask):
    win = window(task)

    def f(angles: Tensor) -> Tensor:
        return representation(params, task.inputs(angles))[:, :, win]  # [N, P, T', D]

    return f


def network_geometry(params: dict[str, Tensor], cfg: DynamicsConfig, splits: dict[str, Tensor]) -> dict[str, Tensor]:
    """For a stack of networks: the input-time metrics ``[N, P, T'-1, m+1, m+1]`` on the grid x delay,
    the coded (angle-block) metrics per step ``[N, P, T', m, m]``, the baselines' samples ``[N, P*T'', D]``
    (the grid at every ``time_stride``-th delay step) and the DSA trajectories ``[N, trials, T', D]``."""
    task = cfg.task
    f = _states_fn(params, task)
    h, dh = trajectory_jacobians(f, splits["grid"])
    h, dh = h.detach(), dh.detach()
    with torch.no_grad():
        dsa = f(splits["dsa"])
    samples = h[:, :, :: cfg.time_stride].reshape(h.shape[0], -1, h.shape[-1])
    return {
        "metrics": input_time_metrics(h, dh),
        "coded": coded_metrics(dh),
        "samples": samples.double(),
        "trajectories": dsa,
    }


def similarity_matrices(geo: dict[str, Tensor], cfg: DynamicsConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Similarity matrices (1 = same) of all networks for MSA (``1 - d_MSA`` on the input-time manifold),
    RSA (Euclidean RDMs, Pearson), linear CKA and DSA (``1 - angle/π``)."""
    reps = list(geo["samples"].numpy())
    return {
        "MSA": 1.0 - input_time_msa(geo["metrics"]),
        "RSA": rsa_matrix(reps),
        "CKA": linear_cka_matrix(reps),
        "DSA": dsa_matrix(
            list(geo["trajectories"]),
            n_delays=cfg.dsa_delays,
            rank=cfg.dsa_rank,
            iters=cfg.dsa_iters,
            lr=cfg.dsa_lr,
            seed=seed,
        ),
    }


def temporal_matrices(coded: Tensor) -> np.ndarray:
    """Per network, the time x time MSA of its coded geometry over the delay, ``[N, T', T']``."""
    return np.stack([temporal_msa(c) for c in coded])


def run_experiment(cfg: DynamicsConfig, seed: int = 0, offset: int = 0) -> dict[str, Any]:
    """Train both architectures, keep their initialisations as the untrained controls, and compare every
    network with every measure. Model order (the axis of every matrix): per architecture its trained
    networks, then its untrained ones. ``meta[i] = {"arch", "trained", "seed", "group"}``."""
    splits = angle_splits(cfg, seed + 7 * offset)
    stacks, gates, params, meta = {}, {}, [], []
    for arch in progress(ARCHS, desc="architectures"):
        st = train_architecture(arch, cfg, splits, seed, offset)
        stacks[arch], gates[arch] = st, arch_gate(st, arch)
        params += [st.params, st.params0]
        for trained, stage in ((True, "trained"), (False, "untrained")):
            meta += [
                {
                    "arch": arch,
                    "trained": trained,
                    "seed": s,
                    "group": f"{arch} {stage}",
                }
                for s in range(cfg.n_seeds)
            ]
    geos = [network_geometry(p, cfg, splits) for p in params]
    geo = {k: torch.cat([g[k] for g in geos]) for k in geos[0]}
    mats = similarity_matrices(geo, cfg, seed)
    return {
        "meta": meta,
        "stacks": stacks,
        "gates": gates,
        "mats": mats,
        "temporal": temporal_matrices(geo["coded"]),
        "splits": splits,
    }


def example_outputs(stack: TrainedStack, task: AngleMemoryTask, angles: Tensor, net: int = 0) -> Tensor:
    """Outputs ``[B, T, 2K]`` of network ``net`` of a trained stack for ``angles`` ``[B, K]``."""
    p = subset(stack.params, [net])
    with torch.no_grad():
        return outputs(p, representation(p, task.inputs(angles)))[0]


def ceilings(exp: dict[str, Any], cfg: DynamicsConfig, seed: int = 0) -> dict[str, dict[str, float]]:
    """The best each measure can report: the similarity of each architecture's first trained network with
    itself composed with a random rotation and a scaling by 2 of its hidden space (1 for an exactly
    invariant measure). For DSA it shows how far its Procrustes optimisation gets in ``dsa_iters`` steps."""
    Q, _ = torch.linalg.qr(torch.randn(cfg.hidden, cfg.hidden, generator=torch.Generator().manual_seed(seed)))
    out: dict[str, dict[str, float]] = {}
    for arch, st in exp["stacks"].items():
        geo = network_geometry(subset(st.params, [0]), cfg, exp["splits"])
        h, dh = trajectory_jacobians(_states_fn(subset(st.params, [0]), cfg.task), exp["splits"]["grid"])
        rot = 2.0 * h.detach() @ Q.T.to(h.dtype)
        drot = 2.0 * torch.einsum("ed,nptdm->nptem", Q.to(dh.dtype), dh.detach())
        G2 = input_time_metrics(rot, drot)
        samples = rot[:, :, :: cfg.time_stride].reshape(1, -1, rot.shape[-1]).double()
        traj = geo["trajectories"]
        pair = {
            "MSA": 1.0 - input_time_msa(torch.cat([geo["metrics"], G2]))[0, 1],
            "RSA": rsa_matrix([geo["samples"][0].numpy(), samples[0].numpy()])[0, 1],
            "CKA": linear_cka_matrix([geo["samples"][0].numpy(), samples[0].numpy()])[0, 1],
            "DSA": dsa_matrix(
                [traj[0], 2.0 * traj[0] @ Q.T],
                n_delays=cfg.dsa_delays,
                rank=cfg.dsa_rank,
                iters=cfg.dsa_iters,
                lr=cfg.dsa_lr,
                seed=seed,
            )[0, 1],
        }
        out[arch] = {k: float(v) for k, v in pair.items()}
    return out
