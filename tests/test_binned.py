"""The binned model (``binned``): its public bins, its per-record log-likelihood against a direct
computation, its predictive draws, its refusals before any fit, Stan's own log_lik against numpy's,
a fit against the proportions a large sample pins down, and the same draws on both backends."""
import numpy as np
import pytest
from scipy import special

import ppmlib
from ppmlib.errors import BadArgument
from ppmlib.inference import backends
from ppmlib.models.bins import bin_edges, bin_index, cell_bin_totals, cell_index
from ppmlib.models.families import family

BINS = {"bin_low": 0.0, "bin_high": 2.0, "bin_width": 0.25}
SMALL = ppmlib.Sampler(chains=2, draws=250, warmup=250)


@pytest.fixture(scope="module")
def cells():
    """Two keys (3 x 2 cells); cell shapes differ: key b = 1 has a second mode near the top."""
    rng = np.random.default_rng(5)
    n = 600
    a, b = rng.integers(0, 3, n), rng.integers(0, 2, n)
    y = np.clip(rng.normal(0.8 + 0.2 * a, 0.25), 0.0, 2.0)
    y = np.where((b == 1) & (rng.uniform(size=n) < 0.4), np.clip(rng.normal(1.7, 0.1, n), 0, 2), y)
    X = np.column_stack([np.ones(n), a == 1, a == 2, b == 1]).astype(float)
    return y, X


def _draws(P, J, S=5, seed=2):
    rng = np.random.default_rng(seed)
    edges = bin_edges(BINS["bin_low"], BINS["bin_high"], BINS["bin_width"])
    return {"beta": rng.normal(0, 1, (S, P, J)), "sigma_shape": np.ones(S), "tau": np.ones(S),
            "edges": np.tile(edges, (S, 1))}


def test_bins_are_the_public_edges_and_every_value_finds_its_bin():
    edges = bin_edges(0.0, 2.0, 0.25)
    assert edges.size == 9 and edges[-1] == 2.0
    y = np.array([0.0, 0.2499, 0.25, 1.99, 2.0])
    np.testing.assert_array_equal(bin_index(y, edges), [0, 0, 1, 7, 7])
    np.testing.assert_array_equal(np.digitize(y[:-1], edges) - 1, bin_index(y[:-1], edges))
    with pytest.raises(BadArgument, match="whole bins"):
        bin_edges(0.0, 2.0, 0.3)


def test_values_outside_the_bins_are_refused_by_count_never_by_value():
    with pytest.raises(BadArgument) as caught:
        bin_index(np.array([-0.123456, 1.0, 2.654321, 2.5]), bin_edges(0.0, 2.0, 0.25))
    message = str(caught.value)
    assert "1 value(s) of y lie below" in message and "2 above" in message
    assert "0.123456" not in message and "2.654321" not in message


def test_cell_bin_totals_are_the_weights_summed_by_cell_and_bin(cells):
    y, X = cells
    w = np.random.default_rng(0).uniform(size=y.size)
    rows, index = cell_index(X)
    bins = bin_index(y, bin_edges(**{"low": 0.0, "high": 2.0, "width": 0.25}))
    totals = cell_bin_totals(index, bins, w, rows.shape[0], 8)
    assert totals.shape == (6, 8) and totals.sum() == pytest.approx(w.sum())
    u, j = 3, int(bins[np.flatnonzero(index == 3)[0]])
    assert totals[u, j] == pytest.approx(w[(index == u) & (bins == j)].sum())


def test_log_lik_is_log_softmax_of_the_cells_logits_minus_log_width(cells):
    y, X = cells
    d = _draws(X.shape[1], 8)
    got = family("binned").log_lik(d, y, X)
    bins = np.minimum((y // 0.25).astype(int), 7)
    expected = np.empty_like(got)
    for s in range(got.shape[0]):
        for i in range(y.size):
            expected[s, i] = special.log_softmax(X[i] @ d["beta"][s])[bins[i]] - np.log(0.25)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_predict_draws_bins_with_the_cells_probabilities_and_uniformly_within(cells):
    y, X = cells
    d = _draws(X.shape[1], 8, S=1)
    n = 40_000
    Xn = np.repeat(X[:1], n, axis=0)   # one cell
    synthetic = family("binned").predict(d, Xn, n, np.random.default_rng(8))[0]
    p = special.softmax(Xn[0] @ d["beta"][0])
    share = np.bincount(np.minimum((synthetic // 0.25).astype(int), 7), minlength=8) / n
    assert np.all(np.abs(share - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12), (share, p)
    within = (synthetic % 0.25) / 0.25   # uniform within a bin: its deciles near 0.1, ..., 0.9
    np.testing.assert_allclose(np.quantile(within, np.linspace(0.1, 0.9, 9)), np.linspace(0.1, 0.9, 9), atol=0.02)


def test_refused_before_any_fit_a_thin_column_missing_bins_and_data_outside(cells, monkeypatch):
    y, X = cells
    fam = family("binned")

    def no_fit(*args, **kwargs):
        raise AssertionError("a fit was started")

    monkeypatch.setattr(ppmlib.Sampler, "sample", no_fit)
    thin = np.column_stack([X, np.r_[np.ones(3), np.zeros(y.size - 3)]])
    with pytest.raises(BadArgument, match=r"column\(s\) \[4\] of X .* fewer than 5 records"):
        ppmlib.fit("binned", y, X=thin, prior=BINS)
    with pytest.raises(BadArgument, match="needs its public bins"):
        ppmlib.fit("binned", y, X=X)
    with pytest.raises(BadArgument, match="above the high edge 1.5"):
        ppmlib.fit("binned", y, X=X, prior={**BINS, "bin_high": 1.5})
    with pytest.raises(BadArgument, match="intercept"):
        fam.check_X(X[:, 1:], y.size)


@pytest.mark.stan
def test_stans_log_lik_is_numpys_and_the_fit_sees_the_second_mode(cells):
    y, X = cells
    fit = ppmlib.fit("binned", y, X=X, prior=BINS, sampler=SMALL, seed=4, emit_log_lik=True)
    assert fit.diagnostics["max_rhat"] < 1.05 and fit.diagnostics["divergences"] == 0
    np.testing.assert_allclose(fit.draws["log_lik"], fit.model.log_lik(fit.draws, y, X), rtol=1e-8, atol=1e-10)
    # the share of the top two bins [1.5, 2]: about 0.4 in the b = 1 cells, near 0 in the others
    rows, _ = cell_index(X)
    p = np.exp(fit.model.log_probabilities(fit.draws, rows)).mean(axis=0)
    top = p[:, 6:].sum(axis=1)
    assert np.all(top[rows[:, 3] == 1] > 0.25) and np.all(top[rows[:, 3] == 0] < 0.1)


@pytest.mark.stan
def test_a_large_sample_pins_the_bins_probabilities_to_its_proportions():
    """Intercept only, n = 8,000 records: the posterior mean of every bin's probability is the
    sample's proportion to within 3 of its binomial standard errors (the prior's smoothing is weak
    next to this much data), and half weights double the posterior variance of the proportions."""
    rng = np.random.default_rng(12)
    truth = np.array([0.02, 0.08, 0.2, 0.3, 0.2, 0.1, 0.07, 0.03])
    n = 8000
    y = 0.25 * (rng.choice(8, size=n, p=truth) + rng.uniform(size=n))
    proportions = np.bincount(np.minimum((y // 0.25).astype(int), 7), minlength=8) / n
    full = ppmlib.fit("binned", y, prior=BINS, X=np.ones((n, 1)), sampler=SMALL, seed=6)
    p = np.exp(full.model.log_probabilities(full.draws, np.ones((1, 1))))[:, 0, :]
    assert np.all(np.abs(p.mean(axis=0) - proportions) <= 3 * np.sqrt(proportions * (1 - proportions) / n)), p.mean(axis=0)
    np.testing.assert_allclose(p.std(axis=0), np.sqrt(proportions * (1 - proportions) / n), rtol=0.25)
    half = ppmlib.fit("binned", y, prior=BINS, X=np.ones((n, 1)), weights=np.full(n, 0.5), sampler=SMALL, seed=6)
    q = np.exp(half.model.log_probabilities(half.draws, np.ones((1, 1))))[:, 0, :]
    np.testing.assert_allclose(q.std(axis=0) / p.std(axis=0), np.sqrt(2), rtol=0.25)


def _both():
    if not (backends.cmdstan_available() and backends.pystan_available()):
        return False
    import cmdstanpy
    version = cmdstanpy.cmdstan_version()
    return version is not None and tuple(version[:2]) == (2, 35)


@pytest.mark.stan
@pytest.mark.skipif(not _both(), reason="needs both PyStan 3 and CmdStan 2.35 (CMDSTAN=<path>)")
@pytest.mark.parametrize("censored", [False, True], ids=["pseudo posterior", "censored"])
def test_both_backends_give_identical_draws(cells, censored, monkeypatch):
    y, X = cells
    weights = np.random.default_rng(4).uniform(0.1, 1.0, y.size)
    kwargs = dict(X=X, weights=weights, prior=BINS, seed=31, sampler=ppmlib.Sampler(chains=2, draws=150, warmup=150),
                  emit_log_lik=True, censoring=1.0 if censored else None)
    fits = {}
    for backend in ("cmdstanpy", "pystan"):
        monkeypatch.setenv("PPMLIB_BACKEND", backend)
        fits[backend] = ppmlib.fit("binned", y, **kwargs)
    cmd, py = fits["cmdstanpy"], fits["pystan"]
    assert cmd.draws.keys() == py.draws.keys() and "log_lik" in cmd.draws
    for name in cmd.draws:
        np.testing.assert_array_equal(cmd.draws[name], py.draws[name], err_msg=name)
