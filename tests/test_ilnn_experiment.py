"""Notebook 04's experiment module: presets, dataset selection (CIFAR-10/100, GUE) and its stand-ins."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from hgutils.experiments.nb04_ilnn_cifar_genomics import (
    GUE_TASKS,
    PAPER_CIFAR,
    PAPER_GENOMICS_MCC,
    ILNNConfig,
    genomics_task,
    load_cifar,
)


def test_presets_name_cifar100_and_gue_where_the_issue_asks() -> None:
    assert ILNNConfig.from_scale("smoke").cifar_datasets == ("cifar10",)
    assert ILNNConfig.from_scale("paper").cifar_datasets == ("cifar10", "cifar100")
    for scale in ("medium", "paper"):
        tasks = ILNNConfig.from_scale(scale).genomics_tasks
        assert set(GUE_TASKS) <= set(tasks) and "synthetic" in tasks
    # every quoted paper number belongs to a dataset/task the notebook can run
    assert set(PAPER_CIFAR) == {"cifar10", "cifar100"}
    assert set(GUE_TASKS) <= set(PAPER_GENOMICS_MCC)
    for euc, ilnn in PAPER_GENOMICS_MCC.values():
        assert ilnn > euc  # the paper's claim: ILNN above Euclidean on every genomics task quoted


def test_load_cifar_selects_dataset_and_falls_back_to_a_labelled_standin(tmp_path: Path) -> None:
    cfg = ILNNConfig.from_scale("smoke", cifar_datasets=("cifar100",), cifar_train=40, cifar_test=20)
    split = load_cifar(cfg, data_dir=str(tmp_path))  # empty folder: no CIFAR-100 copy
    assert "STAND-IN" in split.source and split.x_train.shape[1:] == (3, 32, 32)
    assert len(split.x_train) == 40 and len(split.x_test) == 20
    with pytest.raises(ValueError, match="cifar10"):
        load_cifar(cfg, data_dir=str(tmp_path), dataset="mnist")


def _write_gue(root: Path, task: str, category: str) -> None:
    folder = root / "GUE" / category / task
    folder.mkdir(parents=True)
    rng = random.Random(0)
    for split, n in (("train", 40), ("dev", 10), ("test", 12)):
        rows = ["sequence,label"]
        for i in range(n):
            rows.append("".join(rng.choice("ACGT") for _ in range(30 + i % 5)) + f",{i % 3}")
        (folder / f"{split}.csv").write_text("\n".join(rows) + "\n")


def test_genomics_task_reads_a_gue_copy_train_to_test(tmp_path: Path) -> None:
    _write_gue(tmp_path, "covid", "virus")
    cfg = ILNNConfig.from_scale("smoke", max_len=32)
    split = genomics_task(cfg, "gue/covid", data_dir=str(tmp_path))
    assert split.protocol.startswith("gue/covid: train -> test")
    assert split.x_train.shape == (40, 5, 32) and split.x_test.shape == (12, 5, 32)  # one-hot ACGTN, truncated
    assert split.num_classes == 3 and torch.equal(split.y_train.unique(), torch.tensor([0, 1, 2]))
    with pytest.raises(FileNotFoundError, match="prom_core_tata"):  # the notebook skips such a task with a note
        genomics_task(cfg, "gue/prom_core_tata", data_dir=str(tmp_path))
