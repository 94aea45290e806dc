"""ppmlib.evaluate.coverage against a hand computation: two-group means, Reiter's (2003) rules written out."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppmlib.errors import BadArgument
from ppmlib.evaluate.coverage import coefficient_coverage, coverage_rate


def _frame(a, b):
    return pd.DataFrame({"g": ["a"] * len(a) + ["b"] * len(b), "y": np.r_[a, b]})


def _by_hand(a, b):
    """Intercept = mean a, slope = mean b - mean a; variances s^2/n_a and s^2 (1/n_a + 1/n_b)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    s2 = (((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()) / (len(a) + len(b) - 2)
    return np.array([a.mean(), b.mean() - a.mean()]), np.array([s2 / len(a), s2 * (1 / len(a) + 1 / len(b))])


def test_the_intervals_and_coverage_match_a_hand_computation():
    confidential = _frame([1.0, 2.0, 3.0, 2.0], [4.0, 5.0, 6.0])
    synthetic = [_frame([1.5, 2.0, 2.5, 2.0], [4.0, 4.5, 5.5]), _frame([0.5, 2.5, 3.5, 1.5], [5.0, 6.0, 7.0]),
                 _frame([1.0, 1.0, 3.0, 4.0], [3.0, 3.5, 4.0])]
    q, v = zip(*(_by_hand(f.y[f.g == "a"], f.y[f.g == "b"]) for f in synthetic))
    q, v, m = np.array(q), np.array(v), 3
    b, vbar = q.var(axis=0, ddof=1), v.mean(axis=0)
    T, df = vbar + b / m, (m - 1) * (1 + vbar / (b / m)) ** 2
    half = stats.t.ppf(0.975, df) * np.sqrt(T)
    lower, upper = q.mean(0) - half, q.mean(0) + half
    truth, _ = _by_hand([1.0, 2.0, 3.0, 2.0], [4.0, 5.0, 6.0])
    table = coefficient_coverage(confidential, synthetic, "y", ["g"])
    assert table["term"].tolist() == ["beta (Intercept)", "beta g=b"]
    assert np.allclose(table["confidential"], truth) and np.allclose(table["lower"], lower)
    assert np.allclose(table["upper"], upper)
    assert table["covered"].tolist() == [bool(lo <= t <= hi) for lo, t, hi in zip(lower, truth, upper)]
    assert coverage_rate(confidential, synthetic, "y", ["g"]) == pytest.approx(np.mean(table["covered"]))


def test_a_release_far_from_the_data_covers_nothing_and_a_copy_everything():
    rng = np.random.default_rng(1)
    confidential = _frame(rng.normal(0, 1, 200), rng.normal(1, 1, 200))
    copies = [confidential.assign(y=confidential.y + rng.normal(0, 0.01, 400)) for _ in range(5)]
    shifted = [_frame(rng.normal(3, 1, 200), rng.normal(-2, 1, 200)) for _ in range(5)]
    assert coverage_rate(confidential, copies, "y", ["g"]) == 1.0
    assert coverage_rate(confidential, shifted, "y", ["g"]) == 0.0


def test_one_dataset_is_refused():
    frame = _frame([1.0, 2.0], [3.0, 4.0])
    with pytest.raises(BadArgument, match="m >= 2"):
        coefficient_coverage(frame, [frame], "y", ["g"])
