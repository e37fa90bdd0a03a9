"""The claims ledger each notebook ends with: :class:`Claim` rows and the :class:`Claims` table; and the
paper's numbers beside ours (:func:`paper_table` of :class:`PaperRow` s), the table every notebook shows.

Verdicts come from :mod:`hgutils.verdicts`; the run's device record from :mod:`hgutils.device_log`.
``Claims.save`` writes ``claims.json`` atomically; ``Claims.show`` renders the table (verdict first,
coloured) as HTML in a notebook and as text elsewhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hgutils.atomic import atomic_write_text
from hgutils.device_log import device_record, is_accelerator
from hgutils.presets import SCALES
from hgutils.repro import _jsonable
from hgutils.verdicts import CAPPED, CONTRADICTED, DID_NOT_TRAIN, HOLDS, NOT_TESTED, VERDICT_COLOURS, VERDICTS


def format_value(v: Any) -> str:
    """Compact table text: floats to 4 significant digits, dicts as ``k=v; ...``, lists in brackets."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return "; ".join(f"{k}={format_value(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(f"({format_value(x)})" if isinstance(x, dict) else format_value(x) for x in v) + "]"
    return str(v).replace("|", "/").replace("\n", " ")


@dataclasses.dataclass
class Claim:
    """One row of the ledger: a paper claim, the paper's value, ours, an explicit criterion and its outcome.

    ``outcome`` is what the criterion gave (``holds`` / ``contradicted`` / ``inconclusive`` / ``not
    tested at this scale``); ``detail`` the measured difference and what the design resolves (for a
    comparative claim, from :mod:`hgutils.verdicts`), or why a claim was not tested; ``power`` whether
    a difference of the paper's size is resolvable at the seeds run.
    """

    id: str
    statement: str
    paper: Any
    ours: Any
    criterion: str
    outcome: str
    source: str
    scale: str
    trained: dict[str, Any] | None = None  # per judged model: {"trained": bool, "reason": str}
    detail: str | None = None
    test: dict[str, Any] | None = None
    power: dict[str, Any] | None = None
    favoured: list[str] | None = None  # the judged models the claim says win (None: not named)

    @property
    def verdict(self) -> str:
        """The outcome, with two overrides:

        - ``inconclusive (did not train)`` when a model the claim judges did not pass the learnability
          check (whatever the criterion gave);
        - ``inconclusive (capped)`` when the criterion gave ``contradicted`` and a losing model -- one
          of :attr:`favoured`, or any judged model when the claim names none -- stopped at its
          training budget while still improving (:attr:`capped_losers`).
        """
        if self.untrained:
            return DID_NOT_TRAIN
        if self.outcome == CONTRADICTED and self.capped_losers:
            return CAPPED
        return self.outcome

    @property
    def untrained(self) -> list[str]:
        """The judged models that did not pass the learnability check."""
        return [m for m, g in (self.trained or {}).items() if not g["trained"]]

    @property
    def capped(self) -> list[str]:
        """The judged models with a run that stopped because its training budget ran out (not by early
        stopping): the verdict rests on a run that may not have converged, and says so."""
        return [m for m, g in (self.trained or {}).items() if g.get("capped")]

    @property
    def capped_losers(self) -> list[str]:
        """The capped models among those that lose a contradicted claim: :attr:`favoured` when named
        (the paper's winners, which the criterion says lost), every judged model otherwise."""
        losers = self.favoured if self.favoured is not None else list(self.trained or {})
        return [m for m in self.capped if m in losers]

    @property
    def verdict_detail(self) -> str:
        """The verdict with what was measured: ``inconclusive: +1.9 ± 2.2 points; resolvable ≥ 4.4 at 3
        seeds``; the models that did not train when the claim could not be judged."""
        if self.untrained:
            return f"{self.verdict}: {', '.join(self.untrained)}"
        if self.verdict == CAPPED:
            measured = f"; {self.detail}" if self.detail else ""
            return (
                f"{CAPPED}: the criterion gave {CONTRADICTED}{measured}; stopped at their budget while "
                f"improving: {', '.join(self.capped_losers)}"
            )
        text = f"{self.verdict}: {self.detail}" if self.detail else self.verdict
        if self.capped:
            text += f" (rests on capped runs: {', '.join(self.capped)})"
        return text

    @property
    def power_text(self) -> str:
        """One line on whether the paper's difference is resolvable at these seeds (empty when not stated)."""
        if not self.power:
            return ""
        p = self.power
        if "text" in p:
            return str(p["text"])
        return format_value(p)


def _ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 8]`` → ``"3-5, 8"``."""
    groups: list[list[int]] = []
    for n in numbers:
        if groups and groups[-1][1] == n - 1:
            groups[-1][1] = n
        else:
            groups.append([n, n])
    return ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in groups)


def html_value(v: Any) -> str:
    """A ledger value as HTML for a table cell: a dict as one ``key: value`` line per key, a list of
    records (dicts with the same keys) as a small table, anything else as :func:`format_value` text."""

    if isinstance(v, dict) and v:
        return "<br>".join(f"{escape(str(k))}: {escape(format_value(x))}" for k, x in v.items())
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, dict) for x in v):
        keys = list(v[0])
        if all(list(x) == keys for x in v):
            # identifying columns (ints and text: K, regime) before the measured ones
            ident = [k for k in keys if all(isinstance(x[k], (int, str)) and not isinstance(x[k], bool) for x in v)]
            keys = ident + [k for k in keys if k not in ident]
            cell = 'style="padding:1px 3px;text-align:left;vertical-align:top;word-break:break-word"'
            head = "".join(f"<th {cell}>{escape(str(k))}</th>" for k in keys)
            body = "".join(
                "<tr>" + "".join(f"<td {cell}>{escape(format_value(x[k]))}</td>" for k in keys) + "</tr>" for x in v
            )
            return (
                '<table style="font-size:0.85em;border-collapse:collapse;width:100%;table-layout:auto">'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            )
        return "<br>".join(html_value(x) for x in v)
    return escape(format_value(v))


def _outcome(holds: bool | None, test: Any) -> str:
    if test is not None:
        if holds is not None:
            raise ValueError("give either holds= (an absolute criterion) or test= (a comparison), not both")
        if getattr(test, "verdict", None) not in VERDICTS:
            raise ValueError(f"test= needs a comparison from hgutils.verdicts; got {test!r}")
        return str(test.verdict)
    if holds is None:
        return NOT_TESTED
    if not isinstance(holds, (bool, np.bool_)):
        raise ValueError(f"holds must be True, False or None; got {holds!r}")
    return HOLDS if holds else CONTRADICTED


class Claims:
    """The claims ledger a notebook ends with.

    ``claims.add(id, statement, paper=..., ours=..., criterion=..., source=..., holds=... | test=...)``
    records one claim:

    - an *absolute* claim passes ``holds=True/False`` from a criterion computed in the run (``holds``
      / ``contradicted``);
    - a *comparative* claim passes ``test=`` a comparison from :mod:`hgutils.verdicts`
      (``holds`` / ``contradicted`` / ``inconclusive``, with the resolvable difference), and
      ``paper_effect=`` the paper's difference in the same units when the paper reports one, so the
      ledger states whether this design could resolve it;
    - neither (``holds=None``) is ``not tested at this scale``; ``reason=`` says why.

    ``trained={model: gate}`` records the learnability check of every model the claim judges (a
    :class:`hgutils.loop.GateResult`, or a dict with ``trained`` and ``reason``): if any did not
    train, the verdict is ``inconclusive (did not train)``. ``save(results_dir)`` writes
    ``claims.json``; ``show()`` displays the table (verdict first, coloured);
    ``print_verdicts()`` prints only ``id: verdict`` lines -- the cell nbval checks.

    The ledger also records the run's device (:attr:`device`): the device the notebook was asked
    for (its ``device`` parameter, or ``device=`` here) and the device every cell computed on (the
    :class:`DeviceLog` that :func:`output_dirs` starts in a Jupyter kernel). The table says so
    when an accelerator was asked for and every cell ran on the CPU.
    """

    def __init__(self, notebook: str, scale: str, device: str | None = None) -> None:

        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
        self.notebook = notebook
        self.scale = scale
        self.rows: list[Claim] = []
        self._requested = device
        self._loaded_device: dict[str, Any] | None = None

    @property
    def device(self) -> dict[str, Any] | None:
        """``{"requested", "used", "cells"}`` (``cells``: execution count → devices), ``None`` when unknown.

        For a ledger being written, read from the running notebook's :class:`DeviceLog` each time;
        for a loaded one, what it recorded.
        """
        if self._loaded_device is not None:
            return self._loaded_device
        return device_record(self._requested)

    def add(
        self,
        id: str,
        statement: str,
        *,
        paper: Any,
        ours: Any,
        criterion: str,
        source: str,
        holds: bool | None = None,
        test: Any = None,
        paper_effect: float | None = None,
        reason: str | None = None,
        trained: dict[str, Any] | None = None,
        favoured: Sequence[str] | None = None,
    ) -> Claim:
        """Record a claim (class docstring): ``holds`` for an absolute criterion, ``test`` for a
        comparison, neither for "not tested" (``reason``); ``trained`` maps each judged model to its
        learnability check (``capped``: its run stopped at its budget); ``favoured`` names the judged
        models the claim says win, whose capped runs make a contradiction ``inconclusive (capped)``
        (default: any judged model's)."""
        if any(r.id == id for r in self.rows):
            raise ValueError(f"claim id {id!r} already recorded in {self.notebook}")
        if not criterion:
            raise ValueError(f"claim {id!r}: a verdict needs an explicit criterion")
        outcome = _outcome(holds, test)
        gates = None
        if trained is not None:
            gates = {}
            for model, g in trained.items():
                g = g.to_dict() if hasattr(g, "to_dict") else dict(g)
                if not isinstance(g.get("trained"), (bool, np.bool_)):
                    raise ValueError(f"claim {id!r}: trained[{model!r}] needs a bool 'trained'; got {g!r}")
                gates[str(model)] = {
                    "trained": bool(g["trained"]),
                    "reason": str(g.get("reason", "")),
                    "capped": bool(g.get("capped", False)),
                }
        if favoured is not None:
            favoured = [str(m) for m in favoured]
            unknown = [m for m in favoured if gates is None or m not in gates]
            if unknown:
                raise ValueError(f"claim {id!r}: favoured models {unknown} are not among the judged models (trained=)")
        detail = test.summary if test is not None else (reason or None)
        power = None
        if paper_effect is not None:
            if test is None or not hasattr(test, "power"):
                raise ValueError(f"claim {id!r}: paper_effect= needs a test= that reports power")
            p = test.power(paper_effect)
            power = p.to_dict() | {"text": p.text(getattr(test, "unit", ""))}
        row = Claim(
            id,
            statement,
            _jsonable(paper),
            _jsonable(ours),
            criterion,
            outcome,
            source,
            self.scale,
            gates,
            detail,
            _jsonable(test.to_dict()) if test is not None else None,
            _jsonable(power),
            favoured,
        )
        self.rows.append(row)
        return row

    def counts(self) -> dict[str, int]:
        """How many claims have each verdict (every verdict of :data:`hgutils.verdicts.VERDICTS`)."""
        out = dict.fromkeys(VERDICTS, 0)
        for r in self.rows:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "notebook": self.notebook,
            "scale": self.scale,
            "device": self.device,
            "claims": [dataclasses.asdict(r) | {"verdict": r.verdict} for r in self.rows],
        }

    def save(self, results_dir: str | os.PathLike) -> Path:
        """Write ``<results_dir>/claims.json`` atomically and return its path."""
        path = Path(results_dir) / "claims.json"
        atomic_write_text(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Claims:
        """Read a ``claims.json`` written by :meth:`save`.

        A ledger written before the verdict vocabulary (``holds`` as a bool, verdict ``fails``) keeps
        its recorded verdict word as its outcome, so a stale ``fails`` stays visible (and the tests
        that forbid it in a published ledger see it).
        """
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        out = cls(data["notebook"], data["scale"])
        if isinstance(data.get("device"), dict):
            out._loaded_device = data["device"]
        fields = {f.name for f in dataclasses.fields(Claim)}
        for r in data["claims"]:
            r = dict(r)
            if "outcome" not in r:  # the old schema: the gate is re-derived from ``trained``
                r["outcome"] = {True: HOLDS, False: "fails", None: NOT_TESTED}[r.get("holds")]
            out.rows.append(Claim(**{k: v for k, v in r.items() if k in fields}))
        return out

    def device_line(self) -> str:
        """``device: asked cuda; computed on cuda:0 (cells 5, 7-9), the other cells on the CPU`` or ``""``."""
        rec = self.device
        if not rec:
            return ""
        asked = rec.get("requested") or "?"
        cells = rec.get("cells") or {}
        if not rec.get("used"):
            return f"device: asked {asked}; the cells' devices were not recorded (not run in a Jupyter kernel)"
        on = {d for devs in cells.values() for d in devs if d != "cpu"}
        if not on:
            line = f"device: asked {asked}; every cell computed on the CPU"
            if is_accelerator(asked):
                line += f" (this notebook did not use {asked})"
            return line
        parts = []
        for d in sorted(on):
            runs = _ranges(sorted(int(k) for k, devs in cells.items() if d in devs))
            parts.append(f"{d} (cells {runs})")
        return f"device: asked {asked}; computed on " + ", ".join(parts) + ", the other cells on the CPU"

    def markdown(self) -> str:
        """The ledger as a Markdown table, verdict first."""
        head = "| verdict | claim | statement | paper | ours | criterion | power |\n|---|---|---|---|---|---|---|\n"
        body = "".join(
            f"| **{r.verdict_detail}** | {r.id} | {r.statement} | {format_value(r.paper)} | {format_value(r.ours)} "
            f"| {r.criterion} | {r.power_text or '—'} |\n"
            for r in self.rows
        )
        return head + body

    def html(self) -> str:
        """The ledger as an HTML table that wraps to the window: verdict first, coloured by verdict; dict
        values as lines and lists of records as small tables (:func:`html_value`); the device line
        (:meth:`device_line`) above it, highlighted when an accelerator was asked for and not used."""

        cols = ("verdict", "claim", "statement", "paper", "ours", "criterion", "power")
        widths = ("19%", "9%", "17%", "11%", "22%", "14%", "8%")
        head = "".join(f'<th style="text-align:left;width:{w}">{c}</th>' for c, w in zip(cols, widths))
        rows = []
        for r in self.rows:
            colour = VERDICT_COLOURS.get(r.verdict, "#ffffff")
            verdict = f"<b>{escape(r.verdict)}</b>"
            rest = r.verdict_detail[len(r.verdict) :].lstrip(": ")
            if rest:
                verdict += f"<br><small>{escape(rest)}</small>"
            cells = [
                verdict,
                f"<code>{escape(r.id)}</code>",
                escape(r.statement),
                html_value(r.paper),
                html_value(r.ours),
                escape(r.criterion),
                escape(r.power_text or "—"),
            ]
            tds = "".join(
                f'<td style="text-align:left;vertical-align:top;white-space:normal;word-break:break-word">{c}</td>'
                for c in cells
            )
            rows.append(f'<tr style="background:{colour}">{tds}</tr>')
        table = (
            '<table style="table-layout:fixed;width:100%;border-collapse:collapse;font-size:0.9em">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
        line = self.device_line()
        if not line:
            return table
        rec = self.device or {}
        unused = is_accelerator(rec.get("requested")) and rec.get("used") == ["cpu"]
        style = "background:#f8d7da;padding:2px 6px" if unused else "padding:2px 0"
        return f'<p style="{style}"><small>{escape(line)}</small></p>{table}'

    def show(self) -> None:
        """Display the table (coloured, wrapping HTML in Jupyter; Markdown text elsewhere)."""
        try:
            from IPython import get_ipython
            from IPython.display import HTML, display

            if get_ipython() is not None:
                display(HTML(self.html()))
                return
        except ImportError:  # pragma: no cover - IPython is a dependency
            pass
        line = self.device_line()
        print((line + "\n\n" if line else "") + self.markdown())

    def print_verdicts(self) -> None:
        """Print ``id: verdict`` per claim -- deterministic text for nbval's checked cell."""
        for r in self.rows:
            print(f"{r.id}: {r.verdict}")


@dataclasses.dataclass(frozen=True)
class PaperRow:
    """One line of a paper-vs-ours table: ``what`` is compared, the paper's value (quoted, with the
    ``source`` that states it), ``ours`` (computed in the run: one value, or ``{column: value}`` for
    several of our columns, e.g. one per training domain) and ``extra`` columns (e.g. the protocol run)."""

    what: str
    paper: Any
    source: str
    ours: Any
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def paper_table(rows: Sequence[PaperRow], what: str = "result", ours: str = "ours") -> pd.DataFrame:
    """The paper's numbers beside ours, one row per :class:`PaperRow`: columns ``what`` (the header of the
    compared quantity), ``paper``, ``paper's source``, then ours (``ours`` as header, or the keys of a
    row's ``ours`` mapping), then the rows' ``extra`` columns in first-seen order."""
    if not rows:
        raise ValueError("a paper table needs at least one row")
    mine = [dict(r.ours) if isinstance(r.ours, Mapping) else {ours: r.ours} for r in rows]
    ours_cols = list(dict.fromkeys(k for m in mine for k in m))
    extra_cols = list(dict.fromkeys(k for r in rows for k in r.extra))
    out = [
        {what: r.what, "paper": r.paper, "paper's source": r.source, **m, **dict(r.extra)} for r, m in zip(rows, mine)
    ]
    return pd.DataFrame(out, columns=[what, "paper", "paper's source", *ours_cols, *extra_cols])
