"""The censored release's pilot (ppmlib.mechanism.pilot): its noise scale against OpenDP's map, its
estimate against the exact one, its share refused outside (0, 1), its cost in the ledger, the window
it centres, and the strict guarantee of pilot + censored draw checked by quadrature."""
import math

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

from ppmlib.errors import BadArgument
from ppmlib.mechanism import guarantee as G
from ppmlib.mechanism.ledger import cdp_epsilon, ledger
from ppmlib.mechanism.nss import opendp_gaussian
from ppmlib.mechanism.pilot import check_share, count_pilot, pilot, split_budget
from ppmlib.models.censoring import censored_share, censored_terms, censoring
from ppmlib.models.families import family


def _cells(sizes=(1500, 1490, 10), means=(5.0, 6.0, 7.0), sigma=0.3, seed=0):
    """y on three public cells: X = intercept + two dummies."""
    rng = np.random.default_rng(seed)
    cell = np.repeat(np.arange(3), sizes)
    X = np.column_stack([np.ones(cell.size), cell == 1, cell == 2]).astype(float)
    return np.asarray(means)[cell] + rng.normal(0, sigma, cell.size), X


def test_each_block_of_the_pilot_costs_half_its_rho_by_opendp_s_map():
    y, X = _cells()
    for rho in (0.01, 0.3, 2.0):
        found = pilot(y, X, bounds=(3.0, 10.0), rho=rho, seed=1)
        # two Gaussian blocks of sensitivity 1 (one record moves one cell's sum, or the spread sum, by at most 1)
        assert opendp_gaussian(found.noise_sd).map(1.0) == pytest.approx(rho / 2, rel=1e-9)


def test_without_noise_the_pilot_is_the_cell_means_fit_and_the_normal_scale():
    y, X = _cells()
    found = pilot(y, X, bounds=(3.0, 10.0), rho=1e12, seed=1)
    exact = np.linalg.lstsq(X, y, rcond=None)[0]       # saturated: the cell means
    np.testing.assert_allclose(found.theta["beta"][0], exact, atol=1e-4)
    assert found.theta["sigma"][0] == pytest.approx(0.3, rel=0.05)  # mean absolute deviation * sqrt(pi / 2)
    assert (found.own, found.cells) == (3, 3)


def test_cells_without_the_records_for_it_take_the_main_effects_fit():
    """Two keys a, b (2 x 2 cells of about 1,000 records, additive means). At noise sd 55 no cell's own
    mean is precise enough (55 / 1000 > 0.05 on the z scale): every cell takes the main-effects fit of
    the cells' noisy sums, so theta_hat keeps the keys' effects (a pooled mean would lose them)."""
    rng = np.random.default_rng(0)
    a = np.r_[np.zeros(2000), np.ones(2000)]
    b = np.r_[np.zeros(1000), np.ones(1000), np.zeros(1000), np.ones(1000)]
    X = np.column_stack([np.ones(a.size), a, b])
    y = 5.0 + 1.0 * a + 0.8 * b + rng.normal(0, 0.3, a.size)
    found = pilot(y, X, bounds=(3.0, 10.0), rho=1 / 55 ** 2, seed=1)
    assert (found.own, found.cells) == (0, 4)
    np.testing.assert_allclose(found.theta["beta"][0], [5.0, 1.0, 0.8], atol=0.4)


def test_the_pilot_s_noise_is_seeded_and_shrinks_with_rho():
    y, X = _cells()
    a, b = (pilot(y, X, bounds=(3.0, 10.0), rho=0.05, seed=3) for _ in range(2))
    np.testing.assert_array_equal(a.theta["beta"], b.theta["beta"])
    exact = np.linalg.lstsq(X, y, rcond=None)[0][:2]
    errors = [np.abs(pilot(y, X, bounds=(3.0, 10.0), rho=r, seed=s).theta["beta"][0][:2] - exact).max()
              for r in (0.01, 100.0) for s in range(5)]
    assert max(errors[5:]) < 0.1 * min(max(errors[:5]), 1.0)


@pytest.mark.parametrize("share", [0.0, 1.0, 1.5, -0.2])
def test_a_share_outside_0_1_is_refused_naming_it(share):
    with pytest.raises(BadArgument, match="pilot_share"):
        check_share(share)
    with pytest.raises(BadArgument, match="pilot_share"):
        split_budget(1.0, 1e-6, 5, share)


def test_bounds_that_exclude_most_of_the_data_are_refused():
    y, X = _cells()
    with pytest.raises(Exception, match="exclude"):
        pilot(y, X, bounds=(8.0, 10.0), rho=0.1, seed=1)


@pytest.mark.parametrize("total", [0.5, 1.0, 5.0])
def test_the_split_spends_exactly_the_total_and_the_ledger_adds_the_pilot(total):
    eps, rho0 = split_budget(total, 1e-6, 5, 0.2)
    book = ledger(eps, 5, delta=1e-6, pilot_rho=rho0, pilot="pilot")
    assert book.rho == pytest.approx(rho0 + 5 * eps ** 2 / 8, rel=1e-12)
    assert rho0 == pytest.approx(0.2 * book.rho, rel=1e-9)
    assert cdp_epsilon(book.rho, 1e-6) == pytest.approx(total, rel=1e-9)
    assert book.total == pytest.approx((total, 1e-6), rel=1e-9)     # no pure total with Gaussian noise
    assert math.isinf(book.basic_total)
    text = "\n".join(book.statement())
    assert "share 0.2" in text and "rho_0" in text and "basic composition" not in text


def test_the_window_is_centred_on_the_pilot_estimate():
    y, X = _cells()
    fam = family("normal")
    found = pilot(y, X, bounds=(3.0, 10.0), rho=0.5, seed=2)
    cens = censoring(fam, y, X, np.ones(y.size), 0.4, centring="pilot", at=found.theta)
    at_pilot = fam.log_lik(found.theta, y, X)
    assert np.all(censored_terms(at_pilot, np.ones(y.size), cens) == 0)
    assert censored_share(at_pilot, np.ones(y.size), cens) == 0
    other = {"beta": found.theta["beta"] + 0.05, "sigma": found.theta["sigma"] * 1.3}
    expected = np.clip(fam.log_lik(other, y, X) - at_pilot, -0.2, 0.2)
    np.testing.assert_allclose(censored_terms(fam.log_lik(other, y, X), np.ones(y.size), cens), expected)
    with pytest.raises(BadArgument, match="at="):
        censoring(fam, y, X, np.ones(y.size), 0.4, centring="pilot")


def _log_post(terms, grid):
    """Normalised log density on the grid (trapezoid), rows of terms summed with a flat prior."""
    total = terms.sum(axis=0)
    dx = np.diff(grid)
    log_z = logsumexp(np.logaddexp(total[1:], total[:-1]) + np.log(dx / 2))
    return total - log_z


def test_pilot_and_censored_draw_stay_within_their_renyi_budget_by_quadrature():
    """Normal mean, sigma 1 public, one cell. The pilot releases S = sum z + N(0, s^2) (s from the
    library); the draw is CM centred on the pilot's mean. For removal neighbours (the extreme record
    at the bound among them): given every pilot output the draw's log ratio stays within epsilon, and
    the joint (pilot, draw) Renyi divergence of order a stays within a (rho_0 / 2 + epsilon^2 / 8),
    rho_0 / 2 being the location block (the scale block is not used: sigma is public). As in the
    library, n is public: the pilot's estimate is S / n for both neighbours."""
    rng = np.random.default_rng(5)
    y = np.r_[rng.normal(5.0, 1.0, 30), 10.0]
    low, high, eps, rho0 = 0.0, 10.0, 0.5, 0.08
    s = pilot(y, None, bounds=(low, high), rho=rho0, seed=0).noise_sd
    z = np.clip((y - 5.0) / 5.0, -1, 1)
    mu = np.linspace(-5.0, 15.0, 2001)
    S_grid = np.linspace(z.sum() - 9 * s, z.sum() + 9 * s, 361)
    cond = {j: [] for j in (0, 7, y.size - 1)}
    for S in S_grid:
        for j in cond:
            keep = np.arange(y.size) != j
            # the pilot's mean from the released S and the public n (the counts are released with the keys,
            # outside the guarantee), so both neighbours centre on the same value
            centre = 5.0 + 5.0 * S / y.size
            def terms(values, centre):
                return np.clip(norm.logpdf(values[:, None], mu[None, :], 1.0) - norm.logpdf(values, centre, 1.0)[:, None],
                               -eps / 2, eps / 2)
            p, q = _log_post(terms(y, centre), mu), _log_post(terms(y[keep], centre), mu)
            assert np.abs(p - q).max() <= eps + 1e-9          # epsilon-DP given the pilot's output
            cond[j].append((p, q))
    for j, pairs in cond.items():
        log_p_S = norm.logpdf(S_grid, z.sum(), s)
        log_q_S = norm.logpdf(S_grid, z.sum() - z[j], s)
        for a in (2.0, 8.0, 32.0):
            inner = np.array([logsumexp(a * p + (1 - a) * q + np.log(np.gradient(mu))) for p, q in pairs])
            joint = logsumexp(a * log_p_S + (1 - a) * log_q_S + inner + np.log(np.gradient(S_grid))) / (a - 1)
            assert joint <= a * (rho0 / 2 + eps ** 2 / 8) + 1e-6, (j, a, joint)


def test_the_command_s_cm_keeps_the_fixed_centre_and_refuses_public_bounds_naming_them():
    """The pilot-centred window stays in the library: the command's CM refuses log_bounds (and has no pilot)."""
    from ppmlib.release.plan import CM_WINDOW, privacy_plan
    plan = privacy_plan("strict", total_epsilon=2.0, m=5, strict_scheme="cm")
    assert not hasattr(plan, "pilot") and plan.members[1].settings.get("pilot") is None
    with pytest.raises(BadArgument, match="log_bounds=") as refused:
        privacy_plan("strict", total_epsilon=2.0, m=5, strict_scheme="cm", log_bounds="0.5,5")
    assert CM_WINDOW in str(refused.value)
    with pytest.raises(TypeError):
        privacy_plan("strict", total_epsilon=2.0, m=5, strict_scheme="cm", pilot_share=0.3)


def test_the_command_refuses_log_bounds_with_cm_before_reading_the_data_and_writes_nothing(tmp_path, capsys,
                                                                                          monkeypatch):
    from ppmlib.inference import backends
    from ppmlib.release import command
    monkeypatch.setattr(backends, "sample", lambda *a, **k: pytest.fail("a fit was started"))
    data = tmp_path / "d.csv"
    data.write_text("w,g\n" + "\n".join(f"{10 + i % 7},{'ab'[i % 2]}" for i in range(40)))
    out = tmp_path / "out"
    assert command.main([str(data), "--column", "w", "--predictors", "g", "--strict-scheme", "cm", "--log-bounds",
                         "1,4", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--log-bounds" in err and "fixed public centre" in err, err
    assert not out.exists() and not list(tmp_path.glob("out*"))
    with pytest.raises(SystemExit):                                   # no such flag any more
        command.main([str(data), "--column", "w", "--predictors", "g", "--strict-scheme", "cm", "--pilot-share",
                      "0.2", "--out", str(out)])
    assert "--pilot-share" in capsys.readouterr().err and not out.exists()


def test_the_count_pilot_s_noise_is_opendp_s_gaussian_at_sensitivity_bound():
    """One record moves the clipped sum by at most the bound: OpenDP's map at that sensitivity is rho."""
    y = np.random.default_rng(0).poisson(100, 500)
    for rho in (0.001, 0.05, 3.0):
        found = count_pilot(y, bound=200.0, rho=rho, seed=1)
        assert opendp_gaussian(found.noise_sd).map(200.0) == pytest.approx(rho, rel=1e-9)


def test_without_noise_the_count_pilot_is_the_clipped_mean_and_centres_the_window():
    y = np.r_[np.random.default_rng(1).poisson(100, 999), 5000]          # one record far above the bound
    found = count_pilot(y, bound=200.0, rho=1e12, seed=1)
    assert found.theta["lambda"][0] == pytest.approx(np.minimum(y, 200).mean(), abs=1e-3)
    assert found.theta["lambda"][0] < y.mean() - 4                        # the outlier is clipped, not averaged
    fam = family("poisson")
    cens = censoring(fam, y, None, np.ones(y.size), 0.2, centring="pilot", at=found.theta)
    at = fam.log_lik({"lambda": found.theta["lambda"]}, y, None)
    assert np.all(censored_terms(at, np.ones(y.size), cens) == 0)         # nothing censored at lambda_hat
    assert censored_share(fam.log_lik({"lambda": np.array([130.0])}, y, None), np.ones(y.size), cens) > 0.5
    assert found.start() == {"lambda": pytest.approx(found.theta["lambda"][0])}
    assert "noisy mean of the counts" in found.describe()

