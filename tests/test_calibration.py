"""LW's calibration from draws already made: PSIS against ArviZ, the prediction against refits,
the calibration's fit count against today's search, and its fallback."""
import warnings

import numpy as np
import pytest

from ppmlib.datasets import simulate
from ppmlib.inference.exact import ConjugateSampler
from ppmlib.mechanism.calibration import calibrate_lw, pareto_smoothed_log_weights, predict_delta
from ppmlib.mechanism.reweighting import calibrate_lw_epsilon
from ppmlib.mechanism.synthesis import synthesizer
from ppmlib.mechanism.weights import lw_weights

EXACT = ConjugateSampler()  # exact Gamma draws of the Poisson model: no Stan, deterministic


@pytest.fixture(scope="module")
def counts():
    return simulate.poisson(1000, 100, seed=1)


@pytest.fixture(scope="module")
def unweighted(counts):
    return synthesizer("poisson", counts, sampler=EXACT, seed=2)


@pytest.mark.parametrize("scale", [0.2, 1.0, 4.0])
def test_pareto_smoothing_equals_arviz(scale):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz
    log_ratios = np.random.default_rng(3).standard_t(3, size=4000) * scale
    expected, expected_khat = arviz.psislw(log_ratios.copy())
    log_weights, khat = pareto_smoothed_log_weights(log_ratios)
    np.testing.assert_allclose(log_weights, expected, rtol=0, atol=1e-12)
    assert khat == pytest.approx(expected_khat, abs=1e-12)
    assert np.exp(log_weights).sum() == pytest.approx(1.0, abs=1e-12)


def test_pareto_khat_separates_light_from_heavy_tails():
    rng = np.random.default_rng(4)
    assert pareto_smoothed_log_weights(rng.normal(0, 0.2, 4000))[1] < 0.3
    assert pareto_smoothed_log_weights(rng.standard_cauchy(4000) * 5)[1] > 0.7


def test_prediction_at_the_fits_own_weights_is_its_delta(counts, unweighted):
    lw = synthesizer("poisson", counts, "lw", base=unweighted, c=0.6, sampler=EXACT, seed=3)
    found = predict_delta(lw.fit, lw.weights)
    assert found.delta[0] == lw.delta          # equal weights: the weighted top quantile is the maximum
    assert found.khat[0] < 0.5 and found.ess[0] == pytest.approx(lw.fit.n_draws)


@pytest.mark.parametrize("c_fit, c_new", [(0.6, 0.55), (0.6, 0.66), (0.3, 0.33)])
def test_prediction_matches_a_refit(counts, unweighted, c_fit, c_new):
    """Delta predicted at c_new from the draws at c_fit, against the refit at c_new (a new seed:
    the refit's Delta is itself a maximum over draws, so they agree to its noise, not exactly)."""
    at_fit = synthesizer("poisson", counts, "lw", base=unweighted, c=c_fit, sampler=EXACT, seed=5)
    refit = synthesizer("poisson", counts, "lw", base=unweighted, c=c_new, sampler=EXACT, seed=6)
    found = predict_delta(at_fit.fit, lw_weights(unweighted.fit, c=c_new))
    assert found.khat[0] < 0.7
    assert found.delta[0] == pytest.approx(refit.delta, rel=0.03)
    # and the prediction moved: the fit's own Delta is not within that tolerance of the refit's
    assert abs(at_fit.delta - refit.delta) > 0.03 * refit.delta


@pytest.mark.parametrize("eps", [3.0, 6.0, 10.0])
def test_calibration_reaches_the_target_in_fewer_fits(counts, unweighted, eps):
    tau = 0.05
    found = calibrate_lw("poisson", counts, unweighted, eps, tau=tau, sampler=EXACT, progress=False)
    old = calibrate_lw_epsilon("poisson", counts, unweighted, eps, tau=tau, sampler=EXACT, progress=False)
    assert abs(found.epsilon - eps) < 2 * tau
    assert found.calibration["method"] == "predicted" and found.calibration["fallback"] is None
    assert found.calibration["fits"] <= 2                       # LW fits; three Stan fits with the base
    assert found.calibration["fits"] < len(old.calibration["history"]) + 2   # today's: both ends, then the search
    assert found.calibration["value"] == pytest.approx(old.calibration["value"], rel=0.05)


def test_untrusted_prediction_falls_back_to_the_search_and_says_so(counts, unweighted):
    with pytest.warns(RuntimeWarning, match="k-hat .* falling back to the refit search"):
        found = calibrate_lw("poisson", counts, unweighted, 3.0, tau=0.02, khat_max=-1.0, sampler=EXACT,
                             progress=False)
    assert found.calibration["method"] == "search"
    assert "k-hat" in found.calibration["fallback"]
    assert abs(found.epsilon - 3.0) < 0.04
    assert found.calibration["predictions"][0]["trusted"] is False   # the first step placed a fit, untrusted


def test_target_out_of_reach_states_the_range(counts, unweighted):
    with pytest.raises(ValueError, match="out of reach.*reaches epsilon from"):
        calibrate_lw("poisson", counts, unweighted, 40.0, tau=0.05, sampler=EXACT, progress=False)


def test_base_must_be_unweighted(counts, unweighted):
    lw = synthesizer("poisson", counts, "lw", base=unweighted, c=0.6, sampler=EXACT, seed=3)
    with pytest.raises(ValueError, match="unweighted"):
        calibrate_lw("poisson", counts, lw, 6.0, tau=0.05, sampler=EXACT, progress=False)


def test_calibrated_lw_has_lws_own_weights(counts, unweighted):
    """The weights of the released fit are those of synthesizer(..., "lw", c=c): risks from the
    unweighted Synthesis's bounds are the risks of its draws."""
    found = calibrate_lw("poisson", counts, unweighted, 6.0, tau=0.05, sampler=EXACT, progress=False)
    c = found.calibration["value"]
    np.testing.assert_array_equal(found.weights, lw_weights(unweighted.fit, c=c))
    same = synthesizer("poisson", counts, "lw", base=unweighted, c=c, sampler=EXACT, seed=0)
    assert found.scheme == "lw" and found.settings == same.settings and found.delta == same.delta


def test_a_lineup_predicts_lws_scale_unless_told_to_search(counts):
    from ppmlib.mechanism import lineup as lu
    run = dict(sampler=EXACT, seed=2, m=3, progress=False)
    predicted = lu.run(["Unweighted", lu.member("LW", epsilon=6.0, tau=0.05)], "poisson", counts, **run)["LW"]
    searched = lu.run(["Unweighted", lu.member("LW", epsilon=6.0, tau=0.05, calibration="search")], "poisson",
                      counts, **run)["LW"]
    assert predicted.calibration["method"] == "predicted" and "method" not in searched.calibration
    assert abs(predicted.epsilon - 6.0) < 0.1 and abs(searched.epsilon - 6.0) < 0.1
    assert predicted.calibration["fits"] < len(searched.calibration["history"]) + 2
    with pytest.raises(ValueError, match="calibration must be 'predicted' or 'search'"):
        lu.run(["Unweighted", lu.member("LW", epsilon=6.0, calibration="guess")], "poisson", counts, **run)


def _normal_draws_fit(rng, S=150, n=900, case="plain", weights=None):
    """A normal Fit from draws made by hand (no Stan). ``case`` "extreme": records far in the tails
    (y up to 1e12, one of 1e-300) and a design column in the thousands; "minus inf": one draw with a
    tiny sigma too, whose log-likelihood is -inf for every record off the mean line."""
    from ppmlib.inference.posterior import Fit
    from ppmlib.models.families import family
    x = rng.normal(size=n) * (1e3 if case != "plain" else 1.0)
    X = np.column_stack([np.ones(n), x, rng.integers(0, 2, n)])
    y = 1 + 0.5 * x + rng.normal(size=n)
    beta = rng.normal([1, 0.5, 0.1], 0.05, size=(S, 3))
    sigma = rng.gamma(50, 0.02, S)
    if case != "plain":
        y[:7] = [1e8, -1e8, 1e-300, 3e5, -4e6, 0.0, 1e12]
    if case == "minus inf":
        X[7:12, 1:] = 0.0
        y[7:12] = 1.0
        beta[11], sigma[11] = [1.0, 0.5, 0.1], 1e-150
    w = np.ones(n) if weights is None else weights
    return Fit(family("normal"), y, X, w, {"beta": beta, "sigma": sigma}, {}, 1, "by hand", None)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("case", ["plain", "extreme", "minus inf"])
def test_prediction_streamed_in_tiles_equals_the_matrix_route(case):
    """predict_delta's one pass in tiles of draws and keys gives what the S x n matrix gives: the
    log importance ratios L (alpha - alpha0) and the per-draw maxima max_i alpha_i abs(L_si), then
    PSIS and the weighted top quantile (a -inf term in a ratio makes that candidate's prediction NaN)."""
    from ppmlib.mechanism.calibration import _weighted_top
    rng = np.random.default_rng(8)
    n = 9000   # several tiles of keys (4096 a tile) and of draws (64)
    base_weights = rng.uniform(0.3, 1.0, n)
    fit = _normal_draws_fit(rng, n=n, case=case, weights=base_weights)
    candidates = np.clip(base_weights[None, :] * rng.uniform(0.5, 1.5, (4, n)), 0, 1)
    candidates[:, rng.choice(n, 50, replace=False)] = 0.0
    candidates[0] = base_weights   # the fit's own weights
    found = predict_delta(fit, candidates)
    L = fit.log_lik
    for j, alpha in enumerate(candidates):
        log_ratio = (L * (alpha - base_weights)).sum(axis=1)
        per_draw = np.where(alpha > 0, np.abs(L) * alpha, 0.0).max(axis=1)
        if not np.all(np.isfinite(log_ratio)):
            assert np.isnan(found.delta[j]) and found.khat[j] == np.inf
            continue
        log_w, khat = pareto_smoothed_log_weights(log_ratio)
        assert found.delta[j] == pytest.approx(_weighted_top(per_draw, np.exp(log_w)), rel=1e-12)
        assert found.khat[j] == pytest.approx(khat, rel=1e-9, abs=1e-9)
    assert np.isfinite(found.delta).sum() == (0 if case == "minus inf" else 4)   # the comparison really ran
