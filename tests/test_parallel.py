"""forked_map: the items' results in order, here or in forked one-thread workers, closures included."""

from __future__ import annotations

import os

import pytest
import torch

from hgutils.parallel import forked_map


def test_results_come_in_item_order_from_forked_workers_and_closures_reach_them():
    data = torch.arange(10.0)  # closed over, never pickled
    here = list(forked_map(lambda i: float(data[i] * 2), range(7), 1))
    forked = list(forked_map(lambda i: (float(data[i] * 2), os.getpid(), torch.get_num_threads()), range(7), 2))
    assert [r[0] for r in forked] == here == [2.0 * i for i in range(7)]
    assert all(r[1] != os.getpid() for r in forked)  # they ran in other processes
    assert {r[2] for r in forked} == {1}  # one thread each


def test_one_item_or_one_worker_runs_here():
    assert [r for r in forked_map(lambda i: os.getpid(), [0], 4)] == [os.getpid()]
    assert list(forked_map(lambda i: os.getpid(), [0, 1], 1)) == [os.getpid()] * 2


def test_an_error_in_a_worker_reaches_the_caller_and_bad_workers_are_refused():
    def boom(i: int) -> int:
        if i == 2:
            raise FloatingPointError("item 2")
        return i

    with pytest.raises(FloatingPointError, match="item 2"):
        list(forked_map(boom, range(4), 2))
    with pytest.raises(ValueError, match="workers"):
        list(forked_map(boom, range(4), 0))
