"""The published medium ledgers speak the verdict vocabulary of :mod:`hgutils.verdicts`."""

from __future__ import annotations

from pathlib import Path

import pytest

from hgutils.ledger import Claims
from hgutils.verdicts import INCONCLUSIVE, VERDICTS

LEDGERS = sorted((Path(__file__).resolve().parents[1] / "results" / "medium").glob("*/claims.json"))


def test_every_numbered_notebook_has_a_published_medium_ledger():
    assert {p.parent.name[:2] for p in LEDGERS} >= {"01", "02", "03", "04", "05", "06"}


@pytest.mark.parametrize("path", LEDGERS, ids=[p.parent.name for p in LEDGERS])
def test_published_verdicts_are_the_vocabulary_and_every_inconclusive_says_what_it_resolves(path):
    ledger = Claims.load(path)
    assert ledger.scale == "medium" and ledger.rows
    for c in ledger.rows:
        assert c.verdict in VERDICTS, f"{path.parent.name}/{c.id}: verdict {c.verdict!r}"
        if c.verdict == INCONCLUSIVE:
            # the smallest resolvable difference, or why there is none (a one-seed side has no standard error)
            said = c.detail and ("resolvable" in c.detail or "no standard error" in c.detail)
            assert said, f"{path.parent.name}/{c.id}: {c.detail!r}"
