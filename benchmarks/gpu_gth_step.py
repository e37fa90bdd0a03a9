"""GTH-GMN's training step on a GPU: eager against ``compile=True``, the shapes of ``metanets.py``'s side-by-side table.

One training step (forward, every loss term, backward, Adam) of GTH-GMN on random SIREN-shaped
trajectories (2-32-32-1 INRs, batch 32, ``--T`` snapshots: timing depends on the shapes only), for the
side-by-side table's configurations (``default``: today's ``GTHGMNConfig``; ``large``: dim 32, 2 attention
layers, 4 heads x 8, GRU 32) and its two steps (``reconstruction``: stage 1 of the two-stage protocol;
``joint``: the end-to-end task step), eagerly and through ``GTHGMNConfig(compile=True)``. Per entry: the
first step's wall time (for a compiled entry, the compile), the median wall time of ``--reps`` later steps
with the device synchronised, and the peak allocated memory. Entries run in order (every eager entry
first) until ``--minutes`` is spent; the JSON report is rewritten atomically after each one and names what
the time limit cut.

Why: the GPU check (``gpu_check.py``) measured GTH-GMN's eager step at ~0.73 s on an H200 (dim 32, T = 51),
no faster than one CPU core: the step is bound by the launch of thousands of small kernels, not by
arithmetic. This measures how much of that the compiled path (fused kernels) removes.

    PYTHONPATH=.:benchmarks python benchmarks/gpu_gth_step.py OUT_DIR [--device cuda] [--minutes 7]
    PYTHONPATH=.:benchmarks python benchmarks/gpu_gth_step.py OUT_DIR --device cpu --tiny   # toy run, ~20 s
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metanets import CONFIGS, synthetic_zoo  # noqa: E402

from hgutils.weightspace.metanets import build_metanet  # noqa: E402
from hgutils.weightspace.metanets.base import to_device  # noqa: E402

#: (config, step, compiled) in the order they run: every eager entry first, then the compiled ones
ENTRIES: tuple[tuple[str, str, bool], ...] = (
    ("default", "reconstruction", False),
    ("default", "joint", False),
    ("large", "reconstruction", False),
    ("large", "joint", False),
    ("default", "joint", True),
    ("default", "reconstruction", True),
    ("large", "joint", True),
    ("large", "reconstruction", True),
)
BATCH = 32


def _key(config: str, step: str, compiled: bool) -> str:
    """An entry's name in the report: ``"large+compile joint"``."""
    return f"{config}{'+compile' if compiled else ''} {step}"


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def time_entry(config: str, step: str, compiled: bool, device: str, T: int, reps: int, batch: int) -> dict[str, Any]:
    """First-step and median later-step wall seconds of one entry, its peak memory and snapshots/s."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    kw = dict(CONFIGS[config], snapshots="all", **({"compile": True} if compiled else {}))
    if step == "joint":
        kw["protocol"] = "joint"
    zoo = synthetic_zoo(batch, T)
    m = build_metanet("GTH-GMN", zoo, "classification", 10, **kw).to(device)
    data = to_device(m.prepare(zoo), device)
    y = zoo.meta["label"].to(device)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    m.train()
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()

    def one() -> None:
        opt.zero_grad()
        if step == "reconstruction":
            terms, weights = m.pretrain_terms(data, 0.5, g), m.recon_weights()
        else:
            terms, weights = m.loss_terms(data, y, 0.5, g), m.loss_weights
        sum(weights.get(k, 0.0) * v for k, v in terms.items()).backward()
        opt.step()

    t0 = time.perf_counter()
    one()
    _sync(device)
    first = time.perf_counter() - t0
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        one()
        _sync(device)
        times.append(time.perf_counter() - t0)
    step_s = statistics.median(times)
    out = {
        "first_step_s": round(first, 3),
        "step_ms": round(1000 * step_s, 2),
        "step_ms_range": [round(1000 * min(times), 2), round(1000 * max(times), 2)],
        "snapshots_per_s": round(batch * T / step_s, 1),
    }
    if device.startswith("cuda"):
        out["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
    return out


def _write(path: Path, rep: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rep, indent=1))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="folder for gth_step.json")
    p.add_argument("--device", default="cuda")
    p.add_argument("--T", type=int, default=20, help="snapshots per trajectory (default 20, as metanets.py)")
    p.add_argument("--reps", type=int, default=10, help="timed steps per entry after the first (default 10)")
    p.add_argument("--minutes", type=float, default=7.0, help="wall-time limit (default 7)")
    p.add_argument("--batch", type=int, default=BATCH, help=f"networks per step (default {BATCH})")
    p.add_argument(
        "--only", default="", help="comma-separated entry keys to run, e.g. 'default joint,large+compile joint'"
    )
    p.add_argument("--tiny", action="store_true", help="toy sizes (T = 3, batch 4, 2 reps, eager only)")
    a = p.parse_args(argv)
    if not (a.device == "cpu" or a.device.startswith("cuda")):
        print(f"error: --device must be cpu or cuda[:N]; got {a.device!r}", file=sys.stderr)
        return 2
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print("error: no CUDA device (use --device cpu --tiny for a toy run)", file=sys.stderr)
        return 2
    if a.T < 1 or a.reps < 1 or a.batch < 2 or not a.minutes > 0:
        print(
            f"error: --T, --reps, --minutes must be positive and --batch >= 2; got {a.T}, {a.reps}, {a.minutes}, "
            f"{a.batch}",
            file=sys.stderr,
        )
        return 2
    only = [k.strip() for k in a.only.split(",") if k.strip()]
    unknown = sorted(set(only) - {_key(*e) for e in ENTRIES})
    if unknown:
        print(f"error: unknown --only entries {unknown}; choose from {[_key(*e) for e in ENTRIES]}", file=sys.stderr)
        return 2
    T, reps, batch = (3, 2, 4) if a.tiny else (a.T, a.reps, a.batch)
    entries = [e for e in ENTRIES if not (a.tiny and e[2]) and (not only or _key(*e) in only)]
    a.out.mkdir(parents=True, exist_ok=True)
    path = a.out / "gth_step.json"
    name = torch.cuda.get_device_name(0) if a.device.startswith("cuda") else "cpu"
    rep: dict[str, Any] = {
        "device": a.device,
        "device_name": name,
        "torch": torch.__version__,
        "T": T,
        "batch": batch,
        "reps": reps,
        "entries": {},
    }
    start = time.perf_counter()
    for config, step, compiled in entries:
        key = _key(config, step, compiled)
        if time.perf_counter() - start > 60 * a.minutes:
            rep["entries"][key] = {"status": "not run: time limit"}
            _write(path, rep)
            continue
        try:
            r = time_entry(config, step, compiled, a.device, T, reps, batch)
            rep["entries"][key] = {"status": "ok", **r}
        except Exception as exc:  # noqa: BLE001 - reported, then the next entry
            rep["entries"][key] = {"status": f"failed: {type(exc).__name__}: {str(exc)[:300]}"}
        rep["wall_s"] = round(time.perf_counter() - start, 1)
        _write(path, rep)
        print(key, json.dumps(rep["entries"][key]), flush=True)
    return 0 if all(v["status"] == "ok" for v in rep["entries"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
