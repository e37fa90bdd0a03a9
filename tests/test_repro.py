"""Seeding, config hashing, the atomic cache (corruption recovery), presets and the claims ledger."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import ClassVar

import numpy as np
import pytest
import torch

from hgutils import progress as progress_mod
from hgutils import repro
from hgutils.ledger import Claims
from hgutils.presets import Preset
from hgutils.repro import cached, config_hash, load_checked, save_checked, seed_everything


def test_seed_everything_reproduces_all_generators():
    seed_everything(3)
    a = (torch.randn(4), np.random.rand(3), __import__("random").random())
    seed_everything(3)
    b = (torch.randn(4), np.random.rand(3), __import__("random").random())
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]
    seed_everything(4)
    assert not torch.equal(torch.randn(4), a[0])


@pytest.mark.parametrize("bad", [1.5, "0", True, None])
def test_seed_rejects_non_int(bad):
    with pytest.raises(ValueError, match="seed must be an int"):
        seed_everything(bad)


def test_config_hash_is_order_free_and_value_sensitive():
    assert config_hash({"a": 1, "b": [1, 2]}) == config_hash({"b": [1, 2], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})
    assert config_hash({"t": torch.tensor([1.0, 2.0])}) == config_hash({"t": [1.0, 2.0]})

    @dataclasses.dataclass
    class C:
        n: int

    assert config_hash(C(1)) != config_hash(C(2))
    assert config_hash(C(1)) != config_hash({"n": 1})  # class name is part of the key
    with pytest.raises(TypeError, match="cannot hash"):
        config_hash({"f": object()})


def test_cached_computes_once_then_hits(tmp_path):
    calls = []

    def fn():
        calls.append(1)
        return {"x": torch.arange(3)}

    v1 = cached("thing", {"n": 3}, fn, root=tmp_path)
    v2 = cached("thing", {"n": 3}, fn, root=tmp_path)
    assert len(calls) == 1 and torch.equal(v1["x"], v2["x"])
    cached("thing", {"n": 4}, fn, root=tmp_path)
    assert len(calls) == 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip"])
def test_cached_recomputes_corrupt_entry(tmp_path, damage):
    calls = []

    def fn():
        calls.append(1)
        return torch.arange(100)

    cached("c", 1, fn, root=tmp_path)
    path = tmp_path / "c" / f"{config_hash(1)}.pt"
    raw = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a cache file")
    else:
        mid = len(raw) // 2
        path.write_bytes(raw[:mid] + bytes([raw[mid] ^ 0xFF]) + raw[mid + 1 :])
    with pytest.raises(ValueError):
        load_checked(path)
    out = cached("c", 1, fn, root=tmp_path)
    assert len(calls) == 2 and torch.equal(out, torch.arange(100))
    assert torch.equal(load_checked(path), torch.arange(100))  # the entry was repaired


def test_atomic_write_keeps_old_entry_when_interrupted(tmp_path, monkeypatch):
    path = tmp_path / "entry.pt"
    save_checked(path, "old")

    def boom(*args, **kwargs):
        raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(repro.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        save_checked(path, "new")
    monkeypatch.undo()
    assert load_checked(path) == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["entry.pt"]  # no temp file left behind


def test_cached_rejects_bad_name(tmp_path):
    with pytest.raises(ValueError, match="without slashes"):
        cached("a/b", 1, lambda: 1, root=tmp_path)


def test_claims_round_trip_and_verdicts(tmp_path, capsys):
    c = Claims("05_x", "smoke")
    c.add(
        "a",
        "A holds",
        paper=0.9,
        ours=np.float64(0.95),
        criterion="ours > 0.5",
        holds=np.bool_(True),
        source="paper Tab. 1",
    )
    c.add("b", "B fails", paper="qualitative", ours=[1, 2], criterion="x", holds=False, source="s")
    c.add("c", "C untested", paper=1.0, ours=None, criterion="needs paper scale", holds=None, source="s")
    path = c.save(tmp_path)
    data = json.loads(path.read_text())
    assert [r["verdict"] for r in data["claims"]] == ["holds", "contradicted", "not tested at this scale"]
    back = Claims.load(path)
    assert back.to_dict() == c.to_dict()
    back.print_verdicts()
    assert capsys.readouterr().out.splitlines() == ["a: holds", "b: contradicted", "c: not tested at this scale"]
    assert "| **holds** | a | A holds | 0.9 | 0.95 | ours > 0.5 | — |" in c.markdown()
    assert "| **contradicted** | b | B fails | qualitative | [1, 2] |" in c.markdown()
    d = Claims("x", "smoke")
    d.add(
        "m", "s", paper=None, ours={"msa": 8.859e-17, "rows": [{"k": 0.123456}]}, criterion="c", holds=None, source="s"
    )
    assert "| — | msa=8.859e-17; rows=[(k=0.1235)] |" in d.markdown()


def test_claims_errors():
    with pytest.raises(ValueError, match="scale must be one of"):
        Claims("x", "huge")
    c = Claims("x", "smoke")
    c.add("a", "s", paper=1, ours=1, criterion="c", holds=True, source="s")
    with pytest.raises(ValueError, match="already recorded"):
        c.add("a", "s", paper=1, ours=1, criterion="c", holds=True, source="s")
    with pytest.raises(ValueError, match="holds must be"):
        c.add("b", "s", paper=1, ours=1, criterion="c", holds="yes", source="s")
    with pytest.raises(ValueError, match="explicit criterion"):
        c.add("d", "s", paper=1, ours=1, criterion="", holds=True, source="s")


@dataclasses.dataclass(frozen=True)
class _Demo(Preset):
    n: int = 2  # smoke value
    lr: float = 0.1
    PRESETS: ClassVar[dict] = {"smoke": {}, "medium": {"n": 20}, "paper": {"n": 200, "lr": 0.01}}


def test_presets_resolve_and_override():
    assert _Demo.from_scale("smoke") == _Demo(2, 0.1)
    assert _Demo.from_scale("paper") == _Demo(200, 0.01)
    assert _Demo.from_scale("medium", n=None, lr=0.5) == _Demo(20, 0.5)
    with pytest.raises(ValueError, match="scale must be one of"):
        _Demo.from_scale("large")
    with pytest.raises(ValueError, match="no field"):
        _Demo.from_scale("smoke", epochs=3)


def test_progress_is_silent_under_pytest(monkeypatch):
    monkeypatch.delenv("HGUTILS_PROGRESS", raising=False)
    assert progress_mod.progress_enabled() is False
    monkeypatch.setenv("HGUTILS_PROGRESS", "1")
    assert progress_mod.progress_enabled() is True


def test_output_dirs_layout(tmp_path):
    res, fig = repro.output_dirs("05_x", "smoke", tmp_path / "r", tmp_path / "f")
    assert res == tmp_path / "r" / "smoke" / "05_x" and res.is_dir()
    assert fig == tmp_path / "f" / "smoke" and fig.is_dir()
    assert os.path.isdir(fig)


def test_a_claim_whose_models_did_not_train_is_inconclusive(tmp_path):
    from hgutils.ledger import Claims
    from hgutils.loop import LearnabilityGate
    from hgutils.verdicts import DID_NOT_TRAIN

    gate = LearnabilityGate()
    ok, flat = gate.check(2.3, 0.5, 0.9, 0.1), gate.check(2.3, 2.29, 0.1, 0.1)
    c = Claims("nb", "smoke")
    r1 = c.add(
        "a",
        "A beats B",
        paper=1,
        ours=-0.2,
        criterion="a - b > 0",
        holds=False,
        source="s",
        trained={"A": ok, "B": flat},
    )
    r2 = c.add(
        "b",
        "A beats C",
        paper=1,
        ours=0.3,
        criterion="a - c > 0",
        holds=True,
        source="s",
        trained={"A": ok, "C": {"trained": True, "reason": "fine"}},
    )
    assert r1.verdict == DID_NOT_TRAIN and r1.untrained == ["B"] and "B" in r1.verdict_detail
    assert r2.verdict == "holds"
    with pytest.raises(ValueError, match="bool 'trained'"):
        c.add("c", "x", paper=1, ours=1, criterion="y", holds=True, source="s", trained={"A": {"reason": "?"}})
    back = Claims.load(c.save(tmp_path))
    assert [r.verdict for r in back.rows] == [DID_NOT_TRAIN, "holds"]
    assert back.rows[0].trained["B"]["trained"] is False and "inconclusive" in back.markdown()


def test_source_fingerprint_follows_every_edit_below_a_folder_and_nothing_else(tmp_path):
    from hgutils.repro import source_fingerprint

    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    (pkg / "notes.txt").write_text("not code")
    before = source_fingerprint([pkg])
    assert source_fingerprint([pkg]) == before and len(before) == 16
    (pkg / "notes.txt").write_text("edited, still not code")
    assert source_fingerprint([pkg]) == before
    (pkg / "sub" / "b.py").write_text("y = 3\n")  # a nested module edited
    assert source_fingerprint([pkg]) != before
    assert source_fingerprint([pkg / "a.py"]) != source_fingerprint([pkg])
    assert source_fingerprint([tmp_path / "missing.py"]) == source_fingerprint([])


def test_paper_table_puts_the_papers_value_and_source_beside_ours():
    from hgutils.ledger import PaperRow, paper_table

    t = paper_table([PaperRow("a", "1.0 ± 0.1", "Paper, Table 2", "0.9 ± 0.2", {"protocol": "medium"})], what="model")
    assert list(t.columns) == ["model", "paper", "paper's source", "ours", "protocol"]
    assert t.iloc[0].tolist() == ["a", "1.0 ± 0.1", "Paper, Table 2", "0.9 ± 0.2", "medium"]
    multi = paper_table([PaperRow("b", 3, "s", {"ours, disk": 4, "ours, square": 5})])
    assert list(multi.columns) == ["result", "paper", "paper's source", "ours, disk", "ours, square"]
    with pytest.raises(ValueError, match="at least one row"):
        paper_table([])
