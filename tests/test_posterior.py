"""Stan fits through ppmlib.fit: exact answers, Stan's own log densities, reproducibility, errors."""
import numpy as np
import pytest
from scipy import stats

import ppmlib

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def counts():
    return ppmlib.datasets.simulate.nb_mixture(60, [100, 100], [5, 20], [0.2, 0.8], seed=11)


def test_weighted_poisson_matches_conjugate_gamma(counts):
    a, b = 2.0, 0.5
    w = np.random.default_rng(3).uniform(0.1, 1.0, counts.size)
    fit = ppmlib.fit("poisson", counts, weights=w, seed=7, prior={"prior_shape": a, "prior_rate": b})
    shape, rate = a + np.sum(w * counts), b + np.sum(w)
    lam = fit.draws["lambda"]
    ess = fit.diagnostics["min_ess_bulk"]
    exact_mean, exact_sd = shape / rate, np.sqrt(shape) / rate
    assert abs(lam.mean() - exact_mean) < 4 * exact_sd / np.sqrt(ess)
    assert abs(lam.std() - exact_sd) < 4 * exact_sd / np.sqrt(2 * ess)
    # and the whole distribution, not just two moments
    assert stats.kstest(lam[::4], stats.gamma(shape, scale=1 / rate).cdf).pvalue > 1e-3


def test_downweighting_widens_the_posterior(counts):
    full = ppmlib.fit("poisson", counts, seed=1)
    half = ppmlib.fit("poisson", counts, weights=np.full(counts.size, 0.25), seed=1)
    # a scalar weight 1/4 is a quarter of the data: sd roughly doubles
    ratio = half.draws["lambda"].std() / full.draws["lambda"].std()
    assert 1.8 < ratio < 2.2


@pytest.mark.parametrize("model", ["poisson", "negbin", "normal"])
def test_log_lik_equals_stans_own_lpmf(model, counts):
    X = None
    y = counts
    if model == "normal":
        rng = np.random.default_rng(2)
        x = rng.normal(size=counts.size)
        X = np.column_stack([np.ones_like(x), x])
        y = 1.0 + 0.5 * x + rng.normal(scale=0.7, size=x.size)
    fit = ppmlib.fit(model, y, X=X, seed=5, sampler=ppmlib.Sampler(draws=200, warmup=300), emit_log_lik=True)
    assert fit.log_lik.shape == (4 * 200, y.size)
    np.testing.assert_allclose(fit.log_lik, fit.draws["log_lik"], rtol=1e-9, atol=1e-9)


def test_same_seed_same_draws_weights_and_delta(counts):
    def run():
        f0 = ppmlib.fit("negbin", counts, seed=42, sampler=ppmlib.Sampler(draws=300, warmup=300))
        w = ppmlib.lw_weights(f0.log_lik, c=0.9, g=0.05)
        f1 = ppmlib.fit("negbin", counts, weights=w, seed=43, sampler=ppmlib.Sampler(draws=300, warmup=300))
        return f1.draws["mu"], w, ppmlib.lipschitz_bound(f1.log_lik, w), f1.synthesize(5, seed=1)
    first, second = run(), run()
    for a, b in zip(first, second):
        assert np.array_equal(a, b)


def test_different_seed_different_draws(counts):
    a = ppmlib.fit("poisson", counts, seed=1, sampler=ppmlib.Sampler(draws=100, warmup=100)).draws["lambda"]
    b = ppmlib.fit("poisson", counts, seed=2, sampler=ppmlib.Sampler(draws=100, warmup=100)).draws["lambda"]
    assert not np.array_equal(a, b)


def test_synthesize_shapes_and_posterior_predictive_moments(counts):
    fit = ppmlib.fit("negbin", counts, seed=3)
    syn = fit.synthesize(200, seed=9)
    assert syn.shape == (200, counts.size) and syn.dtype.kind == "i"
    # the synthetic data's overall mean sits near the posterior mean of mu
    # 12,000 values with sd about 30 and 200 draws of mu with sd about 4: the means agree within 1.5
    assert abs(syn.mean() - fit.draws["mu"].mean()) < 1.5
    assert abs(syn.var() / (fit.draws["mu"] + fit.draws["mu"] ** 2 / fit.draws["phi"]).mean() - 1) < 0.15
    with pytest.raises(ValueError, match="need at least m draws"):
        fit.synthesize(fit.n_draws + 1, seed=1)


def test_normal_regression_recovers_coefficients():
    rng = np.random.default_rng(8)
    x = rng.normal(size=400)
    X = np.column_stack([np.ones_like(x), x])
    y = 2.0 - 1.0 * x + rng.normal(scale=0.5, size=x.size)
    fit = ppmlib.fit("normal", y, X=X, seed=2)
    ols, *_ = np.linalg.lstsq(X, y, rcond=None)
    np.testing.assert_allclose(fit.draws["beta"].mean(axis=0), ols, atol=0.01)
    assert fit.draws["beta"].shape == (4000, 2)
    assert abs(fit.draws["sigma"].mean() - 0.5) < 0.05


def test_diagnostics_reported(counts):
    d = ppmlib.fit("poisson", counts, seed=4).diagnostics
    assert set(d) >= {"max_rhat", "min_ess_bulk", "divergences"}
    assert d["max_rhat"] < 1.01 and d["min_ess_bulk"] > 400 and d["divergences"] == 0


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(model="gaussian", y=[1, 2]), ValueError, "unknown model 'gaussian'"),
    (dict(model=3, y=[1, 2]), TypeError, "model must be a string"),
    (dict(model="poisson", y=[1, -2]), ValueError, "non-negative counts"),
    (dict(model="negbin", y=[1, 2.5]), ValueError, "integer counts"),
    (dict(model="poisson", y=[1, np.nan]), ValueError, "y has 1 non-finite"),
    (dict(model="normal", y=[1.0, np.inf]), ValueError, "y has 1 non-finite"),
    (dict(model="poisson", y=[1, 2], weights=[0.5, 1.5]), ValueError, "weights must lie in"),
    (dict(model="poisson", y=[1, 2], weights=[0.5]), ValueError, "weights has length 1"),
    (dict(model="normal", y=[1.0, 2.0], X=np.ones((3, 2))), ValueError, "X must be an"),
    (dict(model="normal", y=[1.0, 2.0], X=np.ones(2)), ValueError, "X must be an"),
    (dict(model="poisson", y=[1, 2], X=np.ones((2, 1))), ValueError, "X is only used"),
    (dict(model="poisson", y=[1, 2], sampler=dict(chains=2)), TypeError, "sampler must be a ppmlib.Sampler"),
    (dict(model="poisson", y=[1, 2], seed=-1), ValueError, "seed must be >= 0"),
    (dict(model="poisson", y=[1, 2], prior={"shape": 1}), ValueError, "unknown prior setting"),
])
def test_fit_rejects_bad_input_before_sampling(kwargs, error, match):
    with pytest.raises(error, match=match):
        ppmlib.fit(kwargs.pop("model"), kwargs.pop("y"), **kwargs)


def _grid_moments(log_post: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    w = np.exp(log_post - log_post.max())
    w /= w.sum()
    mean = float((w * values).sum())
    return mean, float(np.sqrt((w * (values - mean) ** 2).sum()))


def _assert_matches_grid(draws, ess, log_post, values):
    mean, sd = _grid_moments(log_post, values)
    assert abs(draws.mean() - mean) < 4 * sd / np.sqrt(ess)
    assert abs(draws.std() - sd) < 4 * sd / np.sqrt(2 * ess)


def test_weighted_negbin_matches_grid_quadrature():
    """The model block (a sum over distinct values) is the alpha-weighted posterior: compare the
    MCMC mean of mu with quadrature of prior x weighted likelihood on a fine grid."""
    y = ppmlib.datasets.simulate.nb_mixture(40, [30, 30], [3, 10], [0.5, 0.5], seed=4)
    w = np.random.default_rng(5).uniform(0.2, 1.0, y.size)
    fit = ppmlib.fit("negbin", y, weights=w, seed=6, sampler=ppmlib.Sampler(draws=2000))
    log_mu, inv_sqrt_phi = np.meshgrid(np.linspace(2.6, 4.2, 400), np.linspace(0.02, 1.2, 400), indexing="ij")
    grid = {"mu": np.exp(log_mu).ravel(), "phi": inv_sqrt_phi.ravel() ** -2.0}
    log_lik = fit.model.log_lik(grid, y, None)  # (grid points, n)
    log_post = (log_lik @ w + stats.norm(0, 10).logpdf(log_mu.ravel()) + stats.norm(0, 1).logpdf(inv_sqrt_phi.ravel()))
    _assert_matches_grid(fit.draws["mu"], fit.diagnostics["min_ess_bulk"], log_post, grid["mu"])
    # the check has teeth: ignoring the weights gives a different posterior
    unweighted = log_lik.sum(axis=1) + log_post - log_lik @ w
    assert abs(_grid_moments(unweighted, grid["mu"])[1] / _grid_moments(log_post, grid["mu"])[1] - 1) > 0.1


def test_weighted_normal_matches_grid_quadrature():
    rng = np.random.default_rng(7)
    y = rng.normal(3.0, 2.0, 30)
    w = rng.uniform(0.2, 1.0, y.size)
    fit = ppmlib.fit("normal", y, weights=w, seed=8, sampler=ppmlib.Sampler(draws=2000))
    beta0, sigma = np.meshgrid(np.linspace(0.0, 6.0, 500), np.linspace(0.5, 6.0, 500), indexing="ij")
    grid = {"beta": beta0.reshape(-1, 1), "sigma": sigma.ravel()}
    log_lik = fit.model.log_lik(grid, y, np.ones((y.size, 1)))
    log_post = log_lik @ w + stats.norm(0, 10).logpdf(beta0.ravel()) + stats.norm(0, 5).logpdf(sigma.ravel())
    for draws, values in ((fit.draws["beta"][:, 0], beta0.ravel()), (fit.draws["sigma"], sigma.ravel())):
        _assert_matches_grid(draws, fit.diagnostics["min_ess_bulk"], log_post, values)


# --- issue 24, point 6: inputs Stan would fail on are refused first, without the data in the message ---
@pytest.mark.parametrize("model", ["poisson", "negbin"])
@pytest.mark.parametrize("big", [2**31 + 4711, 2**63, 1e19])
def test_counts_too_large_for_stan_are_refused_by_position(model, big):
    y = [5, 3, big, 7]
    with pytest.raises(ValueError, match=r"y must be counts below 2147483648; record 2 is larger") as caught:
        ppmlib.fit(model, y, seed=1, sampler=ppmlib.Sampler(chains=1, draws=10, warmup=10))
    assert str(int(big)) not in str(caught.value)


def test_count_errors_name_the_record_not_its_value():
    with pytest.raises(ValueError, match=r"record 1 is negative$"):
        ppmlib.fit("negbin", [4, -917, 2], seed=1)
    with pytest.raises(ValueError, match=r"record 2 is not an integer$"):
        ppmlib.fit("poisson", [4, 5, 2.5], seed=1)


@pytest.mark.parametrize("model, setting", [("poisson", "prior_shape"), ("poisson", "prior_rate"),
                                            ("negbin", "prior_log_mu_sd"), ("normal", "prior_sigma_sd")])
@pytest.mark.parametrize("value", [0.0, -1.0])
def test_a_scale_or_shape_of_the_prior_must_be_positive(model, setting, value):
    with pytest.raises(ValueError, match=rf"prior setting '{setting}' must lie in \(0, inf\], got {value:g}"):
        ppmlib.fit(model, [3, 4, 5], prior={setting: value}, seed=1, sampler=ppmlib.Sampler(chains=1, draws=10, warmup=10))


def test_a_prior_mean_may_be_negative():
    assert ppmlib.models.families.FAMILIES["negbin"].check_prior({"prior_log_mu_mean": -2})["prior_log_mu_mean"] == -2.0


def test_an_unset_adapt_delta_is_the_familys_gate_passing_setting(monkeypatch):
    """ppmlib.fit("mixture", ...) adapts to 0.9 as the CE chapter does (0.8 failed the diagnostics
    gate there); the other families keep Stan's 0.8; a Sampler's own setting wins."""
    from ppmlib.inference import backends
    from ppmlib.models.families import family
    seen = []
    monkeypatch.setattr(backends, "sample", lambda program, data, **kw: seen.append((program, kw["adapt_delta"])))
    for sampler in (ppmlib.Sampler(), ppmlib.Sampler(adapt_delta=0.95)):
        for name in ("mixture", "normal", "negbin"):
            sampler.sample(family(name), {}, 1)
    assert seen == [("mixture", 0.9), ("normal", 0.8), ("negbin", 0.8),
                    ("mixture", 0.95), ("normal", 0.95), ("negbin", 0.95)]
    assert repr(ppmlib.Sampler()) == "Sampler(chains=4, draws=1000, warmup=1000)"


def test_an_unset_max_treedepth_is_stans_and_a_set_one_is_passed(monkeypatch):
    from ppmlib.inference import backends
    from ppmlib.models.families import family
    seen = []
    monkeypatch.setattr(backends, "sample", lambda program, data, **kw: seen.append(kw["max_treedepth"]))
    for sampler in (ppmlib.Sampler(), ppmlib.Sampler(max_treedepth=6)):
        sampler.sample(family("normal"), {}, 1)
    assert seen == [10, 6]
    assert repr(ppmlib.Sampler(max_treedepth=6)) == "Sampler(chains=4, draws=1000, warmup=1000, max_treedepth=6)"
    with pytest.raises(ValueError):
        ppmlib.Sampler(max_treedepth=0)


def test_one_blas_thread_limits_every_blas_pool_inside_and_restores_it_after():
    """The bounds' matrix products run on one thread: inside the context every BLAS library NumPy
    and SciPy loaded reports one thread; after it, the pools are as they were."""
    from threadpoolctl import threadpool_info

    from ppmlib.inference.posterior import one_blas_thread

    def blas_threads():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    before = blas_threads()
    assert before   # NumPy's BLAS is there to limit
    with one_blas_thread():
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before
