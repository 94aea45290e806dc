"""ppmlib.mechanism: the synthesizer's schemes, the matched comparison, truncation, match_delta.

Moved here from test_lipschitz_weights.py and test_utility_claims.py; to be joined with test_mechanism.py."""
import numpy as np
import pytest

import ppmlib


def _fake_synthesis(delta):
    from types import SimpleNamespace
    return SimpleNamespace(delta=delta, calibration={})


def test_match_delta_finds_the_root_of_a_monotone_map():
    from ppmlib.mechanism import match_delta
    calls = []

    def make(x):
        calls.append(x)
        return _fake_synthesis(3.0 * x**2 + 0.5)  # Delta rises with x; target 2 at x = 1/sqrt(2)

    out = match_delta(make, 2.0, 0.1, 0.0, 1.0, rtol=1e-4, progress=False, max_iter=30)
    assert abs(out.delta - 2.0) <= 2e-4
    assert abs(out.calibration["value"] - np.sqrt(0.5)) < 1e-3
    assert len(calls) < 15  # Illinois keeps regula falsi from stalling


def test_match_delta_kinked_map_with_negative_root():
    from ppmlib.mechanism import match_delta
    out = match_delta(lambda g: _fake_synthesis(max(0.1, 4 * (g + 0.5))), 1.0, 0.1, -1.0, 1.0,
                      rtol=1e-3, progress=False, max_iter=40)
    assert abs(out.calibration["value"] + 0.25) < 1e-3


def test_match_delta_reports_non_convergence():
    from ppmlib.mechanism import CalibrationError, match_delta
    with pytest.raises(CalibrationError, match="did not reach 5 .* in 4 refits of a"):
        match_delta(lambda a: _fake_synthesis(2.0 * a), 5.0, 0.5, 0.0, 1.0, parameter="a",
                    max_iter=4, progress=False)


def test_scheme_errors_name_what_is_missing():
    y = np.arange(10)
    with pytest.raises(ValueError, match="needs base="):
        ppmlib.synthesizer("poisson", y, "lw")
    with pytest.raises(ValueError, match="needs a radius"):
        ppmlib.synthesizer("poisson", y, "cw")
    with pytest.raises(ValueError, match="needs the scalar weight"):
        ppmlib.synthesizer("poisson", y, "sw")
    with pytest.raises(ValueError, match="unknown scheme 'xw'"):
        ppmlib.synthesizer("poisson", y, "xw")


@pytest.mark.stan
def test_matched_comparison_matches_deltas_and_is_reproducible():
    y = ppmlib.simulate.poisson(300, 50, seed=3)
    kwargs = dict(cw_radius=7.0, seed=5, draws=400, warmup=400, m=10, progress=False)
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
    full = ppmlib.synthesizer("poisson", y, "unweighted", seed=1, draws=250, warmup=250, m=5)
    cut = ppmlib.synthesizer("poisson", y, "unweighted", seed=1, draws=250, warmup=250, m=5, q=0.9)
    assert cut.fit.n_draws == pytest.approx(0.9 * full.fit.n_draws, abs=2)
    assert cut.delta < full.delta
    # the bound of the kept draws, recomputed by hand
    per_draw = np.abs(full.fit.log_lik).max(axis=1)
    assert cut.delta == pytest.approx(per_draw[per_draw <= np.quantile(per_draw, 0.9)].max())
