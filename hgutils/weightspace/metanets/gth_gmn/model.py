r"""The GTH-GMN meta-network: encoder + decoders + the three training protocols' embeddings.

Input: a batch of temporal parameter graphs (:class:`hgutils.weightspace.graphs.TemporalParamGraph`
batch views: shared ``edge_index [2, E]``, ``node_layer [V]``, ``node_type [V]``,
``edge_attr [E, Fa]`` (is-bias, is-cross-layer), per-network ``edge_weight [B, T, E]`` and node
strength features ``node_feat [B, T, V, F]``). With ``raw_weights`` (default) the graphs are built
from the trained weights themselves, so the decoder reconstructs weights, not standardised inputs.

Protocols (``GTHGMNConfig.protocol``; the loops are in :mod:`hgutils.weightspace.tasks`):

- ``"two_stage"`` (default, the paper's): **stage 1** trains encoder, signed-weight head and
  decoder on the reconstruction objective alone (:meth:`GTHGMN.pretrain_terms`, weights
  ``recon_weights``); **stage 2** refines every snapshot's node coordinates on the ball
  (:meth:`GTHGMN.refine`, :mod:`.refine`); the **trajectory embedding**
  (:meth:`GTHGMN.trajectory_embedding`) -- per snapshot the fixed-position nodes and per-layer
  Einstein midpoints of the refined coordinates, plus the final GRU states -- is frozen, standardised,
  and a small head is trained on it.
- ``"finetune"``: stage 1, then the whole model is trained on the task (the joint embedding below),
  the reconstruction terms kept as regularisers.
- ``"joint"``: task loss plus the small auxiliary weights ``w_*`` from the start; the joint
  embedding is the last snapshot's per-layer midpoints plus the final GRU states (without GRU: the
  temporal mean of the per-snapshot pooled states).

Ablations: ``snapshots=1``, ``euclidean=True`` (c -> 0), ``use_gru=False``, any weight set to 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from hgutils.manifolds import poincare as pm
from hgutils.weightspace.graphs import TemporalParamGraph
from hgutils.weightspace.metanets.base import MetaNet, snapshot_index, to_device
from hgutils.weightspace.metanets.gth_gmn.config import AUX_TERMS, PROTOCOLS, GTHGMNConfig, frozen_head_components
from hgutils.weightspace.metanets.gth_gmn.decoders import (
    FermiDirac,
    Geometry,
    Reconstruction,
    SignedWeightHead,
    full_terms,
    parameter_values,
    reconstruction_metrics,
)
from hgutils.weightspace.metanets.gth_gmn.encoder import TrajectoryEncoder
from hgutils.weightspace.metanets.gth_gmn.links import PairSets, check_reading, edge_sets
from hgutils.weightspace.metanets.gth_gmn.refine import PAIRS_PER_CHUNK, refine_coordinates
from hgutils.weightspace.metanets.gth_gmn.stage1 import sampled_terms
from hgutils.weightspace.metanets.heads import info_nce, task_loss

if TYPE_CHECKING:  # for annotations only: importing the zoo package here would load every zoo builder
    from hgutils.weightspace.zoo.containers import Zoo


class ProjectedLinearHead(torch.nn.Module):
    r"""The sized head of the frozen two-stage reading: :math:`y = W P^\top x + b`, ``P [D, p]`` the
    leading principal directions of the training embeddings (a fixed buffer), ``W [k, p]`` trained
    (:func:`~.config.frozen_head_components` decides ``p``). ``"accuracy"`` returns one value per network."""

    def __init__(self, task: str, proj: Tensor, out_dim: int) -> None:
        super().__init__()
        self.task = task
        self.register_buffer("proj", proj)
        self.net = torch.nn.Sequential(torch.nn.Linear(proj.shape[1], 1 if task == "accuracy" else out_dim))

    def forward(self, emb: Tensor) -> Tensor:
        out = self.net(emb @ self.proj)
        return out.squeeze(-1) if self.task == "accuracy" else out


class GTHGMN(MetaNet):
    """GTH-GMN (module docstring). Build with :meth:`for_graph` or :func:`hgutils.weightspace.metanets.build_metanet`.

    Parameters
    ----------
    task, out_dim : task head (see :mod:`hgutils.weightspace.metanets.heads`).
    n_node_layers : number of layer labels in the graphs (``node_layer.max() + 1``).
    node_feat_dim : ``F`` of ``node_feat``.
    edge_attr_dim : ``Fa`` of ``edge_attr``.
    n_node_types : number of node types (input, hidden, output, bias).
    cfg : :class:`~.config.GTHGMNConfig`.
    n_snapshots : snapshots the model reads (sizes the two-stage embedding).
    n_positions : input + output neurons (they keep their position; 0 = none).
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
        check_reading(cfg.link_reading)
        if not 0.0 < cfg.link_q < 1.0:
            raise ValueError(f"link_q must be in (0, 1); got {cfg.link_q}")
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
        self.geom = Geometry(self.c, self.euclidean)
        self.n_node_layers, self.node_feat_dim, self.edge_attr_dim = n_node_layers, node_feat_dim, edge_attr_dim
        self.n_node_types = n_node_types
        self.loss_weights = cfg.loss_weights()
        self.riemannian_lr, self.stage1_frac = cfg.riemannian_lr, cfg.stage1_frac
        self.encoder = TrajectoryEncoder(n_node_layers, node_feat_dim, edge_attr_dim, n_node_types, n_positions, cfg)
        self.weight_head = SignedWeightHead(d, edge_attr_dim, cfg.alpha0, cfg.delta_alpha)
        self.decoder = FermiDirac(cfg.fd_r, cfg.fd_t)
        self._pairs: tuple[Any, PairSets] | None = None

    def size_head(self, z_train: Tensor) -> int:
        """Replace the head by the sized linear head of the frozen reading (:class:`ProjectedLinearHead`),
        reading the leading ``p`` principal components of the standardised training embeddings
        ``z_train [n, D]``, ``p`` by :func:`~.config.frozen_head_components` with
        ``cfg.head_networks_per_param``; returns ``p``."""
        r = self.cfg.head_networks_per_param
        if r is None or self.cfg.protocol != "two_stage":
            raise ValueError(f"a sized head needs protocol 'two_stage' and head_networks_per_param; got {self.cfg}")
        k = self.head.net[-1].out_features
        p = frozen_head_components(z_train.shape[0], z_train.shape[1], k, r)
        x = (z_train - z_train.mean(0)).double()
        _, _, vh = torch.linalg.svd(x, full_matrices=False)
        self.head = ProjectedLinearHead(self.task, vh[:p].T.to(z_train.dtype).contiguous(), k).to(z_train.device)
        return p

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        """``nn.Module.load_state_dict``; a state saved after :meth:`size_head` (it holds ``head.proj``)
        first gets the sized head, built from the saved projection, so a fresh model can load it."""
        proj = state_dict.get("head.proj")
        if proj is not None and not isinstance(self.head, ProjectedLinearHead):
            k = self.head.net[-1].out_features
            self.head = ProjectedLinearHead(self.task, torch.zeros_like(proj), k).to(proj.device)
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

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

    @property
    def reads_raw_weights(self) -> bool:
        """Whether this model reads the trained weights rather than the shared standardised inputs
        (:func:`hgutils.weightspace.inputs.prepare_inputs` gives it the raw zoo)."""
        return self.cfg.raw_weights

    @property
    def anchors(self) -> Any:
        """The learned base coordinates on the ball ``[n_node_layers, n_node_types, d]``."""
        return self.encoder.anchors

    def prepare(self, zoo: Zoo) -> Any:
        """TemporalParamGraph of ``zoo`` at the configured snapshots."""

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

    def pairs(self, g: Any) -> PairSets:
        """The node-pair sets of ``g``'s topology (cached per topology and device)."""
        key = (g.edge_index.data_ptr(), g.edge_index.shape[1], str(g.edge_index.device))
        if self._pairs is None or self._pairs[0] != key:
            self._pairs = (key, PairSets.from_graph(g))
        return self._pairs[1]

    def augment(self, batch: Any, generator: torch.Generator | None, shift: float = 0.2, drop: float = 0.5) -> Any:
        """The self-supervised view: DWSNets' shift + dropout of the trained weights, node features
        recomputed from the augmented weights (:meth:`~hgutils.weightspace.graphs.TemporalParamGraph.dwsnets_view`)."""
        return batch.dwsnets_view(generator, shift, drop)

    # ------------------------------------------------------------------ pooling
    def _tangent(self, z: Tensor) -> Tensor:
        return self.geom.tangent(z)

    def _pool_layers(self, z: Tensor, node_layer: Tensor) -> Tensor:
        """Per-MLP-layer pooling of node states ``[B, V, d]`` -> tangent ``[B, n_node_layers * d]``
        (Einstein midpoint of each layer's nodes on the ball; mean in the Euclidean ablation)."""
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

    def _group_pool(self, z: Tensor, g: Any) -> Tensor:
        """``[M, V, d]`` ball points -> ``[M, n_positions + n_node_layers, d]`` tangent vectors: each
        fixed-position node (input/output neuron) on its own, then the Einstein midpoint of each
        layer's permutable nodes (hidden neurons and bias nodes; zero for a layer without any)."""
        M, V, d = z.shape
        pos = self.encoder.pos_index(g)
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
        out[:, self.n_positions :] = pooled * (counts > 0).to(z.dtype).view(1, nl, 1)
        return out

    # ------------------------------------------------------------------ the forward pass
    def _run(
        self,
        g: Any,
        want_aux: bool,
        progress: float = 1.0,
        record: bool = False,
        generator: torch.Generator | None = None,
        weights: dict[str, float] | None = None,
    ) -> tuple[Tensor, dict[str, Tensor], Tensor | None, Tensor | None]:
        """Encode the snapshots in order; returns (joint embedding, reconstruction terms averaged over
        snapshots, recorded node states ``[B, T, V, d]`` (``record``, else ``None``), final GRU states).
        ``weights`` (default ``loss_weights``) decide whether the reconstruction terms are worth computing."""
        self.check_data(g)
        B, T, E = g.edge_weight.shape
        weights = self.loss_weights if weights is None else weights
        want_aux = want_aux and any(weights.get(k, 0.0) > 0 for k in AUX_TERMS)
        keep = want_aux or record or not self.cfg.use_gru
        u, states = self.encoder.run(g, keep=keep)  # [B, T or 1, V, d]
        z = states if keep else None
        aux = self._sampled_terms(g, z, progress, generator) if want_aux else {}
        pooled_last = self._pool_layers(states[:, -1], g.node_layer)
        if u is not None:
            emb = torch.cat([pooled_last, u.reshape(B, -1)], -1)
        else:
            V, d = z.shape[2:]
            pooled = self._pool_layers(z.reshape(B * T, V, d), g.node_layer).reshape(B, T, -1)
            emb = torch.cat([pooled_last, pooled.mean(1)], -1)
        recorded = states.detach() if record else None
        return emb, aux, recorded, u

    def _sampled_terms(
        self, g: Any, z: Tensor, progress: float, generator: torch.Generator | None
    ) -> dict[str, Tensor]:
        """Stage-1 reconstruction terms of every snapshot at once (:func:`~.stage1.sampled_terms` on
        the ``B x T`` graphs, in chunks that bound the all-pairs distance matrices), averaged over
        snapshots; the smoothness term over consecutive snapshots."""
        B, T, V, d = z.shape
        E = g.edge_weight.shape[-1]
        rec = self.reconstruction(g)
        w = parameter_values(g.edge_weight, E // 2).reshape(B * T, -1)
        edges, is_neg = edge_sets(w, rec.pairs, rec.reading, rec.q)
        zf = z.reshape(B * T, V, d)
        M = B * T
        step = max(1, PAIRS_PER_CHUNK // (V * V))
        aux: dict[str, Tensor] = {}
        for start in range(0, M, step):
            sl = slice(start, start + step)
            terms = sampled_terms(
                zf[sl], self._tangent(zf[sl]), w[sl], rec, self.cfg, progress, None, generator, (edges[sl], is_neg[sl])
            )
            share = zf[sl].shape[0] / M
            for k, v in terms.items():
                aux[k] = aux.get(k, 0.0) + share * v
        if T > 1:
            aux["smooth"] = (self.geom.consecutive_dist(z) ** 2).mean()
        return aux

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
        aug_shift: float = 0.2,
        aug_drop: float = 0.5,
    ) -> dict[str, Tensor]:
        if self.task == "infonce":  # the network and one augmented view of it (DWSNets' protocol)
            e1, aux, _, _ = self._run(batch, True, progress)
            e2 = self._run(self.augment(batch, generator, aug_shift, aug_drop), False)[0]
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

    # ------------------------------------------------------------------ reconstruction on full graphs
    def node_states(self, batch: Any) -> tuple[Tensor, Tensor | None]:
        """Encoder output without gradients: node coordinates ``[B, T, V, d]`` of every snapshot and
        the final GRU states ``[B, L*H*gru_hidden]`` (``None`` without GRU)."""
        with torch.no_grad():
            _, _, zs, u = self._run(batch, want_aux=False, record=True)
        return zs, (u.reshape(u.shape[0], -1) if u is not None else None)

    def reconstruction(self, g: Any) -> Reconstruction:
        """The decoders, geometry and link reading applied to the parameter pairs of graphs ``g``."""
        P = g.edge_weight.shape[-1] // 2
        return Reconstruction(
            self.pairs(g),
            g.edge_attr[:P],
            self.weight_head,
            self.decoder,
            self.geom,
            self.cfg.link_reading,
            self.cfg.link_q,
        )

    def _targets(self, batch: Any) -> tuple[Tensor, Reconstruction]:
        """Trained weights ``[B, T, P]`` of ``batch`` and their :class:`~.decoders.Reconstruction`."""
        return parameter_values(batch.edge_weight, batch.edge_weight.shape[-1] // 2), self.reconstruction(batch)

    def full_recon_terms(self, z: Tensor, batch: Any, z_features: Tensor | None = None) -> dict[str, Tensor]:
        r"""Deterministic reconstruction terms (link, magnitude, sign) of coordinates ``z [B, T, V, d]``
        of ``batch`` over every pair (:func:`~.decoders.full_terms`). The decoder's node features are
        :math:`\log_0` of ``z_features`` (the encoder's coordinates, which the refinement holds fixed;
        default ``z``)."""
        B, T, V, d = z.shape
        w, rec = self._targets(batch)
        zf = z.reshape(B * T, V, d)
        zx = zf if z_features is None else z_features.reshape(B * T, V, d)
        return full_terms(zf, self._tangent(zx), w.reshape(B * T, -1), rec)

    def recon_loss(self, batch: Any) -> dict[str, float]:
        """The full-graph reconstruction loss of the encoder's coordinates (no refinement): every
        term and their ``recon_weights`` sum ``loss`` -- stage 1's validation score."""
        z, _ = self.node_states(batch)
        with torch.no_grad():
            terms = {k: float(v) for k, v in self.full_recon_terms(z, batch).items()}
        w = self.recon_weights()
        return {"loss": sum(w.get(k, 0.0) * v for k, v in terms.items()), **terms}

    def refine(self, z0: Tensor, batch: Any, steps: int | None = None, lr: float | None = None) -> Tensor:
        """Stage 2 (:func:`~.refine.refine_coordinates`): coordinates ``z0 [B, T, V, d]`` refined on the
        ball over every pair for ``steps`` steps of size ``lr`` (defaults: the config's), the decoder
        and the node features :math:`X = \\log_0 z_0` fixed. No model parameter changes."""
        steps = self.cfg.refine_steps if steps is None else steps
        lr = self.cfg.refine_lr if lr is None else lr
        if steps <= 0:
            return z0
        w, rec = self._targets(batch)
        req = [p.requires_grad for p in self.parameters()]
        for p in self.parameters():
            p.requires_grad_(False)
        try:
            with torch.enable_grad():
                return refine_coordinates(z0, self._tangent(z0), w, rec, self.recon_weights(), steps, lr)
        finally:
            for p, r in zip(self.parameters(), req):
                p.requires_grad_(r)

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
        z = self.refine(z0, batch, refine_steps, refine_lr)
        B, T, V, d = z.shape
        parts = [self._group_pool(z.reshape(B * T, V, d), batch).reshape(B, -1)]
        if u is not None:
            parts.append(u)
        self.train(was)
        return torch.cat(parts, -1)

    def recon_metrics(self, batch: Any, refine_steps: int | None = None) -> dict[str, float]:
        """How well the (refined, unless ``refine_steps=0``) coordinates reconstruct the weights of
        ``batch``, beside the baselines a decoder must beat (:func:`~.decoders.reconstruction_metrics`)."""
        was = self.training
        self.eval()
        batch = to_device(batch, self.anchors.device)
        z0, _ = self.node_states(batch)
        z = self.refine(z0, batch, refine_steps)
        w, rec = self._targets(batch)
        out = reconstruction_metrics(z, self._tangent(z0), w, rec)
        self.train(was)
        return out

    def embed_nodes(self, batch: Any, refine_steps: int = 0, refine_lr: float | None = None) -> Tensor:
        """Node coordinates ``[B, T, V, d]`` on the ball for every snapshot of ``batch``, after
        ``refine_steps`` steps of the stage-2 refinement (:meth:`refine`; 0 = the encoder's output)."""
        was = self.training
        self.eval()
        batch = to_device(batch, self.anchors.device)
        z0, _ = self.node_states(batch)
        z = self.refine(z0, batch, refine_steps, refine_lr)
        self.train(was)
        return z
