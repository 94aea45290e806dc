"""The cell normal model (ppmlib.models.families.CellNormal, ppmlib.models.cells): its Gibbs sampler
against a quadrature of the exact posterior, its log-likelihood against scipy, its stratified
predictive draws, determinism and the refusals before any fit."""
import numpy as np
import pytest
from scipy import stats

import ppmlib
from ppmlib.errors import BadArgument
from ppmlib.models.families import family

# two cells of a one-hot design (intercept, indicator of the second level)
Y = np.array([0.3, 1.1, -0.4, 0.8, 2.0, 1.4, 2.6, 1.7])
X2 = np.column_stack([np.ones(8), np.r_[np.zeros(4), np.ones(4)]])


def _pinned_prior(t=0.5, s0=0.8, nu=4.0):
    """Hyperpriors so narrow that beta = 0, tau^2 = t and s^2 = s0 in effect: mu ~ Normal(0, t) and
    sigma^2 ~ Scaled-Inv-chi^2(nu, s0) exactly enough for a quadrature to be the answer."""
    a = 1e7
    return {"prior_beta_sd": 1e-6, "prior_tau2_shape": a, "prior_tau2_scale": a * t, "prior_s2_shape": a,
            "prior_s2_rate": a / s0, "variance_df": nu}


def _quadrature(y, w, t=0.5, s0=0.8, nu=4.0):
    """Posterior mean and sd of mu and the mean of sigma for one cell, on a (mu, sigma^2) grid."""
    mu = np.linspace(-3, 4, 1401)[:, None]
    var = np.geomspace(0.02, 40, 1600)[None, :]
    log_post = (stats.norm.logpdf(mu, 0, np.sqrt(t)) + stats.invgamma.logpdf(var, nu / 2, scale=nu * s0 / 2)
                + (w[:, None, None] * stats.norm.logpdf(y[:, None, None], mu, np.sqrt(var))).sum(axis=0))
    # the variance grid is log-spaced: its cell widths are proportional to var
    p = np.exp(log_post - log_post.max()) * var
    p /= p.sum()
    m = float((p * mu).sum())
    return m, float(np.sqrt((p * (mu - m) ** 2).sum())), float((p * np.sqrt(var)).sum())


@pytest.mark.parametrize("weights", [np.ones(8), np.r_[np.full(4, 0.5), np.full(4, 0.25)]])
def test_gibbs_draws_the_exact_weighted_posterior_of_each_cell(weights):
    fit = ppmlib.fit("cellnormal", Y, X=X2, weights=weights, prior=_pinned_prior(),
                     sampler=ppmlib.Sampler(chains=4, draws=4000, warmup=200), seed=4)
    assert fit.backend == "exact"
    for u, part in enumerate((slice(0, 4), slice(4, 8))):
        mean, sd, sigma = _quadrature(Y[part], weights[part])
        mu_draws = fit.draws["mu"][:, u]
        se = sd / np.sqrt(16000 / 4)       # a generous Monte Carlo error (the draws are autocorrelated)
        assert abs(mu_draws.mean() - mean) < 4 * se, (u, mu_draws.mean(), mean)
        assert abs(mu_draws.std() - sd) < 0.03 * sd, (u, mu_draws.std(), sd)
        assert abs(fit.draws["sigma"][:, u].mean() - sigma) < 0.02 * sigma, (u, fit.draws["sigma"][:, u].mean(), sigma)


def test_hierarchy_shrinks_a_small_cell_toward_the_main_effects():
    # one large cell at 0 and one of two records at 3: with a tight tau the small cell's mean is pulled
    # far toward beta (whose prior is wide); with a loose tau it stays near its own data
    rng = np.random.default_rng(1)
    y = np.r_[rng.normal(0, 0.3, 200), 3.0, 3.2]
    # the indicator's coefficient pinned at 0 (prior sd 0.01): the small cell's mean can leave the
    # large one's only through its own deviation, which tau controls
    Xc = np.column_stack([np.ones(202), np.r_[np.zeros(200), 1.0, 1.0]])
    common = {"prior_s2_shape": 1.0, "prior_s2_rate": 1.0}
    tight = ppmlib.fit("cellnormal", y, X=Xc, prior={**common, "prior_beta_sd": 0.01, "prior_tau2_shape": 1e4,
                                                     "prior_tau2_scale": 1e4 * 0.01}, seed=1,
                       sampler=ppmlib.Sampler(chains=2, draws=1000, warmup=200))
    loose = ppmlib.fit("cellnormal", y, X=Xc, prior={**common, "prior_beta_sd": 0.01, "prior_tau2_shape": 1e4,
                                                     "prior_tau2_scale": 1e4 * 25.0}, seed=1,
                       sampler=ppmlib.Sampler(chains=2, draws=1000, warmup=200))
    assert tight.draws["mu"][:, 1].mean() < 1.0 < 2.7 < loose.draws["mu"][:, 1].mean()


def test_log_lik_is_the_normal_density_of_each_records_cell():
    fit = ppmlib.fit("cellnormal", Y, X=X2, sampler=ppmlib.Sampler(chains=2, draws=50, warmup=50), seed=2)
    cells = X2[:, 1].astype(int)
    direct = stats.norm.logpdf(Y[None, :], fit.draws["mu"][:, cells], fit.draws["sigma"][:, cells])
    np.testing.assert_allclose(fit.log_lik, direct, rtol=1e-12, atol=1e-12)
    # the records in another order: each is still scored under its own cell
    order = np.array([7, 0, 5, 2, 3, 4, 1, 6])
    np.testing.assert_allclose(family("cellnormal").log_lik(fit.draws, Y[order], X2[order]), direct[:, order], rtol=1e-12)


def test_same_seed_same_draws_and_synthetic_data():
    sampler = ppmlib.Sampler(chains=2, draws=100, warmup=100)
    one = ppmlib.fit("cellnormal", Y, X=X2, sampler=sampler, seed=7)
    two = ppmlib.fit("cellnormal", Y, X=X2, sampler=sampler, seed=7)
    other = ppmlib.fit("cellnormal", Y, X=X2, sampler=sampler, seed=8)
    for name in one.draws:
        np.testing.assert_array_equal(one.draws[name], two.draws[name])
    assert not np.array_equal(one.draws["mu"], other.draws["mu"])
    np.testing.assert_array_equal(one.synthesize(3, seed=1), two.synthesize(3, seed=1))


def test_stratified_draws_are_normal_and_spread_evenly_within_a_cell():
    from ppmlib.models.cells import stratified_normal
    cells = np.repeat([0, 1], [50, 7])
    z = stratified_normal(np.random.default_rng(3), cells, 4000)
    # every value is a standard normal draw: the pooled values and one record's values across draws
    assert stats.kstest(z[:200].ravel(), "norm").pvalue > 0.01
    assert stats.kstest(z[:, 3], "norm").pvalue > 0.01
    # a cell's mean varies far less than the mean of 50 independent draws (variance 1/50)
    assert z[:, :50].mean(axis=1).var() < 0.1 / 50
    # and each cell's values fall one in each k-quantile band
    bands = np.sort(np.floor(stats.norm.cdf(z[:, 50:]) * 7), axis=1)
    np.testing.assert_array_equal(bands, np.tile(np.arange(7.0), (4000, 1)))


def test_iid_family_draws_independently():
    fit = ppmlib.fit("cellnormal_iid", Y, X=X2, sampler=ppmlib.Sampler(chains=2, draws=100, warmup=100), seed=2)
    draws = {k: np.repeat(v[:1], 3000, axis=0) for k, v in fit.draws.items()}
    X = np.repeat(X2[:1], 40, axis=0)
    means = family("cellnormal_iid").predict(draws, X, 40, np.random.default_rng(1)).mean(axis=1)
    sigma = draws["sigma"][0, 0]
    assert 0.7 < means.var() / (sigma**2 / 40) < 1.3


def test_refusals_name_the_problem_before_any_fit():
    with pytest.raises(BadArgument, match="one-hot.*column\\(s\\) \\[1\\]"):
        ppmlib.fit("cellnormal", Y, X=np.column_stack([np.ones(8), Y * 0 + np.arange(8)]))
    with pytest.raises(BadArgument, match="1 cell\\(s\\) have fewer than 5 records.*cell 0 \\(ones in columns \\[0\\]"):
        X = np.column_stack([np.ones(8), np.r_[0, 0, 1, 1, 1, 1, 1, 1]])
        ppmlib.fit("cellnormal", Y, X=X, prior={"min_cell_records": 5})
    with pytest.raises(BadArgument, match="no censored \\(strict, CM\\) fit"):
        ppmlib.fit("cellnormal", Y, X=X2, censoring=1.0)
    # a record's cell that the fit never saw: refused by position
    fit = ppmlib.fit("cellnormal", Y[:4], X=X2[:4], sampler=ppmlib.Sampler(chains=1, draws=10, warmup=10), seed=1)
    with pytest.raises(BadArgument, match="position 4"):
        family("cellnormal").log_lik(fit.draws, Y, X2)


def test_the_cells_constant_in_every_draw_are_left_out_of_the_diagnostics():
    fit = ppmlib.fit("cellnormal", Y, X=X2, sampler=ppmlib.Sampler(chains=2, draws=50, warmup=50), seed=2)
    judged = family("cellnormal").diagnostic_draws(fit.draws, Y, X2)
    assert sorted(judged) == sorted(set(fit.draws) - {"cell_X"})
    assert family("normal").diagnostic_draws(fit.draws, Y, X2) is fit.draws   # no constants: the draws as given
