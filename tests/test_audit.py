"""The privacy audit: Clopper-Pearson bounds, the exact samplers, the attack on known mechanisms."""
import numpy as np
import pytest
from scipy import integrate, stats

import ppmlib
from ppmlib.evaluate import audit
from ppmlib.inference import exact
from ppmlib.studies import privacy_audit


# ---------------------------------------------------------------------------------------------
# Clopper-Pearson and the epsilon lower bound
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("k, n", [(0, 10), (1, 10), (7, 10), (10, 10), (137, 1000), (4999, 5000)])
def test_clopper_pearson_equals_beta_quantiles_and_scipy_exact_interval(k, n):
    low, high = audit.clopper_pearson(k, n, 0.95)
    expected_low = 0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1)
    expected_high = 1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k)
    assert low == pytest.approx(expected_low, abs=1e-12)
    assert high == pytest.approx(expected_high, abs=1e-12)
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert (low, high) == pytest.approx((ci.low, ci.high), abs=1e-10)


def test_clopper_pearson_vectorised_matches_scalar():
    k, n = np.array([0, 3, 50]), np.array([20, 20, 50])
    low, high = audit.clopper_pearson(k, n, 0.9)
    for i in range(3):
        assert (low[i], high[i]) == pytest.approx(audit.clopper_pearson(int(k[i]), int(n[i]), 0.9))


def test_randomized_response_bound_is_near_its_epsilon():
    # TPR / FPR = e^eps exactly for the best test; 40,000 trials leave ~0.05 of slack
    bits, member = audit.randomized_response(1.0, 40_000, seed=3)
    result = audit.epsilon_lower_bound(bits, member)
    assert 0.9 < result.epsilon <= 1.0
    assert result.direction in (1, -1) and result.threshold == 0.0


def test_randomized_response_bound_rarely_exceeds_epsilon():
    # a 95% bound may exceed the true epsilon in at most ~5% of audits; count over 100 audits
    above = sum(audit.epsilon_lower_bound(*audit.randomized_response(2.0, 2000, seed=s)).epsilon > 2.0
                for s in range(100))
    assert above <= 5


def test_no_information_gives_no_bound_thanks_to_the_held_out_half():
    # pure-noise scores: a threshold picked and evaluated on the same trials would often "prove"
    # a positive epsilon; picked on one half and evaluated on the other it almost never does
    rng = np.random.default_rng(0)
    proved = 0
    for _ in range(100):
        scores, member = rng.normal(size=1000), rng.random(1000) < 0.5
        proved += audit.epsilon_lower_bound(scores, member).epsilon > 0
    assert proved <= 5


def test_epsilon_from_rates_and_auc_by_hand():
    assert audit.epsilon_from_rates(0.5, 0.25) == pytest.approx(np.log(2))
    assert audit.epsilon_from_rates(0.0, 0.5) == -np.inf
    scores = np.array([3.0, 2.0, 1.0, 0.0])
    assert audit.auc(scores, np.array([True, False, True, False])) == pytest.approx(0.75)
    assert audit.auc(np.zeros(4), np.array([True, False, True, False])) == 0.5


def test_roc_curve_runs_from_origin_to_one():
    fpr, tpr = audit.roc_curve(np.array([3.0, 2.0, 1.0, 0.0]), np.array([True, False, True, False]))
    # thresholds inf, 3, 2, 1, 0, -inf; "claim D when score > t"
    np.testing.assert_allclose(fpr, [0, 0, 0, 0.5, 0.5, 1])
    np.testing.assert_allclose(tpr, [0, 0, 0.5, 0.5, 1, 1])


# ---------------------------------------------------------------------------------------------
# the exact samplers against the Gamma distribution, the negative binomial and Stan
# ---------------------------------------------------------------------------------------------

Y = np.array([91, 104, 99, 120, 85, 101, 97, 110, 95, 131])
W = np.array([1.0, 1.0, 0.9, 0.4, 0.6, 1.0, 1.0, 0.8, 1.0, 0.1])


def test_exact_sample_follows_the_gamma_pseudo_posterior():
    shape, rate = exact.pseudo_posterior(Y, W)
    lam = exact.sample(Y, W, size=20_000, seed=1)
    assert stats.kstest(lam, stats.gamma(shape, scale=1 / rate).cdf).pvalue > 0.01
    assert lam.mean() == pytest.approx(shape / rate, abs=4 * np.sqrt(shape) / rate / np.sqrt(lam.size))


def test_exact_sample_uses_common_random_numbers():
    a = exact.sample(Y, W, size=50, seed=7)
    b = exact.sample(Y, W * 0.999, size=50, seed=7)
    assert np.array_equal(a, exact.sample(Y, W, size=50, seed=7))
    assert np.abs(a - b).max() < 0.05 * a.std()        # a tiny change of weights moves each draw a little


def test_mechanism_trials_theta_scores_are_the_gamma_log_ratio_of_gamma_draws():
    d, d_prime = (200.0, 2.0), (150.0, 1.6)
    scores, member = audit.mechanism_trials(d, d_prime, "theta", trials=20_000, seed=2)
    lam = stats.gamma(200.0, scale=1 / 2.0).rvs(size=20_000, random_state=5)
    reference = stats.gamma.logpdf(lam, 200.0, scale=0.5) - stats.gamma.logpdf(lam, 150.0, scale=1 / 1.6)
    assert stats.ks_2samp(scores[member], reference).pvalue > 0.01
    assert 0.48 < member.mean() < 0.52


def test_synthetic_sum_pmf_is_the_negative_binomial_and_matches_simulated_datasets():
    shape, rate, n_syn = 120.5, 1.3, 25
    s = np.arange(1500, 3200)
    ours = exact.synthetic_sum_logpmf(s, n_syn, shape, rate)
    np.testing.assert_allclose(ours, stats.nbinom(shape, rate / (rate + n_syn)).logpmf(s), rtol=1e-10)
    # full synthetic datasets: lambda from the Gamma, n_syn Poisson records each, then their sums
    rng = np.random.default_rng(4)
    lam = rng.gamma(shape, 1 / rate, size=20_000)
    sums = rng.poisson(lam[:, None], size=(20_000, n_syn)).sum(axis=1)
    mean = shape * n_syn / rate
    assert sums.mean() == pytest.approx(mean, rel=0.01)
    assert sums.var() == pytest.approx(mean * (1 + n_syn / rate), rel=0.05)


def test_likelihood_ratio_of_a_whole_synthetic_dataset_equals_that_of_its_sum():
    z = np.array([3, 0, 5, 2])                      # a tiny synthetic dataset
    worlds = [(4.0, 1.5), (2.5, 0.8)]

    def marginal(shape, rate):                      # integrate prod_j Poisson(z_j | lam) over the Gamma
        f = lambda lam: np.prod(stats.poisson.pmf(z, lam)) * stats.gamma.pdf(lam, shape, scale=1 / rate)
        return integrate.quad(f, 0, 60, limit=200)[0]

    full = np.log(marginal(*worlds[0])) - np.log(marginal(*worlds[1]))
    by_sum = (exact.synthetic_sum_logpmf(z.sum(), z.size, *worlds[0])
              - exact.synthetic_sum_logpmf(z.sum(), z.size, *worlds[1]))
    assert by_sum == pytest.approx(full, rel=1e-7)


def test_exact_sampler_agrees_with_stan():
    alpha = ppmlib.lw_weights(exact.poisson_log_lik(exact.sample(Y, None, 4000, seed=1), Y).T)
    fit = ppmlib.fit("poisson", Y, weights=alpha, sampler=ppmlib.Sampler(chains=2, draws=1000, warmup=500), seed=5)
    stan_draws = fit.draws["lambda"]
    exact_draws = exact.sample(Y, alpha, size=20_000, seed=6)
    shape, rate = exact.pseudo_posterior(Y, alpha)
    sd = np.sqrt(shape) / rate
    assert stan_draws.mean() == pytest.approx(exact_draws.mean(), abs=4 * sd / np.sqrt(fit.diagnostics["min_ess_bulk"]))
    assert stan_draws.std() / exact_draws.std() == pytest.approx(1.0, abs=0.1)
    # quantiles within Monte Carlo error (a KS p-value would be too small for autocorrelated draws)
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    gap = np.abs(np.quantile(stan_draws, levels) - stats.gamma.ppf(levels, shape, scale=1 / rate)).max()
    assert gap < 0.25 * sd


# ---------------------------------------------------------------------------------------------
# Delta from exact draws, the SW match, the neighbours and the audit
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("weights", [W, np.ones(Y.size)])   # worst record below / above the rate
def test_draws_delta_from_the_two_extreme_draws_equals_the_full_matrix(weights):
    lam = exact.sample(Y, weights, size=4000, seed=9)
    full = ppmlib.lipschitz_bound(exact.poisson_log_lik(lam, Y).T, weights)
    assert privacy_audit.draws_delta(Y, weights, draws=4000, seed=9) == pytest.approx(full, rel=1e-12)


def test_match_scalar_weight_hits_the_target_delta():
    y = ppmlib.datasets.simulate.poisson(200, 100, seed=2)
    target = 0.4 * privacy_audit.draws_delta(y, np.ones(200), seed=3)
    a = privacy_audit.match_scalar_weight(y, target, seed=3)
    assert privacy_audit.draws_delta(y, np.full(200, a), seed=3) == pytest.approx(target, rel=1e-5)
    assert 0.3 < a < 0.5


def test_pipeline_runs_the_audit_lineup_and_keeps_the_earlier_members_seeds():
    """U, LW and SW as the audit computed them before LW_final joined (by hand from exact draws)."""
    y = ppmlib.datasets.simulate.poisson(120, 100, seed=4)
    s_u, s_lw, s_sw = ppmlib.seeds(11, 3)
    out = privacy_audit.pipeline(y, draws=1000, seed=11, c=0.9, g=0.05)
    assert list(out) == ["Unweighted", "LW", "SW", "LW_final"] == list(privacy_audit.SYNTHESIZERS)
    lik = exact.poisson_log_lik(exact.sample(y, None, 1000, s_u), y).T
    np.testing.assert_array_equal(out["LW"].alpha, ppmlib.lw_weights(lik, c=0.9, g=0.05))
    assert out["Unweighted"].delta == privacy_audit.draws_delta(y, np.ones(y.size), draws=1000, seed=s_u)
    assert out["LW"].delta == privacy_audit.draws_delta(y, out["LW"].alpha, draws=1000, seed=s_lw)
    assert out["SW"].a == privacy_audit.match_scalar_weight(y, out["LW"].delta, draws=1000, seed=s_sw)


def test_lw_final_reweights_lw_to_its_delta_with_exact_draws():
    y = ppmlib.datasets.simulate.poisson(150, 100, seed=5)
    out = privacy_audit.pipeline(y, draws=1000, seed=3)
    lw, final = out["LW"], out["LW_final"]
    assert final.delta == pytest.approx(lw.delta, rel=1e-5)           # Algorithm 1's equal Delta
    bounds = privacy_audit.draws_bounds(y, lw.alpha, draws=1000, seed=lw.seed)
    np.testing.assert_array_equal(final.alpha, ppmlib.reweight(lw.alpha, bounds, final.k))
    assert 0 < final.k <= ppmlib.mechanism.reweighting.saturation_k(lw.alpha, bounds)
    assert (final.alpha[lw.alpha == 0] == 0).all()                    # weight 0 stays 0 (the 0/0 rule)
    # the by-record bounds crowd up against the maximum (0.950 -> 0.979 here; +0.01 to +0.04 over 12 cases)
    after = privacy_audit.draws_bounds(y, final.alpha, draws=1000, seed=final.seed)
    assert after.mean() / after.max() > bounds.mean() / bounds.max() + 0.02
    assert final.alpha.mean() > lw.alpha.mean()
    assert final.delta <= final.delta_grid + 1e-9


@pytest.mark.parametrize("i", [3, 4, 9])
def test_exact_loss_of_theta_equals_the_loo_log_ratio_of_the_exact_module(i):
    y = Y
    d = exact.pseudo_posterior(y, W)
    d_prime = exact.pseudo_posterior(np.delete(y, i), np.delete(W, i))
    lo, hi = exact.central_interval(y, W, mass=1 - 1e-6)
    lo2, hi2 = exact.central_interval(np.delete(y, i), np.delete(W, i), mass=1 - 1e-6)
    grid = np.linspace(min(lo, lo2), max(hi, hi2), 4001)
    expected = np.abs(exact.loo_log_ratio(grid, y, W)[i]).max()
    assert audit.exact_loss(d, d_prime, "theta") == pytest.approx(expected, rel=1e-8)


def test_zero_weight_target_is_invisible_with_fixed_weights_only():
    y = ppmlib.datasets.simulate.poisson(100, 100, seed=1)
    result = privacy_audit.audit(y, trials=400, m=5, targets=("largest", "smallest"), relations=("add/remove",), seed=1)
    lw = result.table[(result.table["synthesizer"] == "LW") & (result.table["weight"] == 0.0)]
    assert len(lw) == 6                                  # one tail target has weight 0: 2 modes x 3 outputs
    fixed, recomputed = lw[lw["weights"] == "fixed"], lw[lw["weights"] == "recomputed"]
    assert (fixed["eps_lb"] == 0).all() and (fixed["AUC"] == 0.5).all() and (fixed["exact loss"] < 1e-8).all()
    assert (recomputed["exact loss"] > 0.1).all()       # recomputing the weights on D' reveals the record
    assert (result.table["eps_lb"] <= result.table["bound"]).all()


def test_neighbours_and_targets():
    y = np.array([5, 9, 1, 6, 7, 30])
    assert privacy_audit.target_index(y, "largest") == 5 and privacy_audit.target_index(y, "smallest") == 2
    assert privacy_audit.target_index(y, "typical") == 3         # median 6.5 (the mean, 9.7, would pick 9)
    np.testing.assert_array_equal(privacy_audit.neighbour(y, 1, "add/remove"), [5, 1, 6, 7, 30])
    np.testing.assert_array_equal(privacy_audit.neighbour(y, 1, "replace-one", 6), [5, 6, 1, 6, 7, 30])


# ---------------------------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------------------------

def test_bad_inputs_give_clear_errors():
    with pytest.raises(ValueError, match="successes must lie in"):
        audit.clopper_pearson(11, 10)
    with pytest.raises(ValueError, match="trials must be >= 1"):
        audit.clopper_pearson(0, 0)
    with pytest.raises(ValueError, match="confidence"):
        audit.clopper_pearson(1, 10, confidence=1.0)
    with pytest.raises(ValueError, match="tpr must lie in"):
        audit.epsilon_from_rates(1.2, 0.5)
    with pytest.raises(ValueError, match="fpr must lie in"):
        audit.epsilon_from_rates(0.5, -0.1)
    with pytest.raises(ValueError, match="fpr must be positive"):
        audit.epsilon_from_rates(0.5, 0.0)
    with pytest.raises(ValueError, match="at least 4 trials"):
        audit.epsilon_lower_bound([1.0], np.array([True]))
    with pytest.raises(ValueError, match="only one database"):
        audit.epsilon_lower_bound(np.arange(6.0), np.array([True, True, True, False, True, False]))
    with pytest.raises(ValueError, match="boolean array"):
        audit.epsilon_lower_bound(np.arange(6.0), np.array([1, 0, 1, 0, 1, 0]))
    with pytest.raises(ValueError, match="trials must be >= 2"):
        audit.mechanism_trials((2.0, 1.0), (2.0, 1.0), trials=1)
    with pytest.raises(ValueError, match="output must be one of"):
        audit.mechanism_trials((2.0, 1.0), (2.0, 1.0), "thetas")
    with pytest.raises(TypeError, match="world_d must be a"):
        audit.mechanism_trials([2.0, 1.0], (2.0, 1.0))
    with pytest.raises(ValueError, match="target must be one of"):
        privacy_audit.target_index([1, 2], "median")
    with pytest.raises(ValueError, match="targets must be"):
        privacy_audit.audit(Y, targets=("largest", "oldest"), trials=100)
    with pytest.raises(ValueError, match="trials must be >= 4"):
        privacy_audit.audit(Y, trials=2)
    with pytest.raises(ValueError, match="replacement"):
        privacy_audit.neighbour(Y, 0, "replace-one")
    with pytest.raises(ValueError, match="non-negative integer sums"):
        exact.synthetic_sum_logpmf(-1, 10, 2.0, 1.0)
    with pytest.raises(ValueError, match="size must be >= 1"):
        exact.sample(Y, size=0)
