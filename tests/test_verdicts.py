"""The one verdict rule for comparative claims (hgutils.verdicts)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from hgutils.ledger import Claims
from hgutils.verdicts import (
    CONTRADICTED,
    HOLDS,
    INCONCLUSIVE,
    NOT_TESTED,
    all_of,
    compare_ordering,
    compare_seeds,
    compare_spread,
    target_power,
)


def _paired(effect: float, n: int = 5, noise: float = 0.5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic paired design: a shared per-seed level, ``a`` offset by ``effect`` plus noise."""
    rng = np.random.default_rng(seed)
    level = rng.normal(50.0, 5.0, n)  # seed-to-seed variation shared by both models
    b = level + rng.normal(0, noise, n)
    a = level + effect + rng.normal(0, noise, n)
    return a, b


def test_known_effect_holds_zero_is_inconclusive_reversed_is_contradicted():
    a, b = _paired(3.0)
    assert compare_seeds(a, b, paired=True).verdict == HOLDS
    a0 = b + np.array([0.1, -0.2, 0.15, -0.05, 0.0])  # zero effect, a little noise
    assert compare_seeds(a0, b, paired=True).verdict == INCONCLUSIVE
    assert compare_seeds(b, a, paired=True).verdict == CONTRADICTED
    # lower is better flips the direction
    assert compare_seeds(b, a, paired=True, higher_is_better=False).verdict == HOLDS


def test_pairing_removes_the_shared_seed_level():
    a, b = _paired(1.0, n=6, noise=0.2)
    # the per-seed level (sd 5) swamps a 1-point effect unpaired, but not paired
    assert compare_seeds(a, b, paired=True).verdict == HOLDS
    assert compare_seeds(a, b, paired=False).verdict == INCONCLUSIVE


def test_resolvable_difference_is_two_standard_errors_by_hand():
    a = [0.31, 0.29, 0.35]
    b = [0.30, 0.25, 0.30]
    d = compare_seeds(a, b, paired=True, scale=100, unit="points")
    diffs = [1.0, 4.0, 5.0]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / 2)
    se = sd / math.sqrt(3)
    assert d.diff == pytest.approx(mean) and d.se == pytest.approx(se)
    assert d.resolvable == pytest.approx(2 * se)
    assert d.summary == f"+{mean:.2f} ± {se:.2f} points; resolvable ≥ {2 * se:.2f} at 3 seeds"
    u = compare_seeds(a, b, paired=False, scale=100)
    va, vb = np.var([31, 29, 35], ddof=1), np.var([30, 25, 30], ddof=1)
    assert u.se == pytest.approx(math.sqrt(va / 3 + vb / 3))
    assert u.resolvable == pytest.approx(2 * math.sqrt(va / 3 + vb / 3))


def test_the_issue_example_reads_inconclusive_with_its_resolvable_difference():
    # 01: trajectory vs final checkpoint, +1.87 points with se 2.21 over 3 seeds
    d = compare_seeds([1.87 + 2.21 * np.sqrt(3) * x for x in (-1, 0, 1)], [0, 0, 0], paired=True, digits=1)
    assert d.verdict == INCONCLUSIVE
    assert d.detail == "inconclusive: +1.9 ± 2.2; resolvable ≥ 4.4 at 3 seeds"


def test_margin_shifts_the_criterion():
    a, b = _paired(3.0, noise=0.1)
    assert compare_seeds(a, b, paired=True, margin=1.0).verdict == HOLDS
    assert compare_seeds(a, b, paired=True, margin=5.0).verdict == CONTRADICTED


def test_one_seed_has_no_standard_error():
    d = compare_seeds([0.5], [0.1], paired=True)
    assert d.verdict == INCONCLUSIVE and math.isnan(d.se)
    assert "no standard error" in d.summary


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="one value per seed"):
        compare_seeds([1, 2, 3], [1, 2], paired=True)
    with pytest.raises(ValueError, match="non-empty"):
        compare_seeds([], [1.0], paired=False)
    with pytest.raises(ValueError, match="finite"):
        compare_seeds([1.0, float("nan")], [1.0, 2.0], paired=False)


@settings(max_examples=60, deadline=None)
@given(
    sd=st.floats(0.05, 5.0),
    effect=st.floats(0.05, 10.0),
    n=st.integers(2, 8),
)
def test_power_seeds_needed_is_the_smallest_n_that_resolves(sd, effect, n):
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 1, n)
    noise = (noise - noise.mean()) / (noise.std(ddof=1) or 1.0) * sd
    d = compare_seeds(noise + 1.0, np.zeros(n), paired=True)
    p = d.power(effect)
    need = p.seeds_needed
    assert need >= 2
    assert 2 * d.spread / math.sqrt(need) < effect
    if need > 2:
        assert 2 * d.spread / math.sqrt(need - 1) >= effect
    assert p.resolvable == (effect > d.resolvable)


def test_ordering_is_judged_pairwise_along_the_order():
    rng = np.random.default_rng(0)
    base = rng.normal(0, 0.01, 4)
    vals = {"A": 3 + base, "B": 2 + base[::-1], "C": 1 + base}
    o = compare_ordering(vals, ["A", "B", "C"], paired=False)
    assert o.verdict == HOLDS and [s.label for s in o.steps] == ["A > B", "B > C"]
    assert compare_ordering(vals, ["A", "C", "B"], paired=False).verdict == CONTRADICTED
    close = {"A": [1.0, 2.0, 3.0], "B": [1.5, 2.5, 1.0]}
    assert compare_ordering(close, ["A", "B"], paired=False).verdict == INCONCLUSIVE
    low = compare_ordering(vals, ["C", "B", "A"], paired=False, higher_is_better=False)
    assert low.verdict == HOLDS and low.steps[0].label == "C < B"
    with pytest.raises(ValueError, match="no per-seed values"):
        compare_ordering(vals, ["A", "Z"], paired=False)


def test_spread_ratio_uses_the_f_interval():
    a = [1.0, 3.0, 0.0, 4.0]
    b = [1.0, 1.1, 0.9, 1.05]
    r = compare_spread(a, b, label="sd(A)/sd(B)")
    f = np.var(a, ddof=1) / np.var(b, ddof=1)
    assert r.ratio == pytest.approx(math.sqrt(f))
    assert r.low == pytest.approx(math.sqrt(f / stats.f.ppf(0.975, 3, 3)))
    assert r.high == pytest.approx(math.sqrt(f / stats.f.ppf(0.025, 3, 3)))
    assert r.resolvable == pytest.approx(math.sqrt(stats.f.ppf(0.975, 3, 3)))
    assert r.verdict == HOLDS  # ratio ~ 24 clears the interval even at 4 seeds
    assert compare_spread(b, a).verdict == CONTRADICTED
    same = compare_spread([1.0, 2.0, 3.0], [2.0, 3.0, 4.1])
    assert same.verdict == INCONCLUSIVE
    # "narrows by 20 %": ratio < 0.8
    assert compare_spread(b, a, threshold=0.8, greater=False).verdict == HOLDS
    p = same.power(2.0)
    assert not p.resolvable and p.seeds_needed is not None and p.seeds_needed > 3
    with pytest.raises(ValueError, match="at least two seeds"):
        compare_spread([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="undefined"):
        compare_spread([1.0, 2.0], [3.0, 3.0])


def test_all_of_needs_the_required_count():
    h = compare_seeds([3, 3.1, 2.9], [0, 0.1, -0.1], paired=True)
    c = compare_seeds([0, 0.1, -0.1], [3, 3.1, 2.9], paired=True)
    i = compare_seeds([1, 2, 3], [2, 1, 3], paired=True)
    assert all_of([h, h, i], require=2).verdict == HOLDS
    assert all_of([h, c, c], require=2).verdict == CONTRADICTED
    assert all_of([h, i, c], require=2).verdict == INCONCLUSIVE
    assert all_of([h, h]).verdict == HOLDS
    with pytest.raises(ValueError, match="require"):
        all_of([h], require=2)


def test_ledger_records_the_test_its_detail_and_power(tmp_path):
    led = Claims("x", "medium")
    d = compare_seeds([0.31, 0.29, 0.35], [0.30, 0.25, 0.30], paired=True, scale=100, unit="points")
    led.add("cmp", "A beats B", paper="+2.7", ours=None, criterion="2 se", source="s", test=d, paper_effect=2.7)
    led.add("abs", "within tolerance", paper=1, ours=3, criterion="|d| <= 1", source="s", holds=False)
    led.add("nt", "paper scale", paper=1, ours=None, criterion="c", source="s", reason="paper scale only")
    assert [r.verdict for r in led.rows] == [HOLDS, CONTRADICTED, NOT_TESTED]
    r = led.rows[0]
    assert r.verdict_detail.startswith("holds: +3.33 ± 1.20 points; resolvable ≥ 2.40 at 3 seeds")
    assert "is resolvable at 3 seeds" in r.power_text  # 2.7 > 2.40
    back = Claims.load(led.save(tmp_path))
    assert [x.verdict_detail for x in back.rows] == [x.verdict_detail for x in led.rows]
    assert back.rows[0].power_text == r.power_text
    assert back.counts()[HOLDS] == 1 and back.counts()[CONTRADICTED] == 1 and back.counts()[NOT_TESTED] == 1
    html = led.html()
    assert html.index("holds") < html.index("A beats B")  # verdict is the first column
    with pytest.raises(ValueError, match="not both"):
        led.add("both", "s", paper=1, ours=1, criterion="c", source="s", holds=True, test=d)
    with pytest.raises(ValueError, match="paper_effect"):
        led.add("pe", "s", paper=1, ours=1, criterion="c", source="s", holds=True, paper_effect=1.0)


def test_jackknife_se_by_hand_and_absolute_parts():
    from hgutils.verdicts import Absolute, jackknife

    loo = [1.0, 2.0, 3.0, 4.0]
    d = jackknife(2.6, loo, label="ratio diff")
    se = math.sqrt(3 / 4 * sum((x - 2.5) ** 2 for x in loo))
    assert d.se == pytest.approx(se) and d.verdict == INCONCLUSIVE  # 2.6 < 2 * 2.24
    assert jackknife(10.0, loo).verdict == HOLDS
    assert jackknife(-10.0, loo).verdict == CONTRADICTED
    with pytest.raises(ValueError, match="two seeds"):
        jackknife(1.0, [1.0])
    ok, bad = Absolute("rho >= 0.5", True, "0.71"), Absolute("rho >= 0.5", False, "0.31")
    assert all_of([ok, jackknife(10.0, loo)]).verdict == HOLDS
    assert all_of([bad, jackknife(10.0, loo)]).verdict == CONTRADICTED
    assert all_of([ok, d]).verdict == INCONCLUSIVE


# --------------------------------------------------------------------------- runs stopped by their budget
def _ledger_with(gates: dict, favoured=None, holds: bool | None = None, test=None) -> tuple[Claims, object]:
    c = Claims("nb", "smoke")
    kw = {"holds": holds} if test is None else {"test": test}
    row = c.add(
        "a-beats-b",
        "A beats B",
        paper=1.0,
        ours=-0.5,
        criterion="a - b > 0",
        source="s",
        trained=gates,
        favoured=favoured,
        **kw,
    )
    return c, row


_OK = {"trained": True, "reason": "fine", "capped": False}
_CAPPED = {"trained": True, "reason": "fine", "capped": True}


def test_a_contradiction_whose_losing_model_was_capped_is_inconclusive_capped(tmp_path):
    from hgutils.verdicts import CAPPED

    a, b = _paired(-3.0)  # A loses to B by 3 points: the criterion contradicts "A beats B"
    test = compare_seeds(a, b, paired=True, unit="points")
    assert test.verdict == CONTRADICTED
    _, row = _ledger_with({"A": _CAPPED, "B": _OK}, favoured=["A"], test=test)
    assert row.outcome == CONTRADICTED and row.verdict == CAPPED and row.capped_losers == ["A"]
    # the measured difference stays in the detail, with what the criterion gave
    assert test.summary in row.verdict_detail and "contradicted" in row.verdict_detail and "A" in row.verdict_detail
    # the winner's cap does not excuse the loser
    _, row = _ledger_with({"A": _OK, "B": _CAPPED}, favoured=["A"], test=test)
    assert row.verdict == CONTRADICTED
    # no favoured models named: any capped judged model makes it inconclusive (the conservative reading)
    c, row = _ledger_with({"A": _OK, "B": _CAPPED}, test=test)
    assert row.verdict == CAPPED
    # the rule survives a save / load round trip and counts under its own verdict
    back = Claims.load(c.save(tmp_path))
    assert back.rows[0].verdict == CAPPED and back.counts()[CAPPED] == 1 and back.counts()[CONTRADICTED] == 0


def test_capped_runs_leave_holds_inconclusive_and_did_not_train_alone():
    from hgutils.verdicts import CAPPED, DID_NOT_TRAIN

    a, b = _paired(3.0)
    _, row = _ledger_with({"A": _CAPPED, "B": _CAPPED}, test=compare_seeds(a, b, paired=True))
    assert row.verdict == HOLDS  # a win by a model that could still improve stays a win
    a0 = b + np.array([0.1, -0.2, 0.15, -0.05, 0.0])
    _, row = _ledger_with({"A": _CAPPED, "B": _OK}, test=compare_seeds(a0, b, paired=True))
    assert row.verdict == INCONCLUSIVE
    _, row = _ledger_with({"A": _CAPPED, "B": {"trained": False, "reason": "flat"}}, holds=False)
    assert row.verdict == DID_NOT_TRAIN  # not trained outranks capped
    _, row = _ledger_with({"A": _CAPPED}, holds=False)  # an absolute criterion on a capped run
    assert row.verdict == CAPPED


def test_favoured_models_must_be_judged_models():
    with pytest.raises(ValueError, match="favoured models"):
        _ledger_with({"A": _OK}, favoured=["Z"], holds=False)
    with pytest.raises(ValueError, match="favoured models"):
        Claims("nb", "smoke").add("x", "s", paper=1, ours=0, criterion="c", source="s", holds=False, favoured=["A"])


def test_target_power_says_whether_a_gap_is_resolved_or_the_seeds_it_needs():
    a, b = _paired(3.0, n=3)
    d = compare_seeds(a, b, paired=True)
    big, small = 2 * d.resolvable, d.resolvable / 2  # resolved when gap > 2 se
    assert target_power(d, big) == "resolvable at 3 seeds"
    need = d.power(small).seeds_needed
    assert need is not None and need > 3
    assert target_power(d, small) == f"not resolvable at 3 seeds; needs {need} at this spread"
    one = compare_seeds([1.0], [0.0], paired=True)  # one seed: no spread measured, no seed count to give
    assert target_power(one, 5.0) == "not resolvable at 1 seeds; needs more at this spread"
