"""pyproject.toml is the one source of dependency truth: environment.yml and binder/ must agree with it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> tuple[dict[str, Requirement], dict[str, Requirement]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = {Requirement(d).name.lower(): Requirement(d) for d in data["project"]["dependencies"]}
    test = {Requirement(d).name.lower(): Requirement(d) for d in data["project"]["optional-dependencies"]["test"]}
    return deps, test


def _parse(lines: list[str]) -> dict[str, Requirement]:
    out = {}
    for ln in lines:
        ln = re.sub(r"\s+#.*$", "", ln.strip())
        if not ln or ln.startswith(("#", "-")):
            continue
        req = Requirement(ln)
        out[req.name.lower()] = req
    return out


def _check(found: dict[str, Requirement], where: str, allow_extra: set[str]) -> None:
    deps, _ = _pyproject()
    missing = set(deps) - set(found)
    assert not missing, f"{where} lacks {sorted(missing)} (listed in pyproject.toml)"
    extra = set(found) - set(deps) - allow_extra
    assert not extra, f"{where} has {sorted(extra)} that pyproject.toml does not list"
    for name, req in deps.items():
        got = found[name]
        if name == "torch":
            pins = [s for s in got.specifier if s.operator == "=="]
            assert pins, f"{where} must pin torch (CPU build) exactly; got {got}"
            assert req.specifier.contains(Version(pins[0].version)), (
                f"{where} pins torch {pins[0].version}, outside pyproject's range {req.specifier}"
            )
        else:
            assert got.specifier == req.specifier, f"{where}: {name}{got.specifier} != pyproject {req.specifier}"


def test_environment_yml_matches_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    _, test = _pyproject()
    _check(_parse(pip), "environment.yml", allow_extra=set(test))
    assert "-e ." in pip, "environment.yml should install the package itself (-e .)"
    assert any(str(d).startswith("python=") for d in env["dependencies"])


def test_binder_requirements_match_pyproject():
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    _check(_parse(lines), "binder/requirements.txt", allow_extra=set())
    assert any("download.pytorch.org/whl/cpu" in ln for ln in lines), "Binder must use the CPU torch index"
    post = (ROOT / "binder" / "postBuild").read_text()
    assert "set -e" in post and "pip install --no-deps -e ." in post


def test_makefile_installs_torch_before_the_package():
    mk = (ROOT / "Makefile").read_text()
    torch_at, pkg_at = mk.index('"$(TORCH_SPEC)"'), mk.index('-e ".[test]"')
    assert torch_at < pkg_at
    assert "TORCH_SPEC ?= torch==2.13.0" in mk
