"""The normal model's per-record stages over the row groups of a Parquet file, on a Dask LocalCluster:
the same numbers, bit for bit, as the in-memory functions; a scheduler that does not answer fails fast."""
import time

import numpy as np
import pandas as pd
import pytest

from ppmlib.errors import BackendUnavailable, BadArgument
from ppmlib.inference.parallel import connected
from ppmlib.mechanism import partitioned
from ppmlib.mechanism.bounds import lipschitz_bound
from ppmlib.mechanism.weights import lw_weights
from ppmlib.models.families import Normal, normal_sufficient_statistics

BLOCK = 16
N, K, S = 200, 3, 40


def _draws(rng, shift=0.0):
    return {"beta": rng.normal([1.0 + shift, 0.5, -0.3], 0.05, size=(S, K)), "sigma": rng.uniform(0.4, 0.6, S)}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(7)
    X = np.column_stack([np.ones(N), rng.normal(size=N), rng.integers(0, 2, N)])
    y = X @ [1.0, 0.5, -0.3] + rng.standard_t(3, N) * 0.5
    path = tmp_path_factory.mktemp("parts") / "records.parquet"
    frame = pd.DataFrame({"y": y, "x0": X[:, 0], "x1": X[:, 1], "x2": X[:, 2]})
    frame.to_parquet(path, row_group_size=3 * BLOCK)                 # 5 row groups, the last one short
    return path, y, X


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as local, \
            Client(local, timeout=20) as client:
        yield client


def _in_memory(y, X, unweighted, weighted, c):
    alpha = lw_weights(Normal().log_lik(unweighted, y, X), c=c)
    return (normal_sufficient_statistics(y, X, np.ones(N), BLOCK), normal_sufficient_statistics(y, X, alpha, BLOCK),
            lipschitz_bound(Normal().log_lik(weighted, y, X), alpha))


def _equal(a, b):
    for key in ("sum_w", "XWX", "XWy", "yWy"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_the_cluster_gives_the_in_memory_numbers_bit_for_bit(data, cluster):
    path, y, X = data
    rng = np.random.default_rng(3)
    unweighted, weighted, c = _draws(rng), _draws(rng, 0.02), 0.6
    plain, lw, delta = _in_memory(y, X, unweighted, weighted, c)
    parts = partitioned.row_groups(path, BLOCK)
    assert [(p.start, p.stop) for p in parts] == [(0, 48), (48, 96), (96, 144), (144, 192), (192, 200)]
    x = ["x0", "x1", "x2"]
    _equal(partitioned.sufficient_statistics(parts, "y", x, block=BLOCK, client=cluster), plain)
    risk = partitioned.risk_range(parts, "y", x, unweighted, client=cluster)
    kw = dict(unweighted=unweighted, c=c, risk=risk, client=cluster)
    _equal(partitioned.sufficient_statistics(parts, "y", x, block=BLOCK, **kw), lw)
    assert partitioned.lw_delta(parts, "y", x, weighted, **kw) == delta
    assert lw["sum_w"] < N - 1                                             # the weights are not all 1


def test_row_groups_that_split_a_block_are_refused(tmp_path):
    path = tmp_path / "odd.parquet"
    pd.DataFrame({"y": np.arange(40.0)}).to_parquet(path, row_group_size=BLOCK + 1)
    with pytest.raises(BadArgument, match="not a multiple of 16"):
        partitioned.row_groups(path, BLOCK)


def test_a_scheduler_that_does_not_answer_fails_fast_and_names_the_address():
    start = time.perf_counter()
    with pytest.raises(BackendUnavailable, match=r"tcp://127\.0\.0\.1:1"):
        with connected("tcp://127.0.0.1:1", timeout=1.0):
            pass
    assert time.perf_counter() - start < 15


def test_the_partitioned_weights_are_lw_over_the_file_wide_range():
    # lw_from_bounds at the finite f's own range is lw_weights, also with a record whose f is not finite
    from ppmlib.mechanism.weights import lw_from_bounds, lw_weights
    rng = np.random.default_rng(3)
    L = -np.abs(rng.normal(size=(40, 30)))
    L[:, 7] = -np.inf
    f = np.abs(L).max(axis=0)
    finite = f[np.isfinite(f)]
    np.testing.assert_allclose(lw_from_bounds(f, 0.8, 0.1, finite.min(), finite.max()), lw_weights(L, c=0.8, g=0.1))
    # a column of candidate scales gives one row of weights each
    rows = lw_from_bounds(f, np.array([[0.5], [1.0]]), 0.0, finite.min(), finite.max())
    np.testing.assert_allclose(rows[1], lw_weights(L)) and np.testing.assert_allclose(rows[0], lw_weights(L, c=0.5))
