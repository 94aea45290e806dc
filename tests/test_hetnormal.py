"""The heteroskedastic normal regression (``hetnormal``): its numpy log-likelihood against scipy,
its Stan program's log density against numpy at fixed parameters (both data forms: records and
cells), and its censoring switch."""
import numpy as np
import pytest
from scipy import stats

import ppmlib
from ppmlib.inference import backends
from ppmlib.mechanism.censoring import censored_share, censoring
from ppmlib.models.families import family

SMALL = ppmlib.Sampler(chains=2, draws=300, warmup=300)


@pytest.fixture(scope="module")
def cells():
    """Two categorical predictors (3 x 2 cells), each cell its own mean and spread."""
    rng = np.random.default_rng(21)
    n = 240
    a, b = rng.integers(0, 3, n), rng.integers(0, 2, n)
    X = np.column_stack([np.ones(n), a == 1, a == 2, b == 1, (a == 1) & (b == 1), (a == 2) & (b == 1)]).astype(float)
    mean = 6.0 + 0.3 * (a == 1) - 0.4 * (a == 2) + 0.2 * b
    sd = np.where(b == 1, 0.9, 0.3) * np.where(a == 2, 1.5, 1.0)
    return mean + sd * rng.normal(size=n), X


def _draws(K, S=7, seed=3):
    rng = np.random.default_rng(seed)
    return {"beta": rng.normal(0, 1, (S, K)) + np.r_[6.0, np.zeros(K - 1)], "gamma": rng.normal(0, 0.5, (S, K))}


def test_log_lik_is_scipys_normal_density(cells):
    y, X = cells
    d = _draws(X.shape[1])
    expected = stats.norm.logpdf(y[None, :], d["beta"] @ X.T, np.exp(d["gamma"] @ X.T))
    np.testing.assert_allclose(family("hetnormal").log_lik(d, y, X), expected, rtol=1e-12)


def test_uncensored_data_are_the_cells_sums(cells):
    y, X = cells
    fam = family("hetnormal")
    w = np.random.default_rng(1).uniform(0.2, 1.0, y.size)
    data = fam.stan_data(y, X, w, fam.check_prior(), False)
    assert data["n_records"] == 0 and data["cells"] == 6 and data["y"].size == 0
    assert data["cell_w"].sum() == pytest.approx(w.sum()) and data["cell_wyy"].sum() == pytest.approx(w @ y**2)
    records = fam.stan_data(y, X, w, fam.check_prior(), True)
    assert records["n_records"] == y.size and records["cells"] == 0


def _numpy_log_density(fam, y, X, w, point):
    K = X.shape[1]
    beta, gamma = np.asarray(point[:K]), np.asarray(point[K:])
    prior = fam.check_prior()
    log_prior = (-0.5 * np.sum((beta / prior["prior_beta_sd"]) ** 2)
                 - 0.5 * (gamma[0] / prior["prior_log_sigma_sd"]) ** 2
                 - 0.5 * np.sum((gamma[1:] / prior["prior_gamma_sd"]) ** 2))
    return log_prior + w @ fam.log_lik({"beta": beta[None], "gamma": gamma[None]}, y, X)[0]


def _log_densities(code, data, points):
    import stan
    models = [stan.build(code, data=backends._jsonable(d), random_seed=1) for d in data]
    return [[m.log_prob(p) for p in points] for m in models]


@pytest.mark.stan
def test_stan_log_density_is_numpys_in_both_forms(cells):
    """Stan's log density (its ~ statements drop their constants; the parameters are unconstrained,
    so no Jacobian) equals the numpy prior plus the weighted log-likelihood at random points."""
    pytest.importorskip("stan")
    y, X = cells
    fam = family("hetnormal")
    w = np.random.default_rng(5).uniform(0.2, 1.0, y.size)
    prior = fam.check_prior()
    forms = [fam.stan_data(y, X, w, prior, False), fam.stan_data(y, X, w, prior, True)]
    rng = np.random.default_rng(6)
    points = [list(np.r_[6.0 + rng.normal(0, 0.3), rng.normal(0, 0.3, 5), rng.normal(-0.5, 0.3, 6)]) for _ in range(4)]
    sums, records = backends._on_pystan_worker(_log_densities, backends.program_path("hetnormal").read_text(),
                                               forms, points)
    for point, a, b in zip(points, sums, records):
        expected = _numpy_log_density(fam, y, X, w, point)
        assert a == pytest.approx(expected, rel=1e-10)
        assert b == pytest.approx(expected, rel=1e-10)


@pytest.mark.stan
def test_the_censoring_switch_clips_every_term(cells):
    """Censored: every record's term lies in [-eps/2, eps/2], some are clipped, and Stan's lp__
    is the numpy log posterior of the clipped terms (plus one constant) at every draw."""
    y, X = cells
    fam = family("hetnormal")
    alpha = np.random.default_rng(9).uniform(0.3, 1.0, y.size)
    fit = ppmlib.fit("hetnormal", y, X=X, weights=alpha, seed=5, sampler=SMALL,
                     censoring=censoring(fam, y, X, alpha, 1.5))
    u = fit.censored_log_lik
    assert u.shape == (600, y.size) and np.abs(u).max() <= 0.75 + 1e-12
    assert 0 < censored_share(fit.log_lik, alpha, fit.censoring) < 1
    prior = fam.check_prior()
    d = fit.draws
    numpy_lp = (u.sum(axis=1) - 0.5 * (d["beta"] ** 2).sum(axis=1) / prior["prior_beta_sd"] ** 2
                - 0.5 * (d["gamma"][:, 0] / prior["prior_log_sigma_sd"]) ** 2
                - 0.5 * (d["gamma"][:, 1:] ** 2).sum(axis=1) / prior["prior_gamma_sd"] ** 2)
    gap = fit.sampler["lp__"] - numpy_lp
    assert np.ptp(gap) < 1e-6 * max(1.0, np.abs(gap).max()), np.ptp(gap)


@pytest.mark.stan
def test_the_fit_recovers_each_cells_spread(cells):
    """Known answer: the posterior's scale of each cell is within 20% of the cell's sample sd."""
    y, X = cells
    fit = ppmlib.fit("hetnormal", y, X=X, seed=2, sampler=SMALL)
    rows, index = np.unique(X, axis=0, return_inverse=True)
    fitted = family("hetnormal").scale(fit.draws, rows).mean(axis=0)
    observed = np.array([y[index.reshape(-1) == c].std() for c in range(rows.shape[0])])
    np.testing.assert_allclose(fitted, observed, rtol=0.2)
