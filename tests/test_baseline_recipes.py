"""The baselines trained as their authors train them: every recipe field changes training (instrumented
runs), weight-space augmentation of training batches only, GMN's per-layer input standardisation
against a direct float64 computation, and the reference batch sizes within the training split."""

from __future__ import annotations

import dataclasses
import os
import sys

import pandas as pd
import pytest
import torch

import hgutils
from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.weightspace_protocol import RunSettings
from hgutils.weightspace.augment import REFERENCE_DEFAULTS, WEIGHT_NOISE_DEFAULTS
from hgutils.weightspace.metanets import GMN, WeightData, build_metanet
from hgutils.weightspace.metanets import recipes as rec
from hgutils.weightspace.metanets.gmn import layer_stats
from hgutils.weightspace.tasks import TrainConfig, fit
from hgutils.weightspace.zoo import MLPSpec, Zoo

SIZES = (2, 5, 4, 1)


def _zoo(n: int = 24, T: int = 2, kind: str | None = "inr", seed: int = 0) -> Zoo:
    """SIREN-like weights at several scales per layer (as a trained INR's are); the label moves the output bias."""
    g = torch.Generator().manual_seed(seed)
    label = torch.arange(n) % 2
    params = {}
    for l, scale in enumerate((1.0, 0.1, 0.3)):
        params[f"W{l}"] = scale * torch.randn(n, T, SIZES[l + 1], SIZES[l], generator=g) + 0.05 * l
        params[f"b{l}"] = 0.5 * scale * torch.randn(n, T, SIZES[l + 1], generator=g)
    params["b2"][:, :, 0] += 3.0 * (2 * label[:, None].float() - 1)
    info = {} if kind is None else {"kind": kind}
    return Zoo(MLPSpec(SIZES, "sine", 30.0), params, torch.arange(T), {"label": label}, info)


def _run(zoo: Zoo, names: list[str], **kw):
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.25, 0.25, labels=y)
    cfg = TrainConfig(epochs=1, batch_size=6, patience=1000)
    kw = {"train_cfg": cfg, "recipes": "optimizer", **kw}
    return cmp.run_comparison(zoo, "classification", y, 2, names, splits, [0], RunSettings(**kw))


# ------------------------------------------------------------------------------ every recipe field is read
_FIELDS = {f.name for f in dataclasses.fields(rec.ReferenceRecipe)}
_PKG = os.path.dirname(hgutils.__file__)


class _Recording(rec.ReferenceRecipe):
    """A recipe that records which fields the library's code reads (reads by ``dataclasses``, e.g.
    ``asdict`` or ``repr``, do not count: only a read from a file of the ``hgutils`` package does)."""

    def __getattribute__(self, name: str):
        if name in _FIELDS and _RECORDING["on"]:
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(_PKG):
                _RECORDING["reads"].setdefault(id(self), set()).add(name)
        return object.__getattribute__(self, name)


_RECORDING: dict = {"on": False, "reads": {}}


def test_every_recipe_field_changes_how_a_baseline_trains(tmp_path, monkeypatch):
    """A tiny ``recipes="full"`` run of each baseline with a recipe, with recording recipes: every field
    that is not listed as documentation (``DOCUMENTATION_FIELDS``, each with its reason) must be read."""
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    assert set(rec.DOCUMENTATION_FIELDS) < _FIELDS and all(rec.DOCUMENTATION_FIELDS.values())
    recorders = {}
    for model in ("DWSNet", "GMN", "StatNN"):
        r = rec.RECIPES[(model, "classification")]
        recorders[model] = _Recording(**{f: getattr(r, f) for f in _FIELDS})
        monkeypatch.setitem(rec.RECIPES, (model, "classification"), recorders[model])
    _RECORDING.update(on=True, reads={})
    try:
        run = _run(_zoo(), list(recorders), recipes="full", epoch_caps={m: 1 for m in recorders})
    finally:
        _RECORDING["on"] = False
    assert set(run.table["model"]) == set(recorders)
    for model, r in recorders.items():
        unread = _FIELDS - set(rec.DOCUMENTATION_FIELDS) - _RECORDING["reads"].get(id(r), set())
        assert not unread, f"{model}'s recipe fields {sorted(unread)} are read by no code: wire them or remove them"


def test_the_recording_recipe_catches_a_field_nothing_reads(tmp_path, monkeypatch):
    """The check above can fail: a recipe with one more field, which no code reads, is caught."""

    @dataclasses.dataclass(frozen=True)
    class Wider(rec.ReferenceRecipe):
        label_smoothing: float = 0.1

    fields = {f.name for f in dataclasses.fields(Wider)}
    monkeypatch.setattr(sys.modules[__name__], "_FIELDS", fields)

    class Rec(Wider):
        __getattribute__ = _Recording.__getattribute__

    r = Rec(**{f: getattr(rec.RECIPES[("StatNN", "classification")], f) for f in _FIELDS - {"label_smoothing"}})
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    monkeypatch.setitem(rec.RECIPES, ("StatNN", "classification"), r)
    _RECORDING.update(on=True, reads={})
    try:
        _run(_zoo(), ["StatNN"], recipes="full", epoch_caps={"StatNN": 1})
    finally:
        _RECORDING["on"] = False
    assert fields - set(rec.DOCUMENTATION_FIELDS) - _RECORDING["reads"][id(r)] == {"label_smoothing"}


# ------------------------------------------------------------------------------ augmentation in training
def test_augmentation_acts_on_training_batches_only_and_follows_the_seed(monkeypatch):
    zoo = _zoo()
    model = build_metanet("StatNN", zoo, "classification", 2)
    data = model.prepare(zoo.standardized(zoo.entry_stats()))
    y, tr, va = zoo.meta["label"], torch.arange(16), torch.arange(16, 24)
    seen: list[tuple[bool, WeightData]] = []
    embed = type(model).embed

    def spy(self, batch):
        seen.append((self.training, batch))
        return embed(self, batch)

    monkeypatch.setattr(type(model), "embed", spy)
    cfg = TrainConfig(epochs=2, batch_size=4, patience=1000, augment=REFERENCE_DEFAULTS, seed=3)
    fit(model, data, y, tr, va, cfg=cfg)
    rows = {tuple(data.weights[0][i].flatten().tolist()) for i in range(len(data))}
    train = [b for t, b in seen if t]
    evals = [b for t, b in seen if not t]
    assert train and evals
    assert all(tuple(w.flatten().tolist()) not in rows for b in train for w in b.weights[0])  # augmented
    assert all(tuple(w.flatten().tolist()) in rows for b in evals for w in b.weights[0])  # as they are
    seen.clear()
    again = fit(build_metanet("StatNN", zoo, "classification", 2), data, y, tr, va, cfg=cfg)
    first = fit(build_metanet("StatNN", zoo, "classification", 2), data, y, tr, va, cfg=cfg)
    assert [h["train_loss"] for h in again.history] == [h["train_loss"] for h in first.history]  # same seed
    other = fit(
        build_metanet("StatNN", zoo, "classification", 2), data, y, tr, va, cfg=dataclasses.replace(cfg, seed=4)
    )
    assert [h["train_loss"] for h in other.history] != [h["train_loss"] for h in first.history]
    with pytest.raises(ValueError, match="INRAugmentation"):
        TrainConfig(augment="reference")


def test_recipes_augment_dwsnet_and_gmn_and_any_model_can_opt_in(tmp_path, monkeypatch):
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    run = _run(_zoo(), ["DWSNet", "GMN", "StatNN", "NFN_NP"], augment=("recipe", "NFN_NP"))
    t = rec.as_trained(run.table).set_index("model")
    assert t.loc["DWSNet", "augmentation"] == REFERENCE_DEFAULTS.describe() == t.loc["GMN", "augmentation"]
    assert t.loc["StatNN", "augmentation"] == "off" and t.loc["NFN_NP", "augmentation"] == REFERENCE_DEFAULTS.describe()
    assert (t.loc["DWSNet", "inputs"], t.loc["GMN", "inputs"], t.loc["NFN_NP", "inputs"]) == (
        "standardize",
        "per_layer",
        "standardize",
    )
    n_train = len(run.splits.train)
    # the whole split (12 < 128) holds 1 step per epoch, under the shared batch's 2: halved to the shared 6
    fitted = rec.fit_recipe_to_run(rec.recipe_for("GMN", "classification"), n_train, 1, 6)
    assert fitted.batch_size == 6 and "batch 12 -> 6" in fitted.notes[1]
    assert t.loc["GMN", "batch"] == 6 and t.loc["GMN", "reference batch"] == 128
    assert t.loc["GMN", "lr"] == pytest.approx(1e-3 * (6 / 128) ** 0.5)  # the sqrt rule
    assert t.loc["NFN_NP", "batch"] == 6 and t.loc["NFN_NP", "reference batch"] == ""  # no recipe: shared
    gmn = run.models["GMN"]
    assert gmn.input_norm == "per_layer" and bool(gmn.in_fitted) and run.data_for("GMN").norm is None  # raw
    assert run.data_for("DWSNet").norm is not None  # per-entry standardised
    off = _run(_zoo(), ["DWSNet"], augment=())
    assert off.table.iloc[0]["augment"] == "off"
    bare = _run(_zoo(), ["GMN"], recipes="none")
    assert bare.models["GMN"].input_norm == "none" and bare.table.iloc[0]["augment"] == "off"


def test_augmentation_is_restricted_or_refused_where_it_does_not_apply(tmp_path, monkeypatch):
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    run = _run(_zoo(kind="classifier"), ["DWSNet", "NFN_NP"], augment=("recipe", "NFN_NP"))
    rows = run.table.set_index("model")
    assert rows.loc["DWSNet", "augment"] == "reference noise 0.1 std, dropout 0.01"  # coordinate transforms off
    assert rows.loc["NFN_NP", "augment"] == WEIGHT_NOISE_DEFAULTS.describe()
    with pytest.raises(ValueError, match="reads graphs"):
        _run(_zoo(), ["GTH-GMN"], augment=("GTH-GMN",))
    with pytest.raises(ValueError, match="'delta'"):
        _run(_zoo(), ["NFN_NP"], augment=("NFN_NP",), inputs="delta")
    with pytest.raises(ValueError, match="augment: unknown"):
        _run(_zoo(), ["NFN_NP"], augment=("NFN",))
    with pytest.raises(ValueError, match="augment"):
        cmp.ComparisonSettings.check_value("augment", ("everything",))
    assert cmp.ComparisonSettings.check_value("augment", ["recipe", "NFN_NP"]) == ("recipe", "NFN_NP")
    assert cmp.ComparisonSettings().run_settings().augment == ("recipe",)


# ------------------------------------------------------------------------------ GMN's per-layer inputs
def test_gmn_per_layer_standardisation_matches_a_direct_float64_computation():
    g = torch.Generator().manual_seed(1)
    W = tuple(
        s * torch.randn(10, 2, SIZES[l + 1], SIZES[l], generator=g, dtype=torch.float64) + l
        for l, s in enumerate((1.0, 0.1, 0.3))
    )
    b = tuple(0.2 * torch.randn(10, 2, SIZES[l + 1], generator=g, dtype=torch.float64) - l for l in range(3))
    data, train = WeightData(W, b), torch.tensor([0, 2, 3, 5, 7, 8])
    mean, std = layer_stats(data, train)
    for k, x in enumerate(t for pair in zip(W, b) for t in pair):
        for t in range(2):
            entries = x[train, t].flatten()  # every entry of this tensor over the training networks
            direct_mean = entries.sum() / entries.numel()
            direct_std = ((entries - direct_mean) ** 2).sum().div(entries.numel() - 1).sqrt()  # unbiased, as torch.std
            assert mean[k, t].item() == pytest.approx(direct_mean.item(), abs=1e-14)
            assert std[k, t].item() == pytest.approx(direct_std.item(), rel=1e-12)
    model = GMN("classification", 2, SIZES, 2, input_norm="per_layer").double()
    with pytest.raises(ValueError, match="fit_inputs"):
        model(data)
    model.fit_inputs(data, train)
    z = model.standardize(data)
    raw = [t for pair in zip(W, b) for t in pair]
    for k, (x, y) in enumerate(zip(raw, (t for pair in zip(z.weights, z.biases) for t in pair))):
        shape = (1, 2) + (1,) * (x.dim() - 2)  # one (mean, std) per tensor and snapshot
        assert torch.allclose(y, (x - mean[k].reshape(shape)) / std[k].reshape(shape), atol=1e-12)
    plain = GMN("classification", 2, SIZES, 2).double()
    plain.load_state_dict(model.state_dict())  # same weights; the statistics come along but are not used
    model.eval(), plain.eval()
    assert torch.allclose(model(data), plain(z), atol=1e-10)  # inside the model == standardised beforehand
    assert not torch.allclose(model(data), plain(data), atol=1e-6)  # and it matters
    with pytest.raises(ValueError, match="input_norm"):
        GMN("classification", 2, SIZES, 1, input_norm="rms")


# ------------------------------------------------------------------------------ batch sizes
def test_reference_batch_where_the_split_allows_else_the_split_with_the_scaled_rate():
    dws = rec.recipe_for("DWSNet", "classification")
    assert rec.recipe_batch_and_lr(dws, 45_000) == (512, dws.lr)
    assert rec.recipe_batch_and_lr(dws, 128) == (128, pytest.approx(dws.lr * 0.5))  # sqrt(128 / 512)
    assert rec.recipe_batch_and_lr(dws, 128, "linear") == (128, pytest.approx(dws.lr / 4))
    assert rec.recipe_batch_and_lr(dws, 128, "none") == (128, dws.lr)
    with pytest.raises(ValueError, match="n_train"):
        rec.recipe_batch_and_lr(dws, 0)
    with pytest.raises(ValueError, match="lacks column"):
        rec.as_trained(pd.DataFrame({"model": ["x"]}))
    assert rec.recipe_for("DWSNet", "classification").augment == REFERENCE_DEFAULTS
    assert rec.recipe_for("GMN", "accuracy").augment == WEIGHT_NOISE_DEFAULTS  # Neural Graphs' CNN zoo
    assert rec.recipe_for("DWSNet", "infonce").augment is None and rec.recipe_for("StatNN", "accuracy").augment is None
    with pytest.raises(ValueError, match="augment"):
        rec.ReferenceRecipe("adam", 1e-3, 0.0, 8, 10, augment="yes")
