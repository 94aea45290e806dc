"""ppmlib.mechanism.bounds: by-record and overall bounds, truncation and near-max share by hand and against
the authors' leave-one-out double loop; computed from a Fit (per distinct value, in blocks of draws)
they agree with the S x n matrix route and never build the S x n matrix."""
import tracemalloc

import numpy as np
import pytest

import ppmlib

pytestmark = pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning", "ignore:overflow:RuntimeWarning")
from oracles.literal import loo_record_bounds
from ppmlib.models.families import family
from ppmlib.inference.posterior import Fit

# 3 draws x 4 records (the same matrix as in test_weights.py); by hand: max_s |f| per record = [3, 1, 5, 2]
L = np.array([[-1.0, -0.5, -5.0, -2.0],
              [-3.0, -1.0, -4.0, -1.5],
              [-2.0, -0.2, -4.5, -0.1]])


def hand_fit(model, y, draws, X=None, weights=None):
    """A Fit from draws made by hand (no Stan), so edge cases such as -inf are easy to build."""
    fam = family(model)
    y = fam.check_y(y)
    X = fam.check_X(X, y.size)
    w = np.ones(y.size) if weights is None else weights
    return Fit(fam, y, X if model == "normal" else None, w, draws, {}, 1, "by hand", None)


def poisson_fit(rng, S=300, n=700):
    y = rng.poisson(30, n) + 1                       # y >= 1: a draw lambda = 0 gives -inf for all records
    lam = rng.gamma(30, 1.0, S)
    lam[7] = 0.0
    return hand_fit("poisson", y, {"lambda": lam})


def negbin_fit(rng, S=300, n=700):
    y = ppmlib.datasets.simulate.nb_mixture(n, [100, 100], [5, 20], [0.2, 0.8], seed=int(rng.integers(1e6))) + 1
    mu = rng.gamma(100, 1.0, S)
    mu[7] = 0.0                                      # with y >= 1: -inf for every record
    return hand_fit("negbin", y, {"mu": mu, "phi": rng.gamma(10, 1.0, S)})


def normal_fit(rng, S=300, n=700):
    x = rng.normal(size=n)
    X = np.column_stack([np.ones(n), x])
    y = np.round(1 + 0.5 * x + rng.normal(size=n), 1)
    beta = rng.normal([1, 0.5], 0.05, size=(S, 2))
    sigma = rng.gamma(50, 0.02, S)
    # one draw with a tiny sigma: z^2 overflows, so every record off the mean line gets -inf and
    # the records exactly on it (x = 0, y = 1) stay finite
    X[:5, 1] = 0.0
    y[:5] = 1.0
    beta[11], sigma[11] = [1.0, 0.5], 1e-200
    return hand_fit("normal", y, {"beta": beta, "sigma": sigma}, X=X)


MAKERS = {"poisson": poisson_fit, "negbin": negbin_fit, "normal": normal_fit}


@pytest.fixture(params=sorted(MAKERS))
def fit(request):
    return MAKERS[request.param](np.random.default_rng(sorted(MAKERS).index(request.param)))


def weight_cases(n, rng):
    w = rng.uniform(0, 1, n)
    w[rng.choice(n, n // 10, replace=False)] = 0.0   # zeros, some sharing a value with non-zero weights
    return {"unweighted": None, "ones": np.ones(n), "uniform with zeros": w}


@pytest.mark.parametrize("q", [1.0, 0.9, 0.5])
def test_streamed_route_equals_matrix_route(fit, q):
    rng = np.random.default_rng(5)
    L = fit.log_lik
    assert np.isneginf(L).any()                      # the edge case is really there
    for label, w in weight_cases(fit.y.size, rng).items():
        np.testing.assert_array_equal(ppmlib.kept_draws(fit, w, q), ppmlib.kept_draws(L, w, q), err_msg=label)
        streamed, matrix = ppmlib.record_bounds(fit, w, q), ppmlib.record_bounds(L, w, q)
        assert streamed.shape == (fit.y.size,)
        np.testing.assert_allclose(streamed, matrix, rtol=1e-12, atol=0, err_msg=label)
        assert ppmlib.lipschitz_bound(fit, w, q) == ppmlib.lipschitz_bound(L, w, q)
    finite = fit.subset(np.isfinite(L).all(axis=1)) if q == 1.0 else fit  # LW needs some finite records
    np.testing.assert_allclose(ppmlib.lw_weights(finite, c=0.9, g=0.05, q=q),
                               ppmlib.lw_weights(finite.log_lik, c=0.9, g=0.05, q=q), rtol=1e-12, atol=0)


def test_truncation_drops_the_minus_inf_draw(fit):
    # the -inf draw has per-draw maximum inf: truncation at q < 1 must drop it, and q = 1 must keep
    # it (so the unweighted bound is infinite, honestly)
    bad = 11 if fit.model.name == "normal" else 7
    assert not ppmlib.kept_draws(fit, None, 0.9)[bad]
    assert ppmlib.lipschitz_bound(fit) == np.inf
    assert np.isfinite(ppmlib.lipschitz_bound(fit, q=0.9))


def test_count_keys_are_the_distinct_values():
    fit = poisson_fit(np.random.default_rng(0))
    blocks = list(fit.log_lik_blocks(max_elements=1000))
    assert len(blocks) > 1                            # really streamed over several blocks of draws
    u = np.unique(fit.y).size
    assert all(block.shape[1] == u for _, block in blocks)
    stitched = np.concatenate([block for _, block in blocks])[:, fit.record_keys]
    np.testing.assert_array_equal(stitched, fit.log_lik)


@pytest.mark.parametrize("max_elements, draws", [(1000, 8), (3000, 8), (5000, 64)])
def test_tiles_cover_every_draw_and_key_once_with_the_matrix_numbers(fit, max_elements, draws):
    """Fit.log_lik_tiles, stitched back, is the S x n matrix (to 1e-12 relative: the tiles' matrix
    products may round the mean in the last bit; -inf and its places exactly), each entry once."""
    L = fit.log_lik
    u = fit._distinct[0].size
    stitched = np.full((fit.n_draws, u), np.nan)
    seen = np.zeros((fit.n_draws, u), dtype=int)
    tiles = list(fit.log_lik_tiles(max_elements, draws))
    assert len(tiles) > 1
    for part, keys, tile in tiles:
        assert tile.size <= max(max_elements, fit.n_draws)
        stitched[part, keys] = tile
        seen[part, keys] += 1
    assert (seen == 1).all()
    stitched = stitched[:, fit.record_keys]
    np.testing.assert_array_equal(np.isneginf(stitched), np.isneginf(L))
    finite = np.isfinite(L)
    np.testing.assert_allclose(stitched[finite], L[finite], rtol=1e-12, atol=0)


def test_streamed_bounds_never_build_the_draws_by_records_matrix():
    rng = np.random.default_rng(1)
    S, n = 2000, 200_000                               # S x n float64 would be 3.2 GB
    y = rng.poisson(100, n)
    lam = rng.gamma(1e4, 0.01, S)
    w = rng.uniform(0, 1, n)
    fit = hand_fit("poisson", y, {"lambda": lam})
    tracemalloc.start()
    try:
        bounds = ppmlib.record_bounds(fit, w, q=0.95)
        alpha = ppmlib.lw_weights(fit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert bounds.shape == alpha.shape == (n,)
    assert peak < 0.05 * S * n * 8, f"peak {peak / 1e6:.0f} MB"
    # spot check against the matrix route on a few records
    some = rng.choice(n, 50, replace=False)
    small = hand_fit("poisson", y[some], {"lambda": lam})
    keep = ppmlib.kept_draws(fit, w, 0.95)
    expected = (np.abs(small.log_lik[keep]) * w[some]).max(axis=0)
    np.testing.assert_allclose(bounds[some], expected, rtol=1e-12)


@pytest.mark.stan
@pytest.mark.parametrize("model", ["poisson", "negbin"])
def test_synthesizer_bounds_equal_the_matrix_route(model):
    y = ppmlib.datasets.simulate.nb_mixture(300, [100, 100], [5, 20], [0.2, 0.8], seed=4)
    run = dict(sampler=ppmlib.Sampler(chains=2, draws=200, warmup=200), m=3)
    base = ppmlib.synthesizer(model, y, "unweighted", seed=1, **run)
    lw = ppmlib.synthesizer(model, y, "lw", base=base, c=0.9, q=0.9, seed=2, **run)
    np.testing.assert_allclose(lw.weights, ppmlib.lw_weights(base.fit.log_lik, c=0.9, q=0.9), rtol=1e-12)
    refit = ppmlib.fit(model, y, weights=lw.weights, sampler=run["sampler"], seed=lw.fit.seed)
    keep = ppmlib.kept_draws(refit.log_lik, lw.weights, 0.9)
    assert lw.fit.n_draws == keep.sum() < refit.n_draws
    np.testing.assert_allclose(lw.bounds, ppmlib.record_bounds(refit.log_lik[keep], lw.weights), rtol=1e-12)


def test_record_bounds_unweighted_is_column_max_of_abs():
    np.testing.assert_allclose(ppmlib.record_bounds(L), [3, 1, 5, 2])
    assert ppmlib.lipschitz_bound(L) == 5.0
    assert ppmlib.epsilon(5.0) == 10.0


def test_record_bounds_weighted():
    w = np.array([0.5, 1.0, 0.2, 0.0])
    np.testing.assert_allclose(ppmlib.record_bounds(L, w), [1.5, 1.0, 1.0, 0.0])
    assert ppmlib.lipschitz_bound(L, w) == 1.5


def test_equals_authors_leave_one_out_double_loop():
    rng = np.random.default_rng(0)
    LL = -rng.gamma(2.0, 2.0, size=(30, 12))
    w = rng.uniform(size=12)
    np.testing.assert_allclose(ppmlib.record_bounds(LL, w), loo_record_bounds(LL, w), rtol=1e-12)


def test_truncation_drops_draws_above_quantile():
    # per-draw maxima: [5, 4, 4.5]; q = 0.5 -> quantile 4.5 -> drop draw 0 (5 > 4.5)
    mask = ppmlib.kept_draws(L, q=0.5)
    assert mask.tolist() == [False, True, True]
    np.testing.assert_allclose(ppmlib.record_bounds(L, q=0.5), [3, 1, 4.5, 1.5])


def test_near_max_share_by_hand():
    assert ppmlib.near_max_share(np.array([1.0, 9.0, 9.5, 10.0])) == 0.75
    assert ppmlib.near_max_share(np.array([1.0, 9.0, 9.5, 10.0]), fraction=0.95) == 0.5
