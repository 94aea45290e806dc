"""The normal regression fitted from its alpha-weighted sufficient statistics is today's per-record
program: the same log density (to rounding), the same posterior (to Monte Carlo error)."""
import numpy as np
import pytest

from ppmlib.inference import backends
from ppmlib.models.families import family, normal_sufficient_statistics


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(11)
    n, K = 400, 4
    X = np.column_stack([np.ones(n), rng.normal(size=(n, K - 1))])
    y = 6.0 + X[:, 1:] @ np.array([0.3, -0.2, 0.1]) + rng.normal(0, 0.5, n)
    weights = rng.uniform(0.1, 1.0, n)
    weights[:7] = 0.0
    return y, X, weights


def test_sums_equal_the_records_sums_in_any_blocks(regression):
    y, X, w = regression
    for block in (1, 37, 10**6):
        s = normal_sufficient_statistics(y, X, w, block=block)
        np.testing.assert_allclose(s["XWX"], (X * w[:, None]).T @ X, rtol=1e-12)
        np.testing.assert_allclose(s["XWy"], X.T @ (w * y), rtol=1e-12)
        assert s["yWy"] == pytest.approx(np.sum(w * y**2), rel=1e-12)
        assert s["sum_w"] == pytest.approx(w.sum(), rel=1e-12)


def test_sums_add_over_partitions(regression):
    """What a cluster does: the sums of two halves add up to the sums of the whole."""
    y, X, w = regression
    a = normal_sufficient_statistics(y[:150], X[:150], w[:150])
    b = normal_sufficient_statistics(y[150:], X[150:], w[150:])
    whole = normal_sufficient_statistics(y, X, w)
    for key in whole:
        np.testing.assert_allclose(np.asarray(a[key]) + np.asarray(b[key]), whole[key], rtol=1e-12)


def _data(regression, sufficient: bool) -> dict:
    y, X, w = regression
    fam = family("normal")
    return fam.stan_data(y, X, w, fam.check_prior(None), False, sufficient=sufficient)


def test_stan_data_sends_no_record_in_the_sufficient_form(regression):
    data = _data(regression, True)
    assert data["sufficient"] == 1 and data["y"].size == 0 and data["X"].shape == (0, 4)
    assert data["weights"].size == 0 and data["XWX"].shape == (4, 4)
    records = _data(regression, False)
    assert records["sufficient"] == 0 and records["y"].size == 400 and records["XWX"].shape == (0, 0)


def _log_densities(code: str, data: list, points: list) -> list:
    """Stan's log density and gradient of each data form at each point (on ppmlib's PyStan thread,
    where httpstan's event loop lives)."""
    import stan
    models = [stan.build(code, data=backends._jsonable(d), random_seed=1) for d in data]
    return [[(m.log_prob(p), m.grad_log_prob(p)) for p in points] for m in models]


def test_log_density_is_the_same_in_both_forms(regression):
    """Stan's own log density of the two data forms at random parameter values: equal to rounding."""
    pytest.importorskip("stan")
    code = backends.program_path("normal").read_text()
    points = [list(p) for p in np.random.default_rng(2).normal(0, 1.5, size=(5, 5))]  # beta (4), log sigma
    records, sums = backends._on_pystan_worker(_log_densities, code,
                                               [_data(regression, False), _data(regression, True)], points)
    for (a, grad_a), (b, grad_b) in zip(records, sums):
        assert b == pytest.approx(a, rel=1e-11, abs=1e-9)
        assert grad_b == pytest.approx(grad_a, rel=1e-9, abs=1e-9)


def test_posterior_is_the_same_in_both_forms(regression):
    """Same seed, both forms: the draws are not bitwise equal (the rounding of the two sums differs
    and NUTS's trajectories amplify it over warmup), but every posterior mean agrees within 4 Monte
    Carlo standard errors and every sd within 10%."""
    draws = {}
    for sufficient in (False, True):
        out = backends.sample("normal", _data(regression, sufficient), chains=4, draws=500, warmup=500, seed=3)
        draws[sufficient] = np.column_stack([out.params["beta"], out.params["sigma"]])
    a, b = draws[False], draws[True]
    mcse = np.sqrt(a.var(axis=0) / 500 + b.var(axis=0) / 500)   # conservative: ESS >= 500 of 2000
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * mcse)
    np.testing.assert_allclose(b.std(axis=0), a.std(axis=0), rtol=0.1)
