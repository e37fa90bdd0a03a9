"""benchmarks/gpu_check.py: its CPU smoke run, its refusals, and that every import it makes is carried.

The GPU machines this project is lent have a fixed image (docs/gpu.md, "Running on a GPU") and receive
anything else as wheels in the working tree. ``test_tiny_run_and_its_imports`` runs the check at toy
sizes on the CPU with ``builtins.__import__`` wrapped, records every module that the script or an
``hgutils`` module imported, and requires each one's distribution to be in docs/gpu.md's wheel list,
in the device image's package list or among their dependencies.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"
README = ROOT / "docs" / "gpu.md"  # the GPU page of the manual holds the image and wheel lists


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HGUTILS_PROGRESS="0")
    return env


def _run(args: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=_env(), timeout=timeout, cwd=ROOT
    )


# --------------------------------------------------------------------------------------------
# the README's lists
# --------------------------------------------------------------------------------------------
def _section(start: str, end: str) -> str:
    text = README.read_text()
    if start not in text or end not in text:
        raise AssertionError(f"README has no {start} ... {end} block")
    return text[text.index(start) + len(start) : text.index(end)]


def readme_wheels() -> dict[str, str]:
    """``{name: version}`` of the wheels table between the GPU-WHEELS markers."""
    rows = re.findall(
        r"^\|\s*`([A-Za-z0-9_.-]+)==([0-9][^`]*)`",
        _section("<!-- GPU-WHEELS:START -->", "<!-- GPU-WHEELS:END -->"),
        re.M,
    )
    return {_norm(n): v for n, v in rows}


def readme_image() -> set[str]:
    """Package names of the device image (the backticked names between the DEVICE-IMAGE markers)."""
    return {
        _norm(n)
        for n in re.findall(
            r"`([A-Za-z0-9_.-]+)`", _section("<!-- DEVICE-IMAGE:START -->", "<!-- DEVICE-IMAGE:END -->")
        )
    }


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires(dist: str) -> set[str]:
    """Names of ``dist``'s unconditional requirements (extras excluded, markers evaluated here)."""
    from packaging.requirements import Requirement

    out = set()
    for spec in md.requires(dist) or []:
        req = Requirement(spec)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        out.add(_norm(req.name))
    return out


def _closure(names: set[str]) -> set[str]:
    seen, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        try:
            todo.extend(_requires(n) - seen)
        except md.PackageNotFoundError:
            pass
    return seen


def test_readme_lists_the_wheels_and_the_image():
    wheels, image = readme_wheels(), readme_image()
    assert {"geoopt", "nfn", "mlxtend"} <= set(wheels), wheels
    assert {"torch", "numpy", "scipy", "pandas", "scikit-learn", "matplotlib", "seaborn", "einops"} <= image
    assert not set(wheels) & image, "a wheel that the image already has need not be carried"
    # the pinned versions are the ones this environment tests with
    for name, version in wheels.items():
        assert md.version(name) == version, f"README pins {name}=={version}; installed {md.version(name)}"


def test_readme_download_command_names_exactly_the_wheels():
    block = _section("<!-- GPU-WHEELS:END -->", "<!-- GPU-COMMAND:END -->")
    cmd = block[block.index("pip download") :].split("```")[0]
    named = {_norm(n): v for n, v in re.findall(r"\b([A-Za-z0-9_.-]+)==([0-9][0-9A-Za-z.]*)", cmd)}
    assert named == readme_wheels()
    for flag in ("--python-version 3.12", "--platform manylinux2014_x86_64", "--only-binary=:all:", "--no-deps"):
        assert flag in " ".join(cmd.split()), flag
    assert "--target" in block and "benchmarks/gpu_check.py" in block


def test_every_wheel_needs_only_the_image_or_other_wheels():
    wheels, image = set(readme_wheels()), readme_image()
    available = _closure(image) | wheels
    for w in wheels:
        missing = _requires(w) - available
        assert not missing, (
            f"{w} requires {sorted(missing)}: neither in the device image (with its dependencies) nor carried"
        )


# --------------------------------------------------------------------------------------------
# the script
# --------------------------------------------------------------------------------------------
@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_without_cuda_exits_2_with_one_line(tmp_path):
    out = tmp_path / "out"
    r = _run([str(out)])
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no CUDA device"), r.stderr
    assert "--device cpu --tiny" in lines[0]
    assert not out.exists()


def test_cpu_without_tiny_is_refused(tmp_path):
    r = _run([str(tmp_path / "out"), "--device", "cpu"])
    assert r.returncode == 2
    assert (
        r.stderr.strip().startswith("error: --device cpu runs only with --tiny")
        and len(r.stderr.strip().splitlines()) == 1
    )


@pytest.mark.parametrize("args", [["--parts", "07"], ["--minutes", "0"], ["--device", "tpu", "--tiny"]])
def test_bad_arguments_exit_2(tmp_path, args):
    r = _run([str(tmp_path / "out"), *args])
    assert r.returncode == 2 and r.stderr.startswith("error:"), (r.returncode, r.stderr)
    assert not (tmp_path / "out").exists()


HOOK = r"""
import builtins, json, runpy, sys
seen = set()
_real = builtins.__import__
def _imp(name, globals=None, locals=None, fromlist=(), level=0):
    mod = _real(name, globals, locals, fromlist, level)
    who = (globals or {}).get("__name__", "")
    if level == 0 and (who == "__main__" or who.startswith("hgutils")):
        seen.add(name.split(".")[0])
    return mod
builtins.__import__ = _imp
sys.argv = [sys.argv[1], *sys.argv[3:]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as e:
    code = e.code
else:
    code = 0
finally:
    open(IMPORTS, "w").write(json.dumps(sorted(seen)))
sys.exit(code)
"""


def test_tiny_run_and_its_imports(tmp_path):
    """The CI run of the check (``--device cpu --tiny``): every part and model completes, the report
    and summary are written, and every imported distribution is carried or in the image."""
    out, imports = tmp_path / "report", tmp_path / "imports.json"
    code = HOOK.replace("IMPORTS", repr(str(imports)))
    r = subprocess.run(
        [sys.executable, "-c", code, str(SCRIPT), "--", str(out), "--device", "cpu", "--tiny"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rep = json.loads((out / "gpu_check.json").read_text())
    assert rep["status"] == "ok" and rep["tiny"] and rep["device"] == "cpu"
    assert set(rep["parts"]) == {"01", "04"}
    m01, m04 = rep["parts"]["01"]["models"], rep["parts"]["04"]["models"]
    assert set(m04) == {"ResNet-18 euclidean", "ResNet-18 hcnn", "ResNet-18 ilnn"}
    assert {"INR zoo (SIREN fits)", "StatNN", "NFN_NP", "GTH-GMN"} <= set(m01)
    for name, rec in {**m01, **m04}.items():
        assert rec["status"] == "ok", (name, rec)
        assert rec["peak_gib"] is None or rec["peak_gib"] > 0
    for name in ("StatNN", "NFN_NP", "GTH-GMN"):
        assert 0.0 <= m01[name]["test_accuracy"] <= 1.0
        assert m01[name]["train_networks_per_s"] > 0 and m01[name]["stopped"]
    assert all(m04[k]["images_per_s"] > 0 for k in m04)
    assert rep["parts"]["01"]["split"] == {"train": 40, "val": 10, "test": 10}
    assert "GTH-GMN" in (out / "summary.txt").read_text()

    # every distribution the script and hgutils imported: carried, or in the image (with its dependencies)
    wheels, image = set(readme_wheels()), readme_image()
    available = _closure(image) | wheels
    dists = md.packages_distributions()
    used = set(json.loads(imports.read_text()))
    assert {"torch", "hgutils", "geoopt", "nfn"} <= used, used
    missing = {}
    for top in used - set(sys.stdlib_module_names) - {"hgutils"}:
        names = {_norm(d) for d in dists.get(top, [])}
        if not names & available:
            missing[top] = sorted(names) or ["(no distribution found)"]
    assert not missing, f"imported but neither carried nor in the device image: {missing}"
