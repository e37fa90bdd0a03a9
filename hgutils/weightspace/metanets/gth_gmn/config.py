"""GTH-GMN's hyper-parameters (:class:`GTHGMNConfig`) and the names the other modules share."""

from __future__ import annotations

from dataclasses import dataclass

from hgutils.nn.hyperbolic_attention import MAX_RADIUS
from hgutils.weightspace.metanets.base import Snapshots

#: How the companion cites the paper: "Temporal Geometry of Deep Networks: Hyperbolic Representations
#: of Training Dynamics for Intrinsic Explainability", ICLR 2026, OpenReview Xq64xkQCak.
CITATION = "GTH-GMN paper (ICLR 2026, OpenReview Xq64xkQCak)"
AUX_TERMS: tuple[str, ...] = ("link", "mag", "sign", "slope", "smooth", "rank")
PROTOCOLS: tuple[str, ...] = ("two_stage", "finetune", "joint")
#: stage-2 refinement objective: the reconstruction terms that are deterministic on full graphs
REFINE_TERMS: tuple[str, ...] = ("link", "mag", "sign", "smooth")
#: what counts as an edge for the Fermi-Dirac link decoder (:mod:`.links`)
LINK_READINGS: tuple[str, ...] = ("strong", "literal")
#: the declared model sizes of the selection grid (:mod:`hgutils.experiments.gth_selection`), as
#: :class:`GTHGMNConfig` overrides: "default" is today's configuration; "large" the size that gained most
#: at equal epochs when the sizes were measured (dim 32, 2 attention layers, 4 heads x 8, GRU 32)
SIZES: dict[str, dict[str, int]] = {
    "default": {},
    "large": {"dim": 32, "n_attn_layers": 2, "heads": 4, "head_dim": 8, "gru_hidden": 32},
}
_SIZE_FIELDS: tuple[str, ...] = ("dim", "n_attn_layers", "heads", "head_dim", "gru_hidden")


@dataclass(frozen=True)
class GTHGMNConfig:
    """GTH-GMN hyper-parameters. The paper gives none of the sizes (embedding dimension, heads,
    layers, curvature, learning rates); each default below states why it was chosen."""

    dim: int = 16  # node state dim d; small: the medium preset must train on 2 CPU cores
    heads: int = 2  # attention heads; 2 is the smallest "multi-head"
    head_dim: int = 4  # per-head q/k/v dim
    n_attn_layers: int = 1  # message-passing layers
    gru_hidden: int = 16  # GRU state per (layer, head); = dim, enough to steer a 3x4x16 kernel delta
    curvature: float = 1.0  # c; unit curvature is the common default (HGCN/HNN) when not tuned
    max_radius: float | None = None  # largest hyperbolic radius of a node state (smooth cap); None:
    # MAX_RADIUS / sqrt(c) (6 at c = 1), the same Euclidean fraction of the ball at every curvature (float32-safe)
    euclidean: bool = False  # ablation: Euclidean attention (the c -> 0 limit)
    use_gru: bool = True  # ablation: False = static kernels, each snapshot encoded independently
    use_edge_weight: bool = False  # paper: weights are reconstruction targets only; the model input is
    # the node-strength features + edge attributes. True = the stronger-input variant (edge bias, gate and
    # messages also see the signed weight of each edge)
    edge_messages: bool = False  # True translates each message by a learned map of the edge features
    raw_weights: bool = True  # read (and reconstruct) the trained weights, not the per-entry standardised
    # inputs the baselines read (per-entry z-scores erase the layer structure the decoder reconstructs)

    dropout: float = 0.0  # Euclidean dropout in the tangent updates; zoos are small, keep it off
    alpha0: float = 1.0  # power-law slope prior alpha_0; 1 = inverse-distance law
    delta_alpha: float = 0.5  # max context-dependent slope change
    fd_r: float = 2.0  # Fermi-Dirac radius R init (HGCN's default 2)
    fd_t: float = 1.0  # Fermi-Dirac temperature T init (HGCN's default 1)
    link_reading: str = "strong"  # "strong": an edge is a top-link_q |w| pair of its layer block (negatives:
    # the block's weak pairs + same-layer pairs); "literal": every nonzero weight is an edge (negatives: every
    # non-adjacent pair). On dense MLPs the literal graph is complete bipartite per layer pair, which a
    # distance-threshold decoder cannot represent (link AUC ceiling ~0.55); see notebook 01
    link_q: float = 0.2  # strong reading: share of each layer block's pairs that are edges
    aux_edges: int = 128  # positive pairs sampled per snapshot for the stage-1 terms (cost cap)
    neg_per_pos: float = 1.0  # negatives per positive pair
    neg_hard_max: float = 0.5  # final fraction of same-layer (hard) negatives; curriculum from 0
    rank_margin: float = 0.2  # final ranking margin (annealed from 0 over training)
    w_task: float = 1.0
    # auxiliary weights of the joint protocol: regularisers, each can be set to 0
    w_link: float = 0.01
    w_mag: float = 0.01
    w_sign: float = 0.01
    w_slope: float = 0.001
    w_smooth: float = 0.001
    w_rank: float = 0.01
    riemannian_lr: float = 1e-3  # RiemannianAdam lr of the base coordinates ("joint" protocol)
    stage1_frac: float = 0.5  # "joint": fraction of epochs with Euclidean Adam only, before RAdam starts
    # -- the paper's training (protocol "two_stage"): (1) self-supervised reconstruction of the weight
    # graphs (Euclidean backprop of kernels, heads and decoder), (2) Riemannian refinement of every
    # snapshot's node coordinates against the reconstruction loss, then a small head on the embedding
    protocol: str = "two_stage"  # "two_stage" | "finetune" | "joint"
    pretrain_steps: int | None = None  # stage-1 optimiser steps (None: the run's budget, early-stopped on the
    # validation reconstruction loss)
    pretrain_networks: int | None = None  # stage 1 on the first this-many training networks (None: all); the
    # objective is self-supervised, so a subset bounds its cost at large zoos (the head still sees every network)
    refine_steps: int = 20  # stage-2 RiemannianAdam steps on each snapshot's node coordinates
    refine_lr: float = 1e-2  # stage-2 step size (the paper's remedy for its variance: a smaller step)
    refine_batch: int = 16  # stage 2 refines this many networks at once (memory: every pair of every snapshot)
    head_networks_per_param: float | None = None  # two-stage head sized for the training set
    # (:func:`frozen_head_components`): a linear head on the leading principal components of the frozen
    # embedding with at least this many training networks per head parameter; None: the default MLP head

    recon_weights: tuple[tuple[str, float], ...] = (
        ("link", 1.0),
        ("mag", 1.0),
        ("sign", 1.0),
        ("slope", 0.01),
        ("smooth", 0.1),
        ("rank", 1.0),
    )  # stage-1 objective (every term O(1) at init; slope/smooth are priors)
    compile: bool = False  # torch.compile the attention layers (pays off for long runs; compile takes ~1 min)

    snapshots: Snapshots = "all"  # GTH-GMN reads the whole trajectory; 1 = single-checkpoint ablation
    checkpoint_snapshots: bool = False  # recompute each snapshot in the backward: training memory ~flat in T

    def size_name(self) -> str:
        """The name in :data:`SIZES` whose sizes this configuration has (``"custom"`` for none)."""
        base = GTHGMNConfig()
        for name, over in SIZES.items():
            if all(getattr(self, f) == over.get(f, getattr(base, f)) for f in _SIZE_FIELDS):
                return name
        return "custom"

    def radius_cap(self) -> float:
        """The effective ``max_radius`` (module-level default scaled by the curvature)."""
        if self.max_radius is not None:
            return float(self.max_radius)
        return MAX_RADIUS if self.euclidean else MAX_RADIUS / self.curvature**0.5

    def loss_weights(self) -> dict[str, float]:
        return {
            "task": self.w_task,
            "link": self.w_link,
            "mag": self.w_mag,
            "sign": self.w_sign,
            "slope": self.w_slope,
            "smooth": self.w_smooth,
            "rank": self.w_rank,
        }


#: the fewest principal components the sized head reads (:func:`frozen_head_components`): the width every
#: encoder's linear probe reads in notebook 02 (DWSNets' 16-d encoder output,
#: :data:`hgutils.weightspace.tasks.PROBE_COMPONENTS`). Without a floor the rule shrinks with the training set:
#: 480 training INRs and 10 classes gave 3 components, a linear map on 3 numbers for a 10-class task
MIN_HEAD_COMPONENTS = 16


def frozen_head_components(n_train: int, emb_dim: int, out_dim: int, networks_per_param: float) -> int:
    r"""How many principal components of the frozen two-stage embedding the sized head reads.

    The head of "GTH-GMN (two-stage, frozen)" is linear on the leading :math:`p` principal components
    (of the standardised training embeddings), so it has :math:`(p + 1)\,k` parameters for :math:`k`
    outputs. The rule keeps at least ``networks_per_param`` (:math:`r`) training networks per parameter, but
    never reads fewer than :math:`m = \max(m_0, k)` components (:math:`m_0` = :data:`MIN_HEAD_COMPONENTS`, and
    at least one per class):

    .. math:: p = \min\Big(D,\ n - 1,\ \max\big(m,\ \lfloor n / (r k) \rfloor - 1\big)\Big)

    with :math:`n` training networks and :math:`D` embedding dimensions (a PCA of :math:`n` points has at
    most :math:`n - 1` non-trivial components). E.g. :math:`n = 440, k = 1, r = 10`: :math:`p = 43` (notebook 03
    at medium, as before the floor); :math:`n = 2400, k = 10`: :math:`p = 23`; :math:`n = 480, k = 10`:
    :math:`p = 16` (the rule alone: 3). Below :math:`n \approx r k (m + 1)` training networks the floor wins and
    the head has fewer than :math:`r` networks per parameter: a handful of components cannot hold a 10-class
    read-out, and the head's early stopping on validation guards the small zoo instead.
    """
    if n_train < 2 or emb_dim < 1 or out_dim < 1 or not networks_per_param > 0:
        raise ValueError(
            f"need n_train >= 2, emb_dim >= 1, out_dim >= 1, networks_per_param > 0; got {n_train}, {emb_dim}, "
            f"{out_dim}, {networks_per_param}"
        )
    floor = max(MIN_HEAD_COMPONENTS, out_dim)
    return min(emb_dim, n_train - 1, max(floor, int(n_train // (networks_per_param * out_dim)) - 1))
