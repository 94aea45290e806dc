"""The marginal and pairwise identification-risk weights against the authors' definitions (their R code,
transcribed loop by loop in tests/oracles/literal.py) and the scaled computation's speed."""
import time

import numpy as np
import pytest

from oracles.literal import literal_marginal_risks, literal_pairwise_scores
from ppmlib.mechanism import pairwise


def _case(seed, n, m, patterns, integer=True):
    rng = np.random.default_rng(seed)
    y = rng.lognormal(3, 0.5, n)
    z = y * np.exp(rng.normal(0, 0.2, (m, n)))
    if integer:  # counts, as in the authors' simulation: ties and values on a ball's edge
        y, z = np.round(y), np.round(z)
    keys = rng.integers(0, patterns, n) if patterns > 1 else None
    return y, z, keys


@pytest.mark.parametrize("seed", range(12))
def test_pairwise_scores_equal_the_literal_loops(seed):
    n, m, patterns = 5 + 3 * seed, 1 + seed % 3, 1 + seed % 4
    y, z, keys = _case(seed, n, m, patterns, integer=seed % 2 == 0)
    for relative, radius in ((True, 0.1), (False, 2.0)):
        for synthetic in (None, z):
            fast = pairwise.pairwise_scores(y, synthetic, radius, keys, relative)
            slow = literal_pairwise_scores(y, synthetic, radius, keys, relative)
            np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_marginal_risks_equal_the_literal_loops(seed):
    y, z, keys = _case(100 + seed, 30, 3, 1 + seed % 3)
    for synthetic in (None, z):
        np.testing.assert_allclose(pairwise.marginal_risks(y, synthetic, 0.15, keys),
                                   literal_marginal_risks(y, synthetic, 0.15, keys), rtol=0, atol=1e-12)


def test_on_the_data_themselves_the_marginal_risk_is_the_isolation_risk_within_patterns():
    from ppmlib.mechanism.weights import isolation_risks
    y = np.array([10.0, 10.5, 20.0, 40.0, 41.0, 7.0])
    keys = np.array([0, 0, 0, 1, 1, 1])
    risk = pairwise.marginal_risks(y, None, 0.1, keys)
    for k in (0, 1):
        inside = keys == k
        np.testing.assert_allclose(risk[inside], isolation_risks(y[inside], 0.1, relative=True))


def test_a_record_alone_in_its_pattern_scores_one():
    y = np.array([10.0, 10.5, 20.0, 40.0])
    scores = pairwise.pairwise_scores(y, None, 0.1, keys=["a", "a", "a", "b"])
    assert scores[3] == 1.0
    # 20's ball and the others' together cover its whole pattern: no pair leaves a value outside both
    np.testing.assert_allclose(scores[:3], [5 / 6, 5 / 6, 1.0])


def test_weights_scale_and_shift():
    y = np.array([10.0, 10.5, 20.0, 40.0, 41.0])
    np.testing.assert_allclose(pairwise.pairwise_ir_weights(y, 0.1), [0.65, 0.65, 0.6, 0.65, 0.65])
    np.testing.assert_allclose(pairwise.pairwise_ir_weights(y, 0.1, c=2.0, g=-0.5), [0.8, 0.8, 0.7, 0.8, 0.8])
    np.testing.assert_allclose(pairwise.marginal_ir_weights(y, 0.1, c=0.5, g=0.1), [0.3, 0.3, 0.2, 0.3, 0.3])


def test_bad_input_is_refused_with_its_name():
    with pytest.raises(ValueError, match="synthetic must have shape"):
        pairwise.pairwise_scores([1.0, 2.0], [[1.0, 2.0, 3.0]], 0.1)
    with pytest.raises(ValueError, match="keys must have one row per record"):
        pairwise.pattern_ids([1, 2, 3], 2)
    with pytest.raises(ValueError, match="radius"):
        pairwise.marginal_risks([1.0, 2.0], None, -0.1)


def test_scaled_pairwise_takes_under_a_minute_at_ten_thousand_records():
    rng = np.random.default_rng(3)
    y = rng.lognormal(10, 1, 10_000)
    z = y * np.exp(rng.normal(0, 0.2, (20, 10_000)))
    start = time.perf_counter()
    scores = pairwise.pairwise_scores(y, z, 0.1, keys=rng.integers(0, 12, 10_000))
    assert time.perf_counter() - start < 60
    assert scores.shape == (10_000,) and np.all((scores > 0) & (scores <= 1))
