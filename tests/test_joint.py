"""ppmlib.mechanism.joint: the joint bound of a sequential synthesis, its weighting schemes, the sequential
draws, and the release that states one epsilon for the whole record."""
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import ppmlib
from ppmlib.mechanism import joint
from ppmlib.models.families import family
from ppmlib.inference.posterior import Fit

TINY = ppmlib.Sampler(chains=2, draws=150, warmup=150)


def normal_fit(y, X, beta, sigma, weights=None) -> Fit:
    """A Fit of the normal regression with the given draws (no Stan): beta (S, K), sigma (S,)."""
    y = np.asarray(y, float)
    w = np.ones(y.size) if weights is None else np.asarray(weights, float)
    return Fit(family("normal"), y, np.asarray(X, float), w, {"beta": np.asarray(beta, float),
               "sigma": np.asarray(sigma, float)}, {}, 1, "none", 0)


@pytest.fixture(scope="module")
def two_fits():
    """Two conditionals on 30 records with 50 draws each: u | 1 and v | 1, u."""
    rng = np.random.default_rng(7)
    u = rng.normal(size=30)
    v = 0.5 * u + rng.normal(size=30)
    first = normal_fit(u, np.ones((30, 1)), rng.normal(0, 0.3, (50, 1)), rng.uniform(0.05, 1.5, 50))
    second = normal_fit(v, np.column_stack([np.ones(30), u]), rng.normal(0.5, 0.3, (50, 2)), rng.uniform(0.05, 1.5, 50))
    return first, second


# --- the joint bound, from draws ----------------------------------------------------------------

@pytest.mark.parametrize("weights", ["one per record", "one per record and conditional"])
def test_joint_bound_is_the_max_over_paired_draws_of_the_weighted_sum(two_fits, weights):
    first, second = two_fits
    rng = np.random.default_rng(3)
    alpha = rng.uniform(size=30) if weights == "one per record" else rng.uniform(size=(30, 2))
    a1, a2 = (alpha, alpha) if alpha.ndim == 1 else (alpha[:, 0], alpha[:, 1])
    by_hand = np.abs(a1 * first.log_lik + a2 * second.log_lik).max(axis=0)       # draw s with draw s
    bounds = joint.joint_bounds([first, second], alpha, max_elements=7 * 30)     # several blocks of draws
    np.testing.assert_allclose(bounds.paired, by_hand, rtol=0, atol=1e-12)
    # every combination of draws, by brute force: S x S sums per record
    every = np.abs((a1 * first.log_lik)[:, None, :] + (a2 * second.log_lik)[None, :, :]).max(axis=(0, 1))
    np.testing.assert_allclose(bounds.all_pairs, every, rtol=0, atol=1e-12)
    each = np.column_stack([ppmlib.record_bounds(first, a1), ppmlib.record_bounds(second, a2)])
    np.testing.assert_allclose(bounds.conditional, each, rtol=0, atol=1e-12)
    assert np.all(bounds.paired <= bounds.all_pairs + 1e-12)
    assert np.all(bounds.all_pairs <= bounds.summed + 1e-12)
    assert bounds.paired.max() < bounds.summed.max()   # here the sum's maxima do not all fall on one draw


def test_joint_bound_of_opposite_signs_cancels():
    # the example of joint_bounds' docstring: log-likelihoods (-1, -3, -2) and (+2.5, -0.2, -1) on three draws.
    # y = 0 under N(0, sigma): log N = -log(sigma) - log(2 pi) / 2, so pick sigma for each wanted value
    def fit_with(log_liks):
        return normal_fit([0.0], [[1.0]], np.zeros((3, 1)), np.exp(-np.asarray(log_liks) - 0.5 * np.log(2 * np.pi)))
    b = joint.joint_bounds([fit_with([-1.0, -3.0, -2.0]), fit_with([2.5, -0.2, -1.0])], [1.0])
    np.testing.assert_allclose([b.paired[0], b.all_pairs[0], b.summed[0]], [3.2, 4.0, 5.5], atol=1e-12)


def test_a_zero_weight_keeps_the_joint_bound_finite():
    fits = [normal_fit([0.0, 1e200], [[1.0], [1.0]], [[0.0]], [1e-200]) for _ in range(2)]  # record 1: f = -inf
    with np.errstate(over="ignore"):  # record 1's z-score overflows on purpose
        b = joint.joint_bounds(fits, [1.0, 0.0])
    assert np.isfinite(b.paired).all() and b.paired[1] == 0.0 and b.all_pairs[1] == 0.0


@pytest.mark.parametrize("call, error, match", [
    (lambda f: joint.joint_bounds([f[0]], np.ones(30)), None, None),
    (lambda f: joint.joint_bounds([f[0], f[1]], np.ones((30, 3))), ValueError, r"weights must have shape \(30,\) or \(30, 2\)"),
    (lambda f: joint.joint_bounds([f[0], f[1].subset(np.arange(50) < 40)], np.ones(30)), ValueError,
     "fits\\[1\\] has 30 records and 40 draws"),
    (lambda f: joint.joint_bounds([f[0], "fit"], np.ones(30)), TypeError, "fits must be a non-empty sequence"),
    (lambda f: joint.joint_bounds(f, np.full(30, 1.5)), ValueError, "weights"),
])
def test_joint_bounds_refuses_mismatched_inputs(two_fits, call, error, match):
    if error is None:
        call(two_fits)  # one conditional is allowed: the ordinary bound
        return
    with pytest.raises(error, match=match):
        call(two_fits)


# --- estimands of a pair --------------------------------------------------------------------------

def test_pair_statistics_match_numpy():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(3, 40)), rng.normal(size=(3, 40))
    y = y + 0.7 * x
    stats = joint.pair_statistics(x, y)
    for l in range(3):
        slope, intercept = np.polyfit(x[l], y[l], 1)
        assert stats["correlation"][l] == pytest.approx(np.corrcoef(x[l], y[l])[0, 1], abs=1e-12)
        assert stats["slope"][l] == pytest.approx(slope, abs=1e-12)
        assert stats["intercept"][l] == pytest.approx(intercept, abs=1e-12)


def test_pair_long_table_resamples_records_as_pairs():
    x = np.arange(50.0)
    long = joint.pair_long_table(x, 2 * x + 1, {"S": (x[None, :], 3 * x[None, :])}, B=20, seed=0)
    data = long[long["source"] == "Data"].pivot(columns="statistic", values="value")
    # resampling whole records keeps y = 2x + 1 exactly: a resampler that broke the pairs would not
    np.testing.assert_allclose(data["slope"].dropna(), 2.0)
    np.testing.assert_allclose(data["correlation"].dropna(), 1.0)
    assert long[long["source"] == "S"].set_index("statistic")["value"]["slope"] == pytest.approx(3.0)


# --- attribute risk with the synthetic records' own means -------------------------------------------

def test_attribute_risk_with_synthetic_means_matches_a_direct_computation():
    rng = np.random.default_rng(5)
    n, H, m = 4, 3, 2
    y = rng.normal(size=n)
    mu, mu_syn = rng.normal(size=(H, n)), rng.normal(size=(m, H, n))
    sigma = rng.uniform(0.5, 1.5, H)
    z = rng.normal(size=(m, n))
    offsets = np.array([-1.0, 0.0, 1.0])
    risk = ppmlib.attribute_risk(y, z, mu, sigma, offsets, mu_synthetic=mu_syn)
    from scipy import stats
    expected = np.empty((n, offsets.size))
    for i in range(n):
        for g, d in enumerate(offsets):
            w = stats.norm.pdf(y[i] + d, mu[:, i], sigma) / stats.norm.pdf(y[i], mu[:, i], sigma)
            q = w / w.sum()
            evidence = 1.0
            for l in range(m):
                p = np.prod(stats.norm.pdf(z[l][None, :], mu_syn[l], sigma[:, None]), axis=1)
                evidence *= p @ q
            expected[i, g] = evidence
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(risk.probs, expected, rtol=1e-10)
    # the same means for every dataset, or none given: the usual estimator
    same = ppmlib.attribute_risk(y, z, mu, sigma, offsets, mu_synthetic=mu)
    np.testing.assert_allclose(same.probs, ppmlib.attribute_risk(y, z, mu, sigma, offsets).probs, rtol=1e-12)
    with pytest.raises(ValueError, match=r"mu_synthetic must be \(H, n\) or \(m, H, n\)"):
        ppmlib.attribute_risk(y, z, mu, sigma, offsets, mu_synthetic=mu_syn[:1, :2])


# --- the synthesizer on Stan fits ------------------------------------------------------------------

def bivariate(n=1500, rho=0.6, seed=11, extreme=None):
    """u ~ N(0, 1), v = rho u + sqrt(1 - rho^2) e: correlation rho. ``extreme`` puts record 0 at u = extreme
    with v on its regression line (ordinary given u)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=n)
    v = rho * u + np.sqrt(1 - rho**2) * rng.normal(size=n)
    if extreme is not None:
        u[0], v[0] = extreme, rho * extreme
    return pd.DataFrame({"u": u, "v": v, "group": np.where(rng.uniform(size=n) < 0.5, "a", "b")})


CONDITIONALS = (joint.Conditional("u"), joint.Conditional("v", given=("u",)))


@pytest.fixture(scope="module")
def extreme_pair():
    df = bivariate(n=400, extreme=7.0)
    unweighted = joint.joint_synthesizer(CONDITIONALS, df, m=5, sampler=TINY, seed=1, name="Unweighted")
    return df, unweighted


@pytest.mark.stan
def test_sequential_synthesis_recovers_a_known_correlation():
    df = bivariate()
    result = joint.joint_synthesizer(CONDITIONALS, df, m=20, sampler=TINY, seed=3)
    r = joint.pair_statistics(result.synthetic_of("u"), result.synthetic_of("v"))["correlation"]
    # the sampling sd of r at n = 1500 is about 0.017; v drawn given the *confidential* u would give r near 0
    assert abs(r.mean() - 0.6) < 0.05
    assert result.synthetic.shape == (20, 1500, 2)


@pytest.mark.stan
def test_the_synthesizer_s_bounds_are_those_of_its_conditional_fits(extreme_pair):
    df, unweighted = extreme_pair
    lw = joint.joint_synthesizer(CONDITIONALS, df, "joint", base=unweighted, c=0.8, m=5, sampler=TINY, seed=2)
    fu, fv = lw.parts["u"].fit, lw.parts["v"].fit
    alpha = lw.weights[:, 0]
    by_hand = np.abs(alpha * fu.log_lik + alpha * fv.log_lik).max(axis=0)
    np.testing.assert_allclose(lw.bounds.paired, by_hand, rtol=0, atol=1e-12)
    assert lw.delta == pytest.approx(by_hand.max(), abs=1e-12) and lw.epsilon == pytest.approx(2 * by_hand.max())
    assert np.all(lw.bounds.paired <= lw.bounds.conditional.sum(axis=1) + 1e-12)
    assert lw.composed_delta == pytest.approx(lw.parts["u"].delta + lw.parts["v"].delta)
    assert lw.epsilon <= lw.composed_epsilon
    # the joint weights: LW on the unweighted synthesizer's joint bound, the same in both conditionals
    expected = ppmlib.lw_weights(unweighted.bounds.paired[None, :], c=0.8)
    np.testing.assert_array_equal(lw.weights, np.column_stack([expected, expected]))


@pytest.mark.stan
def test_a_record_extreme_in_one_variable_only_gets_a_low_weight_under_the_joint_scheme(extreme_pair):
    df, unweighted = extreme_pair
    both = joint.joint_synthesizer(CONDITIONALS, df, "joint", base=unweighted, m=5, sampler=TINY, seed=2)
    each = joint.joint_synthesizer(CONDITIONALS, df, "per_variable", base=unweighted, m=5, sampler=TINY, seed=2)
    # record 0 is 7 sd out in u and on the regression line in v: the joint bound sees its u term
    assert both.weights[0, 0] == both.weights[0, 1] <= 0.05
    assert np.argmin(both.weights[:, 0]) == 0
    assert each.weights[0, 0] <= 0.05 and each.weights[0, 1] >= 0.5  # per variable, v sees nothing unusual


@pytest.mark.stan
def test_a_joint_release_states_the_joint_epsilon_and_nothing_confidential(extreme_pair, tmp_path):
    df, unweighted = extreme_pair
    csv_path, json_path = ppmlib.release(unweighted, tmp_path / "pair")
    table = pd.read_csv(csv_path)
    assert list(table.columns) == [f"dataset_{l}_{v}" for l in range(1, 6) for v in ("u", "v")]
    np.testing.assert_array_equal(table["dataset_3_v"], unweighted.synthetic_of("v")[2])
    meta = json.loads(json_path.read_text())
    assert meta["variables"] == ["u", "v"] and meta["model"] == {"u": "normal", "v": "normal"}
    assert meta["epsilon_per_dataset"] == pytest.approx(2 * unweighted.delta)
    assert meta["total_epsilon"] == pytest.approx(5 * 2 * unweighted.delta)
    assert "whole record" in meta["epsilon_covers"]
    text = csv_path.read_text() + json_path.read_text()
    for secret in (unweighted.bounds.paired[:20], df["u"].to_numpy()[:20]):
        assert not any(repr(float(x)) in text for x in secret)


@pytest.mark.stan
def test_matching_the_composed_delta(extreme_pair):
    df, unweighted = extreme_pair
    lw = joint.joint_synthesizer(CONDITIONALS, df, "joint", base=unweighted, c=0.8, m=5, sampler=TINY, seed=2)

    def make(c):
        return joint.joint_synthesizer(CONDITIONALS, df, "per_variable", base=unweighted, c=c, m=5, sampler=TINY,
                                       seed=4)
    found = joint.match_joint(make, lw.delta, on="composed", start=0.5, low=0.0, high=2.0, rtol=0.05, progress=False)
    assert abs(found.composed_delta / lw.delta - 1) <= 0.05
    assert found.calibration["on"] == "composed Delta" and found.calibration["target"] == lw.delta


def test_the_synthesizer_refuses_bad_specifications_before_fitting():
    df = bivariate(n=20)
    with pytest.raises(ValueError, match=r"'v' is given \['w'\], which are not earlier"):
        joint.joint_synthesizer([joint.Conditional("u"), joint.Conditional("v", given=("w",))], df, sampler=TINY)
    with pytest.raises(ValueError, match="unknown scheme 'lw'"):
        joint.joint_synthesizer(CONDITIONALS, df, "lw", sampler=TINY, m=1)
    with pytest.raises(TypeError, match="scheme 'joint' needs base="):
        joint.joint_synthesizer(CONDITIONALS, df, "joint", sampler=TINY, m=1)
    with pytest.raises(ValueError, match=r"columns \['x'\] of the conditional for 'x' are not in the data"):
        joint.joint_synthesizer([joint.Conditional("x")], df, sampler=TINY)
    with pytest.raises(ValueError, match=r"centres \['v'\], which it is not given"):
        joint.joint_synthesizer([joint.Conditional("u", centres={"v": 1.0})], df, sampler=TINY)
    with pytest.raises(ValueError, match="m = 301 synthetic datasets need at least m draws"):
        joint.joint_synthesizer(CONDITIONALS, df, m=301, sampler=TINY)
    with pytest.raises(ValueError, match="on must be 'joint' or 'composed'"):
        joint.match_joint(lambda c: None, 1.0, on="both")
    with pytest.raises(TypeError, match="data must be a pandas DataFrame with one row per record, got dict"):
        joint.joint_synthesizer(CONDITIONALS, {"u": [1.0], "v": [2.0]}, sampler=TINY)


@pytest.mark.stan
def test_a_base_of_other_conditionals_is_refused(extreme_pair):
    df, unweighted = extreme_pair
    swapped = (joint.Conditional("v"), joint.Conditional("u", given=("v",)))
    with pytest.raises(ValueError, match=r"conditionals for \['u', 'v'\]; these are 400 records with conditionals "
                                         r"for \['v', 'u'\]"):
        joint.joint_synthesizer(swapped, df, "per_variable", base=unweighted, m=1, sampler=TINY)


def test_interval_widths_are_the_central_quantile_ranges():
    from ppmlib.studies import multivariate
    values = np.arange(101.0)
    long = pd.DataFrame({"source": ["A"] * 101 + ["B"] * 101, "statistic": "slope",
                         "value": np.concatenate([values, 2 * values])})
    widths = multivariate.interval_widths(long)
    assert widths.loc["slope", "A"] == pytest.approx(95.0) and widths.loc["slope", "B"] == pytest.approx(190.0)
    assert multivariate.interval_widths(long, level=0.5).loc["slope", "A"] == pytest.approx(50.0)


def test_pair_pmse_scores_both_columns_together_and_sees_a_lost_dependence():
    from ppmlib.studies import multivariate
    from ppmlib.evaluate.utility import pmse
    rng = np.random.default_rng(2)
    x = rng.normal(size=600)
    data = pd.DataFrame({"log_expenditure": x, "log_income": x + rng.normal(0, 0.3, 600), "other": 1.0})

    def synthesis(pairs):      # (m, n, 2) in the order of multivariate.VARIABLES
        synthetic = np.stack(pairs)
        return SimpleNamespace(synthetic=synthetic, synthetic_of=lambda v: synthetic[:, :, multivariate.VARIABLES.index(v)])
    kept = [(x2 := rng.normal(size=600), x2 + rng.normal(0, 0.3, 600)) for _ in range(2)]
    # the same margins, the dependence lost: income shuffled against expenditure
    lost = [(x, rng.permutation(data["log_income"].to_numpy())) for _ in range(2)]
    results = {"kept": synthesis([np.column_stack(p) for p in kept]), "lost": synthesis([np.column_stack(p) for p in lost])}
    table = multivariate.pair_pmse(data, results)
    direct = pmse(data[["log_expenditure", "log_income"]],
                  [pd.DataFrame({"log_expenditure": e, "log_income": i}) for e, i in lost], interactions=True)
    assert table.loc["lost", "S_pMSE"] == pytest.approx(direct.summary()["S_pMSE"], rel=1e-12)
    assert table.loc["kept", "S_pMSE"] < 3 < 30 < table.loc["lost", "S_pMSE"]


def test_the_chapter_asserts_estimates_only_when_every_fit_passes_the_diagnostics_gate():
    from ppmlib.studies import multivariate

    def result(delta, composed, weight, ess):
        bounds = SimpleNamespace(paired=np.array([1.0]), summed=np.array([1.5]))
        return SimpleNamespace(delta=delta, epsilon=2 * delta, composed_delta=composed, composed_epsilon=2 * composed,
                               weights=np.full((3, 2), weight), bounds=bounds,
                               diagnostics={"max_rhat": 1.001, "min_ess_bulk": ess, "min_ess_tail": ess, "divergences": 0})
    utility = pd.DataFrame({"Data": [0.6], "LW joint": [0.61]},
                           index=pd.MultiIndex.from_tuples([("pair", "correlation")]))
    widths = pd.DataFrame({name: [1.0] for name in multivariate.NAMES}, index=["slope"])
    risk = pd.DataFrame({"median P(true)": [0.09] * 4}, index=list(multivariate.NAMES))
    for ess, raises in ((1000, True), (100, False)):
        # composition states only 2% more than the joint account: below saving_min = 1.1, a claim that fails
        results = dict(zip(multivariate.NAMES, (result(20, 26, 1.0, ess), result(5, 8, 0.6, ess),
                                                result(5, 5.1, 0.5, ess), result(4, 5, 0.4, ess))))
        claims = multivariate.claims(results, utility, widths, risk, rtol=0.05)
        failing = [r["claim"] for r in claims.rows if not r["holds"] and r["checked"]]
        assert failing == (["at equal protection of the record, composing per-variable epsilons overstates the cost"]
                           if raises else [])
    # every asserted row declares its null and fails on it; the matching rows hold by construction: reported
    rows = {r["claim"]: r for r in claims.rows}
    kept = rows["LW joint keeps the income-expenditure correlation"]
    assert (kept["holds"], kept["null"], kept["power"]) == (True, 0.6, True)   # 0.6: the correlation lost
    assert rows["LW joint's Delta far below Unweighted's"]["null"] == 1.0
    assert not rows["LW per variable matched to LW joint's joint Delta"]["checked"]
