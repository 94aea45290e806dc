"""Utility statistics, intervals, claims tables and the matched comparison."""
import numpy as np
import pandas as pd
import pytest

import ppmlib
from ppmlib import utility


def test_statistics_by_hand():
    d = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [10, 10, 10, 10, 10, 10, 10, 10, 10, 10]])
    s = utility.statistics(d)
    # numpy's linear interpolation (R's type 7): 15th pct of 1..10 is 1 + 0.15 * 9 = 2.35
    np.testing.assert_allclose(s["15th pct"], [2.35, 10])
    np.testing.assert_allclose(s["90th pct"], [9.1, 10])
    np.testing.assert_allclose(s["mean"], [5.5, 10])
    np.testing.assert_allclose(s["median"], [5.5, 10])


def test_bootstrap_is_seeded_resampling():
    y = np.arange(50.0)
    a, b = utility.bootstrap(y, 30, seed=1), utility.bootstrap(y, 30, seed=1)
    assert a.shape == (30, 50) and np.array_equal(a, b)
    assert set(np.unique(a)) <= set(y)


def test_intervals_and_tail_distortion():
    long = pd.DataFrame({
        "source": ["Data"] * 4 + ["LW"] * 4,
        "statistic": ["15th pct", "90th pct"] * 4,
        "value": [70, 130, 70, 130, 72, 127, 72, 127],
    })
    assert utility.tail_distortion(long, "LW") == pytest.approx(2 + 3)
    assert utility.tail_distortion(long, "Data") == 0
    table = utility.intervals(long)
    assert table.loc["15th pct", "LW"] == "72.0–72.0"
    with pytest.raises(ValueError, match="no source 'CW'"):
        utility.tail_distortion(long, "CW")


def test_near_max_share_by_hand():
    assert ppmlib.near_max_share(np.array([1.0, 9.0, 9.5, 10.0])) == 0.75
    assert ppmlib.near_max_share(np.array([1.0, 9.0, 9.5, 10.0]), fraction=0.95) == 0.5


def test_claims_table_and_check():
    claims = ppmlib.Claims()
    claims.add("a holds", "x", "y", True)
    claims.add("b is only reported", "x", "y", False, checked=False)
    assert list(claims.table()["reproduced?"]) == ["yes", "NO (reported, not asserted)"]
    claims.check()  # the failing row is not asserted
    claims.add("c fails", "x", "y", False)
    with pytest.raises(AssertionError, match="claims not reproduced: c fails"):
        claims.check()


def test_scheme_errors_name_what_is_missing():
    y = np.arange(10)
    with pytest.raises(ValueError, match="needs base="):
        ppmlib.synthesizer("poisson", y, "lw")
    with pytest.raises(ValueError, match="needs radius="):
        ppmlib.synthesizer("poisson", y, "cw")
    with pytest.raises(ValueError, match="needs a=: a is the scalar weight"):
        ppmlib.synthesizer("poisson", y, "sw")
    with pytest.raises(ValueError, match="unknown scheme 'xw'"):
        ppmlib.synthesizer("poisson", y, "xw")


@pytest.mark.stan
def test_matched_comparison_matches_deltas_and_is_reproducible():
    y = ppmlib.simulate.poisson(300, 50, seed=3)
    kwargs = dict(cw_radius=7.0, seed=5, sampler=ppmlib.Sampler(draws=400, warmup=400), m=10, progress=False)
    res = ppmlib.matched_comparison("poisson", y, **kwargs)
    target = res["LW"].delta
    for name in ("CW", "SW"):
        assert abs(res[name].delta / target - 1) <= 0.03
        assert res[name].calibration["target"] == target
    assert res["Unweighted"].delta > 1.5 * target
    assert 0 < res["SW"].calibration["value"] < 1
    np.testing.assert_allclose(res["SW"].weights, res["SW"].calibration["value"])
    again = ppmlib.matched_comparison("poisson", y, **kwargs)
    assert all(again[k].delta == res[k].delta for k in res)
    assert np.array_equal(again["CW"].synthetic, res["CW"].synthetic)


@pytest.mark.stan
def test_truncation_drops_draws_from_bound_and_synthesis():
    y = ppmlib.simulate.poisson(200, 30, seed=2)
    full = ppmlib.synthesizer("poisson", y, "unweighted", seed=1, sampler=ppmlib.Sampler(draws=250, warmup=250), m=5)
    cut = ppmlib.synthesizer("poisson", y, "unweighted", seed=1, sampler=ppmlib.Sampler(draws=250, warmup=250), m=5, q=0.9)
    assert cut.fit.n_draws == pytest.approx(0.9 * full.fit.n_draws, abs=2)
    assert cut.delta < full.delta
    # the bound of the kept draws, recomputed by hand
    per_draw = np.abs(full.fit.log_lik).max(axis=1)
    assert cut.delta == pytest.approx(per_draw[per_draw <= np.quantile(per_draw, 0.9)].max())


def test_seeds_are_reproducible_prefix_stable_and_valid_for_stan():
    from ppmlib import seeds
    a = seeds(2020, 4)
    assert a == seeds(2020, 4)
    assert a[:2] == seeds(2020, 2)
    assert len(set(a)) == 4 and all(0 <= s < 2**31 - 1 for s in a)
    assert seeds(2020, 1) != seeds(2021, 1)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        seeds(-1, 2)
    with pytest.raises(TypeError, match="k must be an integer"):
        seeds(1, 2.0)


def test_claims_finish_asserts_only_when_asked():
    c = ppmlib.Claims()
    c.add("holds", "p", "o", True)
    c.add("fails", "p", "o", False)
    assert list(c.finish(False)["reproduced?"]) == ["yes", "NO"]
    with pytest.raises(AssertionError, match="claims not reproduced: fails"):
        c.finish(True)
