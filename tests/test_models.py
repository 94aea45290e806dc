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
