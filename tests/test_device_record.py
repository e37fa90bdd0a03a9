"""The ledger records the device a notebook was asked for and the device each cell computed on; the
claims table shows it, and values that are dicts or lists of records read as lines and small tables.

The per-cell log is exercised with a stand-in for the accelerator's allocation counters (no GPU
here) and, end to end, in a real Jupyter kernel on the CPU.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from nbclient import NotebookClient

from hgutils import device_log
from hgutils.device_log import DeviceLog, device_summary
from hgutils.ledger import Claims, html_value


class _Result:
    def __init__(self, n: int) -> None:
        self.execution_count = n


def test_device_log_marks_the_cells_that_allocated_on_an_accelerator():
    counts = {"cuda:0": 10}
    log = DeviceLog("cuda", counts=lambda: dict(counts))
    for n, allocations in ((3, 0), (4, 5), (5, 0), (6, 2), (7, 1)):
        log.pre_run_cell()
        counts["cuda:0"] += allocations
        log.post_run_cell(_Result(n))
    rec = log.record()
    assert rec == {
        "requested": "cuda",
        "used": ["cuda:0"],
        "cells": {"3": ["cpu"], "4": ["cuda:0"], "5": ["cpu"], "6": ["cuda:0"], "7": ["cuda:0"]},
    }
    c = Claims("nb", "smoke")
    c._loaded_device = rec
    assert c.device_line() == "device: asked cuda; computed on cuda:0 (cells 4, 6-7), the other cells on the CPU"
    assert device_summary(rec) == "cuda:0"


def test_a_cuda_request_that_every_cell_ran_on_the_cpu_is_said_in_the_table():
    log = DeviceLog("cuda", counts=dict)
    log.pre_run_cell()
    log.post_run_cell(_Result(2))
    c = Claims("nb", "smoke")
    c._loaded_device = log.record()
    c.add("a", "s", paper=1, ours=1, criterion="c", holds=True, source="s")
    assert device_summary(c.device) == "cpu, although cuda was asked for"
    line = "device: asked cuda; every cell computed on the CPU (this notebook did not use cuda)"
    assert c.device_line() == line
    html = c.html()
    assert html.startswith('<p style="background:#f8d7da') and line in html and "<table" in html
    ok = Claims("nb", "smoke")
    ok._loaded_device = DeviceLog("cpu", counts=dict).record() | {"cells": {"2": ["cpu"]}}
    assert ok.device_line() == "device: asked cpu; every cell computed on the CPU"
    assert "#f8d7da" not in ok.html()


def test_the_device_record_is_saved_and_loaded(tmp_path, monkeypatch):
    monkeypatch.setattr(device_log, "_DEVICE_LOG", None)
    plain = Claims("nb", "smoke")
    assert plain.device is None and plain.to_dict()["device"] is None and plain.device_line() == ""
    asked = Claims("nb", "smoke", device="cuda:1")
    assert asked.device == {"requested": "cuda:1", "used": None, "cells": None}
    assert "not recorded" in asked.device_line()
    log = DeviceLog("cuda", counts=dict)
    log.post_run_cell(_Result(1))
    monkeypatch.setattr(device_log, "_DEVICE_LOG", log)
    c = Claims("nb", "smoke")
    c.add("a", "s", paper=1, ours=1, criterion="c", holds=True, source="s")
    back = Claims.load(c.save(tmp_path))
    assert back.device == c.device == {"requested": "cuda", "used": ["cpu"], "cells": {"1": ["cpu"]}}
    assert back.to_dict() == c.to_dict()
    old = json.loads((tmp_path / "claims.json").read_text())
    del old["device"]  # a ledger written before the device record
    (tmp_path / "claims.json").write_text(json.dumps(old))
    monkeypatch.setattr(device_log, "_DEVICE_LOG", None)
    assert Claims.load(tmp_path / "claims.json").device is None


def test_ledger_values_render_as_lines_and_tables_not_dumps():
    assert html_value({"msa": 0.123456, "rsa": 0.5}) == "msa: 0.1235<br>rsa: 0.5"
    # as the ledger stores them: keys sorted, so the identifying "regime" comes after a measured column
    records = [{"K": 2, "weight change": 0.8312, "regime": "rich"}, {"K": 2, "weight change": 0.01, "regime": "lazy"}]
    table = html_value(records)
    assert table.startswith("<table") and table.count("<tr>") == 3 and "<th" in table and ">weight change<" in table
    assert table.index(">regime<") < table.index(">weight change<")
    assert "{" not in table and "[" not in table and ">0.8312<" in table
    assert html_value([1, 2]) == "[1, 2]" and html_value("a<b") == "a&lt;b" and html_value(None) == "—"
    c = Claims("nb", "smoke")
    c.add("r", "s", paper="small ⇒ rich", ours=records, criterion="c", holds=True, source="s")
    assert "(K=2; regime=rich" not in c.html() and ">rich<" in c.html()


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_notebook_run_in_a_kernel_records_its_cells_devices(tmp_path, device):
    """End to end in a Jupyter kernel: ``output_dirs`` starts the log, the ledger carries it."""
    cells = [
        nbformat.v4.new_code_cell(f"device = {device!r}\nscale = 'smoke'"),
        nbformat.v4.new_code_cell(
            "from hgutils.ledger import Claims\nfrom hgutils.repro import output_dirs\n"
            f"out_res, _ = output_dirs('99_dev', scale, {str(tmp_path)!r})"
        ),
        nbformat.v4.new_code_cell("import torch\nx = torch.ones(3) * 2"),
        nbformat.v4.new_code_cell(
            "c = Claims('99_dev', scale)\n"
            "c.add('a', 's', paper=1, ours=float(x.sum()), criterion='c', holds=True, source='s')\n"
            "c.save(out_res)\nc.show()"
        ),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    rec = json.loads((tmp_path / "smoke" / "99_dev" / "claims.json").read_text())["device"]
    assert rec == {"requested": device, "used": ["cpu"], "cells": {"2": ["cpu"], "3": ["cpu"]}}
    html = nb.cells[3].outputs[0]["data"]["text/html"]
    assert ("did not use cuda" in html) == (device == "cuda")
