"""ppmlib.models.families: the families' Stan data and log-likelihoods, by hand and against scipy."""
import numpy as np
import pytest

from ppmlib.models.families import family


def test_stan_data_does_not_grow_with_n():
    y = np.random.default_rng(2).poisson(100, 100_000)
    w = np.random.default_rng(3).uniform(size=y.size)
    for model in ("poisson", "negbin"):
        fam = family(model)
        data = fam.stan_data(y, None, w, dict(fam.default_prior), emit_log_lik=False)
        biggest = max(np.size(v) for v in data.values())
        assert biggest <= np.unique(y).size, (model, {k: np.size(v) for k, v in data.items()})
    data = family("poisson").stan_data(y, None, w, {}, emit_log_lik=False)
    assert data["sum_wy"] == pytest.approx(float(np.sum(w * y)), rel=1e-12)
    assert data["sum_w"] == pytest.approx(float(np.sum(w)), rel=1e-12)


def test_negbin_log_lik_stays_accurate_in_the_poisson_limit():
    # the LW-weighted NB fit can visit phi ~ 1e17; the naive formula was off by thousands there
    from scipy import stats
    y = np.array([0, 1, 65, 100, 231])
    for phi in (6.7e17, 1e12):
        ours = family("negbin").log_lik({"mu": np.array([69.0]), "phi": np.array([phi])}, y, None)[0]
        np.testing.assert_allclose(ours, stats.poisson.logpmf(y, 69.0), rtol=1e-9)
    ours = family("negbin").log_lik({"mu": np.array([100.0]), "phi": np.array([5.0])}, y, None)[0]
    np.testing.assert_allclose(ours, stats.nbinom.logpmf(y, 5.0, 5.0 / 105.0), rtol=1e-12)


def test_one_prior_validator_serves_fit_exact_and_the_audit():
    """fit, synthesizer, the closed forms and the audit refuse the same bad prior with the same words."""
    import ppmlib
    from ppmlib.inference import exact
    from ppmlib.studies import privacy_audit as audit

    y, alpha = np.array([98, 103, 120]), np.array([1.0, 1.0, 0.5])
    assert family("poisson").check_prior({"prior_rate": 0.01}) == {"prior_shape": 1.0, "prior_rate": 0.01}
    assert family("negbin").check_prior() == family("negbin").default_prior
    not_positive = "prior setting 'prior_rate' must lie in \\(0, inf\\], got -1"
    routes = [lambda prior: ppmlib.fit("poisson", y, prior=prior),
              lambda prior: ppmlib.synthesizer("poisson", y, prior=prior),
              lambda prior: audit.draws_delta(y, alpha, prior=prior)]
    for route in routes:  # every check runs before any Stan program is touched
        with pytest.raises(ValueError, match=not_positive):
            route({"prior_rate": -1})
        with pytest.raises(ValueError, match=r"unknown prior setting\(s\) \['rate'\] for 'poisson'; known: "
                                             r"\['prior_rate', 'prior_shape'\]"):
            route({"rate": 1.0})
        with pytest.raises(TypeError, match="prior must be a dict, got list"):
            route([1.0])
    with pytest.raises(ValueError, match=not_positive):
        exact.pseudo_posterior(y, alpha, prior_rate=-1)
    with pytest.raises(TypeError, match="prior setting 'prior_shape' must be a real number, got str"):
        exact.sample(y, alpha, prior_shape="1")
    # only scales must be positive: a prior mean may be anything finite
    assert family("negbin").check_prior({"prior_log_mu_mean": -3})["prior_log_mu_mean"] == -3.0
    with pytest.raises(ValueError, match="prior setting 'prior_sigma_sd' must lie in"):
        family("normal").check_prior({"prior_sigma_sd": 0})
    with pytest.raises(ValueError, match="prior setting 'prior_log_mu_mean' must be finite, got nan"):
        family("negbin").check_prior({"prior_log_mu_mean": float("nan")})


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
def test_normal_log_lik_equals_the_textbook_arithmetic():
    """The normal log-likelihood (multiplications in place on the mean) against -0.5 z**2 - log(sigma)
    - log(2 pi) / 2 with z = (y - X beta) / sigma computed term by term: equal to 1e-12 of the terms'
    size, on ordinary and extreme data (values up to 1e12 and down to 1e-300, a design column in the
    millions, scales from 1e-150 to 1e6; records exactly on the mean), -inf in the same places;
    a subnormal or zero scale takes the dividing route, so a record on the mean stays finite."""
    rng = np.random.default_rng(11)
    normal = family("normal")
    S, n = 60, 400
    X = np.column_stack([np.ones(n), rng.normal(size=n) * 1e6, rng.integers(0, 2, n)])
    y = rng.normal(size=n) * 10.0 ** rng.uniform(-3, 12, n)
    y[:3] = [1e-300, 0.0, -1e12]
    beta = rng.normal(size=(S, 3)) * 10.0 ** rng.uniform(-6, 2, (S, 3))
    sigma = 10.0 ** rng.uniform(-150, 6, S)
    beta[-2] = beta[0]
    X[3:6, 1:] = 0.0
    y[3:6] = beta[0, 0]                             # records exactly on the mean of draws 0 and S - 2
    for scales in (sigma, np.r_[sigma[:-2], 5e-324, 0.0]):
        draws = {"beta": beta, "sigma": scales}
        mean = beta @ X.T
        with np.errstate(all="ignore"):
            z = (y - mean) / scales[:, None]
            half_square = 0.5 * z**2
            reference = -half_square - np.log(scales)[:, None] - 0.5 * np.log(2 * np.pi)
        found = normal.log_lik(draws, y, X)
        np.testing.assert_array_equal(np.isneginf(found), np.isneginf(reference))
        np.testing.assert_array_equal(np.isnan(found), np.isnan(reference))
        finite = np.isfinite(reference)
        size = (half_square + np.abs(np.log(scales))[:, None] + 1.0)[finite]
        assert np.all(np.abs(found[finite] - reference[finite]) <= 1e-12 * size)
        assert np.isfinite(found[[0, -2], 3:6]).all()   # on the mean: finite, whatever the scale
