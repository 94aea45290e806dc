"""The exact leave-one-out check of the DP chapter, against brute force on the closed forms."""
import numpy as np
import pytest

from ppmlib.inference import exact

from ppmlib.mechanism import guarantee
from ppmlib.models.families import family
from ppmlib.inference.posterior import Fit

PRIOR = dict(prior_shape=1.0, prior_rate=0.001)


def exact_fit(y, weights, seed=0, S=2000):
    """A Fit whose draws come straight from the conjugate Gamma pseudo posterior (no MCMC)."""
    shape, rate = exact.pseudo_posterior(y, weights, **PRIOR)
    lam = np.random.default_rng(seed).gamma(shape, 1 / rate, size=S)
    return Fit(family("poisson"), np.asarray(y), None, np.asarray(weights, float), {"lambda": lam}, {}, 1, "exact", seed)


@pytest.fixture(scope="module")
def data():
    y = np.random.default_rng(4).poisson(100, size=60)
    w = np.clip(1 - np.abs(y - 100) / 40, 0, 1)
    return y, w


def test_ratios_equal_brute_force_differences_of_gamma_log_densities(data):
    y, w = data
    check = guarantee.loo_guarantee_check("LW", exact_fit(y, w), w, grid_points=400, **PRIOR)
    for i in (0, int(np.argmax(y)), int(np.argmin(y)), check.worst):
        keep = np.arange(y.size) != i
        brute = exact.log_density(check.grid, y, w, **PRIOR) - exact.log_density(check.grid, y[keep], w[keep], **PRIOR)
        assert check.ratio[i] == pytest.approx(np.abs(brute).max(), rel=1e-7, abs=1e-9)
    f = np.abs(y * np.log(exact_fit(y, w).draws["lambda"][:, None]) - exact_fit(y, w).draws["lambda"][:, None]
               - np.array([np.sum(np.log(np.arange(1, k + 1))) for k in y]))
    assert check.delta == pytest.approx((f * w).max(), rel=1e-9)
    assert check.holds() and check.holds_by_record()
    assert check.central[0] < check.grid[0] < check.grid[-1] < check.central[1]


def test_a_made_up_delta_that_is_too_small_is_caught(data):
    y, w = data
    check = guarantee.loo_guarantee_check("LW", exact_fit(y, w), w, grid_points=200, **PRIOR)
    broken = guarantee.LooCheck(check.name, check.weights, check.ratio.max() / 2.5, check.record_bounds / 100,
                                check.grid, check.ratio, check.central, check.ratio_central)
    assert not broken.holds() and not broken.holds_by_record()


def test_tail_exceedance_finds_where_the_bound_breaks(data):
    y, w = data
    checks = {"Unweighted": guarantee.loo_guarantee_check("Unweighted", exact_fit(y, np.ones(y.size)), grid_points=200, **PRIOR)}
    wide = np.linspace(0.5 * y.mean(), 2 * y.mean(), 3000)
    table, curves = guarantee.tail_exceedance(checks, y, wide, **PRIOR)
    lower, upper = table.loc["Unweighted", ["exceeded below lambda", "exceeded above lambda"]]
    bound = 2 * checks["Unweighted"].delta
    inside = (wide > lower) & (wide < upper)
    assert (curves["Unweighted"][inside] <= bound).all()
    assert curves["Unweighted"][wide == lower][0] > bound and curves["Unweighted"][wide == upper][0] > bound
    assert table.loc["Unweighted", "log10 P(lambda in exceedance region) <="] < -5


def test_only_the_poisson_model_has_an_exact_check(data):
    y, w = data
    fit = exact_fit(y, w)
    other = Fit(family("negbin"), fit.y, None, fit.weights, {"mu": fit.draws["lambda"], "phi": fit.draws["lambda"]},
                {}, 1, "exact", 0)
    with pytest.raises(ValueError, match="conjugate Poisson model, got 'negbin'"):
        guarantee.loo_guarantee_check("NB", other, w)
