"""Attribute-disclosure risk by importance sampling, against the slides' literal loop and by hand."""
import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from ppmlib.disclosure import DEFAULT_OFFSETS, attribute_risk, guess_table


def literal_risk(y, z, mu, sigma, offsets):
    """The slides' algorithm, one record, one guess and one draw at a time (m = 1)."""
    n, H = y.size, sigma.size
    probs = np.empty((n, offsets.size))
    for i in range(n):
        log_z = np.empty(offsets.size)
        for g, guess in enumerate(y[i] + offsets):
            w = stats.norm.pdf(guess, mu[:, i], sigma) / stats.norm.pdf(y[i], mu[:, i], sigma)
            log_pq = np.empty(H)
            for h in range(H):
                log_p_h = stats.norm.logpdf(z, mu[h], sigma[h]).sum()
                log_pq[h] = log_p_h + np.log(w[h] / w.sum())
            log_z[g] = logsumexp(log_pq)
        probs[i] = np.exp(log_z - logsumexp(log_z))
    return probs


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
    np.testing.assert_allclose(risk.probs, literal_risk(y, z, mu, sigma, DEFAULT_OFFSETS), rtol=1e-10, atol=1e-12)
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
    from ppmlib.disclosure import risk_inputs
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    X = np.column_stack([np.ones_like(x), x])
    fit = ppmlib.fit("normal", 1 + x + rng.normal(size=40), X=X, seed=2, draws=100, warmup=100)
    mu, sigma = risk_inputs(fit, 7)
    idx = np.linspace(0, fit.n_draws - 1, 7).round().astype(int)
    np.testing.assert_allclose(mu, fit.draws["beta"][idx] @ X.T)
    np.testing.assert_allclose(sigma, fit.draws["sigma"][idx])
    with pytest.raises(ValueError, match="H = 1000 draws requested"):
        risk_inputs(fit, 1000)
    counts = ppmlib.fit("poisson", [1, 2, 3], seed=1, draws=50, warmup=50)
    with pytest.raises(ValueError, match="needs a normal synthesizer"):
        risk_inputs(counts, 5)
