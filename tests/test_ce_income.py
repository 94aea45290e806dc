"""The CE income chapter's pieces: the mixture family (against Stan and on a two-cluster sample),
the design-matrix helper, and the barycenter utility."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ppmlib
from ppmlib.studies import ce_income
from ppmlib.datasets.design import design_matrix
from ppmlib.models.families import family


def _two_clusters(n, seed):
    rng = np.random.default_rng(seed)
    z = rng.uniform(size=n) < 0.4
    return np.where(z, rng.normal(0.0, 0.5, n), rng.normal(5.0, 0.5, n))


# --- the mixture family against Stan -----------------------------------------------------------

@pytest.mark.stan
def test_mixture_log_lik_equals_stans_own_marginal_density():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    X = np.column_stack([np.ones(x.size), x])
    y = _two_clusters(x.size, 3) + 0.3 * x
    fit = ppmlib.fit("mixture", y, X=X, sampler=ppmlib.Sampler(chains=1, draws=40, warmup=60), seed=5,
                     emit_log_lik=True, prior={"K": 3, "dirichlet_concentration": 1.0})
    assert fit.draws["beta"].shape == (40, 2, 3)  # (S, P, K): column k is component k
    ours = fit.model.log_lik(fit.draws, y, X)
    np.testing.assert_allclose(ours, fit.draws["log_lik"], rtol=1e-10, atol=1e-10)


@pytest.mark.stan
def test_weighted_mixture_recovers_a_scale_mixture():
    # log income's shape: a narrow and a wide component around one centre. stan/mixture.stan
    # orders its components by scale, which identifies exactly this (components that differ only
    # in their centres are not what it is built for: see its header)
    rng = np.random.default_rng(11)
    narrow = rng.uniform(size=400) < 0.4
    y = np.where(narrow, rng.normal(1.0, 0.4, 400), rng.normal(1.0, 1.6, 400))
    weights = np.random.default_rng(12).uniform(0.4, 1.0, y.size)   # a pseudo posterior, not alpha = 1
    fit = ppmlib.fit("mixture", y, weights=weights, sampler=ppmlib.Sampler(chains=2, draws=300, warmup=300),
                     seed=13, prior={"K": 2, "dirichlet_concentration": 1.0, "prior_centre_mean": 1.0})
    np.testing.assert_allclose(fit.draws["sigma"].mean(axis=0), [0.4, 1.6], rtol=0.2)
    np.testing.assert_allclose(fit.draws["mixing"].mean(axis=0), [0.4, 0.6], atol=0.12)
    np.testing.assert_allclose(fit.draws["beta"][:, 0, :].mean(axis=0), [1.0, 1.0], atol=0.25)
    assert fit.diagnostics["max_rhat"] < 1.05   # on the label-invariant quantities


@pytest.mark.stan
def test_one_component_posterior_is_the_grid_posterior():
    # K = 1, intercept only: the pseudo posterior of (centre, sigma) by brute force on a grid, against
    # Stan's draws. The program samples the centre on a scale that depends on sigma (see its header);
    # without the Jacobian of that change the posterior of sigma moves by about 1/n of itself
    rng = np.random.default_rng(21)
    y = rng.normal(0.5, 0.8, 10)
    w = np.full(y.size, 0.7)
    prior = {"K": 1, "prior_centre_mean": 0.0, "prior_centre_sd": 1.0, "prior_sigma_mean": 1.0}
    fit = ppmlib.fit("mixture", y, weights=w, sampler=ppmlib.Sampler(chains=2, draws=4000, warmup=500), seed=3,
                     prior=prior)
    c, s = np.meshgrid(np.linspace(-3, 3, 1201), np.linspace(0.02, 8, 1600), indexing="ij")
    log_post = (stats.norm.logpdf(c, 0.0, 1.0) + stats.invgamma.logpdf(s, 5, scale=4.0)
                + sum(wi * stats.norm.logpdf(yi, c, s) for wi, yi in zip(w, y)))
    post = np.exp(log_post - log_post.max())
    post /= post.sum()
    for draws, grid in ((fit.draws["beta"][:, 0, 0], c), (fit.draws["sigma"][:, 0], s)):
        mean, sd = (post * grid).sum(), np.sqrt((post * grid**2).sum() - (post * grid).sum() ** 2)
        assert abs(draws.mean() - mean) < 0.05 * sd, (draws.mean(), mean, sd)   # MC error about 0.02 sd
        assert draws.std() == pytest.approx(sd, rel=0.05)


# --- the mixture family in numpy --------------------------------------------------------------

def _draws():
    # two draws, K = 2 components, P = 2 columns (intercept, x)
    return {"mixing": np.array([[0.3, 0.7], [0.5, 0.5]]),
            "beta": np.array([[[0.0, 4.0], [1.0, -1.0]], [[1.0, 3.0], [0.0, 0.5]]]),
            "sigma": np.array([[1.0, 0.5], [2.0, 1.5]])}


def test_mixture_log_lik_is_the_marginal_density_by_hand():
    X = np.array([[1.0, 0.0], [1.0, 2.0], [1.0, -1.0]])
    y = np.array([0.5, 3.0, 7.0])
    draws, got = _draws(), family("mixture").log_lik(_draws(), y, X)
    for s in range(2):
        mu = X @ draws["beta"][s]               # (n, K)
        dens = (draws["mixing"][s] * stats.norm.pdf(y[:, None], mu, draws["sigma"][s])).sum(axis=1)
        np.testing.assert_allclose(got[s], np.log(dens), rtol=1e-12)


def test_mixture_log_sum_exp_gives_scipys_bits_and_survives_the_far_tail():
    from scipy import special
    from ppmlib.models.families import _log_sum_exp_last
    rng = np.random.default_rng(3)
    a = rng.normal(0, 30, size=(50, 40, 3))
    a[0, 0] = [-np.inf] * 3
    a[0, 1] = [1.0, 1.0, 1.0]          # three maxima: log(3) + 1
    a[0, 2] = [np.inf, 1.0, 2.0]
    a[0, 3] = [np.nan, 1.0, 2.0]
    a[0, 4] = [-np.inf, 0.0, -np.inf]
    a[0, 5] = [-800.0, -801.0, -900.0]  # exp underflows: the shift keeps it
    got, want = _log_sum_exp_last(a), special.logsumexp(a, axis=2)
    np.testing.assert_array_equal(got, want)   # bit for bit, NaN where scipy has NaN
    assert got[0, 1] == 1.0 + np.log(3.0)
    assert abs(got[0, 5] - (-800.0 + np.log1p(np.exp(-1.0) + np.exp(-100.0)))) < 1e-12


def test_mixture_predict_draws_each_component_at_its_share():
    draws = {"mixing": np.array([[0.25, 0.75]]), "beta": np.array([[[-10.0, 10.0]]]), "sigma": np.array([[1.0, 1.0]])}
    y = family("mixture").predict(draws, np.ones((20000, 1)), 20000, np.random.default_rng(0))
    assert y.shape == (1, 20000)
    share_low = np.mean(y < 0)
    assert abs(share_low - 0.25) < 0.01
    assert abs(y[y > 0].mean() - 10.0) < 0.03 and abs(y[y > 0].std() - 1.0) < 0.03


def test_pooled_quantile_matches_a_large_sample():
    X = np.array([[1.0, 0.0], [1.0, 2.0], [1.0, -1.0]])
    draws = _draws()
    q90 = family("mixture").pooled_quantile(draws, X, 0.9)
    big = family("mixture").predict(draws, np.repeat(X, 100000, axis=0), 300000, np.random.default_rng(1))
    np.testing.assert_allclose(q90, np.quantile(big, 0.9, axis=1), atol=0.02)


@pytest.mark.parametrize("X, match", [
    (np.column_stack([np.full(5, 2.0), np.arange(5.0)]), "must start with the intercept column"),
    (np.column_stack([np.ones(5), [0, 1, 1, 0, 0], [1, 0, 0, 1, 1]]), "3 columns of rank 2"),
])
def test_mixture_needs_an_intercept_and_independent_columns(X, match):
    # the program samples in a centred QR basis of X[:, 1:], which needs both
    with pytest.raises(ValueError, match=match):
        ppmlib.fit("mixture", np.zeros(5), X=X)


def test_independent_columns_drops_the_nested_predictor_of_the_ce_design():
    df = ppmlib.datasets.ce_like.load()
    X = design_matrix(df, ["Urban", "UrbanType", "Earner"])
    kept = ppmlib.datasets.design.independent_columns(X)
    # rural units are exactly the rural urban type: Urban=Urban = 1 - UrbanType=Rural
    assert kept.attrs["dropped"] == ["UrbanType=Rural"]
    assert np.linalg.matrix_rank(kept.to_numpy()) == kept.shape[1] == X.shape[1] - 1


@pytest.mark.parametrize("prior, match", [
    ({"shared_slopes": 0.5}, r"prior\['shared_slopes'\] must be 0 or 1, got 0.5"),
    ({"dirichlet_concentration": 0.0}, r"'dirichlet_concentration' must lie in \(0, inf\], got 0"),
    ({"prior_sigma_mean": -1.0}, r"'prior_sigma_mean' must lie in \(0, inf\], got -1"),
])
def test_mixture_refuses_bad_prior_settings(prior, match):
    with pytest.raises(ValueError, match=match):
        ppmlib.fit("mixture", np.zeros(5), prior=prior)


def test_mixture_stan_data_states_the_default_prior():
    mixture = family("mixture")
    data = mixture.stan_data(np.zeros(4), np.ones((4, 1)), np.ones(4), mixture.check_prior(), False)
    assert (data["K"], data["dirichlet_concentration"], data["prior_centre_mean"], data["shared_slopes"]) == (3, 6.0, 11.0, 1)
    assert isinstance(data["K"], int) and isinstance(data["shared_slopes"], int)   # Stan's int data


def test_mixture_rejects_a_non_integer_number_of_components():
    with pytest.raises(ValueError, match=r"prior\['K'\].*positive integer"):
        ppmlib.fit("mixture", np.zeros(5), prior={"K": 2.5})


# --- the design matrix ----------------------------------------------------------------------

def _frame():
    return pd.DataFrame({"Earner": ["Earner", "Non-earner", "Earner"], "Region": ["West", "South", "Midwest"],
                         "Income": [1, 2, 3]})


def test_design_matrix_one_hot_with_reference_levels():
    X = design_matrix(_frame(), ["Earner", "Region"], reference={"Region": "South"})
    assert list(X.columns) == ["(Intercept)", "Earner=Non-earner", "Region=Midwest", "Region=West"]
    np.testing.assert_array_equal(X.to_numpy(), [[1, 0, 0, 1], [1, 1, 0, 0], [1, 0, 1, 0]])


def test_design_matrix_with_given_levels_keeps_unseen_levels():
    X = design_matrix(_frame(), ["Region"], levels={"Region": ["Northeast", "Midwest", "South", "West"]})
    assert list(X.columns) == ["(Intercept)", "Region=Midwest", "Region=South", "Region=West"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(columns=["Earner", "Race"]), r"columns \['Race'\] are not in the data"),
    (dict(columns=["Region"], reference={"Region": "Mars"}), r"reference level 'Mars' of column 'Region'"),
    (dict(columns=["Region"], levels={"Region": ["West", "South"]}), r"column 'Region' has values \['Midwest'\]"),
    (dict(columns=["Earner"], reference={"Region": "West"}), r"reference names \['Region'\]"),
    (dict(columns="Earner"), "list of column names"),
])
def test_design_matrix_bad_input(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        design_matrix(_frame(), **kwargs)


# --- the barycenter utility -------------------------------------------------------------------

def test_barycenter_averages_the_sorted_resampling_distributions():
    rng = np.random.default_rng(4)
    sets = rng.normal(size=(3, 50))
    got = ce_income.barycenter(sets, "mean", B=20, seed=9)
    by_hand = np.random.default_rng(9)
    rows = [np.sort(d[by_hand.integers(0, 50, size=(20, 50))].mean(axis=1)) for d in sets]
    np.testing.assert_allclose(got, np.mean(rows, axis=0), rtol=1e-12)


def test_dominated_pairs_are_the_configurations_with_ordered_weights():
    configs = [[0.7, 0.0], [0.6, 0.0], [0.6, -0.1], [0.5, 0.0], [0.5, -0.1]]
    pairs = ce_income.dominated_pairs(configs)
    assert (3, 2) in pairs and (2, 3) not in pairs      # (0.5, 0) gives every record more than (0.6, -0.1)
    assert len(pairs) == 10
    r = np.linspace(0, 1, 101)
    for i, j in pairs:                                   # the definition, checked on a grid of risks
        (ci, gi), (cj, gj) = configs[i], configs[j]
        assert np.all(ppmlib.risk_to_weight(r, ci, gi) >= ppmlib.risk_to_weight(r, cj, gj))


# --- the claims: their nulls and the diagnostics gate -------------------------------------------

GOOD = {"max_rhat": 1.001, "min_ess_bulk": 800.0, "min_ess_tail": 700.0, "divergences": 0}
BAD = {**GOOD, "min_ess_tail": 120.0}


def _claim_inputs(cw_diag=GOOD):
    from types import SimpleNamespace
    deltas = {"Unweighted": 12.0, "LW": 3.0, "SW": 3.1, "CW": 4.0, "LW_final": 3.05}
    results = {k: SimpleNamespace(delta=v, diagnostics=cw_diag if k == "CW" else GOOD) for k, v in deltas.items()}
    p90 = {"Data": 100.0, "Unweighted": 101.0, "LW": 98.0, "SW": 90.0, "CW": 95.0, "LW_final": 99.0}
    long = pd.DataFrame([{"source": ce_income.LABELS.get(k, k), "statistic": "90th pct", "value": v + e}
                         for k, v in p90.items() for e in (-1.0, 0.0, 1.0)])
    trunc = pd.DataFrame({"Delta": [3.0, 2.85]}, index=pd.Index([1.0, 0.9], name="q"))
    lw, sw = ce_income.LABELS["LW"], ce_income.LABELS["SW"]
    cg = pd.DataFrame({"c": [0.7, 0.5], "g": [0.0, 0.0], f"Delta {lw}": [3.0, 2.2],
                       f"90th pct {lw}": [98.0, 96.0], f"90th pct {sw}": [90.0, 85.0], "90th pct data": [100.0, 100.0]})
    sweep = [{"LW": results["LW"]}, {"LW": SimpleNamespace(diagnostics=GOOD)}]
    return results, long, trunc, cg, sweep


@pytest.fixture
def asserting(monkeypatch):
    """The claims as the chapter would assert them with a ledger in the margin rule (ASSERT_CLAIMS true)."""
    monkeypatch.setattr(ce_income, "ASSERT_CLAIMS", True)


def test_the_chapter_reports_every_claim_without_a_ledger_in_the_rule():
    results, long, trunc, cg, sweep = _claim_inputs()
    rows = ce_income.claims(results, long, trunc, cg, rtol=0.05, truncation_tol=0.15, sweep=sweep).rows
    assert not any(r["checked"] for r in rows)
    assert sum(r["holds"] for r in rows) >= 5            # still computed and shown


def test_claims_state_their_nulls_and_assert_only_with_power(asserting):
    results, long, trunc, cg, sweep = _claim_inputs()
    claims = ce_income.claims(results, long, trunc, cg, rtol=0.05, truncation_tol=0.15, sweep=sweep)
    rows = {r["claim"]: r for r in claims.rows}
    ratio = rows["Unweighted's Delta clearly above the three weighted synthesizers'"]
    assert (ratio["holds"], ratio["checked"], ratio["power"], ratio["null"]) == (True, True, True, 1.0)  # 12 / 4 = 3
    for unweighted, clearly in ((4.6, False), (6.0, True)):   # 1.15 and 1.5 times the largest weighted (4)
        other = {**results, "Unweighted": type(results["LW"])(delta=unweighted, diagnostics=GOOD)}
        rows_other = ce_income.claims(other, long, trunc, cg, rtol=0.05, sweep=sweep).rows
        assert {r["claim"]: r["holds"] for r in rows_other}[ratio["claim"]] is clearly
    above = rows[f"{ce_income.LABELS['CW']}'s Delta above {ce_income.LABELS['LW']}'s"]
    assert (above["holds"], above["checked"]) == (True, False)   # reported: CW fell below LW on one seed of eight
    cw = rows[f"{ce_income.LABELS['CW']} further from the data's 90th percentile than {ce_income.LABELS['LW']}"]
    assert (cw["holds"], cw["checked"], cw["null"]) == (True, True, 0.0)   # |95 - 100| - |98 - 100| = 3 > 0
    fall = rows["Delta falls when the scale c falls at a fixed shift g, or g falls at a fixed c"]
    assert (fall["holds"], fall["checked"]) == (True, True) and "smallest fall 0.80" in fall["ours"]
    # "little different" holds without any truncation too: reported, with its null shown
    trunc_row = rows["truncating draws at q = 0.9 changes Delta by less than 15%"]
    assert (trunc_row["holds"], trunc_row["checked"], trunc_row["power"]) == (True, False, False)
    matched = rows[f"{ce_income.LABELS['SW']}'s Delta equals {ce_income.LABELS['LW']}'s (matched)"]
    assert matched["checked"] is False    # by construction
    assert rows["every fit passes the diagnostics gate"]["ours"] == "yes"
    claims.finish(check_claims=True)


def test_claims_on_a_fit_that_fails_the_gate_are_reported(asserting):
    results, long, trunc, cg, sweep = _claim_inputs(cw_diag=BAD)
    claims = ce_income.claims(results, long, trunc, cg, rtol=0.05, sweep=sweep)
    checked = {r["claim"]: r["checked"] for r in claims.rows}
    lw, cw = ce_income.LABELS["LW"], ce_income.LABELS["CW"]
    assert not checked[f"{cw}'s Delta above {lw}'s"]
    assert not checked["Unweighted's Delta clearly above the three weighted synthesizers'"]   # CW is one of the three
    assert checked[f"{ce_income.LABELS['SW']} further from the data's 90th percentile than {lw}"]  # SW and LW pass
    assert claims.rows[0]["ours"].startswith(f"no: {cw}")
    # without the map's fits the map's claim is reported
    assert not {r["claim"]: r["checked"] for r in ce_income.claims(results, long, trunc, cg, rtol=0.05).rows}[
        "Delta falls when the scale c falls at a fixed shift g, or g falls at a fixed c"]


# --- the (c, g) map: the paper's estimator, replicate refits -------------------------------------

def test_cg_sweep_truncates_once_and_reports_both_estimators_over_refits():
    from ppmlib.inference.exact import ConjugateSampler
    y = ppmlib.datasets.simulate.poisson(300, 40, seed=4)
    run = dict(sampler=ConjugateSampler(), m=2)
    u = ppmlib.mechanism.lineup.run(["Unweighted"], "poisson", y, seed=1, progress=False, **run)["Unweighted"]
    sweep = ce_income.cg_sweep("poisson", y, u, [(0.7, 0.0), (0.5, 0.0)], estimator="L*", q=0.9, replicates=2,
                               rtol=0.02, seed=3, progress=False, **run)
    for row in sweep:
        lw = row["LW"]
        # LW's risks from the unweighted draws truncated at q, as in the paper's R code, and its own draws truncated once
        assert np.array_equal(lw.weights, ppmlib.mechanism.weights.lw_weights(u.fit, row["c"], row["g"], q=0.9))
        assert lw.settings["q"] == 0.9 and lw.fit.n_draws < u.fit.n_draws
        assert abs(row["SW"].delta / lw.delta - 1) <= 0.02 and row["SW"].settings["q"] == 0.9
        assert len(row["replicates"]) == 2
        for every_draw, truncated in row["replicates"]:
            assert truncated < every_draw          # the truncated bound drops the draws that set the maximum
    # the second SW search starts on the curve of the first: one fit
    assert sweep[1]["SW"].calibration["iterations"] == 1
    table = ce_income.cg_table(sweep, np.exp(y / 10), B=5, seed=1)
    assert table.attrs["estimator"] == "L*"
    assert table["truncated Delta over refits"].str.endswith("(3)").all()   # the map's own fit and two refits
    assert table["max Delta over refits"].str.endswith("(2)").all()
    # the other estimator keeps every draw in the map; its refits still report the bound truncated at q
    (every,) = ce_income.cg_sweep("poisson", y, u, [(0.7, 0.0)], estimator="max", q=0.9, replicates=1, rtol=0.05,
                                  seed=3, progress=False, **run)
    assert every["LW"].settings["q"] == 1.0 and every["replicates"][0][1] < every["replicates"][0][0]
    with pytest.raises(ValueError, match="estimator"):
        ce_income.cg_sweep("poisson", y, u, [(0.7, 0.0)], estimator="median", **run)


def test_the_one_knob_claim_uses_the_mean_over_refits_when_there_are_refits():
    results, long, trunc, cg, sweep = _claim_inputs()
    cg.attrs.update(estimator="L*", refits=[np.array([3.0, 2.0, 2.2]), np.array([2.4, 2.5, 2.6])])
    rows = {r["claim"]: r for r in ce_income.claims(results, long, trunc, cg, rtol=0.05, sweep=sweep).rows}
    fall = rows["Delta falls when the scale c falls at a fixed shift g, or g falls at a fixed c"]
    # one fit per row says 3.0 -> 2.2 (a fall of 0.8); the means say 2.4 -> 2.5: no fall
    assert not fall["holds"] and "smallest fall -0.10) (means over 3 fits)" in fall["ours"]
    noise = rows["neighbouring rows of Table 2 separated by more than Delta's refit noise"]
    assert not noise["holds"] and noise["checked"] is False


def test_capped_dollars_are_what_the_mean_experiment_measures():
    """utility_long(cap=...) sets synthetic incomes above the cap to it (an experiment; no synthesizer
    caps). One draw of $1e9 above data that stop at $100: capped, the synthetic set equals the
    data, so its barycenter mean is the data's bootstrap mean, resample for resample."""
    from types import SimpleNamespace
    data = np.array([1.0, 10.0, 100.0])
    results = {"LW": SimpleNamespace(synthetic=np.log([[1.0, 10.0, 1e9], [1e9, 10.0, 1.0]]))}
    np.testing.assert_allclose(ce_income.dollars(results, cap=100.0)["LW"], [[1, 10, 100], [100, 10, 1]])
    capped = ce_income.utility_long(data, results, statistics=("mean",), B=40, seed=3, cap=100.0)
    raw = ce_income.utility_long(data, results, statistics=("mean",), B=40, seed=3)
    means = {source: g["value"].to_numpy() for source, g in capped.groupby("source")}
    lw = ce_income.LABELS["LW"]
    assert np.median(means[lw]) == pytest.approx(np.median(means["Data"]), rel=0.1)   # 38.5 against 37
    assert means[lw].max() <= 100.0 and np.median(raw[raw["source"] == lw]["value"]) > 1e8   # uncapped: set by $1e9
