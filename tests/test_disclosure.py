"""Attribute-disclosure risk by importance sampling, against the slides' literal loop and by hand."""
import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from oracles.literal import literal_attribute_risk
from ppmlib.evaluate.disclosure import DEFAULT_OFFSETS, attribute_risk, guess_table


@pytest.fixture
def problem():
    rng = np.random.default_rng(4)
    n, H = 12, 7
    x = rng.normal(size=n)
    y = 1.0 + 0.8 * x + rng.normal(scale=0.6, size=n)
    beta = rng.normal([1.0, 0.8], 0.1, size=(H, 2))
    sigma = rng.uniform(0.5, 0.8, H)
    mu = beta[:, :1] + beta[:, 1:] * x
    z = mu[0] + rng.normal(scale=sigma[0], size=n)
    return y, z, mu, sigma


def test_matches_the_slides_literal_loop(problem):
    y, z, mu, sigma = problem
    risk = attribute_risk(y, z, mu, sigma)
    np.testing.assert_allclose(risk.probs, literal_attribute_risk(y, z, mu, sigma, DEFAULT_OFFSETS), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(risk.probs.sum(axis=1), 1.0)
    np.testing.assert_allclose(risk.prob_true, risk.probs[:, 5])
    np.testing.assert_allclose(risk.guesses[:, 5], y)


def test_one_draw_gives_uniform_guesses(problem):
    # with H = 1, q_h = 1 for every guess: p(Z | y*) = p_1 does not depend on the guess
    y, z, mu, sigma = problem
    risk = attribute_risk(y, z, mu[:1], sigma[:1])
    np.testing.assert_allclose(risk.probs, 1 / 11)
    assert (risk.rank_true == 1).all()  # all tied: the best rank


def test_two_draws_by_hand():
    # n = 1, H = 2, guesses {-1, 0, +1} around y = 0; mu = (0, 1), sigma = 1 for both draws
    y, z = np.array([0.0]), np.array([0.5])
    mu, sigma, offsets = np.array([[0.0], [1.0]]), np.array([1.0, 1.0]), np.array([-1.0, 0.0, 1.0])
    # p_h = N(0.5 | mu_h, 1) is the same for both draws, so p(Z | y*) is proportional to sum_h q_h = 1:
    # uniform. Move z to 1 so that draw 2 fits better: p = (N(1|0), N(1|1)).
    z = np.array([1.0])
    p = stats.norm.pdf(1.0, [0.0, 1.0], 1.0)
    expected = []
    for guess in offsets:
        w = stats.norm.pdf(guess, [0.0, 1.0], 1.0) / stats.norm.pdf(0.0, [0.0, 1.0], 1.0)
        expected.append((p * w / w.sum()).mean())
    expected = np.array(expected) / np.sum(expected)
    risk = attribute_risk(y, z, mu, sigma, offsets)
    np.testing.assert_allclose(risk.probs[0], expected, rtol=1e-12)
    assert risk.probs[0, 2] > risk.probs[0, 1] > risk.probs[0, 0]  # the data pull the guess upwards
    assert risk.rank_true[0] == 2


def test_several_datasets_multiply(problem):
    y, z, mu, sigma = problem
    z2 = z[::-1].copy()
    both = attribute_risk(y, np.vstack([z, z2]), mu, sigma)
    log_each = [np.log(attribute_risk(y, zz, mu, sigma).probs) for zz in (z, z2)]
    # per dataset the probabilities are normalised p(Z_l | y*); the product renormalised is the joint
    joint = np.exp(log_each[0] + log_each[1])
    np.testing.assert_allclose(both.probs, joint / joint.sum(axis=1, keepdims=True), rtol=1e-9)


def test_rank_with_ties_takes_the_best_rank():
    # offsets symmetric and a model mean equal to the truth: guesses +-d are tied
    y = np.array([0.0, 0.0])
    mu = np.array([[0.0, 0.0], [0.3, 0.3]])
    risk = attribute_risk(y, np.array([0.3, 0.3]), mu, np.array([1.0, 1.0]), offsets=np.array([-0.5, 0.0, 0.5]))
    rank = 1 + (risk.probs > risk.prob_true[:, None]).sum(axis=1)
    np.testing.assert_array_equal(risk.rank_true, rank)
    assert risk.rank_true.min() >= 1 and risk.rank_true.max() <= 3


def test_guess_table_sorted(problem):
    y, z, mu, sigma = problem
    table = guess_table(attribute_risk(y, z, mu, sigma), 3)
    assert list(table.columns) == ["guess", "offset", "probability", "true value"]
    assert (np.diff(table["probability"]) <= 0).all() and table["true value"].sum() == 1


@pytest.mark.parametrize("change, error, match", [
    (dict(z=np.zeros(5)), ValueError, "z must be"),
    (dict(mu=np.zeros((7, 5))), ValueError, "mu must be"),
    (dict(sigma=np.ones(3)), ValueError, "sigma must be"),
    (dict(sigma=np.r_[np.ones(6), 0.0]), ValueError, "sigma must be positive"),
    (dict(y=np.r_[np.nan, np.ones(11)]), ValueError, "y has 1 non-finite"),
    (dict(offsets=np.array([-1.0, 1.0])), ValueError, "offsets must contain 0"),
    (dict(offsets=np.zeros((2, 2))), ValueError, "offsets must be 1-dimensional"),
    (dict(z="abc"), TypeError, "z must be numeric"),
])
def test_bad_input(problem, change, error, match):
    y, z, mu, sigma = problem
    args = dict(y=y, z=z, mu=mu, sigma=sigma, offsets=None) | change
    with pytest.raises(error, match=match):
        attribute_risk(**args)


@pytest.mark.stan
def test_risk_inputs_from_a_normal_fit():
    import ppmlib
    from ppmlib.evaluate.disclosure import risk_inputs
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    X = np.column_stack([np.ones_like(x), x])
    fit = ppmlib.fit("normal", 1 + x + rng.normal(size=40), X=X, seed=2, sampler=ppmlib.Sampler(draws=100, warmup=100))
    mu, sigma = risk_inputs(fit, 7)
    idx = np.linspace(0, fit.n_draws - 1, 7).round().astype(int)
    np.testing.assert_allclose(mu, fit.draws["beta"][idx] @ X.T)
    np.testing.assert_allclose(sigma, fit.draws["sigma"][idx])
    with pytest.raises(ValueError, match="H = 1000 draws requested"):
        risk_inputs(fit, 1000)
    counts = ppmlib.fit("poisson", [1, 2, 3], seed=1, sampler=ppmlib.Sampler(draws=50, warmup=50))
    with pytest.raises(ValueError, match="needs a normal synthesizer"):
        risk_inputs(counts, 5)


def exact_normal_guess_probs(y, z, alpha, sigma, prior_sd, offsets):
    """Brute force over the guesses with the exact weighted pseudo posterior (a 'refit' per guess).

    Model: y_j ~ N(mu, sigma) with sigma known, prior mu ~ N(0, prior_sd). The alpha-weighted pseudo
    posterior of mu is normal with precision P = 1 / prior_sd^2 + sum(alpha) / sigma^2 and mean
    sum(alpha y) / (sigma^2 P). Given that posterior, the synthetic data's likelihood depends on mu
    only through zbar: p(Z | y*) is proportional to N(zbar | mean(y*), sigma^2 / n_z + 1 / P).
    """
    precision = 1 / prior_sd**2 + alpha.sum() / sigma**2
    probs = np.empty((y.size, offsets.size))
    for i in range(y.size):
        for g, d in enumerate(offsets):
            guess = y.copy()
            guess[i] += d
            mean = (alpha * guess).sum() / sigma**2 / precision
            probs[i, g] = stats.norm.pdf(z.mean(), mean, np.sqrt(sigma**2 / z.size + 1 / precision))
    return probs / probs.sum(axis=1, keepdims=True)


@pytest.fixture
def conjugate():
    """A tiny normal model with known sigma; H deterministic posterior draws (quantiles of the exact posterior)."""
    y = np.array([0.3, -0.4, 1.1, 2.9])
    alpha = np.array([1.0, 0.7, 0.4, 0.15])
    sigma, prior_sd, H = 1.0, 10.0, 200_000
    z = np.array([2.2, 1.4, 2.9, 0.8])                       # a synthetic dataset well above the data's mean
    precision = 1 / prior_sd**2 + alpha.sum() / sigma**2
    centre = (alpha * y).sum() / sigma**2 / precision
    draws = centre + stats.norm.ppf((np.arange(H) + 0.5) / H) / np.sqrt(precision)
    mu = np.repeat(draws[:, None], y.size, axis=1)            # (H, n): every record has mean mu_h
    return y, z, alpha, sigma, prior_sd, mu, np.full(H, sigma)


def test_weighted_ratios_match_an_exact_refit(conjugate):
    y, z, alpha, sigma, prior_sd, mu, sig = conjugate
    exact = exact_normal_guess_probs(y, z, alpha, sigma, prior_sd, DEFAULT_OFFSETS)
    risk = attribute_risk(y, z, mu, sig, weights=alpha)
    np.testing.assert_allclose(risk.probs, exact, rtol=1e-3)  # Monte Carlo: H quantile draws, truncated tails
    # the unweighted ratios are the intruder who ignores alpha: off by far more than the tolerance
    ignorant = attribute_risk(y, z, mu, sig).probs
    assert np.abs(ignorant[3] / exact[3] - 1).max() > 0.2
    np.testing.assert_allclose(ignorant[0], exact[0], rtol=1e-3)  # alpha_1 = 1: nothing to ignore


def test_unweighted_is_weights_one(problem):
    y, z, mu, sigma = problem
    np.testing.assert_array_equal(attribute_risk(y, z, mu, sigma).probs,
                                  attribute_risk(y, z, mu, sigma, weights=np.ones(y.size)).probs)
    zero = attribute_risk(y, z, mu, sigma, weights=np.zeros(y.size))
    np.testing.assert_allclose(zero.probs, 1 / DEFAULT_OFFSETS.size)  # weight 0: the record does not enter the fit
    with pytest.raises(ValueError, match=r"weights must lie in \[0, 1\]"):
        attribute_risk(y, z, mu, sigma, weights=np.full(y.size, 1.5))


def test_draw_share_is_the_normalised_synthetic_likelihood(problem):
    y, z, mu, sigma = problem
    share = attribute_risk(y, np.vstack([z, z[::-1]]), mu, sigma).draw_share
    log_p = stats.norm.logpdf(z, mu, sigma[:, None]).sum(axis=1) + stats.norm.logpdf(z[::-1], mu, sigma[:, None]).sum(axis=1)
    np.testing.assert_allclose(share, np.exp(log_p - logsumexp(log_p)), rtol=1e-10)


def test_risk_by_m_and_summary_by_hand(problem):
    from ppmlib.evaluate.disclosure import risk_by_m, risk_summary
    y, z, mu, sigma = problem
    zs = np.vstack([z, z[::-1], z + 0.1])
    sigma_draws = np.linspace(0.4, 0.9, 101)
    risks, table = risk_by_m(y, zs, mu, sigma, [3, 1], sigma_draws)
    assert list(table.index) == [1, 3]
    np.testing.assert_array_equal(risks[3].probs, attribute_risk(y, zs, mu, sigma).probs)
    share = risks[1].draw_share
    effective = float(share @ sigma)
    assert table.loc[1, "effective sigma"] == pytest.approx(effective)
    assert table.loc[1, "its percentile among the sigma draws"] == pytest.approx(np.mean(sigma_draws < effective))
    assert table.loc[1, "draws that matter"] == pytest.approx(1 / np.sum(share**2))
    assert table.loc[3, "mean rank"] == pytest.approx(risks[3].rank_true.mean())
    with pytest.raises(ValueError, match="m_values go up to 4"):
        risk_by_m(y, zs, mu, sigma, [4], sigma_draws)
    with pytest.raises(ValueError, match="sigma_h must have one value per draw"):
        risk_summary(risks[1], sigma[:3], sigma_draws)


def test_an_underflowing_likelihood_is_refused_not_returned_as_nan():
    """Issue 24, point 6: with z far from every draw and a tiny sigma, every probability was NaN."""
    y = np.array([10.0, 11.0, 12.0])
    mu, sigma = np.zeros((4, 3)), np.full(4, 1e-170)
    with pytest.raises(ValueError, match=r"attribute risk is undefined for 3 of 3 records: .* sigma is not tiny"):
        attribute_risk(y, y + 1e6, mu, sigma)


def test_expected_risk_means_and_welch_interval_by_hand():
    import pandas as pd
    from scipy import stats

    from ppmlib.evaluate.disclosure import expected_risk
    by = {"U": pd.DataFrame({"mean P(true)": [1.0, 2.0, 3.0]}), "LW": pd.DataFrame({"mean P(true)": [2.0, 4.0, 6.0, 8.0]})}
    table = expected_risk(by)
    u, lw = table.loc["U"], table.loc["LW"]
    assert u["mean"] == 2.0 and u["high"] == pytest.approx(2.0 + stats.t.ppf(0.975, 2) / np.sqrt(3))   # sd 1
    # LW - U = 3; variances of the means 20/3/4 = 5/3 and 1/3; Welch df = 4 / ((5/3)^2 / 3 + (1/3)^2 / 2) = 4.0755
    assert lw["minus U"] == 3.0
    assert lw["diff high"] - 3.0 == pytest.approx(stats.t.ppf(0.975, 4 / ((5 / 3) ** 2 / 3 + (1 / 3) ** 2 / 2)) * np.sqrt(2))
    assert not lw["difference is real"]                                  # 3 -/+ 3.9 covers 0
    with pytest.raises(ValueError, match="reference 'SW' is not in by_dataset"):
        expected_risk(by, reference="SW")


# --- issue 21: identification risk -------------------------------------------------------------

def test_identification_risk_by_hand():
    import pandas as pd

    from ppmlib.evaluate.disclosure import identification_risk
    # keys g; relative radius 0.25 (strict, as the authors' package): r = 2.5, 5, 7.5, 10, 2.5
    data = pd.DataFrame({"g": ["a", "a", "b", "b", "c"], "y": [10.0, 20.0, 30.0, 40.0, 10.0]})
    first = pd.DataFrame({"g": data["g"], "y": [11.0, 12.0, 31.0, 30.0, 10.5]})
    # record 0: a-values 11, 12 both within 2.5 -> c = 2, own (11) among them: T = 1
    # record 1: 11, 12 are 9 and 8 from 20 > 5 -> c = 0 (T = 1 by convention, counts nowhere)
    # record 2: b-values 31, 30 within 7.5 -> c = 2, T = 1
    # record 3: 31 is 9 < 10 from 40, 30 is exactly 10 away: not strictly inside -> c = 1, own (30) not: F = 1
    # record 4: c-value 10.5 within 2.5 -> c = 1, own: K = 1
    second = pd.DataFrame({"g": data["g"], "y": [25.0, 19.0, 50.0, 50.0, 50.0]})
    # record 1: 19 within 5, 25 not -> c = 1, own: K = 1; record 0: 19 and 25 are 9, 15 away -> 0; others 0
    risk = identification_risk(data, [first, second], ["g"], "y", radius=0.25)
    np.testing.assert_array_equal(risk.matches, [[2, 0], [0, 1], [2, 0], [1, 0], [1, 0]])
    np.testing.assert_array_equal(risk.own[:, 0], [1, 1, 1, 0, 1])
    np.testing.assert_allclose(risk.emr, [1 / 2 + 1 / 2 + 0 + 1, 1.0])
    np.testing.assert_allclose(risk.tmr, [1 / 5, 1 / 5])
    np.testing.assert_allclose(risk.fmr, [1 / 2, 0.0])       # unique matches: records 3 and 4; one wrong
    np.testing.assert_array_equal(risk.unique, [2, 1])
    assert risk.summary()["EMR"] == pytest.approx(1.5)
    # an absolute radius of 1: 11 is exactly 1 from record 0 (not strictly inside), 30 is 0 from
    # record 2 and 31 is 1 away (not inside), 10.5 is 0.5 from record 4
    absolute = identification_risk(data, first, ["g"], "y", radius=1.0, relative=False)
    assert absolute.matches[:, 0].tolist() == [0, 0, 1, 0, 1]


def test_identification_risk_counts_equal_a_double_loop():
    """The grouped binary search (one radius column) and the group scan (several, or none) count
    exactly what comparing every record with every synthetic row counts, ties at the ball's edge,
    keys of mixed types and a zero value (an empty relative ball) included."""
    import pandas as pd

    from ppmlib.evaluate.disclosure import identification_risk
    rng = np.random.default_rng(5)
    for trial in range(12):
        n = int(rng.integers(1, 120))
        data = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "h": rng.integers(0, 3, n),
                             "y": np.round(rng.normal(10, 3, n), 0), "x": rng.normal(size=n)})
        data.loc[data.index[:1], "y"] = 0.0
        release = pd.DataFrame({"g": data["g"], "h": data["h"], "y": np.round(data["y"] + rng.normal(0, 1, n), 0),
                                "x": data["x"] + rng.normal(0, 0.1, n)})
        if trial % 2:
            release.loc[release.index[: n // 2], "g"] = "a"
        for keys, synthesized, radius in ((["g", "h"], ["y"], 0.1), (["g"], ["y", "x"], {"y": 0.2, "x": 0.5}),
                                          ([], ["y"], 0.05), (["g", "h"], ["y"], None)):
            for relative in (True, False):
                risk = identification_risk(data, release, keys, synthesized, radius=radius, relative=relative)
                radii = {} if radius is None else (radius if isinstance(radius, dict) else {"y": radius})
                exact = [c for c in [*keys, *synthesized] if c not in radii]
                match = np.ones((n, n), dtype=bool)   # [i, k]: synthetic row k matches record i
                for e in exact:
                    match &= data[e].astype(str).to_numpy()[:, None] == release[e].astype(str).to_numpy()[None, :]
                for column, r in radii.items():
                    y = data[column].to_numpy()[:, None]
                    half = r * np.abs(y) if relative else r
                    match &= (y - half < release[column].to_numpy()[None, :]) & (release[column].to_numpy()[None, :] < y + half)
                c, own = match.sum(axis=1), np.diagonal(match).astype(int)
                np.testing.assert_array_equal(risk.matches[:, 0], c)
                np.testing.assert_array_equal(risk.own[:, 0], np.where(c > 0, own, 1))


def test_identification_risk_refuses_bad_input():
    import pandas as pd

    from ppmlib.evaluate.disclosure import identification_risk
    data = pd.DataFrame({"g": ["a", "b"], "y": [1.0, 2.0]})
    with pytest.raises(ValueError, match="rows"):
        identification_risk(data, data.iloc[:1], ["g"], "y", radius=0.1)
    with pytest.raises(ValueError, match=r"lacks columns \['h'\]"):
        identification_risk(data, data, ["h"], "y", radius=0.1)
    with pytest.raises(ValueError, match="radius"):
        identification_risk(data, data, ["g"], "y", radius=0.0)
