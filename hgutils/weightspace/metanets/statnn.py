r"""StatNN (Unterthiner et al. 2020, "Predicting Neural Network Accuracy from Weights", arXiv:2002.11448)
as NFN's StatNet runs it (Zhou et al., NeurIPS 2023, arXiv:2302.14040; ``AllanYangZhou/nfn``:
``nfn/layers/misc_layers.py`` ``StatFeaturizer``, ``experiments/models.py`` ``StatNet``,
``experiments/predict_gen_configs/nfnet/stat.yaml``).

Per weight and bias tensor and per snapshot, seven statistics -- mean, variance and the
0/25/50/75/100 % quantiles (linear interpolation) -- concatenated over tensors and snapshots
(snapshot-major, then tensor ``W_0, b_0, W_1, ...``, then statistic, as ``StatFeaturizer`` over
channels); then ``Linear -> ReLU -> Linear -> ReLU`` of width 1000 (the embedding) and a ``Linear``
head (sigmoid + BCE on the accuracy task through :mod:`.heads`). The reference feeds the raw
statistics (``normalize: false``). The statistics are invariant to any permutation of the entries
of a tensor, so the model is invariant to hidden-neuron permutations (and to input/output ones).

Deviations, each an option: the variance is the population variance (``variance="population"``;
the reference's ``torch.var`` is the sample variance, ``n/(n-1)`` times larger, and undefined for the
one-entry output bias of an INR -- ``variance="sample"`` uses it wherever ``n > 1``);
``feature_norm="batch"`` standardises each statistic across networks (batch norm) before the MLP;
``feature_norm="train"`` standardises each statistic with its mean and standard deviation over the
*training* networks (:meth:`StatNN.fit_inputs`, kept as buffers),
:math:`\tilde s_j = (s_j - \mu_j) / \sigma_j`. The reference feeds raw statistics; on INR zoos they
differ between networks by 1e-5 to 1e-2 around means near 0.1, so the MLP sees almost the same input
for every network (a training accuracy of exactly chance on notebook 01's shared-initialisation zoo).
Standardising an MLP's inputs on the training split is the standard practice for an MLP on hand-made
features (scikit-learn's ``StandardScaler`` before ``MLPClassifier``), but neither reference does it:
Unterthiner et al.'s released code (``google-research/google-research``,
``dnn_predict_accuracy/colab/dnn_predict_accuracy.ipynb``: ``extract_per_layer_features``, ``build_fcn``)
feeds the per-layer statistics (the 0/25/50/75/100 % percentiles, ``np.std`` and ``np.mean`` of each kernel
and bias) as they come, to LightGBM -- whose trees do not see a feature's scale -- and to a Keras MLP
(``Flatten`` then ``Dense`` layers, no normalisation layer), and its tuned configurations
(``dnn_predict_accuracy/best_configs.json``) hold no normalisation setting. The companion's ``StatNN``
variant uses ``"train"`` and names it as its own deviation from both references, measured to matter on INR
zoos (above); ``"StatNN (raw statistics)"`` is the references' reading.
"""

from __future__ import annotations

from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData
from hgutils.weightspace.metanets.output_heads import reference_output
from hgutils.weightspace.metanets.recipes import ReferenceRecipe, recipe_for

_Q = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
N_STATS = 7


def tensor_stats(x: Tensor) -> Tensor:
    """The 7 statistics of ``x [B, T, ...]`` over its trailing dims -> ``[B, T, 7]``.

    Mean, population variance, and the 0/25/50/75/100 % quantiles (linear interpolation, as
    ``torch.quantile`` and ``numpy.quantile``).
    """
    flat = x.reshape(*x.shape[:2], -1)
    q = torch.quantile(flat, _Q.to(flat), dim=-1).permute(1, 2, 0)
    return torch.cat([flat.mean(-1, keepdim=True), flat.var(-1, unbiased=False, keepdim=True), q], -1)


class StatNN(MetaNet):
    """NFN's StatNet on the 7 statistics per tensor and snapshot (module docstring).

    Options (defaults = the reference): ``hidden`` 1000, ``depth`` 2 hidden layers, ``act``
    ``"relu"``, ``dropout`` ``None`` -> the recipe's (0), ``feature_norm`` ``"none"`` (or
    ``"batch"``, or ``"train"``: standardised with the training networks' statistics), ``variance``
    ``"population"`` (or ``"sample"``), ``head`` ``"linear"`` (or ``"mlp"``: the two-layer
    :class:`~.heads.TaskHead` of the other meta-networks).
    ``StatNN(hidden=128, act="silu", feature_norm="batch", head="mlp")`` is this project's earlier
    StatNN.
    """

    base_name: ClassVar[str] = "StatNN"

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        hidden: int = 1000,
        depth: int = 2,
        act: str = "relu",
        dropout: float | None = None,
        feature_norm: str = "none",
        variance: str = "population",
        head: str = "linear",
        snapshots: Snapshots = "last",
    ) -> None:
        super().__init__(task, hidden, out_dim, snapshots=snapshots)
        if act not in ("relu", "silu"):
            raise ValueError(f"act must be 'relu' or 'silu'; got {act!r}")
        if feature_norm not in ("none", "batch", "train"):
            raise ValueError(f"feature_norm must be 'none', 'batch' or 'train'; got {feature_norm!r}")
        if variance not in ("population", "sample"):
            raise ValueError(f"variance must be 'population' or 'sample'; got {variance!r}")
        if head not in ("linear", "mlp"):
            raise ValueError(f"head must be 'linear' or 'mlp'; got {head!r}")
        if depth < 1 or hidden < 1:
            raise ValueError(f"need depth >= 1 and hidden >= 1; got {depth}, {hidden}")
        self.recipe: ReferenceRecipe | None = recipe_for(self.base_name, task)
        p = float(dropout if dropout is not None else (self.recipe.dropout if self.recipe else 0.0))
        self.sizes, self.n_snapshots, self.variance = tuple(sizes), n_snapshots, variance
        self.dropout = p
        n_in = N_STATS * 2 * (len(sizes) - 1) * n_snapshots
        self.norm = nn.BatchNorm1d(n_in) if feature_norm == "batch" else None
        self.feature_norm = feature_norm
        self.register_buffer("feat_mean", torch.zeros(n_in))
        self.register_buffer("feat_std", torch.ones(n_in))
        self.register_buffer("feat_fitted", torch.zeros((), dtype=torch.bool))
        layers: list[nn.Module] = []
        for i in range(depth):
            layers += [nn.Linear(n_in if i == 0 else hidden, hidden), nn.ReLU() if act == "relu" else nn.SiLU()]
            if p > 0:
                layers.append(nn.Dropout(p))
        self.mlp = nn.Sequential(*layers)
        if head == "linear":
            self.encoder_out, self.head = reference_output(task, hidden, out_dim)
        else:
            self.encoder_out = nn.Identity()  # MetaNet's TaskHead (hidden -> 64 -> out) stays the head

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"StatNN built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    def features(self, batch: WeightData) -> Tensor:
        """``[B, T * 2L * 7]`` statistics (snapshot, tensor, statistic)."""
        tensors = [t for pair in zip(batch.weights, batch.biases) for t in pair]
        feats = [tensor_stats(t) for t in tensors]
        if self.variance == "sample":
            for f, t in zip(feats, tensors):
                n = t[0, 0].numel()
                if n > 1:
                    f[..., 1] *= n / (n - 1)
        return torch.stack(feats, 2).reshape(len(batch), -1)

    @torch.no_grad()
    def fit_inputs(self, data: WeightData, train_idx: Tensor) -> None:
        """With ``feature_norm="train"``: each statistic's mean and standard deviation over the training
        networks ``train_idx`` (population std; a statistic constant over them keeps std 1), as buffers."""
        if self.feature_norm != "train":
            return
        self.check_data(data)
        idx = torch.as_tensor(train_idx, dtype=torch.long)
        f = torch.cat([self.features(data[idx[i : i + 512]]).double() for i in range(0, len(idx), 512)])
        sd = f.std(0, unbiased=False)
        self.feat_mean.copy_(f.mean(0).to(self.feat_mean))
        self.feat_std.copy_(torch.where(sd > 1e-12, sd, torch.ones_like(sd)).to(self.feat_std))
        self.feat_fitted.fill_(True)

    def _normalise(self, f: Tensor) -> Tensor:
        if self.feature_norm == "train":
            if not bool(self.feat_fitted):
                raise ValueError("StatNN(feature_norm='train') has no statistics: call fit_inputs(data, train_idx)")
            return (f - self.feat_mean.to(f)) / self.feat_std.to(f)
        norm = self.norm
        if norm is None:
            return f
        if self.training and len(f) < 2:  # one network: no batch statistics, use the running ones
            return F.batch_norm(f, norm.running_mean, norm.running_var, norm.weight, norm.bias, False, 0.0, norm.eps)
        return norm(f)

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        return self.encoder_out(self.mlp(self._normalise(self.features(batch))))
