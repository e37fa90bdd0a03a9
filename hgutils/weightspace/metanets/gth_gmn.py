r"""GTH-GMN: the temporal hyperbolic graph meta-network (ICLR 2026, OpenReview Xq64xkQCak).

Input: a batch of temporal parameter graphs (:class:`hgutils.weightspace.graphs.TemporalParamGraph`
batch views: shared ``edge_index [2, E]``, ``node_layer [V]``, ``node_type [V]``,
``edge_attr [E, Fa]`` (is-bias, is-cross-layer), per-network ``edge_weight [B, T, E]`` and node
strength features ``node_feat [B, T, V, F]``). Snapshots are processed one at a time, so the
forward pass keeps O(one snapshot) of node states in memory whatever ``T`` is (without gradients;
training keeps autograd activations of every snapshot unless ``checkpoint_snapshots=True``, which
recomputes them snapshot by snapshot in the backward pass).

Per snapshot ``t`` (GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak, §method):

1. **Tangent-space encoders.** :math:`h_u = A x_u + \mathrm{MLP}(A x_u) + E_\ell[\ell(u)] + E_\tau[\tau(u)]`
   (strength features through a small MLP with residual, learned label embeddings), then
   :math:`z_u = a_{\ell(u),	au(u)} \oplus_c \exp_0(h_u/\sqrt d)` with learned base coordinates ``a`` on the
   ball (``ManifoldParameter`` s, refined by Riemannian Adam in stage 2).
2. **Hyperbolic graph attention** (:class:`hgutils.nn.hyperbolic_attention.HyperbolicGraphAttention`),
   ``n_attn_layers`` layers with self-loops; edge bias and gate read the edge attributes (and, by
   default, the signed weight of the edge at ``t``).
3. **Kernel evolution** (EvolveGCN): per attention layer ``l`` and head ``r``,
   :math:`p_l^{(t-1)}` = per-MLP-layer means of the tangent node states output by attention layer
   ``l`` at snapshot ``t-1`` (concatenated; zeros before the first snapshot),
   :math:`u_{l,r}^{(t)} = \mathrm{GRU}(p_l^{(t-1)}, u_{l,r}^{(t-1)})`,
   :math:`W^{(t)}_{l,r,q/k/v} = W^{base}_{l,r,q/k/v} + \mathrm{MLP}(u_{l,r}^{(t)})`.
4. **Signed-weight head** on the final states ``z`` with :math:`X = \log_0 z`:
   :math:`\log|\hat w_{uv}| = \log\nu + s_u + s_v - (1 - \alpha_{uv}/d)(k_u + k_v) - \alpha_{uv}\log d_c(z_u, z_v)`,
   :math:`\alpha_{uv} = \alpha_0 + \delta_\alpha\tanh(\mathrm{MLP}([X_u, X_v, e_{uv}]))`,
   sign logit :math:`\beta\,\lambda_{z_u}\langle\log_{z_u} z_v, \xi_u\rangle` (the conformal factor turns
   the log map into a vector whose length is the geodesic distance), :math:`\hat w = |\hat w|\tanh(\cdot)`.
5. **Fermi-Dirac decoder** :math:`\psi = 1/(1 + e^{(d_c - R)/T})`, learnable ``R, T``, BCE against
   real edges vs sampled negatives (same-layer "hard" + uniform; the hard fraction ramps up with
   training progress: the curriculum).
6. **Loss** = task + ``w_link`` link BCE + ``w_mag`` log-magnitude MSE + ``w_sign`` sign BCE +
   ``w_slope`` slope prior :math:`(\alpha-\alpha_0)^2` + ``w_smooth`` temporal smoothness
   :math:`d_c(z^{(t)}_u, z^{(t-1)}_u)^2` + ``w_rank`` ranking hinge (stronger edge => shorter
   distance) with a margin annealed from 0 to ``rank_margin``.

Training protocols (``GTHGMNConfig.protocol``; the loops are in :mod:`hgutils.weightspace.training`):

- ``"two_stage"`` (default, the paper's): **stage 1** trains the encoder, the signed-weight head and
  the decoder on the reconstruction objective alone (:meth:`GTHGMN.pretrain_terms`, weights
  ``recon_weights``; Euclidean Adam, the base coordinates by Riemannian Adam), self-supervised on the
  training networks; **stage 2** refines every snapshot's node coordinates on the ball with
  ``RiemannianAdam(amsgrad=True)`` against the reconstruction loss (:meth:`GTHGMN.refine`, step size
  ``refine_lr``); the **trajectory embedding** (:meth:`GTHGMN.trajectory_embedding`) -- per snapshot,
  the fixed-position nodes and per-layer Einstein midpoints of the refined coordinates, plus the
  final GRU states -- is frozen, standardised, and a small head is trained on it.
- ``"finetune"``: stage 1 as above, then the whole model is trained on the task (the joint
  embedding below), the reconstruction terms kept as regularisers.
- ``"joint"``: task loss plus the small auxiliary weights ``w_*`` from the start; the joint
  embedding is the last snapshot's per-layer midpoints plus the final GRU states (without GRU: the
  temporal mean of the per-snapshot pooled states).

Inputs: by default (``use_edge_weight=False``) the weights are reconstruction *targets* only -- the
model reads the node-strength features, the edge attributes and the node labels (input/output
neurons also their position); ``use_edge_weight=True`` also feeds every edge's signed weight to the
attention (a stronger-input variant). Ablations: ``snapshots=1``, ``euclidean=True`` (c -> 0),
``use_gru=False``, any weight set to 0.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass
from typing import Any

import geoopt
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

from hgutils.manifolds import poincare as pm
from hgutils.manifolds.numerics import MIN_NORM
from hgutils.nn.hyperbolic_attention import HyperbolicGraphAttention
from hgutils.weightspace.metanets.base import MetaNet, Snapshots, snapshot_index, to_device
from hgutils.weightspace.metanets.heads import info_nce, task_loss

#: How the companion cites the paper: "Temporal Geometry of Deep Networks: Hyperbolic Representations
#: of Training Dynamics for Intrinsic Explainability", ICLR 2026, OpenReview Xq64xkQCak.
CITATION = "GTH-GMN paper (ICLR 2026, OpenReview Xq64xkQCak)"
AUX_TERMS: tuple[str, ...] = ("link", "mag", "sign", "slope", "smooth", "rank")
PROTOCOLS: tuple[str, ...] = ("two_stage", "finetune", "joint")
#: stage-2 refinement objective: the reconstruction terms that are deterministic on full graphs
REFINE_TERMS: tuple[str, ...] = ("link", "mag", "sign", "smooth")


@dataclass(frozen=True)
class GTHGMNConfig:
    """GTH-GMN hyper-parameters. The paper gives none of the sizes (embedding dimension, heads,
    layers, curvature, learning rates); each default below states why it was chosen."""

    dim: int = 16  # node state dim d; small: medium preset (5k INRs, T=20) must train on 2 CPU cores
    heads: int = 2  # attention heads; 2 is the smallest "multi-head"
    head_dim: int = 4  # per-head q/k/v dim; edge-level cost ~ heads*head_dim, 4 halves it vs 8 (measured)
    n_attn_layers: int = 1  # message-passing layers; 1 keeps time/snapshot within 4x of GMN
    gru_hidden: int = 16  # GRU state per (layer, head); = dim, enough to steer a 3x8x16 kernel delta
    curvature: float = 1.0  # c; unit curvature is the common default (HGCN/HNN) when not tuned
    euclidean: bool = False  # ablation: Euclidean attention (the c -> 0 limit)
    use_gru: bool = True  # ablation: False = static kernels, each snapshot encoded independently
    use_edge_weight: bool = False  # paper: weights are reconstruction targets only; the model input is
    # the node-strength features + edge attributes. True = the stronger-input variant (edge bias, gate and
    # messages also see the signed weight of each edge)
    edge_messages: bool = False  # paper: the aggregated messages are the values v_u; True translates each
    # message by a learned map of the edge features (worth it only when the weights are edge features)

    dropout: float = 0.0  # Euclidean dropout in the tangent updates; zoos are small, keep it off
    alpha0: float = 1.0  # power-law slope prior alpha_0; 1 = inverse-distance law
    delta_alpha: float = 0.5  # max context-dependent slope change
    fd_r: float = 2.0  # Fermi-Dirac radius R init (HGCN's default 2)
    fd_t: float = 1.0  # Fermi-Dirac temperature T init (HGCN's default 1)
    aux_edges: int = 128  # positive edges sampled per snapshot for the auxiliary losses (cost cap)
    neg_per_pos: float = 1.0  # negatives per positive edge
    neg_hard_max: float = 0.5  # final fraction of same-layer (hard) negatives; curriculum from 0
    rank_margin: float = 0.2  # final ranking margin (annealed from 0 over training)
    w_task: float = 1.0
    # auxiliary weights: regularisers, each can be set to 0. Measured: at 0.1 (slope/smooth 0.01) they
    # (mainly the log-magnitude MSE) swamp the task gradient and GTH-GMN cannot fit 32 networks; at
    # these values it fits them like the baselines do (tests/test_gth_gmn.py)
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
    protocol: str = "two_stage"  # "two_stage" (frozen encoder + head) | "finetune" (pretrain, then train
    # everything on the task) | "joint" (task + small auxiliary losses from the start)
    pretrain_steps: int | None = None  # stage-1 optimiser steps (None: the run's step budget)
    refine_steps: int = 20  # stage-2 RiemannianAdam steps on each snapshot's node coordinates
    refine_lr: float = 1e-2  # stage-2 step size (the paper's remedy for its variance: a smaller step)
    refine_pairs: int = 128  # stage 2: strongest edges and closest non-edges per graph in the loss

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
    checkpoint_snapshots: bool = False  # recompute each snapshot in the backward: training memory ~flat
    # in T (only per-snapshot node states kept) for extra time; off by default since T is small on CPU

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


class GTHGMN(MetaNet):
    """GTH-GMN (module docstring). Build with :meth:`for_graph` or :func:`hgutils.weightspace.metanets.build_metanet`.

    Parameters
    ----------
    task, out_dim : task head (see :mod:`hgutils.weightspace.metanets.heads`).
    n_node_layers : number of layer labels in the graphs (``node_layer.max() + 1``).
    node_feat_dim : ``F`` of ``node_feat``.
    edge_attr_dim : ``Fa`` of ``edge_attr``.
    n_node_types : number of node types (input, hidden, output, bias).
    cfg : :class:`GTHGMNConfig`.
    """

    def __init__(
        self,
        task: str,
        out_dim: int,
        n_node_layers: int,
        node_feat_dim: int,
        edge_attr_dim: int = 2,
        n_node_types: int = 4,
        cfg: GTHGMNConfig | None = None,
        n_snapshots: int = 1,
        n_positions: int = 0,
    ) -> None:
        cfg = cfg or GTHGMNConfig()
        if cfg.heads * cfg.head_dim < 1 or cfg.dim < 1 or cfg.n_attn_layers < 1:
            raise ValueError(f"dim, heads, head_dim, n_attn_layers must be >= 1; got {asdict(cfg)}")
        if not cfg.euclidean and not cfg.curvature > 0:
            raise ValueError(f"curvature must be > 0 (use euclidean=True for the c -> 0 ablation); got {cfg.curvature}")
        if cfg.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}; got {cfg.protocol!r}")
        unknown = {k for k, _ in cfg.recon_weights} - set(AUX_TERMS)
        if unknown:
            raise ValueError(f"recon_weights names unknown terms {sorted(unknown)}; terms are {AUX_TERMS}")
        if n_snapshots < 1 or cfg.refine_steps < 0 or not cfg.refine_lr > 0:
            raise ValueError(f"need n_snapshots >= 1, refine_steps >= 0, refine_lr > 0; got {n_snapshots}, {cfg}")
        d, L, H = cfg.dim, cfg.n_attn_layers, cfg.heads
        pool_dim = n_node_layers * d
        gru_dim = L * H * cfg.gru_hidden if cfg.use_gru else 0
        if cfg.protocol == "two_stage":  # per snapshot: fixed-position nodes + per-layer midpoints
            emb_dim = n_snapshots * (n_positions + n_node_layers) * d + gru_dim
        else:
            emb_dim = pool_dim + (gru_dim if cfg.use_gru else pool_dim)
        super().__init__(task, emb_dim, out_dim, snapshots=cfg.snapshots)
        self.n_snapshots, self.n_positions = n_snapshots, n_positions
        # the head reads standardised embeddings in the two-stage protocol (training-set statistics)
        self.register_buffer("emb_mu", torch.zeros(emb_dim))
        self.register_buffer("emb_sd", torch.ones(emb_dim))
        self.cfg, self.c, self.euclidean = cfg, float(cfg.curvature), cfg.euclidean
        self.n_node_layers, self.node_feat_dim, self.edge_attr_dim = n_node_layers, node_feat_dim, edge_attr_dim
        self.n_node_types = n_node_types
        self.loss_weights = cfg.loss_weights()
        self.riemannian_lr, self.stage1_frac = cfg.riemannian_lr, cfg.stage1_frac
        # 1. tangent-space encoders
        self.feat_in = nn.Linear(node_feat_dim, d)
        self.feat_mlp = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.layer_emb = nn.Embedding(n_node_layers, d)
        self.type_emb = nn.Embedding(n_node_types, d)
        # input/output neurons keep their position (hidden neurons and bias nodes are permutable)
        self.pos_emb = nn.Embedding(n_positions + 1, d, padding_idx=0)
        nn.init.normal_(self.layer_emb.weight, std=0.1)
        nn.init.normal_(self.type_emb.weight, std=0.1)
        nn.init.normal_(self.pos_emb.weight, std=0.1)
        with torch.no_grad():
            self.pos_emb.weight[0].zero_()
        manifold = geoopt.Euclidean(ndim=1) if self.euclidean else geoopt.PoincareBall(c=self.c)
        self.anchors = geoopt.ManifoldParameter(torch.zeros(n_node_layers, n_node_types, d), manifold=manifold)
        # 2. attention layers (edge features: attrs, self-loop flag, [w, |w|])
        self.edge_dim = edge_attr_dim + 1 + (2 if cfg.use_edge_weight else 0)
        self.attn = nn.ModuleList(
            [
                HyperbolicGraphAttention(
                    d,
                    H,
                    cfg.head_dim,
                    self.edge_dim,
                    c=self.c if not self.euclidean else 1.0,
                    euclidean=self.euclidean,
                    dropout=cfg.dropout,
                    edge_messages=cfg.edge_messages,
                )
                for _ in range(L)
            ]
        )
        # torch.compile'd forward of each attention layer, used for training steps only (fixed batch
        # shape: compiled once; evaluation, probes and refinement run eager at whatever batch size)
        self._attn_compiled = [torch.compile(m.forward, dynamic=False) for m in self.attn] if cfg.compile else None
        # 3. kernel evolution: one GRU cell + kernel MLP per (attention layer, head)

        if cfg.use_gru:
            self.gru = nn.ModuleList([nn.GRUCell(pool_dim, cfg.gru_hidden) for _ in range(L * H)])
            self.kernel_mlp = nn.ModuleList(
                [
                    nn.Sequential(
                        nn.Linear(cfg.gru_hidden, cfg.gru_hidden),
                        nn.SiLU(),
                        nn.Linear(cfg.gru_hidden, 3 * cfg.head_dim * d),
                    )
                    for _ in range(L * H)
                ]
            )
            for m in self.kernel_mlp:
                nn.init.zeros_(m[-1].weight)  # kernels start at their static base values
                nn.init.zeros_(m[-1].bias)
            self.u0 = nn.Parameter(torch.zeros(L * H, cfg.gru_hidden))
        # 4. signed-weight head
        self.f_sigma = nn.Linear(d, 1)
        self.f_kappa = nn.Linear(d, 1)
        self.f_xi = nn.Linear(d, d)
        self.slope_mlp = nn.Sequential(nn.Linear(2 * d + edge_attr_dim, d), nn.SiLU(), nn.Linear(d, 1))
        self.log_nu = nn.Parameter(torch.zeros(()))
        self.beta = nn.Parameter(torch.ones(()))
        # 5. Fermi-Dirac decoder
        self.fd_r = nn.Parameter(torch.tensor(float(cfg.fd_r)))
        self.fd_t_raw = nn.Parameter(torch.tensor(float(cfg.fd_t)).expm1().log())  # softplus^-1

    # ------------------------------------------------------------------ construction / data
    @classmethod
    def for_graph(
        cls, graph: Any, task: str, out_dim: int, cfg: GTHGMNConfig | None = None, n_snapshots: int | None = None
    ) -> GTHGMN:
        """Build a model whose input sizes match ``graph`` (a TemporalParamGraph or batch view);
        ``n_snapshots`` = snapshots it will read (default: ``graph.T``)."""
        return cls(
            task,
            out_dim,
            n_node_layers=int(graph.node_layer.max()) + 1,
            node_feat_dim=graph.node_feat.shape[-1],
            edge_attr_dim=graph.edge_attr.shape[-1],
            n_node_types=max(4, int(graph.node_type.max()) + 1),
            cfg=cfg,
            n_snapshots=n_snapshots or graph.edge_weight.shape[1],
            n_positions=int((pos > 0).sum()) if (pos := getattr(graph, "node_pos", None)) is not None else 0,
        )

    def prepare(self, zoo: Any) -> Any:
        """TemporalParamGraph of ``zoo`` at the configured snapshots."""
        from hgutils.weightspace.graphs import TemporalParamGraph

        if len(zoo.steps) < 1:
            raise ValueError("the zoo has an empty trajectory (T = 0)")
        idx = snapshot_index(len(zoo.steps), self.snapshots)
        if len(idx) != len(zoo.steps):
            zoo = zoo.snapshots(idx)
        graph = TemporalParamGraph.from_zoo(zoo)
        if graph.edge_weight.dtype in (torch.float16, torch.bfloat16):
            graph = dataclasses.replace(
                graph,
                edge_weight=graph.edge_weight.float(),
                node_feat=graph.node_feat.float(),
                edge_attr=graph.edge_attr.float(),
            )
        self.check_data(graph)
        return graph

    def check_data(self, g: Any) -> None:
        if g.edge_index.dim() != 2 or g.edge_index.shape[0] != 2:
            raise ValueError(f"edge_index must be [2, E]; got {tuple(g.edge_index.shape)}")
        V, E = g.node_layer.shape[0], g.edge_index.shape[1]
        if g.node_feat.dim() != 4 or g.node_feat.shape[2] != V or g.node_feat.shape[3] != self.node_feat_dim:
            raise ValueError(f"node_feat must be [B, T, V={V}, F={self.node_feat_dim}]; got {tuple(g.node_feat.shape)}")
        if g.edge_weight.dim() != 3 or g.edge_weight.shape[2] != E or g.edge_weight.shape[:2] != g.node_feat.shape[:2]:
            raise ValueError(f"edge_weight must be [B, T, E={E}] matching node_feat; got {tuple(g.edge_weight.shape)}")
        if g.edge_weight.shape[1] < 1:
            raise ValueError("empty trajectory: the graphs have T = 0 snapshots")
        if int(g.node_layer.max()) + 1 != self.n_node_layers or int(g.node_type.max()) >= self.n_node_types:
            raise ValueError(
                f"graph has layer labels up to {int(g.node_layer.max())} / types up to "
                f"{int(g.node_type.max())}, model was built for {self.n_node_layers} layers / "
                f"{self.n_node_types} types (zoo/architecture mismatch)"
            )
        if g.edge_attr.shape != (E, self.edge_attr_dim):
            raise ValueError(f"edge_attr must be [E={E}, {self.edge_attr_dim}]; got {tuple(g.edge_attr.shape)}")

    def augment(self, batch: Any, generator: torch.Generator | None, noise: float = 0.2, mask: float = 0.5) -> Any:
        """View for InfoNCE: Gaussian noise on edge weights and node features, edges masked with prob ``mask``."""
        w, f = batch.edge_weight, batch.node_feat
        keep = (torch.rand(w.shape, generator=generator) >= mask).to(w)
        w = (w + noise * torch.randn(w.shape, generator=generator, dtype=w.dtype).to(w.device)) * keep
        f = f + noise * torch.randn(f.shape, generator=generator, dtype=f.dtype).to(f.device)
        return dataclasses.replace(batch, edge_weight=w, node_feat=f)

    # ------------------------------------------------------------------ geometry helpers
    def _dist(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (x - y).norm(dim=-1) if self.euclidean else pm.dist(x, y, self.c)

    def _tangent(self, z: Tensor) -> Tensor:
        return z if self.euclidean else pm.logmap0(z, self.c)

    def _pool_layers(self, z: Tensor, node_layer: Tensor) -> Tensor:
        """Per-MLP-layer pooling of node states ``[B, V, d]`` -> tangent ``[B, n_node_layers * d]``.

        Einstein midpoint of each layer's nodes on the ball (mean in the Euclidean ablation).
        """
        B, V, d = z.shape
        nl = self.n_node_layers
        index = (torch.arange(B, device=z.device).view(B, 1) * nl + node_layer.view(1, V)).reshape(-1)
        ones = torch.ones(B * V, dtype=z.dtype, device=z.device)
        if self.euclidean:
            s = torch.zeros(B * nl, d).to(z).index_add(0, index, z.reshape(-1, d))
            n = torch.zeros(B * nl).to(z).index_add(0, index, ones).clamp_min(1.0)
            return (s / n[:, None]).view(B, nl * d)
        mid = pm.einstein_midpoint_scatter(z.reshape(-1, d), ones, index, B * nl, self.c)
        return pm.logmap0(pm.project(mid, self.c), self.c).reshape(B, nl * d)

    def _mean_layers(self, h: Tensor, node_layer: Tensor) -> Tensor:
        """Per-MLP-layer mean of tangent vectors ``[B, V, d]`` -> ``[B, n_node_layers * d]`` (GRU input)."""
        B, V, d = h.shape
        nl = self.n_node_layers
        oh = F.one_hot(node_layer, nl).to(h.dtype)  # [V, nl]
        s = torch.einsum("vl,bvd->bld", oh, h) / oh.sum(0).clamp_min(1.0)[None, :, None]
        return s.reshape(B, nl * d)

    # ------------------------------------------------------------------ forward
    def _edge_features(self, g: Any, w_t: Tensor) -> tuple[Tensor, Tensor]:
        """Edge index with self-loops and per-graph edge features ``[B, E + V, edge_dim]``."""
        B, E = w_t.shape
        V = g.node_layer.shape[0]
        ar = torch.arange(V, device=w_t.device)
        ei = torch.cat([g.edge_index, torch.stack([ar, ar])], 1)
        attr = torch.cat([g.edge_attr.to(w_t), torch.zeros(V, self.edge_attr_dim).to(w_t)], 0)
        selfloop = torch.cat([torch.zeros(E, 1), torch.ones(V, 1)], 0).to(w_t)
        parts = [attr.expand(B, E + V, -1), selfloop.expand(B, E + V, 1)]
        if self.cfg.use_edge_weight:
            w = torch.cat([w_t, torch.zeros(B, V).to(w_t)], 1).unsqueeze(-1)
            parts += [w, w.abs()]
        return ei, torch.cat(parts, -1)

    def _pos_index(self, g: Any) -> Tensor:
        """Index into ``pos_emb`` per node: input neuron k -> k, output neuron k -> n_in + k, others 0."""
        if getattr(g, "node_pos", None) is None or self.n_positions == 0:
            return torch.zeros_like(g.node_layer)
        n_in = int((g.node_type == 0).sum())
        return g.node_pos + (g.node_type == 2).long() * n_in * (g.node_pos > 0).long()

    def _initial_points(self, g: Any, feat: Tensor) -> Tensor:
        h = self.feat_in(feat)
        h = h + self.feat_mlp(h) + self.layer_emb(g.node_layer) + self.type_emb(g.node_type)
        h = h + self.pos_emb(self._pos_index(g))

        a = self.anchors[g.node_layer, g.node_type]  # [V, d]
        if self.euclidean:
            return a + h
        return pm.project(pm.mobius_add(a.expand_as(h), pm.expmap0(h / self.cfg.dim**0.5, self.c), self.c), self.c)

    def _kernels(self, u: Tensor, layer: int) -> Tensor:
        """Evolved kernels ``[B, 3, H, head_dim, d]`` of attention layer ``layer`` from GRU states ``u``."""
        cfg, H = self.cfg, self.cfg.heads
        deltas = [
            self.kernel_mlp[layer * H + r](u[:, layer * H + r]).view(-1, 3, cfg.head_dim, cfg.dim) for r in range(H)
        ]
        return self.attn[layer].kernel.unsqueeze(0) + torch.stack(deltas, 2)

    def _snapshot(
        self,
        g: Any,
        t: int,
        u: Tensor | None,
        p_prev: list[Tensor],
        z_prev: Tensor | None,
        progress: float,
        want_aux: bool,
        generator: torch.Generator | None = None,
    ) -> tuple[Tensor, Tensor | None, list[Tensor], dict[str, Tensor]]:
        """One snapshot: encoders, GRU update of the kernels, attention layers, auxiliary terms."""
        L, H = self.cfg.n_attn_layers, self.cfg.heads
        w_t = g.edge_weight[:, t]
        ei, ef = self._edge_features(g, w_t)
        x = self._initial_points(g, g.node_feat[:, t])
        if u is not None:
            u = torch.stack([self.gru[i](p_prev[i // H], u[:, i]) for i in range(L * H)], 1)
        p_cur = []
        compiled = self._attn_compiled is not None and self.training and torch.is_grad_enabled()
        for layer in range(L):
            kernels = self._kernels(u, layer) if u is not None else None
            x = (self._attn_compiled[layer] if compiled else self.attn[layer])(x, ei, ef, kernels)

            p_cur.append(self._mean_layers(self._tangent(x), g.node_layer))
        terms = self.recon_terms(x, self._tangent(x), g, w_t, progress, z_prev, generator) if want_aux else {}
        return x, u, p_cur, terms

    def _run(
        self,
        g: Any,
        want_aux: bool,
        progress: float = 1.0,
        record: bool = False,
        generator: torch.Generator | None = None,
        weights: dict[str, float] | None = None,
    ) -> tuple[Tensor, dict[str, Tensor], list[Tensor], Tensor | None]:
        """Process the snapshots in order; returns (joint embedding, aux-loss terms, recorded node
        states, final GRU states). ``weights`` (default ``loss_weights``) decide which auxiliary terms
        are worth computing."""
        self.check_data(g)
        B, T, E = g.edge_weight.shape
        cfg, L, H = self.cfg, self.cfg.n_attn_layers, self.cfg.heads
        dtype = g.node_feat.dtype
        u = self.u0.to(dtype).unsqueeze(0).expand(B, -1, -1) if cfg.use_gru else None
        p_prev = [torch.zeros(B, self.n_node_layers * cfg.dim).to(g.node_feat) for _ in range(L)]
        aux: dict[str, Tensor] = {}
        z_prev, pooled_sum, recorded = None, None, []
        weights = self.loss_weights if weights is None else weights
        want_aux = want_aux and any(weights.get(k, 0.0) > 0 for k in AUX_TERMS)
        use_ckpt = cfg.checkpoint_snapshots and torch.is_grad_enabled()
        for t in range(T):
            args = (g, t, u, p_prev, z_prev, progress, want_aux, generator)
            if use_ckpt:  # keep only each snapshot's inputs; recompute its activations in the backward
                x, u, p_cur, terms = checkpoint(self._snapshot, *args, use_reentrant=False)
            else:
                x, u, p_cur, terms = self._snapshot(*args)
            for k, v in terms.items():
                aux[k] = aux.get(k, 0.0) + v / (T - 1 if k == "smooth" else T)
            if record:
                recorded.append(x.detach())
            if not cfg.use_gru:
                pooled = self._pool_layers(x, g.node_layer)
                pooled_sum = pooled if pooled_sum is None else pooled_sum + pooled
            z_prev, p_prev = x, p_cur
        last = self._pool_layers(z_prev, g.node_layer)
        if u is not None:
            u = torch.stack([self.gru[i](p_prev[i // H], u[:, i]) for i in range(L * H)], 1)
            emb = torch.cat([last, u.reshape(B, -1)], -1)
        else:
            emb = torch.cat([last, pooled_sum / T], -1)
        return emb, aux, recorded, u

    def embed(self, batch: Any) -> Tensor:
        """Trajectory embedding: the refined, frozen two-stage embedding (:meth:`trajectory_embedding`)
        under ``protocol="two_stage"``, else the end-to-end one (last snapshot's per-layer midpoints
        and the final GRU states)."""
        if self.cfg.protocol == "two_stage":
            return self.trajectory_embedding(batch)
        return self._run(batch, want_aux=False)[0]

    def forward(self, batch: Any) -> Tensor:
        if self.cfg.protocol == "two_stage":  # the head reads standardised embeddings
            return self.head((self.embed(batch) - self.emb_mu) / self.emb_sd)
        return self.head(self.embed(batch))

    def loss_terms(
        self,
        batch: Any,
        target: Tensor | None,
        progress: float = 0.0,
        generator: torch.Generator | None = None,
        temperature: float = 0.1,
        aug_noise: float = 0.2,
        aug_mask: float = 0.5,
    ) -> dict[str, Tensor]:
        if self.task == "infonce":
            e1, aux, _, _ = self._run(self.augment(batch, generator, aug_noise, aug_mask), True, progress)
            e2 = self._run(self.augment(batch, generator, aug_noise, aug_mask), False)[0]
            return {"task": info_nce(self.head(e1), self.head(e2), temperature), **aux}
        emb, aux, _, _ = self._run(batch, True, progress, generator=generator)
        return {"task": task_loss(self.task, self.head(emb), target), **aux}

    def pretrain_terms(
        self, batch: Any, progress: float = 0.0, generator: torch.Generator | None = None
    ) -> dict[str, Tensor]:
        """Stage 1 of the two-stage protocol: the reconstruction terms alone (self-supervised; the
        loop weighs them with :meth:`recon_weights`)."""
        return self._run(batch, True, progress, generator=generator, weights=self.recon_weights())[1]

    def recon_weights(self) -> dict[str, float]:
        """Weights of the stage-1 reconstruction objective (``GTHGMNConfig.recon_weights``)."""
        return dict(self.cfg.recon_weights)

    # ------------------------------------------------------------------ signed-weight head, decoder, losses
    def link_logit(self, d: Tensor) -> Tensor:
        """Fermi-Dirac logit :math:`(R - d)/T` (``sigmoid`` of it is :math:`\\psi`)."""
        return (self.fd_r - d) / (F.softplus(self.fd_t_raw) + 1e-3)

    def link_probability(self, d: Tensor) -> Tensor:
        r"""Fermi-Dirac edge probability :math:`\psi(d) = 1/(1 + e^{(d - R)/T})`."""
        return pm.fermi_dirac(d, self.fd_r, F.softplus(self.fd_t_raw) + 1e-3)

    def signed_weight(
        self, z: Tensor, X: Tensor, src: Tensor, dst: Tensor, attr: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Signed-weight head for edges ``src -> dst`` of node states ``z [B, V, d]`` with features ``X``.

        Returns ``(log|w_hat| [B, E'], sign logit [B, E'], alpha [B, E'], distance [B, E'])``;
        :math:`\\hat w = e^{\\log|\\hat w|}\\tanh(\\text{sign logit})`.
        """
        return self._signed_weight_at(z, src, dst, self.edge_statics(X, src, dst, attr))

    def edge_statics(self, X: Tensor, src: Tensor, dst: Tensor, attr: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        r"""The parts of the signed-weight head that depend on the node features ``X`` only:
        ``(base [B, E'], alpha [B, E'], xi [B, E', d])`` with
        :math:`\mathrm{base} = \log\nu + s_u + s_v - (1 - \alpha_{uv}/d)(k_u + k_v)`. Computed once
        when the node coordinates are refined with ``X`` fixed."""
        Xu, Xv = X.index_select(1, src), X.index_select(1, dst)
        s = self.f_sigma(X).squeeze(-1)
        k = self.f_kappa(X).squeeze(-1)
        ctx = torch.cat([Xu, Xv, attr.to(X.dtype).expand(X.shape[0], -1, -1)], -1)
        alpha = self.cfg.alpha0 + self.cfg.delta_alpha * torch.tanh(self.slope_mlp(ctx).squeeze(-1))
        base = self.log_nu + s[:, src] + s[:, dst] - (1 - alpha / self.cfg.dim) * (k[:, src] + k[:, dst])
        return base, alpha, self.f_xi(X)[:, src]

    def _signed_weight_at(
        self, z: Tensor, src: Tensor, dst: Tensor, statics: tuple[Tensor, Tensor, Tensor]
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Signed-weight head at coordinates ``z`` given :meth:`edge_statics`."""
        base, alpha, xi = statics
        zu, zv = z.index_select(1, src), z.index_select(1, dst)
        d = self._dist(zu, zv)
        log_mag = base - alpha * torch.log(d.clamp_min(MIN_NORM))
        if self.euclidean:
            delta, lam = zv - zu, torch.ones_like(d)
        else:
            delta = pm.logmap(zu, zv, self.c)
            lam = pm.lambda_x(zu, self.c)
            lam = lam.squeeze(-1) if lam.dim() == zu.dim() else lam
        sign_logit = self.beta * lam * (delta * xi).sum(-1)
        return log_mag, sign_logit, alpha, d

    def recon_terms(
        self,
        z: Tensor,
        X: Tensor,
        g: Any,
        w_t: Tensor,
        progress: float,
        z_prev: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> dict[str, Tensor]:
        """Auxiliary loss terms of one snapshot (positives: sampled real edges; module docstring).

        Edges and negatives are sampled with ``generator`` (CPU; the global generator if ``None``)."""
        cfg, dev = self.cfg, z.device
        E, V = g.edge_index.shape[1], z.shape[1]
        n = min(cfg.aux_edges, E)
        eid = torch.randperm(E, generator=generator)[:n].to(dev)
        src, dst = g.edge_index[0, eid], g.edge_index[1, eid]
        w = w_t[:, eid]
        pos = (w != 0).to(z.dtype)
        npos = pos.sum().clamp_min(1.0)
        log_mag, sign_logit, alpha, d = self.signed_weight(z, X, src, dst, g.edge_attr[eid])
        terms: dict[str, Tensor] = {}
        # Fermi-Dirac link BCE with curriculum negatives
        n_neg = max(1, int(round(cfg.neg_per_pos * n)))
        u_neg, v_neg = self._negatives(g, n_neg, cfg.neg_hard_max * min(max(progress, 0.0), 1.0), dev, generator)
        adj = torch.zeros(V, V, dtype=torch.bool, device=dev)
        adj[g.edge_index[0], g.edge_index[1]] = True
        neg_ok = (~adj[u_neg, v_neg] & (u_neg != v_neg)).to(z.dtype)
        d_neg = self._dist(z[:, u_neg], z[:, v_neg])
        l_pos = -(F.logsigmoid(self.link_logit(d)) * pos).sum() / npos
        l_neg = -(F.logsigmoid(-self.link_logit(d_neg)) * neg_ok).sum() / (neg_ok.sum() * z.shape[0]).clamp_min(1.0)
        terms["link"] = l_pos + l_neg
        # magnitude (log space, heavy tails) and sign
        target_log = torch.log(w.abs().clamp_min(MIN_NORM))
        terms["mag"] = (((log_mag - target_log) ** 2) * pos).sum() / npos
        sgn = (w > 0).to(z.dtype)
        terms["sign"] = (F.binary_cross_entropy_with_logits(sign_logit, sgn, reduction="none") * pos).sum() / npos
        terms["slope"] = ((alpha - cfg.alpha0) ** 2).mean()
        # ranking: stronger edge => shorter distance, margin annealed 0 -> rank_margin
        perm = torch.randperm(n, generator=generator).to(dev)
        y = torch.sign(w.abs() - w.abs()[:, perm]) * pos * pos[:, perm]
        margin = cfg.rank_margin * min(max(progress, 0.0), 1.0)
        hinge = F.relu(margin + y * (d - d[:, perm])) * y.abs()
        terms["rank"] = hinge.sum() / y.abs().sum().clamp_min(1.0)
        if z_prev is not None:
            terms["smooth"] = (self._dist(z, z_prev) ** 2).mean()
        return terms

    def _negatives(
        self, g: Any, n: int, hard_frac: float, dev: torch.device, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        """``n`` node pairs: a ``hard_frac`` share from the same layer, the rest uniform."""
        V = g.node_layer.shape[0]
        n_hard = int(round(hard_frac * n))
        u = torch.randint(V, (n,), generator=generator).to(dev)
        v = torch.randint(V, (n,), generator=generator).to(dev)
        if n_hard > 0:
            layer = g.node_layer.cpu()
            order = torch.argsort(layer, stable=True)
            counts = torch.bincount(layer, minlength=self.n_node_layers)
            starts = torch.cumsum(counts, 0) - counts
            lu = layer[u[:n_hard].cpu()]
            r = (torch.rand(n_hard, generator=generator) * counts[lu]).long().clamp_max(counts[lu] - 1)
            v = torch.cat([order[starts[lu] + r].to(dev), v[n_hard:]])
        return u, v

    # ------------------------------------------------------------------ stage 2: refinement on full graphs
    def _full_pairs(self, g: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Every forward (parameter) edge ``(src, dst)`` and every non-adjacent node pair
        ``(u, v)``, ``u < v``: a deterministic set, so the refinement is exactly equivariant under
        hidden-neuron permutations (no sampling by node or edge index)."""
        key = (g.edge_index.data_ptr(), g.edge_index.shape[1], str(g.edge_index.device))
        cached = getattr(self, "_pairs_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        P = g.edge_index.shape[1] // 2
        src, dst = g.edge_index[0, :P], g.edge_index[1, :P]
        V = g.node_layer.shape[0]
        adj = torch.zeros(V, V, dtype=torch.bool, device=src.device)
        adj[src, dst] = True
        adj = adj | adj.T
        iu = torch.triu_indices(V, V, 1, device=src.device)
        keep = ~adj[iu[0], iu[1]]
        out = (src, dst, iu[0][keep], iu[1][keep])
        self._pairs_cache = (key, out)
        return out

    def full_recon_terms(
        self, z: Tensor, X: Tensor, g: Any, w: Tensor, statics: tuple[Tensor, Tensor, Tensor] | None = None
    ) -> dict[str, Tensor]:
        r"""Deterministic reconstruction terms of graphs ``z [M, V, d]`` (node features ``X``) with
        symmetrised weights ``w [M, E]``: Fermi-Dirac link BCE over every parameter edge and every
        non-adjacent pair (mean of the positive and the negative part), log-magnitude MSE and sign
        BCE over every parameter edge -- the stage-2 objective, and the metrics' basis. ``statics``:
        :meth:`edge_statics` of ``X`` on the parameter edges, if already computed."""
        src, dst, u_neg, v_neg = self._full_pairs(g)
        P = src.shape[0]
        wp = w[:, :P]
        statics = statics if statics is not None else self.edge_statics(X, src, dst, g.edge_attr[:P])
        log_mag, sign_logit, _, d = self._signed_weight_at(z, src, dst, statics)
        d_neg = self._dist(z[:, u_neg], z[:, v_neg])
        nz = (wp != 0).to(z.dtype)
        n_nz = nz.sum().clamp_min(1.0)
        link = -F.logsigmoid(self.link_logit(d)).mean() - F.logsigmoid(-self.link_logit(d_neg)).mean()
        mag = (((log_mag - torch.log(wp.abs().clamp_min(MIN_NORM))) ** 2) * nz).sum() / n_nz
        sign = (F.binary_cross_entropy_with_logits(sign_logit, (wp > 0).to(z.dtype), reduction="none") * nz).sum()
        return {"link": link, "mag": mag, "sign": sign / n_nz}

    def node_states(self, batch: Any) -> tuple[Tensor, Tensor | None]:
        """Encoder output without gradients: node coordinates ``[B, T, V, d]`` of every snapshot and
        the final GRU states ``[B, L*H*gru_hidden]`` (``None`` without GRU)."""
        with torch.no_grad():
            _, _, zs, u = self._run(batch, want_aux=False, record=True)
        return torch.stack(zs, 1), (u.reshape(u.shape[0], -1) if u is not None else None)

    def refine(self, z0: Tensor, batch: Any, steps: int | None = None, lr: float | None = None) -> Tensor:
        r"""Stage 2: Riemannian refinement of node coordinates ``z0 [B, T, V, d]`` on the ball.

        The coordinates of every snapshot are one ``ManifoldParameter`` moved by geoopt
        ``RiemannianAdam(amsgrad=True)`` (RAMSGrad: conformal-factor-scaled gradients, moment
        estimates transported along the update, exponential-map steps) for ``steps`` steps of size
        ``lr`` against the reconstruction loss (link + magnitude + sign, weighted as in stage 1) plus
        the temporal smoothness :math:`d_c(z^{(t)}_u, z^{(t-1)}_u)^2`; the decoder and the node
        features :math:`X = \log_0 z_0` stay fixed. Each graph's loss covers its ``refine_pairs``
        strongest parameter edges (by :math:`|w|`) and its ``refine_pairs`` currently closest
        non-adjacent pairs (the negatives the decoder most confuses, re-chosen every step) -- a
        selection by values, not by index, so the refinement stays deterministic and equivariant
        under hidden-neuron permutations. Returns the refined coordinates (detached).
        """
        steps = self.cfg.refine_steps if steps is None else steps
        lr = self.cfg.refine_lr if lr is None else lr
        if steps <= 0:
            return z0
        B, T, V, d = z0.shape
        g = batch
        w = g.edge_weight.reshape(B * T, -1)
        X = self._tangent(z0).reshape(B * T, V, d).detach()
        man = geoopt.Euclidean(ndim=1) if self.euclidean else geoopt.PoincareBall(c=self.c)
        z = geoopt.ManifoldParameter(z0.detach().clone(), manifold=man)
        opt = geoopt.optim.RiemannianAdam([z], lr=lr, amsgrad=True)
        rw = self.recon_weights()
        req = [p.requires_grad for p in self.parameters()]
        for p in self.parameters():
            p.requires_grad_(False)
        try:
            src, dst, u_neg, v_neg = self._full_pairs(g)
            P = src.shape[0]
            base, alpha, xi = self.edge_statics(X, src, dst, g.edge_attr[:P])  # X is fixed
            k_pos, k_neg = min(self.cfg.refine_pairs, P), min(self.cfg.refine_pairs, u_neg.shape[0])
            wp = w[:, :P]
            e_idx = wp.abs().topk(k_pos, dim=1).indices  # [M, k]: the strongest edges of each graph
            w_sel = wp.gather(1, e_idx)
            base, alpha = base.gather(1, e_idx), alpha.gather(1, e_idx)
            xi = xi.gather(1, e_idx[..., None].expand(-1, -1, d))
            s_sel, d_sel = src[e_idx], dst[e_idx]
            nz = (w_sel != 0).to(z0.dtype)
            target_log, sgn = torch.log(w_sel.abs().clamp_min(MIN_NORM)), (w_sel > 0).to(z0.dtype)
            for _ in range(steps):
                opt.zero_grad()
                zf = z.reshape(B * T, V, d)
                with torch.no_grad():  # the closest non-adjacent pairs right now
                    n_idx = (-self._dist(zf[:, u_neg], zf[:, v_neg])).topk(k_neg, dim=1).indices
                zu, zv = _take(zf, s_sel), _take(zf, d_sel)
                dpos = self._dist(zu, zv)
                dneg = self._dist(_take(zf, u_neg[n_idx]), _take(zf, v_neg[n_idx]))
                if self.euclidean:
                    delta, lam = zv - zu, torch.ones_like(dpos)
                else:
                    delta, lam = pm.logmap(zu, zv, self.c), pm.lambda_x(zu, self.c)
                sign_logit = self.beta * lam * (delta * xi).sum(-1)
                log_mag = base - alpha * torch.log(dpos.clamp_min(MIN_NORM))
                n_nz = nz.sum().clamp_min(1.0)
                terms = {
                    "link": -F.logsigmoid(self.link_logit(dpos)).mean() - F.logsigmoid(-self.link_logit(dneg)).mean(),
                    "mag": (((log_mag - target_log) ** 2) * nz).sum() / n_nz,
                    "sign": (F.binary_cross_entropy_with_logits(sign_logit, sgn, reduction="none") * nz).sum() / n_nz,
                }
                loss = sum(rw.get(k, 0.0) * v for k, v in terms.items())

                if T > 1 and rw.get("smooth", 0.0) > 0:
                    loss = loss + rw["smooth"] * (self._dist(z[:, 1:], z[:, :-1]) ** 2).mean()
                loss.backward()
                opt.step()
        finally:
            for p, r in zip(self.parameters(), req):
                p.requires_grad_(r)
        return z.detach()

    def _group_pool(self, z: Tensor, g: Any) -> Tensor:
        """``[M, V, d]`` ball points -> ``[M, n_positions + n_node_layers, d]`` tangent vectors: each
        fixed-position node (input/output neuron) on its own, then the Einstein midpoint of each
        layer's permutable nodes (hidden neurons and bias nodes; zero for a layer without any)."""
        M, V, d = z.shape
        pos = self._pos_index(g)
        fixed = pos > 0
        tang = self._tangent(z)
        out = torch.zeros(M, self.n_positions + self.n_node_layers, d, dtype=z.dtype, device=z.device)
        if self.n_positions:
            out[:, pos[fixed] - 1] = tang[:, fixed]
        free = ~fixed
        layer = g.node_layer[free]
        nl = self.n_node_layers
        zf = z[:, free]
        index = (torch.arange(M, device=z.device).view(M, 1) * nl + layer.view(1, -1)).reshape(-1)
        ones = torch.ones(index.shape[0], dtype=z.dtype, device=z.device)
        counts = torch.bincount(layer, minlength=nl).to(z.device)
        if self.euclidean:
            s = torch.zeros(M * nl, d).to(z).index_add(0, index, zf.reshape(-1, d))
            pooled = s.view(M, nl, d) / counts.clamp_min(1).to(z).view(1, nl, 1)
        else:
            mid = pm.einstein_midpoint_scatter(zf.reshape(-1, d), ones, index, M * nl, self.c)
            pooled = pm.logmap0(pm.project(mid, self.c), self.c).view(M, nl, d)
        pooled = pooled * (counts > 0).to(z.dtype).view(1, nl, 1)
        out[:, self.n_positions :] = pooled
        return out

    def trajectory_embedding(
        self, batch: Any, refine_steps: int | None = None, refine_lr: float | None = None
    ) -> Tensor:
        """The two-stage trajectory embedding ``[B, emb_dim]``: encoder (no gradient), stage-2
        refinement (:meth:`refine`), then per snapshot the fixed-position nodes and the per-layer
        midpoints (:meth:`_group_pool`, tangent space), concatenated over snapshots, plus the final
        GRU states. Invariant under hidden-neuron permutations of every snapshot."""
        was = self.training
        self.eval()
        batch = to_device(batch, self.anchors.device)
        z0, u = self.node_states(batch)
        with torch.enable_grad():
            z = self.refine(z0, batch, refine_steps, refine_lr)
        B, T, V, d = z.shape
        parts = [self._group_pool(z.reshape(B * T, V, d), batch).reshape(B, -1)]
        if u is not None:
            parts.append(u)
        self.train(was)
        return torch.cat(parts, -1)

    @torch.no_grad()
    def recon_metrics(self, batch: Any, refine_steps: int | None = None) -> dict[str, float]:
        """How well the embedding reconstructs the weight graphs, against an uninformative decoder.

        On every parameter edge and every non-adjacent pair of every snapshot of ``batch``
        (coordinates after the stage-2 refinement unless ``refine_steps=0``): ``link_bce`` (the
        positive + negative BCE; an uninformative decoder scores :math:`2\\ln 2 = 1.386`),
        ``link_auc`` (distances rank edges above non-edges; 0.5 = uninformative), ``sign_acc`` vs
        ``sign_majority`` (always predicting the commoner sign), ``mag_r2`` (1 - MSE / variance of
        :math:`\\log|w|`; 0 = predicting the mean).
        """
        was = self.training
        self.eval()
        batch = to_device(batch, self.anchors.device)
        z0, _ = self.node_states(batch)
        with torch.enable_grad():
            z = self.refine(z0, batch, refine_steps)
        B, T, V, d = z.shape
        zf, X = z.reshape(B * T, V, d), self._tangent(z0).reshape(B * T, V, d)
        w = batch.edge_weight.reshape(B * T, -1)
        src, dst, u_neg, v_neg = self._full_pairs(batch)
        P = src.shape[0]
        terms = self.full_recon_terms(zf, X, batch, w)
        log_mag, sign_logit, _, dp = self.signed_weight(zf, X, src, dst, batch.edge_attr[:P])
        dn = self._dist(zf[:, u_neg], zf[:, v_neg])
        # AUC of "closer = edge" (Mann-Whitney from ranks), per graph, averaged

        lp, ln_ = -dp, -dn
        allv = torch.cat([lp, ln_], 1)
        ranks = allv.argsort(1).argsort(1).to(torch.float64) + 1
        auc = (ranks[:, :P].sum(1) - P * (P + 1) / 2) / (P * ln_.shape[1])
        wp = w[:, :P]
        nz = wp != 0
        sign_acc = ((sign_logit > 0) == (wp > 0))[nz].double().mean()
        frac_pos = (wp > 0)[nz].double().mean()
        lw = torch.log(wp.abs().clamp_min(MIN_NORM))[nz].double()
        mse = ((log_mag[nz].double() - lw) ** 2).mean()
        self.train(was)
        return {
            "link_bce": float(terms["link"]),
            "link_auc": float(auc.mean()),
            "sign_acc": float(sign_acc),
            "sign_majority": float(torch.maximum(frac_pos, 1 - frac_pos)),
            "mag_r2": float(1 - mse / lw.var(unbiased=False).clamp_min(1e-30)),
        }

    # ------------------------------------------------------------------ node coordinates (figures)
    def embed_nodes(self, batch: Any, refine_steps: int = 0, refine_lr: float | None = None) -> Tensor:
        """Node coordinates ``[B, T, V, d]`` on the ball for every snapshot of ``batch``, after
        ``refine_steps`` steps of the stage-2 refinement (:meth:`refine`; 0 = the encoder's output)."""
        was = self.training
        self.eval()
        batch = to_device(batch, self.anchors.device)
        z0, _ = self.node_states(batch)
        with torch.enable_grad():
            z = self.refine(z0, batch, refine_steps, refine_lr)
        self.zero_grad(set_to_none=True)
        self.train(was)
        return z


def _take(z: Tensor, idx: Tensor) -> Tensor:
    """Per-graph node gather: ``z [M, V, d]``, ``idx [M, k]`` -> ``[M, k, d]``."""
    return z.gather(1, idx[..., None].expand(-1, -1, z.shape[-1]))
