"""The classifier zoo: small classifiers (Small-CNN-Zoo CNNs or MLPs) trained with sampled
hyperparameters; the label of each network is its test accuracy (Unterthiner et al. 2020,
"Predicting Neural Network Accuracy from Weights", arXiv:2002.11448)."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

from hgutils.data import load_images
from hgutils.data.images import IMAGE_DATASETS
from hgutils.presets import Preset
from hgutils.weightspace.batched_training import snapshot_schedule, train_stacked
from hgutils.weightspace.stacked_mlp import WEIGHT_INITS, init_weights
from hgutils.weightspace.zoo.cache import cached_zoo, generate_chunked, net_seeds, storage_dtype
from hgutils.weightspace.zoo.containers import CNNSpec, MLPSpec, Zoo

log = logging.getLogger("hgutils")


#: Small CNN Zoo checkpoint epochs (Unterthiner et al. 2020): 86 epochs, these 9 checkpoints.
CNN_ZOO_EPOCHS: tuple[int, ...] = (0, 1, 2, 3, 20, 40, 60, 80, 86)

#: Optimisers the zoo can sample (Small CNN Zoo: Adam, RMSProp, SGD), each with Keras' defaults
#: (the zoo was trained with ``tf.keras.optimizers.get(name)``): Adam betas (0.9, 0.999); RMSProp
#: rho 0.9, eps 1e-7; SGD without momentum.
CLASSIFIER_OPTIMIZERS: tuple[str, ...] = ("adam", "rmsprop", "sgd")
_OPTIMIZER_KW: dict[str, dict[str, Any]] = {"adam": {}, "rmsprop": {"alpha": 0.9, "eps": 1e-7}, "sgd": {}}

#: Weight initialisations the zoo can sample: the Keras initialisers of
#: :func:`~hgutils.weightspace.stacked_mlp.init_weights` (``init_std`` is used by the random / truncated
#: normal ones only), plus ``"normal"`` / ``"uniform"``: N(0, init_std^2) / a uniform of std init_std
#: (this zoo's earlier scheme, kept so earlier configurations rebuild).
CLASSIFIER_W_INITS: tuple[str, ...] = (*WEIGHT_INITS, "normal", "uniform")


@dataclass(frozen=True)
class ClassifierZooConfig(Preset):
    """Small classifiers with sampled hyperparameters; the label is the test accuracy.

    Hyperparameter ranges follow the Small CNN Zoo (Unterthiner et al. 2020, "Predicting Neural
    Network Accuracy from Weights", arXiv:2002.11448, §3 / App. A): learning rate log-U[5e-4, 5e-2],
    L2 log-U[1e-8, 1e-2], dropout U[0, 0.7], init std log-U[1e-3, 0.5], train fraction in
    {0.1, 0.25, 0.5, 1.0}, activation, optimizer (Adam / RMSProp / SGD with Keras' defaults) and the
    weight initialiser ``w_init`` (Keras' He / Glorot normal and uniform, random and truncated normal
    of std ``init_std``; biases zero, the zoo's ``b_init`` default) from lists. Every network's draw is
    kept in ``Zoo.meta``. Smoke values are the defaults.

    ``n_test=None`` labels each network with its accuracy on the whole test split (10,000 images for
    CIFAR-10); the two disjoint random halves of it give ``test_acc_a`` / ``test_acc_b`` (the label
    noise, :func:`hgutils.weightspace.kendall_ceiling.label_noise_ceiling`).
    """

    arch: str = "mlp"  # "mlp" (GTH-GMN is MLP-only) | "cnn" (Small CNN Zoo: 3 conv x 16, GAP, dense)
    n_nets: int = 64  # classifiers in the zoo (Small CNN Zoo: 30k)
    image_size: int = 8  # inputs average-pooled to image_size x image_size, grayscale
    hidden: tuple[int, ...] = (32, 32)  # MLP hidden widths (arch="mlp")
    channels: int = 16  # CNN channels (Small CNN Zoo: 16)
    n_train: int = 1000  # training pool (each net uses train_fraction of it)
    n_test: int | None = None  # test images for the accuracy label (None: the whole test split)
    steps: int = 300  # SGD/Adam steps (minibatches)
    batch_size: int = 32  # minibatch size
    T: int = 6  # snapshots; schedule "cnn_zoo" uses the 9 Small-CNN-Zoo epochs
    schedule: str = "uniform"  # "uniform" | "log" | "cnn_zoo" (epochs 0,1,2,3,20,40,60,80,86 scaled)
    lr_range: tuple[float, float] = (5e-4, 5e-2)  # log-uniform
    l2_range: tuple[float, float] = (1e-8, 1e-2)  # log-uniform, L2 penalty on the weights
    dropout_range: tuple[float, float] = (0.0, 0.7)  # uniform, after each hidden activation
    init_std_range: tuple[float, float] = (1e-3, 0.5)  # log-uniform, weight init std (biases 0)
    train_fractions: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0)
    activations: tuple[str, ...] = ("relu", "tanh")
    optimizers: tuple[str, ...] = CLASSIFIER_OPTIMIZERS
    # Keras initialisers: the zoo's script defaults to he_normal and applies init_std to RandomNormal /
    # TruncatedNormal only (google-research dnn_predict_accuracy/train_network.py); glorot_* are Keras'
    w_inits: tuple[str, ...] = ("he_normal", "glorot_normal", "glorot_uniform", "random_normal", "truncated_normal")
    snapshot_dtype: str = "float32"
    chunk_size: int = 256
    seed: int = 0
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {"n_nets": 2000, "n_train": 4000, "steps": 1000, "T": 9, "schedule": "cnn_zoo"},
        "paper": {
            "n_nets": 30000,
            "image_size": 32,
            "n_train": 50000,
            "steps": 20000,
            "T": 9,
            "schedule": "cnn_zoo",
        },
    }


def _classifier_schedule(cfg: ClassifierZooConfig) -> list[int]:
    if cfg.schedule == "cnn_zoo":
        if cfg.T != len(CNN_ZOO_EPOCHS):
            raise ValueError(f"schedule 'cnn_zoo' has {len(CNN_ZOO_EPOCHS)} snapshots; got T={cfg.T}")
        s = [round(e * cfg.steps / CNN_ZOO_EPOCHS[-1]) for e in CNN_ZOO_EPOCHS]
        if len(set(s)) != len(s):
            raise ValueError(f"steps={cfg.steps} too few to separate the Small CNN Zoo epochs")
        return s
    return snapshot_schedule(cfg.steps, cfg.T, cfg.schedule)


def _sample_hparams(cfg: ClassifierZooConfig, start: int, stop: int) -> dict[str, Tensor]:
    def logu(u: Tensor, r: tuple[float, float]) -> Tensor:
        return torch.exp(math.log(r[0]) + u * (math.log(r[1]) - math.log(r[0])))

    rows = []
    for s in net_seeds(cfg.seed, start, stop):
        g = torch.Generator().manual_seed(s + 3_333_333)
        u = torch.rand(4, generator=g, dtype=torch.float64)
        c = [
            int(torch.randint(n, (1,), generator=g))
            for n in (len(cfg.train_fractions), len(cfg.activations), len(cfg.optimizers), len(cfg.w_inits))
        ]
        rows.append(
            (
                logu(u[0], cfg.lr_range),
                logu(u[1], cfg.l2_range),
                cfg.dropout_range[0] + u[2] * (cfg.dropout_range[1] - cfg.dropout_range[0]),
                logu(u[3], cfg.init_std_range),
                cfg.train_fractions[c[0]],
                *c[1:],
            )
        )
    cols = list(zip(*rows))
    return {
        "lr": torch.tensor(cols[0]).float(),
        "l2": torch.tensor(cols[1]).float(),
        "dropout": torch.tensor(cols[2]).float(),
        "init_std": torch.tensor(cols[3]).float(),
        "train_fraction": torch.tensor(cols[4]).float(),
        "activation": torch.tensor(cols[5]),
        "optimizer": torch.tensor(cols[6]),
        "w_init": torch.tensor(cols[7]),
    }


def _shapes(cfg: ClassifierZooConfig, spec: MLPSpec | CNNSpec) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    if isinstance(spec, MLPSpec):
        s = spec.sizes
        return [((s[l + 1], s[l]), (s[l + 1],)) for l in range(len(s) - 1)]
    k, C = spec.kernel, spec.channels
    convs = [((C, spec.in_channels if l == 0 else C, k, k), (C,)) for l in range(spec.n_conv)]
    return convs + [((spec.n_classes, C), (spec.n_classes,))]


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """Keras' fans of a weight ``[out, in]`` or ``[out_ch, in_ch, k, k]``: (in x kernel area, out x area)."""
    area = math.prod(shape[2:])
    return shape[1] * area, shape[0] * area


def _init_classifiers(
    cfg: ClassifierZooConfig, spec: MLPSpec | CNNSpec, hp: dict[str, Tensor], seeds: list[int]
) -> dict[str, Tensor]:
    """Initial weights of each network with its sampled ``w_init`` / ``init_std`` (biases zero)."""
    shapes = _shapes(cfg, spec)
    out: dict[str, list[Tensor]] = {}
    for i, s in enumerate(seeds):
        g = torch.Generator().manual_seed(s)
        std = float(hp["init_std"][i])
        scheme = cfg.w_inits[int(hp["w_init"][i])]
        for l, (ws, bs) in enumerate(shapes):
            if scheme == "uniform":
                w = (torch.rand(ws, generator=g) * 2 - 1) * (std * math.sqrt(3.0))
            elif scheme == "normal":
                w = torch.randn(ws, generator=g) * std
            else:
                w = init_weights(scheme, ws, *_fans(ws), std=std, generator=g)
            out.setdefault(f"W{l}", []).append(w)
            out.setdefault(f"b{l}", []).append(torch.zeros(bs))
    return {k: torch.stack(v) for k, v in out.items()}


def classifier_forward(
    spec: MLPSpec | CNNSpec,
    params: Mapping[str, Tensor],
    x: Tensor,
    activation: str | Sequence[str] | None = None,
    dropout: Tensor | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Logits ``[N, B, n_classes]`` of N stacked classifiers on per-network inputs ``x [N, B, C, H, W]``.

    MLPs flatten the image; CNNs run as one grouped convolution over all networks (``groups=N``).
    ``dropout`` (``[N]`` probabilities, training only) drops hidden activations (MLP) or the pooled
    features (CNN) with inverted scaling.
    """
    act_name = activation if isinstance(activation, str) else (spec.activation if activation is None else None)
    acts = None if act_name is not None else list(activation)  # per-network: handled by groups upstream
    if acts is not None:
        raise ValueError("classifier_forward takes one activation; group networks by activation")
    act = {"relu": torch.relu, "tanh": torch.tanh}.get(act_name)
    if act is None:
        raise ValueError(f"classifier activation must be 'relu' or 'tanh'; got {act_name!r}")
    N = params["W0"].shape[0]

    def drop(h: Tensor) -> Tensor:
        if dropout is None:
            return h
        p = dropout.view(N, *([1] * (h.dim() - 1))).to(h.dtype)
        keep = (torch.rand(h.shape, generator=generator, dtype=h.dtype) >= p).to(h.dtype)
        return h * keep / (1 - p)

    if isinstance(spec, MLPSpec):
        h = x.flatten(2)
        L = spec.n_layers
        for l in range(L):
            h = torch.baddbmm(params[f"b{l}"].unsqueeze(1), h, params[f"W{l}"].transpose(1, 2))
            if l < L - 1:
                h = drop(act(h))
        return h
    B = x.shape[1]
    h = x.transpose(0, 1).reshape(B, N * x.shape[2], *x.shape[3:])
    for l in range(spec.n_conv):
        W = params[f"W{l}"]
        h = torch.nn.functional.conv2d(
            h,
            W.reshape(N * W.shape[1], *W.shape[2:]),
            params[f"b{l}"].reshape(-1),
            stride=spec.stride,
            padding=spec.kernel // 2,
            groups=N,
        )
        h = act(h)
    feats = h.mean(dim=(2, 3)).view(B, N, spec.channels).transpose(0, 1)  # [N, B, C]
    feats = drop(feats)
    Wd, bd = params[f"W{spec.n_conv}"], params[f"b{spec.n_conv}"]
    return torch.baddbmm(bd.unsqueeze(1), feats, Wd.transpose(1, 2))


def _load_classifier_data(
    dataset: str, cfg: ClassifierZooConfig, data_dir: str | None
) -> tuple[Tensor, Tensor, Tensor, Tensor, str]:

    def prep(d: Any) -> Tensor:
        x = d.images
        if x.shape[1] == 3:  # grayscale (ITU-R 601 luma), as the Small CNN Zoo's CIFAR10-GS
            x = (0.299 * x[:, 0] + 0.587 * x[:, 1] + 0.114 * x[:, 2]).unsqueeze(1)
        if x.shape[-1] != cfg.image_size or x.shape[-2] != cfg.image_size:
            x = torch.nn.functional.adaptive_avg_pool2d(x, cfg.image_size)
        return x

    tr = load_images(dataset, split="train", data_dir=data_dir, limit=cfg.n_train, seed=cfg.seed)
    te = load_images(dataset, split="test", data_dir=data_dir, limit=cfg.n_test, seed=cfg.seed)
    if tr.images.shape[0] < cfg.n_train or (cfg.n_test is not None and te.images.shape[0] < cfg.n_test):
        raise ValueError(
            f"{dataset} has {tr.images.shape[0]} train / {te.images.shape[0]} test images; "
            f"n_train={cfg.n_train}, n_test={cfg.n_test} requested"
        )
    if te.images.shape[0] < 2:
        raise ValueError(f"{dataset}: the accuracy label needs at least 2 test images; got {te.images.shape[0]}")
    return prep(tr), tr.labels, prep(te), te.labels, f"{tr.source} | {te.source}"


def _predict_classes(
    spec: MLPSpec | CNNSpec, params: Mapping[str, Tensor], x: Tensor, act: str, batch: int = 2048
) -> Tensor:
    """Predicted classes ``[N, n]`` of N stacked classifiers on shared images ``x [n, C, H, W]``,
    ``batch`` images at a time (a CNN's activations over all networks and 10,000 images would not fit)."""
    N = next(iter(params.values())).shape[0]
    with torch.no_grad():
        return torch.cat(
            [classifier_forward(spec, params, xb.expand(N, *xb.shape), act).argmax(-1) for xb in x.split(batch)],
            dim=1,
        )


def split_test_halves(n_test: int, seed: int) -> tuple[Tensor, Tensor]:
    """Two disjoint random halves of ``n_test`` test-image indices (``n_test // 2`` each; an odd
    image out), the same for every network of a zoo with this ``seed``."""
    if n_test < 2:
        raise ValueError(f"two halves need at least 2 test images; got {n_test}")
    perm = torch.randperm(n_test, generator=torch.Generator().manual_seed(seed * 1_000_003 + 424_242))
    h = n_test // 2
    return perm[:h].sort().values, perm[h : 2 * h].sort().values


def classifier_zoo(
    dataset: str,
    config: ClassifierZooConfig | None = None,
    *,
    scale: str = "smoke",
    data_dir: str | None = None,
    cache: bool = True,
    cache_root: str | Path | None = None,
    workers: int = 1,
    **overrides: Any,
) -> Zoo:
    """A zoo of small classifiers on ``dataset`` trained with sampled hyperparameters.

    ``meta``: ``test_acc`` (the label: accuracy of the final snapshot on ``n_test`` test images, all
    of the test split by default), ``test_acc_a`` / ``test_acc_b`` (the same on two disjoint random
    halves of those images, :func:`split_test_halves`), ``train_acc``, ``final_loss``, and the sampled
    hyperparameters ``lr``, ``l2``, ``dropout``, ``init_std``, ``train_fraction``,
    ``activation``/``optimizer``/``w_init`` (indices into the ``info`` lists of the same names).
    Networks with the same (activation, optimizer) train together as one stacked batch. ``workers``:
    processes that fit the chunks side by side, as in :func:`~hgutils.weightspace.zoo.inr.inr_image_zoo`.
    """

    if dataset not in IMAGE_DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {IMAGE_DATASETS}")
    cfg = config if config is not None else ClassifierZooConfig.from_scale(scale, **overrides)
    if cfg.arch not in ("mlp", "cnn"):
        raise ValueError(f"arch must be 'mlp' or 'cnn'; got {cfg.arch!r}")
    for a in cfg.activations:
        if a not in ("relu", "tanh"):
            raise ValueError(f"activations must be 'relu'/'tanh'; got {a!r}")
    for o in cfg.optimizers:
        if o not in CLASSIFIER_OPTIMIZERS:
            raise ValueError(f"optimizers must be among {CLASSIFIER_OPTIMIZERS}; got {o!r}")
    for w in cfg.w_inits:
        if w not in CLASSIFIER_W_INITS:
            raise ValueError(f"w_inits must be among {CLASSIFIER_W_INITS}; got {w!r}")
    if cfg.n_test is not None and cfg.n_test < 2:
        raise ValueError(f"n_test must be None (the whole test split) or >= 2; got {cfg.n_test}")
    sched = _classifier_schedule(cfg)
    sdtype = storage_dtype(cfg.snapshot_dtype)
    xtr, ytr, xte, yte, source = _load_classifier_data(dataset, cfg, data_dir)
    n_classes = int(max(ytr.max(), yte.max())) + 1
    act0 = cfg.activations[0] if len(cfg.activations) == 1 else "mixed"
    spec: MLPSpec | CNNSpec
    if cfg.arch == "mlp":
        spec = MLPSpec((cfg.image_size**2, *cfg.hidden, n_classes), act0)
    else:
        spec = CNNSpec(in_channels=1, channels=cfg.channels, n_classes=n_classes, activation=act0)
    key = {"dataset": dataset, "config": cfg, "source": source, "version": 2}
    half_a, half_b = split_test_halves(len(yte), cfg.seed)

    def chunk(start: int, stop: int) -> dict[str, Tensor]:
        hp = _sample_hparams(cfg, start, stop)
        p0 = _init_classifiers(cfg, spec, hp, net_seeds(cfg.seed, start, stop))
        n = stop - start
        out = {k: torch.empty((n, len(sched), *v.shape[1:]), dtype=sdtype) for k, v in p0.items()}
        final_loss, train_acc, test_acc = torch.empty(n), torch.empty(n), torch.empty(n)
        test_acc_a, test_acc_b = torch.empty(n), torch.empty(n)
        g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + 999_999_937 + start)
        m_i = (hp["train_fraction"] * cfg.n_train).round().long().clamp_min(1)
        for a_i, act in enumerate(cfg.activations):
            for o_i, opt in enumerate(cfg.optimizers):
                idx = ((hp["activation"] == a_i) & (hp["optimizer"] == o_i)).nonzero().squeeze(1)
                if idx.numel() == 0:
                    continue
                n_g = idx.numel()
                perms = torch.stack([torch.randperm(cfg.n_train, generator=g) for _ in range(n_g)])
                m_g, l2_g, drop_g = m_i[idx], hp["l2"][idx], hp["dropout"][idx]
                pg = {k: v[idx] for k, v in p0.items()}
                wkeys = [k for k in pg if k.startswith("W")]

                def loss_fn(
                    q: dict[str, Tensor],
                    m_g: Tensor = m_g,
                    perms: Tensor = perms,
                    l2_g: Tensor = l2_g,
                    drop_g: Tensor = drop_g,
                    act: str = act,
                    n_g: int = n_g,
                    wkeys: list[str] = wkeys,
                ) -> Tensor:
                    r = (torch.rand(n_g, cfg.batch_size, generator=g) * m_g[:, None]).long()
                    bi = torch.gather(perms, 1, r)
                    logits = classifier_forward(spec, q, xtr[bi], act, drop_g, g)
                    ce = (
                        torch.nn.functional.cross_entropy(
                            logits.reshape(-1, n_classes), ytr[bi].reshape(-1), reduction="none"
                        )
                        .view(n_g, -1)
                        .mean(1)
                    )
                    return ce + l2_g * sum(q[k].square().flatten(1).sum(1) for k in wkeys)

                def eval_loss(q: dict[str, Tensor], act: str = act, n_g: int = n_g) -> Tensor:
                    logits = classifier_forward(spec, q, xtr.expand(n_g, *xtr.shape), act)
                    return (
                        torch.nn.functional.cross_entropy(
                            logits.reshape(-1, n_classes), ytr.repeat(n_g), reduction="none"
                        )
                        .view(n_g, -1)
                        .mean(1)
                    )

                res = train_stacked(
                    pg,
                    loss_fn,
                    steps=cfg.steps,
                    optimizer=opt,
                    lr=hp["lr"][idx],
                    snapshot_steps=sched,
                    final_loss_fn=eval_loss,
                    snapshot_dtype=sdtype,
                    **_OPTIMIZER_KW[opt],
                )
                for k in out:
                    out[k][idx] = res.snapshots[k]
                final_loss[idx] = res.losses.float()
                train_acc[idx] = (_predict_classes(spec, res.params, xtr, act) == ytr).float().mean(1)
                correct = (_predict_classes(spec, res.params, xte, act) == yte).float()
                test_acc[idx] = correct.mean(1)
                test_acc_a[idx], test_acc_b[idx] = correct[:, half_a].mean(1), correct[:, half_b].mean(1)
        accs = {"train_acc": train_acc, "test_acc": test_acc, "test_acc_a": test_acc_a, "test_acc_b": test_acc_b}
        return {**out, **hp, "final_loss": final_loss, **accs}

    def build() -> dict[str, Tensor]:
        return generate_chunked(
            "classifier_zoo",
            key,
            cfg.n_nets,
            cfg.chunk_size,
            chunk,
            root=cache_root,
            desc=f"classifier zoo {dataset}",
            persist=cache,
            workers=workers,
        )

    out = cached_zoo("classifier_zoo", key, build, cache_root, cache)
    pkeys = [f"{p}{l}" for l in range(spec.n_layers) for p in "Wb"]
    params = {k: out[k] for k in pkeys}
    meta = {k: v for k, v in out.items() if k not in pkeys}
    return Zoo(
        spec,
        params,
        torch.tensor(sched, dtype=torch.int64),
        meta,
        {
            "kind": "classifier",
            "dataset": dataset,
            "source": source,
            "config": cfg.to_dict(),
            "activations": list(cfg.activations),
            "optimizers": list(cfg.optimizers),
            "w_inits": list(cfg.w_inits),
            "n_test_images": len(yte),
        },
    )
