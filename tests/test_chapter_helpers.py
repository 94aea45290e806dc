"""The helpers moved out of the chapters (issue 8), each against a hand computation.

No Stan: the inputs are built by hand (a Fit from given draws, Synthesis-like objects, small
tables of local bounds), so every expected value below can be checked with pencil and paper.
"""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ppmlib import models

from ppmlib.evaluate import audit

from ppmlib.evaluate import disclosure

from ppmlib.inference import exact

from ppmlib.mechanism import guarantee

from ppmlib.studies import asymptotic_dp as montecarlo

from ppmlib.datasets import simulate

from ppmlib.evaluate import utility
from ppmlib.studies import attribute_risk, dp_definitions, privacy_audit, vector_weighted
from ppmlib.evaluate.disclosure import AttributeRisk
from ppmlib.models.families import family
from ppmlib.inference.posterior import Fit


def poisson_fit(y, lam, weights=None):
    """A Poisson Fit with the given draws of lambda (no sampler involved)."""
    y = np.asarray(y)
    weights = np.ones(y.size) if weights is None else np.asarray(weights, float)
    return Fit(model=family("poisson"), y=y, X=None, weights=weights, draws={"lambda": np.asarray(lam, float)},
               sampler={}, chains=1, backend="none", seed=0)


# --- models: the one Poisson prior, the negative binomial draw ----------------------------------

def test_one_poisson_prior_everywhere():
    assert models.POISSON_PRIOR == {"prior_shape": 1.0, "prior_rate": 0.001}
    assert family("poisson").default_prior is models.POISSON_PRIOR
    # exact.py's defaults are that prior: Gamma(1 + sum y, 0.001 + n) for y = (2, 3)
    assert exact.pseudo_posterior([2, 3]) == pytest.approx((6.0, 2.001))


def test_negbin_draw_has_stans_mean_and_variance():
    # neg_binomial_2(mu = 10, phi = 2): mean 10, variance 10 + 100 / 2 = 60
    draws = models.negbin_draw(np.random.default_rng(3), 10.0, 2.0, size=400_000)
    assert draws.mean() == pytest.approx(10.0, abs=0.05)
    assert draws.var() == pytest.approx(60.0, rel=0.02)


def test_nb_mixture_draws_through_the_models_helper():
    # one component with probability 1: the mixture is the model's NB draw after the component choice
    y = simulate.nb_mixture(50, [20.0], [4.0], [1.0], seed=5)
    rng = np.random.default_rng(5)
    rng.choice(1, size=50, p=[1.0])
    np.testing.assert_array_equal(y, models.negbin_draw(rng, np.full(50, 20.0), np.full(50, 4.0)))


# --- guarantee: the DP chapter's tables and the Gamma check of draws -----------------------------

def test_gamma_draws_check_by_hand():
    # Gamma(9, 3): mean 3, sd 1. Draws 2..6: mean 4, population sd sqrt(2); ESS 4: error 1 / 2
    result = guarantee.gamma_draws_check([2.0, 3.0, 4.0, 5.0, 6.0], 9.0, 3.0, ess=4, levels=[0.5])
    assert result["mean z"] == pytest.approx(2.0)
    assert result["sd ratio"] == pytest.approx(np.sqrt(2.0))
    assert result["sd z"] == pytest.approx((np.sqrt(2.0) - 1) * np.sqrt(8.0))   # error of the ratio 1 / sqrt(2 * 4)
    # median of the draws 4; the Gamma(9, 1) median is k - 1/3 + 8 / (405 k) + 184 / (25515 k^2) to
    # about 1e-5 (Choi 1994), divided by the rate 3; in units of the sd 1
    median = (9 - 1 / 3 + 8 / (405 * 9) + 184 / (25515 * 81)) / 3
    assert result["quantile gap"] == pytest.approx(4.0 - median, abs=1e-4)
    with pytest.raises(ValueError, match="ess"):
        guarantee.gamma_draws_check([1.0, 2.0], 9.0, 3.0, ess=0)


def test_bounds_table_by_hand():
    # y = 0: log p(0 | lambda) = -lambda, so |f| over draws (1, 2) is at most 2; weight 0.5 gives 1
    fits = {"half": (poisson_fit([0, 0], [1.0, 2.0]), np.array([0.5, 0.25])),
            "one": (poisson_fit([0, 0], [1.0, 3.0]), np.ones(2))}
    table = dp_definitions.bounds_table(fits)
    assert table.loc["half", "Delta"] == pytest.approx(1.0)
    assert table.loc["half", "epsilon = 2 Delta"] == pytest.approx(2.0)
    assert table.loc["half", "mean weight"] == pytest.approx(0.375)
    assert table.loc["half", "min weight"] == pytest.approx(0.25)
    assert table.loc["one", "Delta"] == pytest.approx(3.0)


def test_fit_diagnostics_table():
    good = {"max_rhat": 1.001, "min_ess_bulk": 900.0, "min_ess_tail": 800.0, "divergences": 0}
    bad = {**good, "min_ess_tail": 300.0}          # tail ESS below 400: not ok
    fits = {"A": (SimpleNamespace(diagnostics=good), None), "B": (SimpleNamespace(diagnostics=bad), None)}
    grid = pd.DataFrame({"c": [0.5, 0.7], "g": [0.0, -0.1], "Delta": [1.0, 2.0], **{k: [v, v] for k, v in good.items()},
                         "diagnostics_ok": [True, False]})
    table = dp_definitions.fit_diagnostics(fits, grid=grid)
    assert list(table.index) == ["A", "B", "LW (c=0.5, g=0)", "LW (c=0.7, g=-0.1)"]
    assert list(table.columns) == ["max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "ok"]
    assert table["ok"].tolist() == [True, False, True, False]
    assert table.loc["B", "min_ess_tail"] == 300.0


def test_lw_shift_table_by_hand():
    y = np.array([1, 3, 10])
    # one draw per row; record bounds max_s |log_lik| = 1, 2, 3, so the min-max risks are 0, 0.5, 1
    base = np.array([[-1.0, -2.0, -3.0], [-0.5, -1.0, -1.0]])
    table = dp_definitions.lw_shift_table(y, base, c=1.0, shifts=[0.0, -0.5], grid_points=50)
    # g = 0: weights 1, 0.5, 0; g = -0.5: weights 0.5, 0, 0
    assert table.loc["g = 0", "records with weight 0"] == 1
    assert table.loc["g = 0", "mean weight"] == pytest.approx(0.5)
    assert table.loc["g = -0.5", "records with weight 0"] == 2
    assert table.loc["g = -0.5", "mean weight"] == pytest.approx(1 / 6)
    # -f(1) = lambda - log lambda is convex: its sup on the grid is at an end of the central interval
    low, high = exact.central_interval(y, [0.5, 0.0, 0.0])
    expected = 0.5 * max(abs(np.log(t) - t) for t in (low, high))
    assert table.loc["g = -0.5", "Delta (exact pseudo posterior, grid)"] == pytest.approx(expected)


# --- disclosure: the risk chapter's tables ------------------------------------------------------

def hand_risk(prob_true):
    p = np.asarray(prob_true, float)
    n = p.size
    return AttributeRisk(probs=np.column_stack([p, 1 - p]), prob_true=p, rank_true=np.where(p >= 0.5, 1, 2),
                         guesses=np.zeros((n, 2)), offsets=np.array([0.0, 1.0]), draw_share=np.ones(1))


def test_most_exposed_by_hand():
    risk = hand_risk([0.2, 0.7, 0.4, 0.7])
    table = attribute_risk.most_exposed(risk, 3, value=np.array([10.0, 11.0, 12.0, 13.0]))
    assert table["row"].tolist() == [2, 4, 3]            # 1-based; the tie keeps record order
    assert table["value"].tolist() == [11.0, 13.0, 12.0]
    assert table["P(true)"].tolist() == [0.7, 0.7, 0.4]
    assert table["rank"].tolist() == [1, 1, 2]
    with pytest.raises(ValueError, match="column 'value'"):
        attribute_risk.most_exposed(risk, 2, value=np.zeros(3))


def test_release_agreement_by_hand():
    first = hand_risk([0.1, 0.2, 0.3, 0.4])
    # ranks 1 2 4 3 against 1 2 3 4: sum d^2 = 2, rho = 1 - 6 * 2 / (4 * 15) = 0.8; top two {2, 3} both
    assert attribute_risk.release_agreement(first, hand_risk([0.1, 0.2, 0.4, 0.3]), top=2) == pytest.approx((0.8, 2))
    assert attribute_risk.release_agreement(first, hand_risk([0.4, 0.3, 0.2, 0.1]), top=2) == pytest.approx((-1.0, 0))


def test_risk_inputs_types_its_argument():
    with pytest.raises(TypeError, match="ppmlib.Fit of the 'normal' model"):
        disclosure.risk_inputs({"draws": {}}, 5)
    with pytest.raises(ValueError, match="needs a normal synthesizer with one scale; this fit is 'poisson'"):
        disclosure.risk_inputs(poisson_fit([1, 2], [1.0, 2.0]), 1)
    # a normal Fit built by hand: mu = X beta per draw, sigma per draw
    X = np.array([[1.0, 0.0], [1.0, 2.0]])
    normal = Fit(model=family("normal"), y=np.array([0.0, 1.0]), X=X, weights=np.ones(2),
                 draws={"beta": np.array([[1.0, 0.5], [2.0, 1.0], [3.0, 0.0]]), "sigma": np.array([1.0, 2.0, 3.0])},
                 sampler={}, chains=1, backend="none", seed=0)
    mu, sigma = disclosure.risk_inputs(normal, 2)     # draws 0 and 2
    np.testing.assert_allclose(mu, [[1.0, 2.0], [3.0, 3.0]])
    np.testing.assert_allclose(sigma, [1.0, 3.0])


# --- utility: the vector-weighted chapter's comparison ------------------------------------------

def synthesis(delta, weights=(1.0,), bounds=(1.0,), location=(0.0,)):
    return SimpleNamespace(delta=delta, weights=np.asarray(weights), bounds=np.asarray(bounds),
                           location_draws=np.asarray(location))


def test_matched_measures_by_hand():
    results = {"Unweighted": synthesis(10.0),
               "LW": synthesis(4.0, weights=[1.0, 0.8], bounds=[4.0, 3.8], location=[0.0, 2.0]),
               "CW": synthesis(4.1, weights=[0.5, 0.3], bounds=[4.1, 1.0]),
               "SW": synthesis(3.8, location=[0.0, 6.0])}
    m = vector_weighted.matched_measures(results)
    assert m["weighted / unweighted Delta"] == pytest.approx(0.41)
    assert m["Delta gap to LW"] == pytest.approx(0.05)           # SW: abs(3.8 / 4 - 1)
    assert (m["mean weight LW"], m["mean weight CW"]) == pytest.approx((0.9, 0.4))
    assert (m["near-max share LW"], m["near-max share CW"]) == pytest.approx((1.0, 0.5))
    assert m["sd ratio SW / LW"] == pytest.approx(3.0)                 # sds 3 and 1
    with pytest.raises(ValueError, match="lacks synthesizer"):
        vector_weighted.matched_measures({k: v for k, v in results.items() if k != "SW"})


# --- montecarlo: the asymptotic-DP chapter's summaries ------------------------------------------

@pytest.fixture
def deltas():
    rows = []
    for n, lw, un in ((250, [1.0, 3.0], [10.0, 20.0]), (4000, [2.0, 3.0], [10.0, 14.0])):
        for name, values in (("LW", lw), ("Unweighted", un)):
            rows += [{"model": "Poisson", "synthesizer": name, "n": n, "r": r, "delta": d, "max_rhat": 1.0 + r / 100,
                      "min_ess_bulk": 1000.0 - r, "min_ess_tail": 800.0 - r, "divergences": r,
                      "ok": (r, n) == (0, 250) or name == "Unweighted", "converged": True} for r, d in enumerate(values)]
    return pd.DataFrame(rows)


def test_separation_by_hand():
    table = pd.DataFrame({"model": "M", "synthesizer": ["LW"] * 5 + ["Unweighted"] * 5,
                          "delta": [1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0]})
    row = montecarlo.separation(table).loc["M"]
    # linear interpolation: the 95th percentile of 1..5 is 4.8, the 5th of 10..50 is 12
    assert row["LW 95th pct"] == pytest.approx(4.8)
    assert row["Unweighted 5th pct"] == pytest.approx(12.0)
    assert (row["LW median"], row["Unweighted median"]) == (3.0, 30.0)
    assert (row["LW max"], row["Unweighted min"]) == (5.0, 10.0)


def test_against_values_by_hand(deltas):
    table = montecarlo.against_values(deltas, {("Poisson", "LW"): 2.5, ("NB mixture", "LW"): 6.0})
    assert list(table.index) == [("Poisson", "LW")]              # the absent model is skipped
    row = table.loc[("Poisson", "LW")]
    assert row["share above (pi)"] == pytest.approx(0.5)          # 3 and 3 of 1, 3, 2, 3
    assert (row["value"], row["epsilon"], row["min"], row["median"], row["max"]) == (2.5, 5.0, 1.0, 2.5, 3.0)


def test_contraction_by_model_by_hand(deltas):
    row = montecarlo.contraction_by_model(montecarlo.contraction(deltas)).loc["Poisson"]
    # LW ranges 2 (n = 250) and 1 (n = 4000); Unweighted 10 and 4: ratios 0.2 and 0.25
    assert row["largest ratio of ranges"] == pytest.approx(0.25)
    assert (row["smallest n"], row["largest n"]) == (250, 4000)
    assert (row["range at smallest n"], row["range at largest n"]) == (2.0, 1.0)
    assert (row["median at smallest n"], row["median at largest n"]) == (2.0, 2.5)


def test_fit_summary_by_hand(deltas):
    row = montecarlo.fit_summary(deltas).loc[("Poisson", "LW")]
    assert (row["fits"], row["worst_rhat"], row["smallest_bulk_ess"], row["divergences"]) == (4, 1.01, 999.0, 2)
    assert (row["smallest_tail_ess"], row["failing"]) == (799.0, 3)   # every LW fit but (r = 0, n = 250)


def test_passing_keeps_the_databases_whose_every_fit_passes(deltas):
    # LW fails the gate at (n, r) = (250, 1), (4000, 0), (4000, 1); a re-weighting without a fit excludes nothing
    no_fit = pd.DataFrame([{"model": "Poisson", "synthesizer": "LW_final", "n": 250, "r": 0, "delta": np.nan,
                            "converged": False}])
    kept = montecarlo.passing(pd.concat([deltas, no_fit], ignore_index=True))
    assert sorted(zip(kept["n"], kept["r"], kept["synthesizer"])) == [(250, 0, "LW"), (250, 0, "LW_final"),
                                                                      (250, 0, "Unweighted")]
    estimands = pd.DataFrame({"model": "Poisson", "n": [250, 250, 4000], "r": [0, 1, 0], "value": [1.0, 2.0, 3.0]})
    study = montecarlo.Study(deltas, estimands, {}).passing()
    assert study.estimands["value"].tolist() == [1.0] and len(study.deltas) == 2


# --- audit: the calibration over trial counts ---------------------------------------------------

def test_calibration_by_trials_is_the_audit_per_count():
    series = privacy_audit.calibration_by_trials(1.0, [400, 2000], seed=3, confidence=0.9)
    for k in (400, 2000):
        one = audit.epsilon_lower_bound(*audit.randomized_response(1.0, k, seed=3), confidence=0.9).epsilon
        assert series[k] == pytest.approx(one)
    # a lower bound: it proves at most the known epsilon (at 90% confidence, for this seed)
    assert (series <= 1.0).all() and (series > 0.5).all()
    assert series.name == "eps_lb (true eps = 1)" and series.index.name == "trials"
