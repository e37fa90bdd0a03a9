"""Tables that read well in a JupyterLab window: HTML that wraps, numbers formatted and right-aligned.

A wide ``print(df.to_string())`` is wider than a notebook window: the output area wraps its lines
and the columns no longer line up. :func:`table` returns a :class:`Table`, which JupyterLab shows
as an HTML table (headers and text wrap, numbers right-aligned with one float format, text
left-aligned, lists and dicts as readable text), and which prints as the aligned plain text of
``to_string`` wherever HTML is not rendered (a terminal, nbval's text comparison).

>>> import pandas as pd
>>> t = table(pd.DataFrame({"K": [2, 5], "weight change": [0.83124, 0.0123]}), floats="{:.3g}", index=False)
>>> print(t)
K weight change
2         0.831
5        0.0123
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from html import escape
from typing import Any

_CELL = "padding:0.25em 0.4em;vertical-align:top;white-space:normal;word-break:normal;overflow-wrap:anywhere"


def _formatter(floats: str | Callable[[float], str]) -> Callable[[float], str]:
    return floats if callable(floats) else floats.format


def _text(value: Any, fmt: Callable[[float], str]) -> str:
    """One cell's text: floats by ``fmt``, missing values as ``—``, lists and dicts without brackets."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return fmt(float(value))
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_text(v, fmt)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v, fmt) for v in value)
    return str(value)


def _numeric(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class Table:
    """A DataFrame shown as a wrapping HTML table in Jupyter and as ``to_string`` text elsewhere."""

    def __init__(
        self,
        df: Any,
        floats: str | Callable[[float], str] = "{:.4g}",
        index: bool = True,
        caption: str | None = None,
    ) -> None:
        self.df, self.index, self.caption = df, index, caption
        self._fmt = _formatter(floats)

    def _repr_html_(self) -> str:
        df, fmt = self.df, self._fmt
        names = [str(n) if n is not None else "" for n in (df.index.names if self.index else [])]
        head = [f'<th style="{_CELL};text-align:left">{escape(n)}</th>' for n in names]
        for col in df.columns:
            label = " · ".join(map(str, col)) if isinstance(col, tuple) else str(col)
            align = "right" if all(_numeric(v) or v is None for v in df[col]) else "left"
            head.append(f'<th style="{_CELL};text-align:{align}">{escape(label)}</th>')
        rows = []
        for key, row in zip(df.index, df.itertuples(index=False)):
            keys = (key if isinstance(key, tuple) else (key,)) if self.index else ()
            tds = [f'<th style="{_CELL};text-align:left">{escape(_text(k, fmt))}</th>' for k in keys]
            for v in row:
                align = "right" if _numeric(v) else "left"
                tds.append(f'<td style="{_CELL};text-align:{align}">{escape(_text(v, fmt))}</td>')
            rows.append(f"<tr>{''.join(tds)}</tr>")
        cap = f'<caption style="text-align:left">{escape(self.caption)}</caption>' if self.caption else ""
        return (
            f'<table style="border-collapse:collapse;font-size:0.9em;max-width:100%">{cap}'
            f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def __repr__(self) -> str:
        shown = self.df.map(lambda v: _text(v, self._fmt)) if hasattr(self.df, "map") else self.df
        text = shown.to_string(index=self.index)
        return f"{self.caption}\n{text}" if self.caption else text

    __str__ = __repr__


def table(
    df: Any, floats: str | Callable[[float], str] = "{:.4g}", index: bool = True, caption: str | None = None
) -> Table:
    """``df`` as a :class:`Table` (see the module docstring): display it, or end a cell with it."""
    return Table(df, floats, index, caption)
