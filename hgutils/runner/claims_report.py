"""The claims report: every ``claims.json`` of a scale as one Markdown table, and the README's summary.

Two roots hold ledgers: the run root ``results/runs/`` (untracked), where ``reproduce`` writes, and
the published ``results/`` (tracked), where ``reproduce --publish`` copies them. ``claims --scale S``
reads the run root, ``claims --published`` the published one; the README's summary is always built
from the published ledgers.

``<root>/<scale>/CLAIMS.md`` holds every claim: the verdict counts per notebook, then one row per
claim with its statement, the paper's value, ours, the criterion and the power. The README's section
between ``<!-- CLAIMS:START -->`` and ``<!-- CLAIMS:END -->`` holds only the counts per notebook
(:func:`readme_summary_markdown`), each notebook linked to its published executed copy, and a link
to the full ``CLAIMS.md``. Only the **medium** ledgers update the README: :func:`write_claims`
refuses any other scale (before it looks for ledgers), ledgers whose own scale differs from the one
asked for, and an empty table.
"""

from __future__ import annotations

import contextlib
import os
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

from hgutils.atomic import atomic_write_text
from hgutils.runner.notebooks import REPO_ROOT
from hgutils.runner.republication import awaiting_republication

README_START = "<!-- CLAIMS:START -->"
README_END = "<!-- CLAIMS:END -->"
README_SCALE = "medium"
PUBLISHED_ROOT = REPO_ROOT / "results"
#: where ``reproduce`` writes by default (``hgutils.runner.DEFAULT_RUN_ROOT`` is this folder)
RUN_ROOT = REPO_ROOT / "results" / "runs"
#: the width the notes under the counts table are wrapped to (Markdown joins the lines; the README stays readable)
NOTE_WIDTH = 115


def claims_root(update_readme: bool = False) -> Path:
    """The default root of the ledgers: the run root, or the published root for the README table."""
    return PUBLISHED_ROOT if update_readme else RUN_ROOT


def collect_claims(scale: str, out: str | os.PathLike | None = None) -> list:
    """All ``claims.json`` ledgers under ``<out>/<scale>/*/`` (``out`` defaults to the run root ``results/runs``).

    Raises
    ------
    ValueError
        If a ledger found there records another scale (e.g. a smoke ledger copied under medium/).
    """
    from hgutils.ledger import Claims

    root = Path(out) if out else RUN_ROOT
    ledgers = []
    for path in sorted((root / scale).glob("*/claims.json")):
        led = Claims.load(path)
        if led.scale != scale:
            raise ValueError(f"{path} records scale {led.scale!r}, not {scale!r}; it does not belong in this table")
        ledgers.append(led)
    return ledgers


def notebook_linker(folder: Path, base: Path) -> Callable[[str], str | None]:
    """``notebook -> href`` of ``<folder>/<notebook>.ipynb`` relative to ``base``, ``None`` when absent."""

    def link(notebook: str) -> str | None:
        path = Path(folder) / f"{notebook}.ipynb"
        return Path(os.path.relpath(path, base)).as_posix() if path.is_file() else None

    return link


def verdict_counts_markdown(
    ledgers: Iterable, link: Callable[[str], str | None] | None = None, waiting: dict[str, str] | None = None
) -> str:
    """How many claims of each notebook hold, are contradicted, inconclusive, not tested, did not train or were
    contradicted on a capped run (``inconclusive (capped)``). Notebooks in ``waiting`` (``{stem: reason}``,
    :func:`~hgutils.runner.republication.awaiting_republication`) are marked with a dagger, and a note under the
    table gives each one's reason."""
    from hgutils.verdicts import VERDICTS

    ledgers = list(ledgers)
    waiting = waiting or {}
    heads = ["holds", "contradicted", "inconclusive", "not tested", "did not train", "capped"]
    lines = ["| notebook | " + " | ".join(heads) + " | claims |", "|---" * (len(heads) + 2) + "|"]
    total = dict.fromkeys(VERDICTS, 0)
    for led in ledgers:
        counts = led.counts()
        for k in VERDICTS:
            total[k] += counts.get(k, 0)
        href = link(led.notebook) if link else None
        name = f"[{led.notebook}]({href})" if href else led.notebook
        name += " †" if led.notebook in waiting else ""
        lines.append(f"| {name} | " + " | ".join(str(counts.get(k, 0)) for k in VERDICTS) + f" | {len(led.rows)} |")
    lines.append("| **all** | " + " | ".join(f"**{total[k]}**" for k in VERDICTS) + f" | **{sum(total.values())}** |")
    shown = [led.notebook for led in ledgers if led.notebook in waiting]
    if shown:
        lines.append("")
        note = (
            "† published with an earlier library and awaiting republication (`python -m hgutils reproduce --scale "
            "medium --only NN --publish`): its verdicts are what that run measured, not what today's library gives."
        )
        lines += textwrap.wrap(note, NOTE_WIDTH, break_on_hyphens=False)
        for stem in shown:
            lines += textwrap.wrap(f"- {stem}: {waiting[stem]}", NOTE_WIDTH, subsequent_indent="  ")
    return "\n".join(lines) + "\n"


def claims_markdown(
    ledgers: Iterable,
    scale: str,
    link: Callable[[str], str | None] | None = None,
    where: str = "",
    waiting: dict[str, str] | None = None,
    command: str = "",
) -> str:
    """The verdict counts per notebook, then one table of every claim (verdict right after the claim id;
    notebooks linked where ``link`` gives an href, those awaiting republication (``waiting``) marked);
    ``where`` names the folder searched, for the empty table; ``command`` the one that regenerates this table
    (default ``python -m hgutils claims --scale <scale>``)."""
    from hgutils.ledger import format_value

    ledgers = list(ledgers)
    lines = [
        f"Claims ledger at scale `{scale}` (generated by `{command or f'python -m hgutils claims --scale {scale}'}`).",
        "",
        "Verdicts: **holds** (resolved in the paper's direction: more than 2 standard errors over seeds for a "
        "comparison, inside the tolerance for an absolute number), **contradicted** (resolved against it), "
        "**inconclusive** (within 2 se; the ledger gives the smallest difference the run could resolve), "
        "**not tested at this scale**, **inconclusive (did not train)** and **inconclusive (capped)** (contradicted, "
        "but a losing model stopped at its budget while still improving), each with its reason.",
        "",
        verdict_counts_markdown(ledgers, link, waiting).rstrip("\n"),
        "",
        "| notebook | claim | verdict | statement | paper (source) | ours | criterion | power |",
        "|---|---|---|---|---|---|---|---|",
    ]
    n = 0
    for led in ledgers:
        href = link(led.notebook) if link else None
        name = f"[{led.notebook}]({href})" if href else led.notebook
        name += " †" if led.notebook in (waiting or {}) else ""
        for r in led.rows:
            n += 1
            lines.append(
                f"| {name} | {r.id} | **{r.verdict_detail}** | {r.statement} | {format_value(r.paper)} ({r.source}) | "
                f"{format_value(r.ours)} | {r.criterion} | {r.power_text or '—'} |"
            )
    if n == 0:
        at = f" under `{where}`" if where else ""
        lines.append(
            f"| — | — | — | no ledgers found for scale `{scale}`{at}; `python -m hgutils reproduce --scale {scale}` "
            f"writes them under `results/runs/{scale}/` | — | — | — | — |"
        )
    return "\n".join(lines) + "\n"


def check_readme_scale(scale: str) -> None:
    """Raise unless ``scale`` is the one whose ledgers update the README (medium).

    Raises
    ------
    ValueError
        For any other scale, saying that only the medium ledgers update the README.
    """
    if scale != README_SCALE:
        raise ValueError(
            f"only the {README_SCALE} ledgers update the README; refusing to write a {scale} table into it "
            f"(leave out --update-readme to render {scale}'s CLAIMS.md, or use --scale {README_SCALE})"
        )


def readme_summary_markdown(
    ledgers: Iterable,
    scale: str,
    link: Callable[[str], str | None] | None = None,
    claims_href: str = "CLAIMS.md",
    waiting: dict[str, str] | None = None,
) -> str:
    """The README's claims section: the verdict counts per notebook (those awaiting republication marked) and a
    link to every claim (``claims_href``)."""
    return "\n".join(
        [
            f"Verdicts of the published `{scale}` run, per notebook (generated by "
            f"`python -m hgutils claims --scale {scale} --update-readme`);",
            f"every claim with its criterion, the paper's value and ours: [{claims_href}]({claims_href}).",
            "",
            verdict_counts_markdown(ledgers, link, waiting).rstrip("\n"),
            "",
        ]
    )


def write_claims(
    scale: str,
    out: str | os.PathLike | None = None,
    update_readme: bool = False,
    readme: Path = REPO_ROOT / "README.md",
) -> str:
    """Render ``<out>/<scale>/CLAIMS.md``; optionally replace the README's marked (medium) summary.

    ``out`` defaults to the run root ``results/runs`` and, with ``update_readme``, to the published
    root ``results/`` (:func:`claims_root`). The README gets only the per-notebook verdict counts and
    a link to ``CLAIMS.md`` (:func:`readme_summary_markdown`).

    Raises
    ------
    ValueError
        With ``update_readme``: if ``scale`` is not ``medium`` (:func:`check_readme_scale`), no ledger
        was found, or the README has no marked section. Also if a ledger records another scale than
        ``scale``.
    """

    if update_readme:
        check_readme_scale(scale)
    root = Path(out) if out else claims_root(update_readme)
    ledgers = collect_claims(scale, root)
    shown = root / scale
    with contextlib.suppress(ValueError):
        shown = shown.resolve().relative_to(REPO_ROOT)
    waiting = awaiting_republication(root / scale)
    command = f"python -m hgutils claims --scale {scale}"
    if root.resolve() == PUBLISHED_ROOT.resolve():
        command += " --published"
    elif root.resolve() != RUN_ROOT.resolve():
        command += f" --out {shown.parent.as_posix()}"
    link = notebook_linker(root / scale, root / scale)
    md = claims_markdown(ledgers, scale, link, shown.as_posix(), waiting, command)
    atomic_write_text(root / scale / "CLAIMS.md", md)
    if update_readme:
        if not ledgers:
            raise ValueError(f"no {scale} ledgers under {root / scale}; refusing to empty the README's claims summary")
        text = readme.read_text(encoding="utf-8")
        if README_START not in text or README_END not in text:
            raise ValueError(f"{readme} has no {README_START} ... {README_END} section to update")
        head, rest = text.split(README_START, 1)
        _, tail = rest.split(README_END, 1)
        claims_href = Path(os.path.relpath(root / scale / "CLAIMS.md", readme.parent)).as_posix()
        link = notebook_linker(root / scale, readme.parent)
        table = readme_summary_markdown(ledgers, scale, link, claims_href, waiting)
        atomic_write_text(readme, f"{head}{README_START}\n{table}{README_END}{tail}")
    return md
