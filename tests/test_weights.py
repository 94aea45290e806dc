"""ppmlib.mechanism.weights: LW, CW, scalar weights and re-weighting against hand computations on small arrays
and the authors' R steps; bad input named."""
import numpy as np
import pytest

import ppmlib
from oracles.literal import literal_lw_weights
from ppmlib.mechanism.weights import isolation_risks

# 3 draws x 4 records; by hand: max_s |f| per record = [3, 1, 5, 2]
L = np.array([[-1.0, -0.5, -5.0, -2.0],
              [-3.0, -1.0, -4.0, -1.5],
              [-2.0, -0.2, -4.5, -0.1]])


def test_lw_weights_equal_authors_r_steps():
    LL = -np.random.default_rng(3).gamma(2.0, 2.0, size=(25, 15))
    for c, g in [(1.0, 0.0), (0.6, -0.1), (2.0, -0.5)]:
        np.testing.assert_allclose(ppmlib.lw_weights(LL, c=c, g=g), literal_lw_weights(LL, c=c, g=g), atol=1e-12)


def test_non_finite_log_lik_gets_zero_weight_and_finite_bound():
    LL = L.copy()
    LL[1, 2] = -np.inf
    w = ppmlib.lw_weights(LL)
    assert w[2] == 0.0
    # the remaining finite maxima [3, 1, 2] scale to risks [1, 0, 0.5]
    np.testing.assert_allclose(w[[0, 1, 3]], [0.0, 1.0, 0.5])
    assert np.isfinite(ppmlib.lipschitz_bound(LL, w))
    assert ppmlib.lipschitz_bound(LL) == np.inf  # unweighted: honestly infinite


def test_lw_weights_by_hand():
    # f = [3, 1, 5, 2] -> r = (f - 1) / 4 = [0.5, 0, 1, 0.25] -> alpha = 1 - r
    np.testing.assert_allclose(ppmlib.lw_weights(L), [0.5, 1.0, 0.0, 0.75])
    # c = 0.6, g = 0.1: 0.6 (1 - r) + 0.1
    np.testing.assert_allclose(ppmlib.lw_weights(L, c=0.6, g=0.1), [0.4, 0.7, 0.1, 0.55])
    # clipping at both ends: c = 2, g = -0.5 -> [0.5, 1.5->1, -0.5->0, 1.0]
    np.testing.assert_allclose(ppmlib.lw_weights(L, c=2.0, g=-0.5), [0.5, 1.0, 0.0, 1.0])


def test_lw_weights_ties_and_all_equal():
    tied = np.array([[-2.0, -2.0, -1.0]])
    np.testing.assert_allclose(ppmlib.lw_weights(tied), [0.0, 0.0, 1.0])
    equal = np.full((4, 3), -1.5)
    np.testing.assert_allclose(ppmlib.lw_weights(equal, c=0.8, g=0.05), [0.85, 0.85, 0.85])


def test_lw_weights_with_truncation():
    # q = 0.5 bounds [3, 1, 4.5, 1.5] -> r = (f - 1) / 3.5
    r = (np.array([3, 1, 4.5, 1.5]) - 1) / 3.5
    np.testing.assert_allclose(ppmlib.lw_weights(L, q=0.5), 1 - r)


def test_isolation_risks_by_hand():
    y = np.array([0, 1, 2, 10, 11])
    # radius 1: record 0 has {0, 1} inside -> 3/5 outside; record 2 has {1, 2} -> 3/5; record 3 {10, 11}
    np.testing.assert_allclose(isolation_risks(y, 1.0), [0.6, 0.4, 0.6, 0.6, 0.6])
    np.testing.assert_allclose(ppmlib.cw_weights(y, 1.0), [0.4, 0.6, 0.4, 0.4, 0.4])
    np.testing.assert_allclose(ppmlib.cw_weights(y, 1.0, c=0.5, g=0.3), [0.5, 0.6, 0.5, 0.5, 0.5])


def test_isolation_risks_relative_radius_and_brute_force():
    y = np.array([10.0, 12.0, 20.0, 100.0])
    # r_i = 0.2 |y_i| = [2, 2.4, 4, 20]: record 0 sees {10, 12}; 1 sees {10, 12}; 2 sees {20}; 3 sees {100}
    np.testing.assert_allclose(isolation_risks(y, 0.2, relative=True), [0.5, 0.5, 0.75, 0.75])
    z = np.random.default_rng(1).poisson(30, 300)
    brute = (np.abs(z[None, :] - z[:, None]) > 4).sum(axis=1) / z.size
    np.testing.assert_allclose(isolation_risks(z, 4.0), brute)


def test_reweight_by_hand():
    w = np.array([0.5, 0.2, 0.9, 0.4])
    b = np.array([2.0, 1.0, 4.0, 0.0])
    # k Delta / Delta_i with Delta = 4, k = 0.95: [0.95, 0.76, 0.855, keep 0.4]
    np.testing.assert_allclose(ppmlib.reweight(w, b, 0.95), [0.95, 0.76, 0.855, 0.4])
    np.testing.assert_allclose(ppmlib.reweight(w, b, 2.0), [1.0, 1.0, 1.0, 0.4])


def test_scalar_weights():
    np.testing.assert_allclose(ppmlib.scalar_weights(0.375, 3), [0.375] * 3)


@pytest.mark.parametrize("call, match", [
    (lambda: ppmlib.record_bounds(L, [0.5, 1.2, 0.1, 0.1]), "weights must lie in"),
    (lambda: ppmlib.record_bounds(L, [-0.1, 1, 0.1, 0.1]), "weights must lie in"),
    (lambda: ppmlib.record_bounds(L, [0.5, 1.0]), "weights has length 2"),
    (lambda: ppmlib.record_bounds(L, [np.nan, 1, 1, 1]), "weights has 1 non-finite"),
    (lambda: ppmlib.record_bounds(L, q=0.0), "q must lie in"),
    (lambda: ppmlib.record_bounds(L, q=1.5), "q must lie in"),
    (lambda: ppmlib.record_bounds(np.array([[np.nan, 1.0]])), "log_lik contains NaN"),
    (lambda: ppmlib.record_bounds(np.ones(3)), "log_lik must be 2-dimensional"),
    (lambda: ppmlib.cw_weights([1, 2, 3], radius=0.0), "radius must lie in"),
    (lambda: ppmlib.cw_weights([1, 2, 3], radius=-1.0), "radius must lie in"),
    (lambda: ppmlib.cw_weights([1, np.nan, 3], radius=1.0), "y has 1 non-finite"),
    (lambda: ppmlib.lw_weights(L, c=-1.0), "c must lie in"),
    (lambda: ppmlib.reweight([0.5], [1.0], k=0.0), "k must lie in"),
    (lambda: ppmlib.datasets.simulate.nb_mixture(10, [100], [5, 20], [1.0], seed=1), "same length"),
    (lambda: ppmlib.datasets.simulate.nb_mixture(10, [100, 100], [5, 20], [0.5, 0.6], seed=1), "sum to 1"),
])
def test_bad_input_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call, match", [
    (lambda: ppmlib.record_bounds(L, q="0.5"), "q must be a real number"),
    (lambda: ppmlib.cw_weights([1, 2], radius="1"), "radius must be a real number"),
    (lambda: ppmlib.cw_weights([1, 2], radius=1.0, relative="yes"), "relative must be True or False"),
    (lambda: ppmlib.datasets.simulate.poisson(10.5, 100, seed=1), "n must be an integer"),
    (lambda: ppmlib.record_bounds([["a", "b"]]), "log_lik must be numeric"),
])
def test_bad_input_type_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize("risk, first", [([0.2, 1.5, 0.3], 1), ([-0.1, 0.5], 0)])
def test_risks_outside_the_unit_interval_are_refused(risk, first):
    """Issue 24, point 6: a risk of 1.5 became weight 0 and -0.1 weight 1, silently."""
    with pytest.raises(ValueError, match=rf"risk must lie in \[0, 1\]; 1 of {len(risk)} do not, the first at position {first}$"):
        ppmlib.risk_to_weight(risk, c=1.0)
    np.testing.assert_allclose(ppmlib.risk_to_weight([0.0, 1.0, 0.25]), [1.0, 0.0, 0.75])


# --- LW's Delta in closed form (ALGORITHMS.md section 12) -----------------------------------------

@pytest.mark.parametrize("f_min, f_max, c, g, expected", [
    (2.0, 10.0, 1.0, 0.0, 3.125),    # vertex f = 5: 5 (10 - 5) / 8 = 100 / 32
    (2.0, 10.0, 0.5, 0.2, 2.7225),   # f (0.825 - f / 16), vertex 6.6: 6.6 x 0.4125
    (2.0, 10.0, 2.0, 0.0, 6.0),      # alpha = 1 up to f = 6, then f (10 - f) / 4 falls: the kink
    (3.0, 5.0, 1.0, 0.0, 3.0),       # f_max < 2 f_min: the vertex 2.5 is outside, f_min keeps weight 1
    (4.0, 4.0, 0.7, 0.1, 3.2),       # all risks equal: alpha = c + g = 0.8
])
def test_lw_delta_formula_by_hand(f_min, f_max, c, g, expected):
    assert ppmlib.mechanism.weights.lw_delta_formula(f_min, f_max, c, g) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("c, g", [(1.0, 0.0), (0.6, 0.1), (1.5, -0.2), (3.0, 0.0)])
def test_lw_delta_formula_is_the_largest_weighted_risk_of_dense_records(c, g):
    f = np.linspace(3.2, 8.4, 20001)                       # records filling [f_min, f_max]
    alpha = ppmlib.risk_to_weight(ppmlib.mechanism.weights.min_max_scale(f), c, g)   # LW's weights of these risks
    assert ppmlib.mechanism.weights.lw_delta_formula(3.2, 8.4, c, g) == pytest.approx((alpha * f).max(), abs=5e-4)  # grid step 2.6e-4


def test_lw_delta_formula_refuses_bad_input():
    with pytest.raises(ValueError, match="f_max"):
        ppmlib.mechanism.weights.lw_delta_formula(5.0, 4.0)
    with pytest.raises(ValueError, match="c"):
        ppmlib.mechanism.weights.lw_delta_formula(1.0, 4.0, c=-1.0)
