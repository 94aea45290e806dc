"""The strict guarantee, checked by quadrature on the conjugate Poisson-Gamma model.

For every removal neighbour of several databases (an ordinary one, an adversarial one with a single
extreme record, a tiny one), and for a neighbour with one record added, the largest abs log density
ratio over a grid of rates spanning 1e-3 .. 1e6 must stay within epsilon for CM, WCM and the strict
weighted scheme; the uncensored pseudo posterior at the same nominal epsilon (LW scaled so that
2 Delta = epsilon over its own draws) must exceed it.
"""
import numpy as np
import pytest

import ppmlib
from ppmlib.inference import exact
from ppmlib.mechanism import guarantee as G
from ppmlib.mechanism.censoring import box_weights
from ppmlib.mechanism.weights import lw_weights
from ppmlib.models.families import family

GRID = np.geomspace(1e-3, 1e6, 6001)
BOX = {"lambda": (50.0, 200.0)}
EPS = 1.0


def _databases():
    rng = np.random.default_rng(0)
    return {"ordinary": rng.poisson(100, 60),
            "adversarial": np.r_[rng.poisson(100, 59), 10**5],    # one extreme record
            "tiny": np.array([0, 3, 250])}


DATABASES = _databases()


def _lw_at(y, epsilon):
    """LW's weights scaled until 2 Delta over its own exact draws is epsilon (the local mechanism)."""
    base = ppmlib.fit("poisson", y, sampler=exact.ConjugateSampler(), seed=1)
    alpha = lw_weights(base.log_lik, c=1.0, g=0.0)
    for _ in range(30):
        draws = exact.sample(y, alpha, size=4000, seed=2)
        delta = (alpha * np.abs(exact.poisson_log_lik(draws, y).T)).max()
        alpha = np.clip(alpha * epsilon / (2 * delta), 0, 1)
    return alpha


def _weights(scheme, y):
    if scheme == "CM":
        return np.ones(y.size), 1.0
    if scheme == "WCM":           # LW's weights as given; the added record gets the largest weight, 1
        base = ppmlib.fit("poisson", y, sampler=exact.ConjugateSampler(), seed=1)
        return lw_weights(base.log_lik, c=1.0, g=0.0), 1.0
    fam = family("poisson")         # strict weighted: each record's own value and the public box
    return box_weights(fam, y, None, BOX, EPS), float(box_weights(fam, np.array([10**6]), None, BOX, EPS)[0])


@pytest.mark.parametrize("database", list(DATABASES))
@pytest.mark.parametrize("scheme", ["CM", "WCM", "strict weighted"])
def test_censored_mechanisms_stay_within_epsilon_for_every_neighbour(database, scheme):
    y = DATABASES[database]
    alpha, added_weight = _weights(scheme, y)
    check = G.strict_check(scheme, y, alpha, EPS, added=10**6, added_weight=added_weight, grid=GRID)
    assert check.removal.shape == (y.size,)
    assert check.holds(), (check.removal.max(), check.addition)
    # the bound is reached, not trivially met: some neighbour comes close to epsilon
    assert check.worst > 0.5 * EPS


@pytest.mark.parametrize("database", ["ordinary", "adversarial"])
def test_uncensored_lw_at_the_same_nominal_epsilon_exceeds_it(database):
    y = DATABASES[database]
    alpha = _lw_at(y, EPS)
    draws = exact.sample(y, alpha, size=4000, seed=2)
    assert 2 * (alpha * np.abs(exact.poisson_log_lik(draws, y).T)).max() == pytest.approx(EPS, rel=1e-3)
    local = G.strict_check("LW", y, alpha, EPS, censored=False, added=10**6, grid=GRID)
    assert not local.holds() and local.worst > 100 * EPS
    # ... while within the draws' range the local bound 2 Delta holds for the removal neighbours
    inside = G.strict_check("LW", y, alpha, EPS, censored=False, grid=np.linspace(draws.min(), draws.max(), 2001))
    assert inside.removal.max() <= EPS


def test_zero_centring_censors_every_record_and_leaves_the_prior():
    """r_i = 0: a Poisson log-probability near 100 is about -3.6, below -epsilon/2, so every term is
    clipped to a constant and the posterior is the prior: no neighbour can be told apart."""
    check = G.strict_check("CM r=0", DATABASES["ordinary"], np.ones(60), EPS, centring="zero", grid=GRID)
    assert check.share_censored > 0.999 and check.worst < 1e-9


def test_quadrature_ratio_matches_the_closed_form_for_the_uncensored_posterior():
    """Without censoring the ratio is known exactly (ppmlib.inference.exact.loo_log_ratio): the
    quadrature's normalising constants must reproduce it where the posterior has its mass."""
    y = DATABASES["ordinary"]
    alpha = np.full(y.size, 0.3)
    grid = np.linspace(60, 150, 20001)      # the posterior (sd about 2.4 near 100) lies well inside
    terms = alpha[:, None] * exact.poisson_log_lik(grid, y)
    ours = G.grid_log_ratios(terms, exact.gamma_logpdf(grid, 1.0, 0.001), grid)
    closed = np.abs(exact.loo_log_ratio(grid, y, alpha)).max(axis=1)
    np.testing.assert_allclose(ours, closed, rtol=1e-6)


def test_the_audit_of_cm_stays_below_its_epsilon():
    """The privacy audit's exact attack on CM: each target's exact loss over the posteriors' mass and the
    audit's lower bound stay within epsilon (the bound holds for every database)."""
    from ppmlib.studies.privacy_audit import audit_censored
    y = np.r_[DATABASES["ordinary"], 400]           # one tail record among the bulk
    table = audit_censored(y, EPS, trials=1000, seed=3)
    assert list(table["target"]) == ["largest", "smallest", "typical"]
    assert (table["exact loss"] <= EPS + 1e-9).all() and (table["eps_lb"] <= EPS).all()
    assert table["exact loss"].max() > 0.1 * EPS     # the typical record does move the posterior
