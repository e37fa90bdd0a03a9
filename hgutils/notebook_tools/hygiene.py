"""Hygiene rules for committed and published notebooks: what a reader must never see.

:func:`find_problems` checks one notebook and returns a :class:`Problem` per offence, each naming
the cell (its 0-based index in the notebook), where in the cell, the rule and the
offending text. The rules:

- ``path-repr``: a ``PosixPath(...)``/``WindowsPath(...)`` result stored as output (end the cell
  with something a reader wants to see, or ``;``);
- ``truncated-table``: a table cell cut by pandas' column width (``...`` inside an HTML ``<td>`` or
  ``<th>``, a Markdown table row, or a plain-text DataFrame); render with ``to_markdown`` or widen
  ``display.max_colwidth``;
- ``machine-path``: an absolute path of the machine that ran the notebook, in a source, an output
  or the metadata (``python -m hgutils.notebook_tools clean`` fixes outputs and metadata);
- ``dev-wording``: wording that points at development material instead of the papers
  (``shared/papers``, ``../shared``, the development notes ``REFERENCE``/``DESIGN``, "the issue",
  "issue #N");
- ``raw-float``: a float printed with twelve or more decimals (a raw ``repr`` instead of the
  ledger's compact values: usually an output stored before the code changed);
- ``execution-order``: executed code cells not numbered 1, 2, 3, ... in order (cells run out of
  order or re-run by hand: outputs that no top-to-bottom run produced);
- ``stderr``: a stored ``stderr`` stream (a warning, a progress bar, a log line: red text a reader
  cannot act on), unless the cell is tagged ``allow-stderr`` (output the notebook means to show).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hgutils.runner.machine_paths import find_machine_paths
from hgutils.runner.notebooks import REPO_ROOT

RULES = ("path-repr", "truncated-table", "machine-path", "dev-wording", "raw-float", "execution-order", "stderr")
#: the cell tag that allows a cell's stored stderr output
ALLOW_STDERR = "allow-stderr"

_PATH_REPR = re.compile(r"\b(?:Posix|Windows|Pure\w*)Path\(")
_DEV_WORDING = re.compile(
    r"shared/papers|\.\./shared\b|\b[Tt]he issue(?:'s)?\b|\b[Ii]ssue #?\d+|\b(?:REFERENCE|DESIGN)(?:\.md)?\b"
)
_RAW_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{12,}(?:e[-+]?\d+)?")
_HTML_CELL = re.compile(r"<t([dh])\b[^>]*>(.*?)</t\1>", re.DOTALL)
#: in a plain-text table line (columns apart by two or more spaces): a column cut short with "..."
_COLUMNS = re.compile(r"\S {2,}\S")
_CUT_COLUMN = re.compile(r"\S\.\.\.(?= {2,}|\s*$)")
_TEXT_MIMES = ("text/plain", "text/html", "text/markdown", "text/latex")


@dataclass(frozen=True)
class Problem:
    """One hygiene offence: ``where`` is e.g. ``"cell 7 output 1 (text/html)"`` or ``"metadata"``."""

    notebook: str
    where: str
    rule: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.notebook}: {self.where}: {self.rule}: {self.excerpt!r}"


def _join(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _excerpt(text: str, start: int, end: int, width: int = 60) -> str:
    return text[max(0, start - width) : end + width].replace("\n", "\\n")


def _output_texts(out: dict) -> Iterator[tuple[str, str]]:
    """(mime or stream name, text) of one output's human-readable parts."""
    if "text" in out:
        yield out.get("name", "stream"), _join(out["text"])
    for mime in _TEXT_MIMES:
        if mime in out.get("data", {}):
            yield mime, _join(out["data"][mime])
    if "traceback" in out:
        yield "traceback", "\n".join(out["traceback"])


def _truncated_cells(mime: str, text: str, in_table: bool) -> Iterator[tuple[int, int]]:
    if mime == "text/html":
        for m in _HTML_CELL.finditer(text):
            if "..." in m.group(2):
                yield m.start(), m.end()
    elif mime == "text/markdown":
        for m in re.finditer(r"^\|.*\.\.\..*\|\s*$", text, re.MULTILINE):
            yield m.start(), m.end()
    elif in_table:  # pandas' plain-text repr of a DataFrame, beside its HTML table
        for m in re.finditer(r"\.\.\.", text):
            yield m.start(), m.end()
    elif mime == "stdout":  # a printed DataFrame
        offset = 0
        for line in text.splitlines(keepends=True):
            m = _CUT_COLUMN.search(line) if _COLUMNS.search(line) else None
            if m:
                yield offset + m.start(), offset + m.end()
            offset += len(line)


def _text_problems(name: str, where: str, text: str, repo_root: Path, outputs: bool) -> Iterator[Problem]:
    for path in find_machine_paths(text, repo_root):
        yield Problem(name, where, "machine-path", path)
    for m in _DEV_WORDING.finditer(text):
        yield Problem(name, where, "dev-wording", _excerpt(text, m.start(), m.end()))
    if not outputs:
        return
    for m in _PATH_REPR.finditer(text):
        yield Problem(name, where, "path-repr", _excerpt(text, m.start(), m.end()))
    for m in _RAW_FLOAT.finditer(text):
        yield Problem(name, where, "raw-float", _excerpt(text, m.start(), m.end(), 30))


def find_problems(nb: dict, name: str, repo_root: Path = REPO_ROOT) -> list[Problem]:
    """Every hygiene offence in the notebook ``nb`` (a dict as stored); ``name`` labels the messages."""
    problems: list[Problem] = []
    meta = json.dumps(nb.get("metadata", {}), ensure_ascii=False)
    problems += [Problem(name, "metadata", "machine-path", p) for p in find_machine_paths(meta, repo_root)]
    counts = []
    for i, cell in enumerate(nb.get("cells", [])):
        where = f"cell {i} source ({cell.get('cell_type')})"
        problems += _text_problems(name, where, _join(cell.get("source", "")), repo_root, outputs=False)
        cmeta = json.dumps(cell.get("metadata", {}), ensure_ascii=False)
        problems += [
            Problem(name, f"cell {i} metadata", "machine-path", p) for p in find_machine_paths(cmeta, repo_root)
        ]
        if cell.get("cell_type") != "code":
            continue
        counts.append((i, cell.get("execution_count")))
        allow_stderr = ALLOW_STDERR in (cell.get("metadata") or {}).get("tags", [])
        for j, out in enumerate(cell.get("outputs", [])):
            if out.get("output_type") == "stream" and out.get("name") == "stderr" and not allow_stderr:
                text = _join(out.get("text", ""))
                problems.append(Problem(name, f"cell {i} output {j} (stderr)", "stderr", _excerpt(text, 0, 0, 100)))
            in_table = "<table" in _join(out.get("data", {}).get("text/html", ""))
            for mime, text in _output_texts(out):
                at = f"cell {i} output {j} ({mime})"
                problems += _text_problems(name, at, text, repo_root, outputs=True)
                for start, end in _truncated_cells(mime, text, in_table):
                    problems.append(Problem(name, at, "truncated-table", _excerpt(text, start, end, 40)))
    executed = [(i, n) for i, n in counts if n is not None]
    if executed:
        expected = list(range(1, len(counts) + 1))
        got = [n for _, n in counts]
        if got != expected:
            first = next(k for k, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e)
            problems.append(
                Problem(
                    name,
                    f"cell {counts[first][0]}",
                    "execution-order",
                    f"execution counts {got}; a top-to-bottom run gives {expected}",
                )
            )
    return problems


def check_file(path: str | Path, repo_root: Path = REPO_ROOT) -> list[Problem]:
    """:func:`find_problems` on a notebook file, labelled with its stem."""
    path = Path(path)
    return find_problems(json.loads(path.read_text(encoding="utf-8")), path.stem, repo_root)
