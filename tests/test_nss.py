"""Noisy sufficient statistics (ppmlib.mechanism.nss): the noise's scale, the sensitivity, the
posterior against the exact one, the ledger, determinism and the refusals."""
import math

import numpy as np
import pandas as pd
import pytest

from ppmlib.errors import BadArgument, DataRefused
from ppmlib.inference.posterior import Sampler
from ppmlib.mechanism import nss
from ppmlib.mechanism.ledger import cdp_epsilon


@pytest.mark.parametrize("rho, share", [(0.02, 0.5), (0.3, 0.7), (5.0, 0.2)])
def test_noise_scale_is_sensitivity_over_sqrt_2rho_and_opendps_map_agrees(rho, share):
    sigma_S, sigma_Q = nss.noise_scales(rho, share)
    assert sigma_S == pytest.approx(1.0 / math.sqrt(2 * share * rho), rel=1e-12)
    assert sigma_Q == pytest.approx(0.5 / math.sqrt(2 * (1 - share) * rho), rel=1e-12)
    pytest.importorskip("opendp.prelude")
    rho_S = nss.opendp_gaussian(sigma_S).map(nss.SENSITIVITY_S)
    rho_Q = nss.opendp_gaussian(sigma_Q).map(nss.SENSITIVITY_Q)
    assert rho_S == pytest.approx(share * rho, rel=1e-9)
    assert rho_S + rho_Q == pytest.approx(rho, rel=1e-9)


def _exact(log_y, keys, bounds):
    return nss.release_statistics(log_y, keys, bounds=bounds, rho=math.inf)


def test_one_record_moves_the_sums_by_at_most_the_sensitivity():
    rng = np.random.default_rng(3)
    log_y = np.concatenate([rng.normal(5, 2, 60), [-50.0, 50.0, 5.0]])   # clipped extremes and the centre
    keys = pd.DataFrame({"a": rng.integers(0, 3, 63).astype(str), "b": rng.integers(0, 2, 63).astype(str)})
    bounds = (0.0, 10.0)
    full = _exact(log_y, keys, bounds)
    worst_S = worst_Q = 0.0
    for j in range(len(log_y)):
        part = _exact(np.delete(log_y, j), keys.drop(index=j).reset_index(drop=True), bounds)
        # the same cells (every cell keeps a record); compare cell by cell
        assert (full.cells.levels == part.cells.levels).all()
        worst_S = max(worst_S, np.linalg.norm(full.S - part.S))
        worst_Q = max(worst_Q, np.linalg.norm((full.Q - full.cells.counts / 2) - (part.Q - part.cells.counts / 2)))
    assert worst_S == pytest.approx(nss.SENSITIVITY_S) and worst_Q == pytest.approx(nss.SENSITIVITY_Q)


def test_the_drawn_noise_has_the_stated_scale_and_is_seeded():
    log_y = np.full(4000, 5.0)
    keys = pd.DataFrame({"a": np.arange(4000).astype(str)})                  # 4,000 cells of one record
    a = nss.release_statistics(log_y, keys, bounds=(0, 10), rho=0.1, share=0.4, seed=7)
    b = nss.release_statistics(log_y, keys, bounds=(0, 10), rho=0.1, share=0.4, seed=7)
    assert np.array_equal(a.S, b.S) and np.array_equal(a.Q, b.Q)
    assert np.std(a.S) == pytest.approx(a.sigma_S, rel=0.05)                 # z = 0 in every cell
    assert np.std(a.Q) == pytest.approx(a.sigma_Q, rel=0.05)
    assert np.mean(a.Q) == pytest.approx(0.0, abs=4 * a.sigma_Q / math.sqrt(4000))   # sum z^2 = 0 recovered


@pytest.mark.parametrize("share", [0.0, 1.0, 1.5, -0.2])
def test_a_share_outside_0_1_is_refused_before_any_fit(share, monkeypatch):
    from ppmlib.inference import backends
    monkeypatch.setattr(backends, "sample", lambda *a, **k: pytest.fail("a fit was started"))
    with pytest.raises(BadArgument, match="share"):
        nss.synthesize(np.full(50, 5.0), None, bounds=(0, 10), total_epsilon=1.0, share=share)


def test_bounds_that_exclude_most_of_the_data_are_refused_before_any_fit(monkeypatch):
    from ppmlib.inference import backends
    monkeypatch.setattr(backends, "sample", lambda *a, **k: pytest.fail("a fit was started"))
    log_y = np.linspace(4, 8, 100)
    with pytest.raises(DataRefused, match=r"bounds \(6.5, 20\) exclude more than 50% of the records' log values: "
                       r"choose") as refused:
        nss.synthesize(log_y, None, bounds=(6.5, 20), total_epsilon=1.0)
    assert "62%" not in str(refused.value) and "63%" not in str(refused.value)     # the data's share is never said
    with pytest.raises(BadArgument, match="low < high"):
        nss.synthesize(log_y, None, bounds=(8, 4), total_epsilon=1.0)
    nss.release_statistics(log_y, None, bounds=(5.9, 20), rho=1.0)          # 52% inside: accepted


def test_the_release_costs_rho_and_converts_to_the_total():
    from ppmlib.mechanism.ledger import rho_for_total
    for E in (1.0, 2.0, 5.0, 10.0):
        rho = rho_for_total(E, 1e-6)
        assert cdp_epsilon(rho, 1e-6) == pytest.approx(E, abs=1e-9)
        assert cdp_epsilon(rho * (1 + 1e-6), 1e-6) > E                          # the largest such rho
        # the tight conversion allows more rho than the simple bound rho + 2 sqrt(rho log(1/delta)) = E
        assert rho > (math.sqrt(E + math.log(1e6)) - math.sqrt(math.log(1e6))) ** 2


def _exact_posterior(z, grid=400):
    """Posterior means and sds of (mu, sigma) for z ~ N(mu, sigma), mu ~ N(0, 1), sigma ~ N+(0, 0.5), by quadrature."""
    n, zbar, ss = len(z), z.mean(), ((z - z.mean()) ** 2).sum()
    mu = np.linspace(zbar - 0.1, zbar + 0.1, grid)[:, None]
    sd = np.linspace(0.5, 1.6, grid)[None, :] * z.std()
    logp = (-n * np.log(sd) - (ss + n * (zbar - mu) ** 2) / (2 * sd ** 2) - mu ** 2 / 2 - sd ** 2 / (2 * 0.25))
    w = np.exp(logp - logp.max())
    w /= w.sum()
    m_mu, m_sd = (w * mu).sum(), (w * sd).sum()
    return m_mu, math.sqrt((w * (mu - m_mu) ** 2).sum()), m_sd, math.sqrt((w * (sd - m_sd) ** 2).sum())


@pytest.mark.stan
def test_without_noise_the_posterior_is_the_exact_one():
    z = np.random.default_rng(11).normal(0.2, 0.15, 800)
    stats = _exact(5.0 + 2.0 * z, None, (3.0, 7.0))                         # z = (log y - 5) / 2, none clipped
    draws = nss.posterior(stats, sampler=Sampler(chains=4, draws=1000, warmup=500), seed=3)
    mu, sigma = draws.params["mu"][:, 0], draws.params["sigma"]
    m_mu, s_mu, m_sd, s_sd = _exact_posterior(z)
    assert abs(mu.mean() - m_mu) < 0.1 * s_mu and mu.std() == pytest.approx(s_mu, rel=0.1)
    assert abs(sigma.mean() - m_sd) < 0.1 * s_sd and sigma.std() == pytest.approx(s_sd, rel=0.1)


@pytest.mark.stan
def test_a_release_is_seeded_and_its_cells_follow_the_data():
    rng = np.random.default_rng(5)
    keys = pd.DataFrame({"a": rng.integers(0, 3, 3000).astype(str), "b": rng.integers(0, 2, 3000).astype(str)})
    truth = 6.0 + 0.4 * keys["a"].astype(int).to_numpy() - 0.3 * keys["b"].astype(int).to_numpy()
    log_y = truth + rng.normal(0, 0.4, 3000)
    run = dict(bounds=(3.0, 10.0), total_epsilon=5.0, m=3, sampler=Sampler(chains=2, draws=300, warmup=300))
    a = nss.synthesize(log_y, keys, seed=4, **run)
    b = nss.synthesize(log_y, keys, seed=4, **run)
    assert np.array_equal(a.synthetic, b.synthetic)
    assert not np.array_equal(a.synthetic, nss.synthesize(log_y, keys, seed=5, **run).synthetic)
    assert a.total[0] == pytest.approx(5.0, abs=1e-9) and a.synthetic.shape == (3, 3000)
    cell_means = pd.DataFrame({"c": a.statistics.cells.index, "s": a.synthetic.mean(0), "t": truth}).groupby("c").mean()
    assert np.abs(cell_means["s"] - cell_means["t"]).max() < 0.1
    assert a.synthetic.std(axis=1).mean() == pytest.approx(log_y.std(), rel=0.1)
