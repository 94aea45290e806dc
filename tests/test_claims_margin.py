"""A claim's margin: how far inside its threshold its value sits, as a share of the way to its null."""
import pytest

from ppmlib.book.claims import STATED_MARGIN, Claims, margin_of


def test_the_margin_is_the_share_of_the_way_to_the_null_where_the_claim_stops_holding():
    assert margin_of(lambda r: r < 0.5, 0.3, 1.0) == pytest.approx(0.2 / 0.7, abs=1e-6)
    assert margin_of(lambda r: r > 0.8, 0.94, 0.0) == pytest.approx(0.14 / 0.94, abs=1e-6)
    # a tuple: the first element to reach its threshold decides
    assert margin_of(lambda v: -0.005 < v[0] and v[1] < 0.005, (-0.002, 0.003), (0.013, 0.018)) == \
        pytest.approx(0.002 / 0.015, abs=1e-6)
    # a predicate that fails, holds again and fails on the way: the nearer threshold
    assert margin_of(lambda d: d < 0.5 or 0.6 < d < 0.7, 0.3, 1.0) == pytest.approx(0.2 / 0.7, abs=1e-6)


def test_on_the_log_scale_the_margin_counts_orders_of_magnitude():
    # a numerical gap of 4e-11 against a limit of 1e-6 and a null of 43: linearly a hair inside its limit,
    # logarithmically 4.4 of the 12 orders of magnitude to the null
    assert margin_of(lambda gap: gap < 1e-6, 3.8e-11, 43.0) == pytest.approx(1e-6 / 43, rel=1e-3)
    assert margin_of(lambda gap: gap < 1e-6, 3.8e-11, 43.0, scale="log") == pytest.approx(
        (-6 + 10.42) / (1.633 + 10.42), abs=1e-3)
    assert margin_of(lambda gap: gap < 1e-6, 0.0, 43.0, scale="log") is None     # 0 has no logarithm
    claims = Claims()
    claims.add("EM is SW", "p", "o", lambda gap: gap < 1e-6, value=3.8e-11, null=43.0, margin_scale="log")
    assert claims.rows[0]["margin"] == pytest.approx(0.367, abs=1e-3)
    with pytest.raises(ValueError, match="scale must be 'linear' or 'log', got 'ln'"):
        margin_of(lambda gap: gap < 1e-6, 3.8e-11, 43.0, scale="ln")


def test_no_margin_where_it_is_undefined():
    assert margin_of(lambda r: r < 0.5, 0.7, 1.0) is None            # does not hold
    assert margin_of(lambda r: r < 0.5, 0.3, 0.4) is None            # holds on its null: no power
    assert margin_of(lambda v: v, True, False) is None               # not a number
    assert margin_of(lambda v: v[0] < 1, (0.2, 0.1), (2.0,)) is None  # lengths differ


def test_the_way_ends_exactly_on_the_null():
    # "flattens": after < before, with the null "after = before". a + 1 * (b - a) lands a hair below b
    # for these two slopes, so the claim held on its own null and the margin came out undefined
    # (salary ledger, CW at seed 3); the way must end on the null itself
    before, after = 0.19833031838853796, 0.028260221064757965
    assert after + 1.0 * (before - after) < before
    assert margin_of(lambda v: v[1] < v[0] or v[1] < 0.1, (before, after), (before, before)) == pytest.approx(1.0)


def test_a_claim_records_its_margin_and_the_one_it_states():
    claims = Claims()
    claims.add("LW's Delta below 0.6 of the Unweighted's", "(ours)", "0.3", lambda r: r < 0.6, value=0.3, null=1.0)
    claims.add("converges", "(ours)", "0.45", lambda r: r < 0.5, value=0.45, null=1.0, margin=0.25)
    first, second = claims.rows
    assert first["margin"] == pytest.approx(3 / 7, abs=1e-6) and first["stated margin"] == STATED_MARGIN
    assert second["margin"] == pytest.approx(0.05 / 0.55, abs=1e-6) and second["stated margin"] == 0.25
    assert claims.table()["margin"].tolist() == ["0.43 (states 0.1)", "0.09 (states 0.25)"]
    with pytest.raises(ValueError, match="margin must be a share of the way to the null"):
        claims.add("x", "p", "o", lambda r: r < 1, value=0.0, null=2.0, margin=1.5)
