"""The exact Poisson-Gamma pseudo posterior against scipy, literal loops and hand computations."""
import numpy as np
import pytest
from scipy import special, stats

from ppmlib.inference import exact

# A hand-checkable database: two records, the second at half weight, prior Gamma(1, 1).
Y2 = np.array([1, 3])
W2 = np.array([1.0, 0.5])
PRIOR2 = dict(prior_shape=1.0, prior_rate=1.0)


@pytest.fixture(scope="module")
def simulated():
    """A mid-sized simulated database with uneven weights, and a grid over its pseudo posterior."""
    rng = np.random.default_rng(11)
    y = rng.poisson(40.0, size=60)
    w = rng.uniform(0.2, 1.0, size=60)
    lo, hi = exact.central_interval(y, w, mass=1 - 1e-8)
    return y, w, np.linspace(lo, hi, 801)


def test_pseudo_posterior_parameters_by_hand():
    # shape 1 + 1*1 + 0.5*3 = 3.5, rate 1 + 1 + 0.5 = 2.5
    assert exact.pseudo_posterior(Y2, W2, **PRIOR2) == (3.5, 2.5)
    # unweighted, default prior Gamma(1, 0.001): shape 1 + 4, rate 0.001 + 2
    assert exact.pseudo_posterior(Y2) == pytest.approx((5.0, 2.001))


def test_density_matches_scipy_and_integrates_to_one(simulated):
    y, w, _ = simulated
    shape, rate = exact.pseudo_posterior(y, w, prior_shape=2.0, prior_rate=0.5)
    fine = np.linspace(1e-3, 120.0, 200_001)
    logpdf = exact.log_density(fine, y, w, prior_shape=2.0, prior_rate=0.5)
    np.testing.assert_allclose(logpdf, stats.gamma(shape, scale=1 / rate).logpdf(fine), rtol=1e-10, atol=1e-8)
    assert np.trapezoid(np.exp(logpdf), fine) == pytest.approx(1.0, abs=1e-8)


def test_gamma_logpdf_broadcasts_one_row_per_parameter_pair():
    grid = np.array([0.5, 1.0, 2.0])
    out = exact.gamma_logpdf(grid, np.array([2.0, 3.5]), np.array([1.0, 2.5]))
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out[1], stats.gamma(3.5, scale=1 / 2.5).logpdf(grid), rtol=1e-12)


def test_central_interval_holds_its_mass():
    lo, hi = exact.central_interval(Y2, W2, mass=0.9, **PRIOR2)
    dist = stats.gamma(3.5, scale=1 / 2.5)
    assert dist.cdf(lo) == pytest.approx(0.05) and dist.sf(hi) == pytest.approx(0.05)


def test_loo_log_ratio_hand_computation():
    # Without record 1 (y = 1, weight 1): Gamma(2.5, 1.5). The two log densities differ by
    # 3.5 log 2.5 - 2.5 log 1.5 - log(Gamma(3.5) / Gamma(2.5)) + log(lam) - lam, and
    # Gamma(3.5) / Gamma(2.5) = 2.5, so the constant is 2.5 log(5/3). At lam = 1: 2.5 log(5/3) - 1.
    # Without record 2 (y = 3, weight 0.5): Gamma(2, 2); Gamma(3.5) = 15 sqrt(pi) / 8, Gamma(2) = 1, so
    # at lam = 2: 3.5 log 2.5 - 2 log 2 - log(15 sqrt(pi) / 8) + 1.5 log 2 - 0.5 * 2.
    ratio = exact.loo_log_ratio([1.0, 2.0], Y2, W2, **PRIOR2)
    assert ratio.shape == (2, 2)
    assert ratio[0, 0] == pytest.approx(2.5 * np.log(5 / 3) - 1.0, rel=1e-12)  # 0.27706...
    hand = 3.5 * np.log(2.5) - 2 * np.log(2) - np.log(15 * np.sqrt(np.pi) / 8) + 1.5 * np.log(2) - 1.0
    assert ratio[1, 1] == pytest.approx(hand, rel=1e-12)                       # 0.65947...
    assert ratio[0, 0] == pytest.approx(0.277064, abs=1e-6)


def test_loo_log_evidence_ratio_hand_computation():
    # E[lam e^{-lam}] under Gamma(2.5, 1.5) = (1.5 / 2.5)^2.5, so the log is -2.5 log(5/3)
    evidence = exact.loo_log_evidence_ratio(Y2, W2, **PRIOR2)
    assert evidence[0] == pytest.approx(-2.5 * np.log(5 / 3), rel=1e-12)
    # record 2 by numerical integration of p(3 | lam)^0.5 against Gamma(2, 2)
    lam = np.linspace(1e-9, 60, 600_001)
    integrand = stats.poisson.pmf(3, lam) ** 0.5 * stats.gamma(2.0, scale=0.5).pdf(lam)
    assert evidence[1] == pytest.approx(np.log(np.trapezoid(integrand, lam)), rel=1e-8)


def test_loo_log_ratio_equals_literal_per_neighbour_computation(simulated):
    y, w, grid = simulated
    fast = exact.loo_log_ratio(grid, y, w, prior_shape=2.0, prior_rate=0.5)
    literal = np.empty_like(fast)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        full = stats.gamma(2.0 + w @ y, scale=1 / (0.5 + w.sum())).logpdf(grid)
        minus = stats.gamma(2.0 + w[keep] @ y[keep], scale=1 / (0.5 + w[keep].sum())).logpdf(grid)
        literal[i] = full - minus
    np.testing.assert_allclose(fast, literal, atol=1e-9)
    np.testing.assert_allclose(exact.max_abs_loo_log_ratio(grid, y, w, prior_shape=2.0, prior_rate=0.5),
                               np.abs(literal).max(axis=1), atol=1e-9)
    np.testing.assert_allclose(exact.max_abs_loo_log_ratio_by_point(grid, y, w, prior_shape=2.0, prior_rate=0.5),
                               np.abs(literal).max(axis=0), atol=1e-9)


def test_ratio_bounded_by_twice_the_weighted_log_lik_on_the_grid(simulated):
    # |log ratio_i| <= 2 sup_lambda |alpha_i f_lambda(y_i)|, the sup taken over the grid, which
    # covers all but 1e-8 of the pseudo posterior mass
    y, w, grid = simulated
    ratio = exact.max_abs_loo_log_ratio(grid, y, w)
    bound = exact.grid_record_bounds(grid, y, w)
    assert (ratio <= 2 * bound).all()
    assert ratio.max() > 0.01  # not vacuous: the ratio is really there


def test_grid_record_bounds_by_hand():
    # |f_lam(y)| = lam - y log lam + log y!; on the grid {1, 2}:
    # record 1: max(1, 2 - log 2) = 2 - log 2; record 2 (weight 0.5): 0.5 * max(1 + log 6, 2 - 3 log 2 + log 6)
    bounds = exact.grid_record_bounds([1.0, 2.0], Y2, W2)
    np.testing.assert_allclose(bounds, [2 - np.log(2), 0.5 * (1 + np.log(6))], rtol=1e-12)


def test_zero_weight_record_has_no_effect():
    y = np.array([0, 5, 9])
    ratio = exact.loo_log_ratio([0.5, 4.0], y, [1.0, 0.0, 1.0])
    np.testing.assert_allclose(ratio[1], 0.0, atol=1e-12)


def test_em_density_equals_scalar_weighted_pseudo_posterior():
    rng = np.random.default_rng(3)
    y = rng.poisson(100.0, size=200)
    a = 0.375
    shape, rate = exact.pseudo_posterior(y, np.full(y.size, a))
    assert (shape, rate) == pytest.approx((1.0 + a * y.sum(), 0.001 + a * y.size))
    grid = np.linspace(*exact.central_interval(y, np.full(y.size, a), mass=1 - 1e-12), 4001)
    em = exact.em_log_density(grid, y, a)
    np.testing.assert_allclose(em, exact.log_density(grid, y, np.full(y.size, a)), atol=1e-6)


def test_em_scalar_weight():
    assert exact.em_scalar_weight(2.0, 4.0) == 0.25
    with pytest.raises(ValueError, match="delta_u"):
        exact.em_scalar_weight(1.0, 0.0)


def test_tail_mass_bound_is_an_upper_bound_and_tight():
    y = np.array([50])                 # pseudo posterior Gamma(51, 1.001) with the default prior
    shape, rate = exact.pseudo_posterior(y)
    dist = stats.gamma(shape, scale=1 / rate)
    for lo, hi in ((30.0, 75.0), (20.0, 95.0)):
        true = np.log10(dist.cdf(lo) + dist.sf(hi))
        bound = exact.log10_tail_mass_bound(lo, hi, y)
        assert true <= bound <= true + 1.0
    assert exact.log10_tail_mass_bound(np.nan, np.nan, y) == -np.inf
    with pytest.raises(ValueError, match="not beyond the mode"):
        exact.log10_tail_mass_bound(60.0, np.nan, y)


def test_exceedance_bounds_separate_safe_from_unsafe_points(simulated):
    y, w, _ = simulated
    wide = np.linspace(10.0, 100.0, 2001)
    worst = exact.max_abs_loo_log_ratio_by_point(wide, y, w)
    lo, hi = exact.exceedance_bounds(wide, y, w, bound=3.0)
    inside = (wide > lo) & (wide < hi)
    assert (worst[inside] <= 3.0).all()
    assert worst[wide == lo][0] > 3.0 and worst[wide == hi][0] > 3.0
    assert 10.0 < lo < 40.0 < hi < 100.0


@pytest.mark.parametrize("call, error, name", [
    (lambda: exact.log_density([-1.0, 1.0], Y2), ValueError, "grid"),
    (lambda: exact.loo_log_ratio([1.0], Y2, [1.0, 1.5]), ValueError, "weights"),
    (lambda: exact.loo_log_ratio([1.0], Y2, [1.0]), ValueError, "weights"),
    (lambda: exact.pseudo_posterior([1.5, 2]), ValueError, "y"),
    (lambda: exact.pseudo_posterior(Y2, prior_shape="1"), TypeError, "prior_shape"),
    (lambda: exact.pseudo_posterior(Y2, prior_rate=0.0), ValueError, "prior_rate"),
    (lambda: exact.central_interval(Y2, mass=1.0), ValueError, "mass"),
    (lambda: exact.em_log_density([2.0, 1.0], Y2, 0.5), ValueError, "increasing"),
    (lambda: exact.gamma_logpdf([1.0], -1.0, 1.0), ValueError, "shape"),
])
def test_bad_inputs_name_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_conjugate_sampler_fits_the_poisson_model_without_stan():
    """ppmlib.fit and ppmlib.synthesizer with ConjugateSampler: the exact Gamma draws of exact.sample."""
    import ppmlib
    from ppmlib.inference.exact import ConjugateSampler

    y = np.array([98, 103, 120, 87])
    alpha = np.array([1.0, 0.5, 0.25, 1.0])
    sampler = ConjugateSampler(chains=2, draws=300)
    fit = ppmlib.fit("poisson", y, weights=alpha, sampler=sampler, seed=5, prior={"prior_rate": 0.5})
    assert (fit.backend, fit.chains, fit.sampler) == ("exact", 2, {})
    np.testing.assert_array_equal(fit.draws["lambda"], exact.sample(y, alpha, size=600, seed=5, prior_rate=0.5))
    lw = ppmlib.synthesizer("poisson", y, "custom", weights=alpha, sampler=sampler, m=3, seed=6)
    lam = lw.fit.draws["lambda"]
    by_hand = alpha * np.abs(y * np.log(lam[:, None]) - lam[:, None] - special.gammaln(y + 1.0)).max(axis=0)
    np.testing.assert_allclose(lw.bounds, by_hand, rtol=1e-12)
    assert lw.synthetic.shape == (3, 4) and lw.diagnostics["divergences"] == 0
    with pytest.raises(ValueError, match="Poisson model's Gamma pseudo posterior only; got model 'negbin'"):
        ppmlib.fit("negbin", y, sampler=sampler, seed=1)


@pytest.mark.parametrize("with_weights", [False, True])
def test_draw_record_bounds_from_two_draws_per_value_equal_the_full_matrix(with_weights):
    import ppmlib
    y = ppmlib.datasets.simulate.poisson(300, 40, seed=5)
    alpha = np.linspace(0.0, 1.0, y.size) if with_weights else None
    lam = exact.sample(y, alpha, size=3000, seed=4)
    full = ppmlib.record_bounds(exact.poisson_log_lik(lam, y).T, alpha)   # S x n, every draw
    bounds = exact.draw_record_bounds(y, alpha, draws=3000, seed=4)
    np.testing.assert_allclose(bounds, full, rtol=1e-12)
    if with_weights:
        assert bounds[0] == 0.0                      # weight 0: bound 0


def test_counts_stand_for_repeated_records():
    y, alpha = np.array([90, 100, 131]), np.array([1.0, 0.5, 0.25])
    counts = np.array([3, 1, 2])
    # 1 + (3 x 90 + 0.5 x 100 + 2 x 0.25 x 131), 0.001 + (3 + 0.5 + 0.5)
    assert exact.pseudo_posterior(y, alpha, counts=counts) == pytest.approx((386.5, 4.001))
    expanded = np.repeat(y, counts), np.repeat(alpha, counts)
    bounds = exact.draw_record_bounds(y, alpha, draws=500, seed=2, counts=counts)
    np.testing.assert_allclose(np.repeat(bounds, counts), exact.draw_record_bounds(*expanded, draws=500, seed=2),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="counts must have one entry per value"):
        exact.pseudo_posterior(y, alpha, counts=[1, 2])
