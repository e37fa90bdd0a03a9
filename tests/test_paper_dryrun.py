"""The paper-preset dry run (hgutils.runner.paper_dryrun) and the peak-memory meter (hgutils.memory).

The dry run itself runs as its own CI step (``make dryrun``); these tests check its parts: what the
memory figures measure, the memory cap, how each outcome is recorded, that the per-step
extrapolation predicts a measured batch, that the cuts leave the paper's sizes alone, and the
command line's error paths.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys

import pytest
import torch

from hgutils.memory import PeakMemory, mib
from hgutils.runner import paper_dryrun as pd_
from hgutils.runner.paper_dryrun import core

MiB = 2**20


# --------------------------------------------------------------------------------------------
# hgutils.memory
# --------------------------------------------------------------------------------------------
def test_tensor_peak_counts_storages_alive_together():
    before = torch.zeros(4 * MiB // 4)  # allocated before the block: not counted
    with PeakMemory(track_tensors=True) as pm:
        x = torch.zeros(MiB // 4)  # 1 MiB
        y = x + 1  # 1 MiB more, both alive: peak 2 MiB
        v = y.view(-1, 2)[:, 0]  # a view adds nothing
        del x
        z = before * 2  # 4 MiB while y is alive: peak 5 MiB
        del y, v, z
        w = torch.ones(MiB // 4)  # 1 MiB, after the others were freed
        del w
    assert abs(pm.tensor_peak_bytes - 5 * MiB) < 1024  # (a few bytes of wrapped scalars)
    assert pm.as_dict()["tensor_peak_mib"] == 5.0


def test_tensor_peak_sees_autograd_buffers():
    lin = torch.nn.Linear(256, 256)
    with PeakMemory(track_tensors=True) as small:
        lin(torch.randn(8, 256)).pow(2).sum().backward()
    lin.zero_grad(set_to_none=True)
    with PeakMemory(track_tensors=True) as big:
        lin(torch.randn(512, 256)).pow(2).sum().backward()
    # activations saved for backward grow with the batch: 504 more rows of 256 floats, at least twice
    assert big.tensor_peak_bytes - small.tensor_peak_bytes >= 2 * 504 * 256 * 4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RSS figures read /proc")
def test_rss_peak_is_reset_per_block():
    with PeakMemory() as first:
        buf = bytearray(200 * MiB)
        buf[::4096] = b"x" * len(buf[::4096])  # touch every page
        del buf
    with PeakMemory() as second:
        pass
    assert first.rss_peak_bytes >= first.rss_start_bytes + 150 * MiB
    assert second.rss_peak_bytes < first.rss_peak_bytes - 150 * MiB  # the peak was reset
    assert first.tensor_peak_bytes is None  # not tracked unless asked


def test_peak_memory_rejects_other_devices():
    with pytest.raises(ValueError, match="device must be 'cpu' or a CUDA device"):
        PeakMemory("meta")
    assert mib(None) is None and mib(3 * MiB) == 3.0


# --------------------------------------------------------------------------------------------
# the memory cap and the records
# --------------------------------------------------------------------------------------------
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS")
def test_memory_cap_refuses_then_restores():
    with pytest.raises(RuntimeError) as err, pd_.memory_cap(0.25):
        torch.empty(2**31, dtype=torch.uint8)  # 2 GiB
    assert core._refused_allocation(err.value)
    torch.empty(2**29, dtype=torch.uint8)  # 512 MiB: the cap is gone after the block


def test_measure_records_every_outcome():
    dr = pd_.DryRun()

    def missing():
        raise FileNotFoundError("Dataset 'x' was not found")

    def broken():
        raise ValueError("shape mismatch: [2, 3] vs [3, 2]")

    assert dr.measure("01", "ok", "f", lambda: 41 + 1, T=3) == 42
    assert dr.measure("01", "data", "f", missing) is None
    assert dr.measure("01", "broken", "f", broken) is None
    if sys.platform.startswith("linux"):
        assert dr.measure("01", "huge", "f", lambda: torch.empty(2**33, dtype=torch.uint8)) is None
    status = {r["model"]: r["status"] for r in dr.records}
    assert status["ok"] == "ok" and dr.records[0]["T"] == 3
    assert status["data"] == "skipped" and "no copy of the data" in dr.records[1]["reason"]
    assert status["broken"] == "error" and "shape mismatch" in dr.records[2]["error"]
    assert "Traceback" in dr.records[2]["traceback"]
    assert [r["model"] for r in dr.failed] == ["broken"]
    if sys.platform.startswith("linux"):
        assert status["huge"] == pd_.OVER_CAP and dr.over_cap[0]["model"] == "huge"
    assert {"rss_peak_mib", "seconds", "cpu_seconds"} <= set(dr.records[0])
    frame = dr.frame()
    assert list(frame["model"]) == [r["model"] for r in dr.records]


# --------------------------------------------------------------------------------------------
# the per-step extrapolation
# --------------------------------------------------------------------------------------------
def _mlp_step(width: int = 512, optimiser: str = "sgd"):
    def make(b: int):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(64, width), torch.nn.Tanh(), torch.nn.Linear(width, 10))
        opt = (
            torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
            if optimiser == "sgd"
            else torch.optim.Adam(net.parameters())
        )
        x, y = torch.randn(b, 64), torch.randint(0, 10, (b,))

        def step():
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()

        return step

    return make


@pytest.mark.parametrize("optimiser", ["sgd", "adam"])
def test_step_memory_extrapolation_predicts_a_larger_batch(optimiser):
    make = _mlp_step(optimiser=optimiser)
    proj = pd_.step_memory(make, 256, (8, 16))
    measured = pd_.step_memory(make, 256, (256, 512))["step_mib"]["256"]
    assert proj["paper_batch"] == 256 and set(proj["step_mib"]) == {"8", "16"}
    assert math.isclose(proj["step_mib@paper_batch"], measured, rel_tol=0.1), (proj, measured)


def test_step_memory_is_not_hidden_by_the_optimiser_peak():
    """A wide layer and a small batch: the update's temporaries are the larger peak at both measured
    batches, so a plain two-point fit of the step's peak would predict no growth at all."""
    make = _mlp_step(width=4096)
    proj = pd_.step_memory(make, 1024, (2, 4))
    assert proj["step_mib"]["2"] == proj["step_mib"]["4"]  # the optimiser's peak dominates here
    measured = pd_.step_memory(make, 1024, (1024, 2048))["step_mib"]["1024"]
    assert proj["step_mib@paper_batch"] > proj["step_mib"]["4"]
    assert math.isclose(proj["step_mib@paper_batch"], measured, rel_tol=0.15), (proj, measured)


# --------------------------------------------------------------------------------------------
# the cuts: counts only
# --------------------------------------------------------------------------------------------
#: fields that shape the code path (widths, depths, T, sizes, batches): the cuts must not touch them
SHAPES = {
    "01": ("T", "gth_dim", "batch_size", "shared_init", "datasets", "variants", "ablation_variants", "inputs"),
    "02": ("T", "gth_dim", "batch_size", "emb_dim", "variants", "inputs"),
    "03": ("T", "gth_dim", "batch_size", "variants", "dataset", "standin", "inputs"),
    "04": (
        "depth",
        "widths",
        "batch_size",
        "max_len",
        "channels",
        "fc_dim",
        "genomics_batch",
        "cifar_datasets",
        "cifar_ablations",
        "genomics_tasks",
        "synth_length",
        "synth_genes_per_family",
        "bn_points",
        "bn_dim",
    ),
    "05": ("hidden", "depth", "class_counts", "n_heldout", "grid", "ablations", "activation"),
    "06": ("hidden", "depth", "batch", "n_points", "n_eval", "sweep_num", "factor_domains", "factor_shapes"),
    "07": ("dataset", "layers", "width", "T", "gth_dim", "gth_overrides", "lr", "inr_lr"),
}
MODULES = {
    "01": "nb01_inr_classification",
    "02": "nb02_sine_regression",
    "03": "nb03_cifar_generalization",
    "04": "nb04_ilnn_cifar_genomics",
    "05": "nb05_msa_rich_vs_lazy",
    "06": "nb06_pe_symmetry_readout",
    "07": "nb07_training_geometry",
}


@pytest.mark.parametrize("nb", pd_.NOTEBOOKS)
def test_cuts_keep_the_paper_sizes(nb):
    ex = importlib.import_module(f"hgutils.experiments.{MODULES[nb]}")
    paper = ex.CONFIG.from_scale("paper")
    cut = core._cfg(nb, ex, compile_=False)
    for field in SHAPES[nb]:
        assert getattr(cut, field) == getattr(paper, field), f"{nb}: the dry run changed {field}"
    changed = {f.name for f in dataclasses.fields(paper) if getattr(paper, f.name) != getattr(cut, f.name)}
    assert changed == {k for k, v in pd_.CUTS[nb].items() if getattr(paper, k) != v}
    if "compile" in pd_.CUTS[nb]:
        assert core._cfg(nb, ex, compile_=True).compile == paper.compile


def test_notebook_drivers_cover_every_notebook():
    assert set(pd_.DRIVERS) == set(pd_.NOTEBOOKS) == set(MODULES)
    with pytest.raises(ValueError, match="notebook must be one of"):
        pd_.dryrun_notebook("09")
    with pytest.raises(ValueError, match="non-empty selection"):
        pd_.run_dryrun([])


def test_cli_errors_are_one_line(capsys):
    assert pd_.main(["--only", "09"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --only")
    if not torch.cuda.is_available():
        assert pd_.main(["--device", "cuda"]) == 2
        assert "no CUDA device" in capsys.readouterr().err


def test_dryrun_of_one_notebook_writes_the_ledger(tmp_path, monkeypatch):
    """Notebook 06's dry run end to end (its pool and sweep cut further here, to a few seconds; the CI
    step ``make dryrun`` runs the real cuts): every call recorded, the ledger files written."""
    import json

    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(core.CUTS, "06", {**core.CUTS["06"], "n_points": 4096, "n_eval": 512, "sweep_num": 36})
    dr = pd_.run_dryrun(["06"], tmp_path / "out")
    assert not dr.failed, dr.failed
    models = [r["model"] for r in dr.records]
    assert models == ["SDF grid (every network stacked)", "readout frame", "rotation sweep (36 angles)"]
    assert all(r["status"] == "ok" and r["seconds"] >= 0 for r in dr.records)
    assert dr.records[0]["networks"] > 50 and dr.records[0]["pool"] == 4096
    text = (tmp_path / "out" / "DRYRUN.md").read_text()
    assert "| notebook | model | status |" in text and "SDF grid" in text
    payload = json.loads((tmp_path / "out" / "dryrun.json").read_text())
    assert payload["cuts"]["06"]["n_points"] == 4096 and len(payload["records"]) == len(dr.records)


# --------------------------------------------------------------------------------------------
# the device audit
# --------------------------------------------------------------------------------------------
class _Net(torch.nn.Module):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.lin, self.mode = torch.nn.Linear(4, 3), mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(x)
        if self.mode == "slip":  # a tensor made on the CPU, as `torch.ones(3)` without device= would be
            return h + torch.ones(3)
        if self.mode == "data":  # needs the values: meta cannot run it
            return h * h.detach().abs().max().item()
        return h + torch.ones(3, device=x.device) + torch.tensor(1.0)  # a 0-dim CPU scalar is allowed


@pytest.mark.parametrize(("mode", "expected"), [("ok", "ok"), ("slip", "slip"), ("data", "partial")])
def test_device_audit_finds_tensors_made_on_the_cpu(mode, expected):
    def run(device: str) -> None:
        net = _Net(mode).to(device)
        net(torch.randn(2, 4, device=device)).sum().backward()

    found = pd_.device_audit(run)
    assert found.split(":")[0] == expected, found
    run("cpu")  # every variant runs on the CPU, where the slip is invisible


def test_audit_turns_a_slip_into_an_error():
    dr = pd_.DryRun()
    dr.measure("04", "net", "f", lambda: None)
    dr.audit(lambda d: _Net("slip").to(d)(torch.randn(2, 4, device=d)))
    assert dr.records[-1]["status"] == "error" and "device slip" in dr.records[-1]["error"]
    dr.measure("04", "net2", "f", lambda: None)
    dr.audit(lambda d: _Net("ok").to(d)(torch.randn(2, 4, device=d)))
    assert dr.records[-1]["status"] == "ok" and dr.records[-1]["device_audit"] == "ok"


def test_every_preset_field_a_dry_run_driver_reads_exists():
    """Each ``dry_NN`` reads ``cfg.<field>`` of notebook NN's paper preset: a field renamed in the preset (01's
    ``shared_images`` became ``shared_init``) fails here, without running the dry run."""
    import ast
    import inspect
    import re

    from hgutils.runner.paper_dryrun import others, weightspace

    checked = 0
    for mod in (weightspace, others):
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if not re.fullmatch(r"dry_\d\d", name):
                continue
            src = inspect.getsource(fn)
            found = re.search(r'_cfg\("(\d\d)", (\w+)', src)
            if found is None:
                continue
            cfg = getattr(mod, found.group(2)).CONFIG.from_scale("paper")
            reads = {
                n.attr
                for n in ast.walk(ast.parse(src))
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "cfg"
            }
            missing = sorted(a for a in reads if not hasattr(cfg, a))
            assert not missing, f"{name} reads {missing}, which {type(cfg).__name__} does not have"
            checked += 1
    assert checked >= 6, checked
