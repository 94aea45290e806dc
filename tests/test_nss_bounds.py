"""NSS over bins without public bounds: the bins' range chosen from the data at a declared share of
the budget (exponential-mechanism quartiles on a public grid), its cost composed with the counts'
by the ledger, and the refusals before any noise. No Stan."""
import numpy as np
import pandas as pd
import pytest

from ppmlib.errors import BadArgument
from ppmlib.mechanism import nss
from ppmlib.mechanism.ledger import cdp_epsilon, of_release, rho_for_total


def _data(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    keys = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n)})
    return rng.normal(6.0, 0.6, n) + 0.3 * (keys["a"] == "y").to_numpy(), keys


def test_the_quantile_is_drawn_with_the_exponential_mechanisms_probabilities():
    # oracle: P(c) proportional to exp(epsilon u(c) / 2), u(c) = -|#{x < c} - q n|
    x = np.array([0.1, 0.4, 0.45, 0.7, 0.9, 1.3, 2.0])
    grid, q, epsilon = np.array([0.0, 0.5, 1.0, 1.5, 2.5]), 0.5, 1.2
    u = -np.abs(np.searchsorted(np.sort(x), grid) - q * len(x))
    expected = np.exp(epsilon * u / 2) / np.exp(epsilon * u / 2).sum()
    rng = np.random.default_rng(3)
    draws = np.array([nss.private_quantile(x, q, epsilon, grid, rng) for _ in range(20000)])
    found = np.array([(draws == c).mean() for c in grid])
    assert np.abs(found - expected).max() < 0.012


def test_the_bounds_reach_twice_the_quartiles_distance_beyond_them_at_a_large_epsilon():
    log_y, _ = _data()
    chosen = nss.private_bounds(log_y, epsilon=50.0, width=0.25, seed=2)
    q1, q3 = (np.round(np.quantile(log_y, q) * 4) / 4 for q in (0.25, 0.75))   # on the grid's steps
    spread = q3 - q1
    assert chosen.bounds == pytest.approx((q1 - 2 * spread, q3 + 2 * spread), abs=0.25 + 1e-9)
    assert chosen.epsilon == 50.0 and (np.array(chosen.bounds) / 0.25 % 1 == 0).all()


@pytest.mark.parametrize("share", [0.1, 0.3])
def test_laplace_counts_get_the_rest_and_the_ledger_composes_to_the_total(share):
    log_y, keys = _data()
    done = nss.synthesize_bins(log_y, keys, total_epsilon=2.0, m=4, bounds_share=share, seed=1)
    counts_epsilon = (1 - share) * 2.0
    assert done.statistics.scale == pytest.approx(nss.SENSITIVITY_COUNTS / counts_epsilon, rel=1e-12)
    assert done.bounds.epsilon == pytest.approx(share * 2.0) and done.bounds.share == share
    book = of_release(done)
    assert book.total == (pytest.approx(2.0, abs=1e-12), 0.0)
    assert book.to_dict()["bounds_share"] == share and book.to_dict()["release_epsilon"] == pytest.approx(2.0)
    assert f"the counts' {counts_epsilon:.4g} plus the bounds' {share * 2.0:.4g} (share {share:g})" in book.statement()[-1]
    assert f"({done.bounds.bounds[0]:g}, {done.bounds.bounds[1]:g})" in book.statement()[1]
    low, high = done.bounds.bounds
    assert np.array_equal(done.statistics.edges[[0, -1]], [low, high])
    assert low < np.quantile(log_y, 0.01) and high > np.quantile(log_y, 0.99)


def test_gaussian_counts_get_the_rest_of_rho_and_the_total_is_the_flags():
    log_y, keys = _data()
    rho = rho_for_total(2.0, 1e-6)
    done = nss.synthesize_bins(log_y, keys, total_epsilon=2.0, m=4, bounds_share=0.2, mechanism="gaussian", seed=1)
    assert done.rho == pytest.approx(0.8 * rho) and done.statistics.scale == pytest.approx(nss.counts_scale(0.8 * rho))
    assert done.bounds.epsilon ** 2 / 2 == pytest.approx(0.2 * rho)
    assert done.total[0] == pytest.approx(cdp_epsilon(rho, 1e-6)) == pytest.approx(2.0, abs=1e-9)


def test_public_bounds_spend_no_share_and_the_default_spends_the_declared_one():
    log_y, keys = _data()
    public = nss.synthesize_bins(log_y, keys, bounds=(3.0, 9.0), total_epsilon=2.0, seed=1)
    assert public.bounds is None and public.statistics.scale == pytest.approx(0.5)
    assert of_release(public).to_dict()["bounds_share"] is None
    default = nss.synthesize_bins(log_y, keys, total_epsilon=2.0, seed=1)
    assert default.bounds.share == nss.BOUNDS_SHARE
    with pytest.raises(BadArgument, match="not both"):
        nss.synthesize_bins(log_y, keys, bounds=(3.0, 9.0), bounds_share=0.2, total_epsilon=2.0)


@pytest.mark.parametrize("share", [0.0, 1.0, -0.1, 1.5])
def test_a_share_outside_0_1_is_refused_before_any_noise(share, monkeypatch):
    monkeypatch.setattr(nss, "_laplace", lambda *a, **k: pytest.fail("noise was drawn"))
    monkeypatch.setattr(nss, "private_quantile", lambda *a, **k: pytest.fail("the bounds were drawn"))
    log_y, keys = _data(500)
    with pytest.raises(BadArgument, match="bounds_share"):
        nss.synthesize_bins(log_y, keys, total_epsilon=2.0, bounds_share=share)


def test_too_few_records_for_the_bounds_budget_are_refused_before_any_noise(monkeypatch):
    monkeypatch.setattr(nss, "private_quantile", lambda *a, **k: pytest.fail("the bounds were drawn"))
    log_y, keys = _data(300)
    with pytest.raises(BadArgument, match=r"n = 300 records .* too few .* give log_bounds="):
        nss.synthesize_bins(log_y, keys, total_epsilon=1.0)
    monkeypatch.undo()
    assert nss.synthesize_bins(log_y, keys, total_epsilon=1.0, bounds_share=0.9).bounds.share == 0.9
