"""Tables for a JupyterLab window (hgutils.notebook_tools.tables): wrapping HTML, formatted numbers,
readable values; plain text where HTML is not rendered; nothing the hygiene check objects to."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from hgutils.notebook_tools import find_problems
from hgutils.notebook_tools.tables import Table, table


def _cells(html: str, tag: str = "td") -> list[str]:
    return re.findall(rf"<{tag}\b[^>]*>(.*?)</{tag}>", html)


def test_html_formats_numbers_aligns_by_kind_and_wraps():
    df = pd.DataFrame(
        {
            "regime": ["rich", "lazy"],
            "NTK align. init↔trained": [0.412345, np.float32(0.99991)],
            "steps (max)": [286, np.int64(12)],
            "trained (gate)": [True, False],
            "checks": [{"rich": True}, None],
        }
    )
    html = table(df, floats="{:.3g}", index=False)._repr_html_()
    assert html.startswith('<table style="border-collapse:collapse') and "white-space:normal" in html
    assert _cells(html, "th") == ["regime", "NTK align. init↔trained", "steps (max)", "trained (gate)", "checks"]
    assert _cells(html) == ["rich", "0.412", "286", "True", "rich: True", "lazy", "1", "12", "False", "—"]
    # numbers right, text left (headers follow their column)
    assert re.search(r'text-align:right">0\.412<', html) and re.search(r'text-align:left">rich<', html)
    assert re.search(r'text-align:right">steps \(max\)<', html) and re.search(r'text-align:left">regime<', html)
    assert "..." not in html


def test_index_names_caption_and_plain_text():
    df = pd.DataFrame({"AUC": [0.51234, 0.9]}, index=pd.Index(["MSA", "CKA"], name="measure"))
    t = table(df, floats="{:.2f}", caption="previous recipe")
    html = t._repr_html_()
    assert "<caption" in html and "previous recipe" in html
    assert _cells(html, "th")[:2] == ["measure", "AUC"] and ">MSA</th>" in html
    text = repr(t)
    assert text.splitlines()[0] == "previous recipe" and "0.51" in text and "MSA" in text
    assert str(Table(df)) == repr(Table(df))


def test_a_table_output_passes_the_hygiene_rules():
    df = pd.DataFrame({"result": ["plane vs swiss roll: MSA ≈ 0 " * 8], "ours": [8.859e-17]})
    t = table(df, index=False)
    out = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/html": t._repr_html_(), "text/plain": repr(t)},
    }
    cell = {"cell_type": "code", "source": "display(t)", "execution_count": 1, "metadata": {}, "outputs": [out]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    assert find_problems(nb, "t") == []
