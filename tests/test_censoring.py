"""Censoring (the strict mechanism): the family objects, the Stan programs' switch and the schemes.

The Stan programs and the families' numpy code must add the same censored terms to the log
posterior: a censored fit's lp__ minus the numpy log posterior at its draws (prior, censored terms
and the Jacobian of Stan's constraining transform) is the same constant for every draw.
"""
import numpy as np
import pytest

import ppmlib
from ppmlib.datasets import simulate
from ppmlib.inference import exact
from ppmlib.mechanism.censoring import box_weights, censored_share, censored_terms, censoring
from ppmlib.mechanism.synthesis import synthesizer
from ppmlib.mechanism.weights import lw_weights
from ppmlib.models.families import family

SMALL = ppmlib.Sampler(chains=2, draws=300, warmup=300)


@pytest.fixture(scope="module")
def counts():
    return simulate.nb_mixture(80, [100, 100], [5, 20], [0.2, 0.8], seed=11)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(4)
    x = rng.normal(size=80)
    return 1.0 + 0.5 * x + rng.normal(scale=0.7, size=80), np.column_stack([np.ones(80), x])


# --- the numpy side ------------------------------------------------------------------------------

def test_censored_terms_are_the_clipped_weighted_log_likelihood(counts):
    fam = family("poisson")
    draws = {"lambda": np.array([60.0, 100.0, 140.0, 400.0])}
    alpha = np.linspace(0.2, 1.0, counts.size)
    cens = censoring(fam, counts, None, alpha, 2.0)
    u = fam.censored_log_lik(draws, counts, None, alpha, cens)
    raw = alpha * fam.log_lik(draws, counts, None) - cens.shifts
    assert u.shape == (4, counts.size) and np.abs(u).max() <= 1.0
    inside = np.abs(raw) <= 1.0
    np.testing.assert_array_equal(u[inside], raw[inside])
    np.testing.assert_array_equal(u[~inside], np.sign(raw[~inside]))
    assert censored_share(fam.log_lik(draws, counts, None), alpha, cens) == pytest.approx((~inside).mean())


def test_best_centring_puts_the_windows_top_at_each_records_best_fit(counts):
    """Poisson: s_i is the saturated log-likelihood, the maximum over lambda; with the "best"
    centring u_i = epsilon/2 exactly where lambda = y_i, and never above."""
    fam = family("poisson")
    lam = np.geomspace(1, 1000, 2001)
    best = fam.best_log_lik(counts, None)
    assert (fam.log_lik({"lambda": lam}, counts, None) <= best + 1e-9).all()
    cens = censoring(fam, counts, None, np.ones(counts.size), 1.0)
    at_own = fam.censored_log_lik({"lambda": counts[:5].astype(float)}, counts[:5], None, np.ones(5),
                                  censoring(fam, counts[:5], None, np.ones(5), 1.0))
    np.testing.assert_allclose(np.diag(at_own), 0.5)
    np.testing.assert_allclose(cens.shifts, best - 0.5)


def test_box_weights_leave_no_record_censored_inside_the_box(counts, regression):
    for name, y, X, box, points in [
            ("poisson", counts, None, {"lambda": (70.0, 160.0)}, {"lambda": np.linspace(70, 160, 181)}),
            # the reference scale (1) at the box's smallest sigma: no draw in the box fits a record above s_i
            ("normal", regression[0], np.ones((80, 1)), {"mean": (0.0, 2.0), "sigma": (1.0, 2.0)},
             {"beta": np.repeat(np.linspace(0, 2, 21), 21)[:, None], "sigma": np.tile(np.linspace(1.0, 2.0, 21), 21)})]:
        fam = family(name)
        alpha = box_weights(fam, y, X, box, 1.0)
        assert ((alpha > 0) & (alpha <= 1)).all() and alpha.min() < 1
        cens = censoring(fam, y, X, alpha, 1.0)
        raw = alpha * fam.log_lik(points, y, X) - cens.shifts     # at the box's ends it touches the window: rounding
        assert np.abs(raw).max() <= cens.bound * (1 + 1e-12), name
        # ... and outside the box the censoring binds again
        outside = {"lambda": np.array([20.0, 400.0])} if name == "poisson" else {"beta": np.array([[5.0]]), "sigma": np.array([0.1])}
        assert censored_share(fam.log_lik(outside, y, X), alpha, cens) > 0, name


@pytest.mark.parametrize("bad, error", [(dict(epsilon=0.0), ValueError), (dict(epsilon=1.0, centring="median"), ValueError),
                                        (dict(epsilon=1.0, reference_scale=-1.0), ValueError)])
def test_bad_censoring_is_refused_by_name(bad, error, regression):
    with pytest.raises(error, match=next(iter(k for k in ("centring", "reference_scale", "epsilon") if k in bad
                                              and (k != "epsilon" or len(bad) == 1)))):
        censoring(family("normal"), regression[0], regression[1], np.ones(80), **bad)


def test_a_bad_box_is_refused_by_name(counts):
    with pytest.raises(ValueError, match="lambda"):
        box_weights(family("poisson"), counts, None, {"lambda": (10.0, 5.0)}, 1.0)
    with pytest.raises(ValueError, match="'mean'"):
        box_weights(family("normal"), counts.astype(float), None, {"sigma": (1.0, 2.0)}, 1.0)


# --- exact draws of the censored Poisson posterior, and the schemes ------------------------------

def test_exact_censored_draws_follow_the_grid_density(counts):
    """The conjugate sampler's censored draws against the density they come from (a chi-square-free
    check: their mean and sd against the quadrature's)."""
    fit = ppmlib.fit("poisson", counts, sampler=exact.ConjugateSampler(chains=2, draws=4000), seed=3, censoring=1.0)
    data = family("poisson").stan_data(counts, None, np.ones(counts.size), family("poisson").check_prior(), False,
                                       fit.censoring)
    grid = np.linspace(50, 200, 30001)
    dens = np.exp(exact.censored_log_density(grid, data) - exact.censored_log_density(grid, data).max())
    mean = np.trapezoid(grid * dens, grid) / np.trapezoid(dens, grid)
    sd = np.sqrt(np.trapezoid((grid - mean) ** 2 * dens, grid) / np.trapezoid(dens, grid))
    lam = fit.draws["lambda"]
    assert abs(lam.mean() - mean) < 4 * sd / np.sqrt(lam.size) and abs(lam.std() / sd - 1) < 0.05
    # censoring at epsilon = 1 costs information: the censored posterior is wider than the plain one
    plain = ppmlib.fit("poisson", counts, sampler=exact.ConjugateSampler(chains=2, draws=4000), seed=3)
    assert lam.std() > 1.2 * plain.draws["lambda"].std()


def test_the_censored_schemes_state_their_guarantee(counts):
    sampler = exact.ConjugateSampler(chains=2, draws=1000)
    base = synthesizer("poisson", counts, sampler=sampler, seed=1)
    made = {name: synthesizer("poisson", counts, name, epsilon=1.0, sampler=sampler, seed=2, m=5, **extra)
            for name, extra in [("cm", {}), ("wcm", {"base": base}), ("strict_weighted", {"box": {"lambda": (70, 160)}})]}
    assert {k: v.guarantee for k, v in made.items()} == {"cm": "strict", "wcm": "strict, weights as given",
                                                         "strict_weighted": "strict"}
    for name, s in made.items():
        assert s.epsilon == 1.0 and s.delta <= 0.5 and 0 <= s.share_censored <= 1 and s.synthetic.shape == (5, 80)
        assert "box" not in s.settings and "base" not in s.settings
    assert made["strict_weighted"].share_censored < made["cm"].share_censored
    np.testing.assert_array_equal(made["wcm"].weights, lw_weights(base.fit))
    assert base.guarantee == "local" and base.share_censored is None
    with pytest.raises(ValueError, match="epsilon"):
        synthesizer("poisson", counts, "cm", sampler=sampler, seed=2)
    with pytest.raises(ValueError, match="q must be 1"):
        synthesizer("poisson", counts, "cm", epsilon=1.0, q=0.9, sampler=sampler, seed=2)


# --- the Stan programs ------------------------------------------------------------------------------

def _jacobian_free_log_posterior(name, fam, fit):
    """The numpy log posterior of a censored fit at its draws, up to a constant: the prior (as the
    program's ~ statements write it, constants dropped), the censored terms and the log Jacobian of
    Stan's transform of each constrained parameter."""
    d, prior = fit.draws, fam.check_prior()
    u = fam.censored_log_lik(d, fit.y, fit.X, fit.weights, fit.censoring).sum(axis=1)
    if name == "poisson":
        lam = d["lambda"]
        return u + (prior["prior_shape"] - 1) * np.log(lam) - prior["prior_rate"] * lam + np.log(lam)
    if name == "negbin":
        log_mu, x = np.log(d["mu"]), 1 / np.sqrt(d["phi"])
        return (u - 0.5 * ((log_mu - prior["prior_log_mu_mean"]) / prior["prior_log_mu_sd"]) ** 2
                - 0.5 * (x / prior["prior_inv_sqrt_phi_sd"]) ** 2 + np.log(x))
    beta, sigma = d["beta"], d["sigma"]
    return (u - 0.5 * (beta ** 2).sum(axis=1) / prior["prior_beta_sd"] ** 2
            - 0.5 * (sigma / prior["prior_sigma_sd"]) ** 2 + np.log(sigma))


@pytest.mark.stan
@pytest.mark.parametrize("name", ["poisson", "negbin", "normal"])
def test_the_stan_programs_add_the_families_censored_terms(name, counts, regression):
    y, X = (counts, None) if name != "normal" else regression
    rng = np.random.default_rng(9)
    alpha = rng.uniform(0.3, 1.0, y.size)
    fam = family(name)
    fit = ppmlib.fit(name, y, X=X, weights=alpha, seed=5, sampler=SMALL, censoring=censoring(fam, y, fam.check_X(X, y.size), alpha, 1.5))
    gap = fit.sampler["lp__"] - _jacobian_free_log_posterior(name, fam, fit)
    assert np.ptp(gap) < 1e-6 * max(1.0, np.abs(gap).max()), np.ptp(gap)
    assert 0 < censored_share(fit.log_lik, alpha, fit.censoring) < 1


@pytest.mark.stan
def test_a_censored_stan_fit_matches_the_exact_censored_posterior(counts):
    stan = ppmlib.fit("poisson", counts, seed=6, sampler=ppmlib.Sampler(chains=4, draws=1000, warmup=500), censoring=1.0)
    grid = exact.censored_draws(family("poisson").stan_data(counts, None, np.ones(counts.size), family("poisson").check_prior(),
                                                            False, stan.censoring), 40000, 7)
    lam = stan.draws["lambda"]     # not a Gamma: its mean and sd against the exact draws', in MCMC error units
    ess = stan.diagnostics["min_ess_bulk"]
    assert abs(lam.mean() - grid.mean()) < 4 * grid.std() / np.sqrt(ess)
    assert abs(lam.std() / grid.std() - 1) < 4 / np.sqrt(2 * ess)


@pytest.mark.stan
def test_the_mixture_program_censors_too(regression):
    y, X = regression
    fit = ppmlib.fit("mixture", y, X=X, seed=8, sampler=ppmlib.Sampler(chains=2, draws=150, warmup=150),
                     prior={"K": 2, "prior_centre_mean": 1.0}, censoring=1.0)
    u = fit.censored_log_lik
    assert u.shape == (300, 80) and np.abs(u).max() <= 0.5
    assert 0 < censored_share(fit.log_lik, fit.weights, fit.censoring) < 1


@pytest.mark.stan
def test_a_censored_fit_started_at_the_unweighted_fit_finds_the_data():
    """Far from Stan's random start every record is censored and the log density is flat; started
    at the unweighted fit's posterior mean, the chains find the data (and agree)."""
    y = np.random.default_rng(3).normal(30.0, 1.0, 100)
    small = ppmlib.Sampler(chains=2, draws=200, warmup=200)
    unweighted = ppmlib.fit("normal", y, sampler=small, seed=1)
    started = ppmlib.fit("normal", y, sampler=small, seed=2, censoring=1.0, start=unweighted)
    assert abs(started.draws["beta"][:, 0].mean() - 30.0) < 1.0
    assert started.diagnostics["max_rhat"] < 1.05
    assert censored_share(started.log_lik, started.weights, started.censoring) < 0.9


def test_a_start_must_be_a_fit_or_a_point():
    from ppmlib.inference.posterior import start_point
    with pytest.raises(ValueError, match="start must be a Fit"):
        start_point([1.0])
    assert start_point({"beta": [1.0]}) == {"beta": [1.0]}      # a point (the pilot's estimate) as it is


def test_the_lineup_starts_a_censored_member_at_its_unweighted_fit(counts):
    from ppmlib.mechanism.lineup import Member, run as run_lineup
    seen = []

    class Recording(exact.ConjugateSampler):
        def sample(self, fam, data, seed, init=None):
            seen.append(init)
            return super().sample(fam, data, seed)

    done = run_lineup([Member("Unweighted", "unweighted"), Member("CM", "cm", settings={"epsilon": 1.0})], "poisson",
                      counts, sampler=Recording(chains=2, draws=200), seed=[1, 2], m=5, progress=False)
    assert seen[0] is None and set(seen[1]) == {"lambda"}
    assert seen[1]["lambda"] == pytest.approx(float(done["Unweighted"].fit.draws["lambda"].mean()), rel=1e-12)
