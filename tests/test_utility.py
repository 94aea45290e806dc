"""ppmlib.evaluate.utility: statistics, bootstrap, intervals, tail distortion and the standardized gap, by hand."""
import numpy as np
import pandas as pd
import pytest

from ppmlib.evaluate import utility


def test_statistics_by_hand():
    d = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [10, 10, 10, 10, 10, 10, 10, 10, 10, 10]])
    s = utility.statistics(d)
    # numpy's linear interpolation (R's type 7): 15th pct of 1..10 is 1 + 0.15 * 9 = 2.35
    np.testing.assert_allclose(s["15th pct"], [2.35, 10])
    np.testing.assert_allclose(s["90th pct"], [9.1, 10])
    np.testing.assert_allclose(s["mean"], [5.5, 10])
    np.testing.assert_allclose(s["median"], [5.5, 10])


def test_bootstrap_is_seeded_resampling():
    y = np.arange(50.0)
    a, b = utility.bootstrap(y, 30, seed=1), utility.bootstrap(y, 30, seed=1)
    assert a.shape == (30, 50) and np.array_equal(a, b)
    assert set(np.unique(a)) <= set(y)


def test_intervals_and_tail_distortion():
    long = pd.DataFrame({
        "source": ["Data"] * 4 + ["LW"] * 4,
        "statistic": ["15th pct", "90th pct"] * 4,
        "value": [70, 130, 70, 130, 72, 127, 72, 127],
    })
    assert utility.tail_distortion(long, "LW") == pytest.approx(2 + 3)
    assert utility.tail_distortion(long, "Data") == 0
    table = utility.intervals(long)
    assert table.loc["15th pct", "LW"] == "72.0–72.0"
    with pytest.raises(ValueError, match="no source 'CW'"):
        utility.tail_distortion(long, "CW")


def test_standardized_gap_counts_bias_and_spread():
    import pandas as pd
    from ppmlib.evaluate import utility
    long = pd.DataFrame({"source": ["Data"] * 3 + ["A"] * 2 + ["B"] * 2, "statistic": "mean",
                         "value": [9.0, 10.0, 11.0, 12.0, 12.0, 8.0, 12.0]})
    # data: centre 10, sd 1. A is biased by 2; B is centred but spread +-2: both RMSE 2
    assert utility.standardized_gap(long, "A", statistics=("mean",)) == pytest.approx(2.0)
    assert utility.standardized_gap(long, "B", statistics=("mean",)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no source 'C'"):
        utility.standardized_gap(long, "C", statistics=("mean",))


# --- issue 21: pMSE, the combining rules, interval overlap ----------------------------------------

def test_pmse_by_hand_with_a_saturated_logit():
    # one binary variable: the logit with an intercept and one dummy is saturated, so p_hat in each
    # group is the share of synthetic rows in it. Confidential: 6 "a", 4 "b"; synthetic: 3 "a", 7 "b".
    # group a: 9 rows, p = 3/9; group b: 11 rows, p = 7/11; c = 1/2, N = 20.
    conf = pd.DataFrame({"g": ["a"] * 6 + ["b"] * 4})
    syn = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 7})
    expected = (9 * (3 / 9 - 0.5) ** 2 + 11 * (7 / 11 - 0.5) ** 2) / 20
    out = utility.pmse(conf, syn)
    assert out.parameters == 2
    np.testing.assert_allclose(out.pmse, [expected], rtol=1e-6)
    # the null expectation (k - 1)(1 - c)^2 c / N = 1 * 0.25 * 0.5 / 20
    np.testing.assert_allclose(out.null, [0.25 * 0.5 / 20])
    np.testing.assert_allclose(out.s_pmse, [expected / (0.25 * 0.5 / 20)], rtol=1e-6)


def test_pmse_null_levels_for_resampled_fresh_and_shifted_data():
    rng = np.random.default_rng(11)

    def draw(n, shift=0.0):
        g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
        x = rng.normal(size=n) + np.where(g == "a", 1.0, 0.0) + shift
        return pd.DataFrame({"g": g, "x": x})

    def resample(frame):
        return frame.iloc[rng.integers(0, len(frame), len(frame))].reset_index(drop=True)

    # the logit's closed-form null, (k - 1)(1 - c)^2 c / N, is that of data drawn from the
    # confidential data's own distribution: a resample scores about 1 on average ...
    resampled = [(lambda d: utility.pmse(d, resample(d)).s_pmse[0])(draw(500)) for _ in range(60)]
    assert 0.8 < np.mean(resampled) < 1.25, np.mean(resampled)
    # ... and an independent sample from the generating model about 1 / (1 - c) = 2 (both carry noise)
    fresh = [utility.pmse(draw(500), draw(500)).s_pmse[0] for _ in range(60)]
    assert 1.6 < np.mean(fresh) < 2.5, np.mean(fresh)
    # CART's permutation null is that of two independent samples: fresh samples score about 1
    cart = [utility.pmse(draw(500), draw(500), method="cart", seed=j, permutations=10).s_pmse[0] for j in range(8)]
    assert 0.8 < np.mean(cart) < 1.25, np.mean(cart)
    conf = draw(1000)
    shifted = [draw(1000, shift=0.5) for _ in range(3)]
    assert utility.pmse(conf, shifted).s_pmse.min() > 20
    assert utility.pmse(conf, shifted, method="cart", seed=1, permutations=5).s_pmse.min() > 2


def test_pmse_with_interactions_counts_its_parameters_and_is_seeded():
    conf = pd.DataFrame({"g": ["a", "b"] * 20, "h": ["u"] * 20 + ["v"] * 20, "x": np.arange(40.0)})
    syn = conf.sample(frac=1.0, random_state=0).reset_index(drop=True)
    # main effects g, h, x (3 columns) and the three pairwise products: k = 1 + 3 + 3
    assert utility.pmse(conf, syn, interactions=True).parameters == 7
    a = utility.pmse(conf, [syn, syn], method="cart", seed=3, permutations=3)
    b = utility.pmse(conf, [syn, syn], method="cart", seed=3, permutations=3)
    np.testing.assert_array_equal(a.null, b.null)


def test_pmse_refuses_bad_input():
    conf = pd.DataFrame({"x": [1.0, 2.0]})
    with pytest.raises(ValueError, match="method"):
        utility.pmse(conf, conf, method="forest")
    with pytest.raises(ValueError, match=r"lacks columns \['z'\]"):
        utility.pmse(conf, conf, columns=["z"])
    with pytest.raises(TypeError, match="synthetic"):
        utility.pmse(conf, [1, 2])


def test_combining_rules_by_hand():
    # m = 4 estimates 1, 2, 4, 5 (mean 3, variance 10/3) with variances 1, 1, 2, 2 (mean 1.5)
    out = utility.combine([1.0, 2.0, 4.0, 5.0], [1.0, 1.0, 2.0, 2.0], level=0.9)
    b = 10 / 3
    T = 1.5 + b / 4
    df = 3 * (1 + 1.5 / (b / 4)) ** 2
    assert out["estimate"] == pytest.approx(3.0)
    assert out["b"] == pytest.approx(b)
    assert out["T"] == pytest.approx(T)
    assert out["df"] == pytest.approx(df)
    from scipy import stats
    assert out["upper"] - 3.0 == pytest.approx(stats.t.ppf(0.95, df) * np.sqrt(T))
    # several estimands at once: columns are combined separately
    two = utility.combine([[1.0, 0.0], [3.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(two["b"], [2.0, 0.0])
    assert np.isinf(two["df"][1])          # b = 0: the normal
    with pytest.raises(ValueError, match="m >= 2"):
        utility.combine([1.0], [1.0])


def test_interval_overlap_by_hand():
    assert utility.interval_overlap((0, 2), (1, 3)) == pytest.approx(0.5)
    assert utility.interval_overlap((0, 2), (0, 4)) == pytest.approx(0.75)
    assert utility.interval_overlap((0, 1), (2, 3)) == 0.0
    assert utility.interval_overlap((0, 1), (0, 1)) == 1.0
    with pytest.raises(ValueError, match="lower < upper"):
        utility.interval_overlap((1, 0), (0, 1))


def test_ci_overlap_combines_the_synthetic_datasets():
    conf = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0]})
    syn = [pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0]}), pd.DataFrame({"y": [2.0, 3.0, 4.0, 5.0]})]
    table = utility.ci_overlap(conf, syn, utility.mean_of("y"), level=0.95)
    row = table.iloc[0]
    # confidential: mean 2.5, variance (5/3)/4; synthetic: q = 3, b = 0.5, v = 5/12, T = 5/12 + 0.25
    from scipy import stats
    half_o = stats.norm.ppf(0.975) * np.sqrt(5 / 12)
    assert (row["conf. lower"], row["conf. upper"]) == pytest.approx((2.5 - half_o, 2.5 + half_o))
    df = 1 * (1 + (5 / 12) / 0.25) ** 2
    half_s = stats.t.ppf(0.975, df) * np.sqrt(5 / 12 + 0.25)
    assert (row["syn. lower"], row["syn. upper"]) == pytest.approx((3 - half_s, 3 + half_s))
    assert row["overlap"] == pytest.approx(utility.interval_overlap((2.5 - half_o, 2.5 + half_o),
                                                                    (3 - half_s, 3 + half_s)))


def test_ols_and_quantile_estimands():
    frame = pd.DataFrame({"g": ["a", "a", "b", "b", "b"], "y": [1.0, 3.0, 5.0, 6.0, 7.0]})
    names, beta, var = utility.ols_of("y", ["g"])(frame)
    assert names == ["beta (Intercept)", "beta g=b"]
    np.testing.assert_allclose(beta, [2.0, 4.0])              # group means 2 and 6
    rss = 2 + 2                                               # (1-2)^2+(3-2)^2 + (5-6)^2+(7-6)^2
    sigma2 = rss / (5 - 2)
    np.testing.assert_allclose(var, [sigma2 / 2, sigma2 * (1 / 2 + 1 / 3)])
    names, q, v = utility.quantile_of("y", 0.5, B=50, seed=1)(frame)
    assert q[0] == 5.0 and v[0] > 0
    assert utility.quantile_of("y", 0.5, B=50, seed=1)(frame)[2][0] == v[0]   # seeded
