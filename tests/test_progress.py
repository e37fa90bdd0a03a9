"""The section stopwatch of the notebooks (hgutils.progress.Stopwatch)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hgutils import progress as progress_mod
from hgutils.progress import Stopwatch


def test_stopwatch_laps_record_minutes_and_the_table_ends_with_the_total(monkeypatch, capsys):
    now = iter([0.0, 60.0, 150.0, 240.0])  # perf_counter seconds: start, lap a, lap b, table
    monkeypatch.setattr(progress_mod, "time", SimpleNamespace(perf_counter=lambda: next(now)))
    clock = Stopwatch()
    clock.lap("a")
    clock.lap("b")
    assert clock.minutes == {"a": pytest.approx(1.0), "b": pytest.approx(1.5)}
    assert capsys.readouterr().out == "[a: 1.0 min wall clock]\n[b: 1.5 min wall clock]\n"
    t = clock.table()
    assert list(t.index) == ["a", "b", "total"] and t.index.name == "section"
    assert t["minutes"].tolist() == pytest.approx([1.0, 1.5, 4.0])  # the total runs to the table, not the last lap


def test_stopwatch_without_laps_has_only_the_total():
    t = Stopwatch().table()
    assert list(t.index) == ["total"] and t.loc["total", "minutes"] >= 0
