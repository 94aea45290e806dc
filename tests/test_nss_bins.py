"""NSS over public bins (ppmlib.mechanism.nss.release_counts, bin_posterior, synthesize_bins): the
noise's scale against OpenDP's maps, the sensitivity, the posterior against exact answers (no
noise: the Dirichlet; noise: enumeration of the true counts), determinism, the ledger and the refusals."""
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

from ppmlib.errors import BadArgument, DataRefused
from ppmlib.mechanism import nss
from ppmlib.mechanism.ledger import cdp_epsilon, of_release, rho_for_total


@pytest.mark.parametrize("rho", [0.02, 0.46, 5.0])
def test_gaussian_scale_is_sensitivity_over_sqrt_2rho_and_opendps_map_agrees(rho):
    sigma = nss.counts_scale(rho)
    assert sigma == pytest.approx(1.0 / math.sqrt(2 * rho), rel=1e-12)
    pytest.importorskip("opendp.prelude")
    assert nss.opendp_gaussian(sigma).map(nss.SENSITIVITY_COUNTS) == pytest.approx(rho, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 10.0])
def test_laplace_scale_is_sensitivity_over_epsilon_and_opendps_map_agrees(epsilon):
    log_y = np.linspace(4, 6, 50)
    counts = nss.release_counts(log_y, None, bounds=(3, 7), width=0.5, epsilon=epsilon, seed=1)
    assert counts.scale == pytest.approx(1.0 / epsilon, rel=1e-12) and counts.epsilon == epsilon
    pytest.importorskip("opendp.prelude")
    assert nss.opendp_laplace(counts.scale).map(nss.SENSITIVITY_COUNTS) == pytest.approx(epsilon, rel=1e-9)


def _keys(rng, n):
    return pd.DataFrame({"a": rng.integers(0, 3, n).astype(str), "b": rng.integers(0, 2, n).astype(str)})


def test_one_record_moves_one_count_by_one():
    rng = np.random.default_rng(3)
    log_y = np.concatenate([rng.normal(5, 1, 60), [-50.0, 50.0]])         # coded into the end bins
    keys = _keys(rng, 62)
    full = nss.release_counts(log_y, keys, bounds=(3, 7), width=0.5, rho=math.inf)
    assert full.counts.sum() == 62 and (full.counts[:, 0].sum(), full.counts[:, -1].sum()) >= (1, 1)
    for j in range(len(log_y)):
        part = nss.release_counts(np.delete(log_y, j), keys.drop(index=j).reset_index(drop=True), bounds=(3, 7),
                                  width=0.5, rho=math.inf)
        diff = full.counts - part.counts
        assert diff.sum() == 1 and np.abs(diff).sum() == 1                   # L1 = L2 = 1


def test_the_drawn_noise_has_the_stated_scale_and_is_seeded():
    log_y = np.full(4000, 5.1)
    keys = pd.DataFrame({"a": np.arange(4000).astype(str)})                 # 4,000 cells of one record
    a = nss.release_counts(log_y, keys, bounds=(3, 7), width=1.0, rho=0.1, seed=7)
    b = nss.release_counts(log_y, keys, bounds=(3, 7), width=1.0, rho=0.1, seed=7)
    assert np.array_equal(a.counts, b.counts)
    exact = np.zeros((4000, 4))
    exact[:, 2] = 1
    assert np.std(a.counts - exact) == pytest.approx(a.scale, rel=0.03)
    lap = nss.release_counts(log_y, keys, bounds=(3, 7), width=1.0, epsilon=0.5, seed=7)
    assert np.std(lap.counts - exact) == pytest.approx(math.sqrt(2) * 2.0, rel=0.03)


def test_without_noise_the_draws_are_the_exact_dirichlet():
    rng = np.random.default_rng(2)
    log_y = rng.normal(5, 0.6, 300)
    counts = nss.release_counts(log_y, _keys(rng, 300), bounds=(3, 7), width=0.5, rho=math.inf)
    alpha = nss.bin_prior(counts, 0.5)[None, :] + counts.counts
    draws = nss.bin_posterior(counts, 20000, prior_strength=0.5, seed=4)
    total = alpha.sum(axis=1, keepdims=True)
    mean, var = alpha / total, alpha * (total - alpha) / (total ** 2 * (total + 1))
    assert np.abs(draws.mean(0) - mean).max() < 4 * np.sqrt(var.max() / 20000)
    assert np.allclose(draws.var(0), var, rtol=0.06, atol=0.01 * var.max())


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_the_latent_sampler_matches_enumeration_of_the_true_counts(mechanism):
    """One cell of 5 records in 3 bins: the posterior of the true counts, enumerated, against the Gibbs states."""
    noisy = np.array([[3.4, -0.8, 2.1]])
    cells = nss.Cells(np.zeros(5, int), np.zeros((1, 0), int), np.zeros(0, int), np.array([5]))
    release = nss.NoisyCounts(cells, noisy, np.array([0.0, 1.0, 2.0, 3.0]), mechanism, 0.9, 1.0, None, "numpy")
    from scipy import stats
    density = stats.laplace(scale=0.9) if mechanism == "laplace" else stats.norm(scale=0.9)
    r = np.array([-1.3, 0.2, 2.5])
    assert np.allclose(release.log_likelihood(r) - release.log_likelihood(0.0), density.logpdf(r) - density.logpdf(0.0))
    alpha = nss.bin_prior(release, 0.7)
    states = [s for s in itertools.product(range(6), repeat=3) if sum(s) == 5]
    logp = np.array([sum(gammaln(alpha + s) - gammaln(np.array(s) + 1.0))
                     + release.log_likelihood(noisy[0] - s).sum() for s in states])
    w = np.exp(logp - logp.max())
    exact = (w[:, None] * np.array(states)).sum(0) / w.sum()
    latent = nss._latent_counts(release, alpha, 4000, 8000, np.random.default_rng(5))
    assert np.abs(latent[:, 0].mean(0) - exact).max() < 0.05
    assert latent.sum(axis=2).min() == latent.sum(axis=2).max() == 5       # every state keeps n_c


def _data(n=2000, seed=5):
    rng = np.random.default_rng(seed)
    keys = _keys(rng, n)
    truth = 5.0 + 0.4 * keys["a"].astype(int).to_numpy() - 0.3 * keys["b"].astype(int).to_numpy()
    return truth + rng.normal(0, 0.4, n), keys, truth


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_a_release_is_seeded_follows_the_data_and_costs_the_total(mechanism):
    log_y, keys, truth = _data()
    run = dict(bounds=(3.0, 8.0), width=0.25, total_epsilon=5.0, m=4, mechanism=mechanism)
    a = nss.synthesize_bins(log_y, keys, seed=4, **run)
    assert np.array_equal(a.synthetic, nss.synthesize_bins(log_y, keys, seed=4, **run).synthetic)
    assert not np.array_equal(a.synthetic, nss.synthesize_bins(log_y, keys, seed=5, **run).synthetic)
    eps, dlt = a.total
    assert eps == pytest.approx(5.0, abs=1e-9) and dlt == (0.0 if mechanism == "laplace" else 1e-6)
    if mechanism == "gaussian":
        assert a.rho == rho_for_total(5.0, 1e-6) and cdp_epsilon(a.rho, 1e-6) == pytest.approx(5.0, abs=1e-9)
    means = pd.DataFrame({"c": a.statistics.cells.index, "s": a.synthetic.mean(0), "t": truth}).groupby("c").mean()
    assert np.abs(means["s"] - means["t"]).max() < 0.1
    assert a.synthetic.std(axis=1).mean() == pytest.approx(log_y.std(), rel=0.05)
    assert ((a.synthetic >= 3.0) & (a.synthetic <= 8.0)).all()


def test_k_draws_share_the_shape_and_mean_uses_one():
    log_y, keys, _ = _data(400)
    run = dict(bounds=(3.0, 8.0), width=0.5, total_epsilon=2.0, m=4, seed=1)
    two = nss.synthesize_bins(log_y, keys, k=2, shape="draws", **run)
    assert two.k_draws == 2 and "m = 4 datasets come from k = 2 posterior draws" in two.statement()[2]
    assert two.synthetic.shape == (4, 400)
    # datasets 1-2 share draw 1 and 3-4 draw 2: their cells' shapes agree in pairs, up to sampling
    mean = nss.synthesize_bins(log_y, keys, shape="mean", k=2, **run)
    assert mean.synthetic.shape == (4, 400)
    # the mean shape uses no k: the ledger says so instead of a k the datasets do not come from
    assert mean.k_draws is None and "from the posterior mean shape" in mean.statement()[2]
    assert of_release(mean).to_dict()["k_draws"] == "mean shape"


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_the_ledger_of_the_release_states_the_one_noisy_release(mechanism):
    from ppmlib.mechanism.ledger import of_release
    log_y, keys, _ = _data(400)
    done = nss.synthesize_bins(log_y, keys, bounds=(3.0, 8.0), width=0.5, total_epsilon=2.0, m=4, k=2,
                               mechanism=mechanism, shape="draws")
    book = of_release(done).to_dict()
    assert book["release_epsilon"] == pytest.approx(2.0, abs=1e-9) and book["k_draws"] == 2 and book["m"] == 4
    assert book["release_delta"] == (0.0 if mechanism == "laplace" else 1e-6)
    assert book["rho_zcdp"] == pytest.approx(2.0 ** 2 / 2 if mechanism == "laplace" else rho_for_total(2.0, 1e-6))
    text = " ".join(book["statement"])
    assert "every database" in text and ("Laplace noise of scale 0.5" if mechanism == "laplace" else
                                         f"Gaussian noise of sd {nss.counts_scale(rho_for_total(2.0, 1e-6)):.4g}") in text
    assert str(round(log_y[0], 4)) not in text                          # no confidential value


def _no_noise(monkeypatch):
    monkeypatch.setattr(nss, "_gaussian", lambda *a, **k: pytest.fail("noise was drawn"))
    monkeypatch.setattr(nss, "_laplace", lambda *a, **k: pytest.fail("noise was drawn"))


@pytest.mark.parametrize("setting, match", [
    (dict(k=6), r"k \(draws\) must lie in \[1, m = 5\]"), (dict(k=0), r"k \(draws\)"),
    (dict(bounds=(6.5, 20.0)), r"bounds \(6.5, 20\) exclude"), (dict(width=0.3), "width 0.3 must divide"),
    (dict(mechanism="cauchy"), "mechanism must be one of"), (dict(prior_strength=0.0), "prior_strength"),
    (dict(shape="mode"), "shape must be one of")])
def test_bad_settings_are_refused_before_any_noise_naming_the_setting(setting, match, monkeypatch):
    _no_noise(monkeypatch)
    log_y, keys, _ = _data(300)
    run = {"bounds": (3.0, 8.0), "width": 0.25, "total_epsilon": 1.0, "m": 5, **setting}
    with pytest.raises((BadArgument, DataRefused), match=match):
        nss.synthesize_bins(log_y, keys, **run)


def test_too_many_cells_times_bins_is_refused_before_any_noise(monkeypatch):
    _no_noise(monkeypatch)
    n = 5000
    keys = pd.DataFrame({"id": np.arange(n).astype(str)})
    with pytest.raises(BadArgument, match=r"5000 cells x 100 bins = 500,000 noisy counts, more than 200,000"):
        nss.synthesize_bins(np.full(n, 5.0), keys, bounds=(0.0, 10.0), width=0.1, total_epsilon=1.0)


def test_stratified_allocation_puts_n_c_p_cb_records_in_each_bin_up_to_one():
    rng = np.random.default_rng(11)
    probs = rng.dirichlet(np.ones(6), size=3)                                  # 3 cells x 6 bins
    index = rng.integers(0, 3, 500)
    edges = np.linspace(0.0, 6.0, 7)
    values = nss._values_stratified(probs, index, edges, np.random.default_rng(2))
    for c in range(3):
        held = np.histogram(values[index == c], bins=edges)[0]
        assert np.all(np.abs(held - (index == c).sum() * probs[c]) < 1.0)
    iid = nss._values_in_bins(probs, index, edges, np.random.default_rng(2))
    worst = max(np.abs(np.histogram(iid[index == c], bins=edges)[0] - (index == c).sum() * probs[c]).max()
                for c in range(3))
    assert worst > 1.0                                                          # independent draws do not


def test_stratified_allocation_shuffles_within_a_cell_and_is_seeded():
    rng = np.random.default_rng(12)
    log_y, keys = rng.normal(5, 0.6, 400), _keys(rng, 400)
    run = dict(bounds=(3.0, 7.0), width=0.25, total_epsilon=4.0, m=2, seed=9)
    a = nss.synthesize_bins(log_y, keys, **run)
    assert np.array_equal(a.synthetic, nss.synthesize_bins(log_y, keys, **run).synthetic)
    first = keys.index[(keys["a"] == "0") & (keys["b"] == "0")]
    assert not np.all(np.diff(a.synthetic[0][first]) >= 0)                    # not sorted within the cell
    iid = nss.synthesize_bins(log_y, keys, allocation="iid", **run)
    assert not np.array_equal(a.synthetic, iid.synthetic)
    with pytest.raises(BadArgument, match="allocation"):
        nss.synthesize_bins(log_y, keys, allocation="sorted", **run)


def test_without_noise_the_mean_shape_stratified_keeps_each_cells_binned_counts():
    rng = np.random.default_rng(13)
    log_y, keys = rng.normal(5, 0.7, 600), _keys(rng, 600)
    done = nss.synthesize_bins(log_y, keys, bounds=(3.0, 7.0), width=0.5, total_epsilon=math.inf, m=2, seed=3)
    edges = np.linspace(3.0, 7.0, 9)
    cell = keys["a"] + keys["b"]
    for c in cell.unique():
        rows = (cell == c).to_numpy()
        data = np.histogram(np.clip(log_y[rows], 3.0, 7.0 - 1e-9), bins=edges)[0]
        for d in range(2):
            assert np.abs(np.histogram(done.synthetic[d][rows], bins=edges)[0] - data).max() <= 1
