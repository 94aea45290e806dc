"""ppmlib.inference.diagnostics against ArviZ (the oracle): R-hat, bulk ESS and tail ESS to 1e-6."""
import warnings

import numpy as np
import pytest

import ppmlib
from ppmlib.inference import diagnostics
from ppmlib.inference.diagnostics import ess_bulk, is_ok, rhat, summarize

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # ArviZ announces its refactor on import
    import arviz as az


def ar1_chains(seed: int, chains: int, n: int, phi: float, drift: float = 0.0) -> np.ndarray:
    """(chains, n) AR(1) chains x_t = phi x_{t-1} + e_t; ``drift`` offsets chain k by k * drift."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=(chains, n))
    x = np.empty((chains, n))
    x[:, 0] = noise[:, 0]
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x + drift * np.arange(chains)[:, None]


def assert_agrees_with_arviz(chains_by_draws: np.ndarray) -> None:
    chains = chains_by_draws.shape[0]
    flat = chains_by_draws.ravel()  # chain after chain, as ppmlib stores draws
    ours = [diagnostics.rhat(flat, chains), diagnostics.ess_bulk(flat, chains), diagnostics.ess_tail(flat, chains)]
    oracle = [float(az.rhat(chains_by_draws)), float(az.ess(chains_by_draws, method="bulk")),
              float(az.ess(chains_by_draws, method="tail"))]
    np.testing.assert_allclose(ours, oracle, rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("phi", [0.0, 0.6, 0.95, -0.4])
def test_ar1_chains_agree_with_arviz(seed, phi):
    assert_agrees_with_arviz(ar1_chains(seed, 4, 300, phi))


@pytest.mark.parametrize("n, chains, drift", [(301, 4, 0.0), (257, 3, 0.3), (1001, 2, 0.0), (999, 2, 0.05)])
def test_odd_lengths_few_chains_and_drifting_chains_agree_with_arviz(n, chains, drift):
    # an odd chain drops its middle draw when split; a drifting chain inflates R-hat
    assert_agrees_with_arviz(ar1_chains(11, chains, n, 0.7, drift))


def test_tail_ess_sees_what_bulk_ess_misses():
    # slowly mixing chains visit the tails rarely: tail ESS far below the number of draws;
    # independent heavy-tailed draws keep a tail ESS close to it
    slow = ar1_chains(5, 4, 500, 0.9).ravel()
    assert diagnostics.ess_tail(slow, 4) < 0.2 * slow.size
    iid = np.random.default_rng(5).standard_t(3, size=2000)
    assert diagnostics.ess_tail(iid, 4) > 0.6 * iid.size


def test_constant_quantity_has_no_diagnostics():
    x = np.full(400, 2.0)
    assert np.isnan(diagnostics.rhat(x, 4)) and np.isnan(diagnostics.ess_bulk(x, 4)) and np.isnan(diagnostics.ess_tail(x, 4))


def test_is_ok_needs_tail_ess_too():
    good = {"max_rhat": 1.001, "min_ess_bulk": 900.0, "min_ess_tail": 800.0, "divergences": 0}
    assert diagnostics.is_ok(good)
    assert not diagnostics.is_ok({**good, "min_ess_tail": 399.0})
    assert not diagnostics.is_ok({**good, "min_ess_bulk": 399.0})
    with pytest.raises(ValueError, match="min_ess_tail"):
        diagnostics.is_ok({k: v for k, v in good.items() if k != "min_ess_tail"})


def test_summarize_reports_the_worst_component():
    draws = {"a": ar1_chains(1, 4, 300, 0.0).ravel(), "b": ar1_chains(2, 4, 300, 0.9).ravel()[:, None]}
    s = diagnostics.summarize(draws, {"divergent__": np.zeros(1200)}, chains=4)
    assert s["min_ess_bulk"] == pytest.approx(diagnostics.ess_bulk(draws["b"][:, 0], 4))
    assert s["min_ess_tail"] == pytest.approx(min(diagnostics.ess_tail(draws["a"], 4), diagnostics.ess_tail(draws["b"][:, 0], 4)))


@pytest.mark.stan
def test_negative_binomial_fit_agrees_with_arviz():
    # the case where the earlier truncation of Geyer's sequence gave bulk ESS(phi) 1152.81 against ArviZ's 1132.43
    import ppmlib
    y = np.random.default_rng(3).negative_binomial(5, 5 / 105, 400)
    fit = ppmlib.fit("negbin", y, sampler=ppmlib.Sampler(chains=4, draws=300, warmup=300), seed=5)
    for name in ("mu", "phi"):
        assert_agrees_with_arviz(fit.draws[name].reshape(4, -1))


def test_summary_tables_show_tail_ess_and_flag_a_bad_tail():
    """The synthesizer table shows min tail ESS beside bulk ESS, and flags a fit whose tail ESS is low."""
    from ppmlib.mechanism.synthesis import Synthesis, summary_table
    from ppmlib.models.families import family
    from ppmlib.inference.posterior import Fit

    rng = np.random.default_rng(1)
    good = rng.normal(size=4000)
    sticky = np.repeat(rng.normal(size=400), 10) + 0.01 * rng.normal(size=4000)  # strongly autocorrelated
    rows = {}
    for name, lam in (("good", 100 + good), ("sticky", 100 + sticky)):
        fit = Fit(family("poisson"), np.array([100]), None, np.ones(1), {"lambda": lam},
                  {"divergent__": np.zeros(4000)}, 4, "test", 0)
        rows[name] = Synthesis(name, "custom", {}, np.ones(1), fit, np.ones(1), 1.0, 2.0, np.zeros((1, 1)))
    table = summary_table(rows.values())
    assert table.loc["good", "min tail ESS"] == pytest.approx(diagnostics.ess_tail(100 + good, 4))
    assert table.loc["sticky", "min tail ESS"] < 400 <= table.loc["good", "min tail ESS"]
    assert table.loc["good", "diagnostics"] == "ok" and table.loc["sticky", "diagnostics"].startswith("CHECK")


def test_ess_and_rhat_on_known_chains():
    rng = np.random.default_rng(0)
    rho, n, chains = 0.5, 20000, 4
    x = np.empty((chains, n))
    x[:, 0] = rng.normal(size=chains)
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * rng.normal(size=chains)
    # AR(1): ESS = N (1 - rho) / (1 + rho)
    expected = chains * n * (1 - rho) / (1 + rho)
    assert abs(ess_bulk(x.reshape(-1), chains) / expected - 1) < 0.1
    assert rhat(x.reshape(-1), chains) < 1.01
    shifted = x + np.arange(chains)[:, None]  # chains that disagree
    assert rhat(shifted.reshape(-1), chains) > 1.5


def test_to_arviz_keeps_the_chains_apart_and_arviz_agrees_with_ppmlib():
    """Fit.to_arviz on the shipped Stan fit: ArviZ's R-hat, bulk and tail ESS equal ppmlib's."""
    fit = ppmlib.example_fit()
    data = fit.to_arviz()
    per_chain = fit.n_draws // fit.chains
    lam = data.posterior["lambda"].values
    assert lam.shape == (fit.chains, per_chain)
    for k in range(fit.chains):  # chain k is the k-th block of ppmlib's draws, in order
        np.testing.assert_array_equal(lam[k], fit.draws["lambda"][k * per_chain:(k + 1) * per_chain])
    ours = fit.diagnostics
    np.testing.assert_allclose([float(az.rhat(data)["lambda"]), float(az.ess(data, method="bulk")["lambda"]),
                                float(az.ess(data, method="tail")["lambda"])],
                               [ours["max_rhat"], ours["min_ess_bulk"], ours["min_ess_tail"]], rtol=1e-6)
    assert ours["max_rhat"] > 1.005  # short chains: a layout that mixed the chains up would move R-hat
    stats = data.sample_stats
    assert int(stats["diverging"].sum()) == ours["divergences"] == 0 and stats["diverging"].dtype == bool
    np.testing.assert_array_equal(stats["tree_depth"].values.ravel(), fit.sampler["treedepth__"])
    np.testing.assert_array_equal(stats["energy"].values.ravel(), fit.sampler["energy__"])
    np.testing.assert_array_equal(data.log_likelihood["y"].values.reshape(fit.n_draws, -1), fit.log_lik)
    np.testing.assert_array_equal(data.observed_data["y"].values, fit.y)
    # ArviZ's PSIS-LOO runs on the log-likelihood group: its elpd is the sum over records of the
    # log of the average predictive density, up to the importance-sampling correction
    lppd = np.sum(np.log(np.mean(np.exp(fit.log_lik), axis=0)))
    assert abs(float(az.loo(data).elpd_loo) - lppd) < 2.0


def test_to_arviz_of_vector_parameters_and_of_a_fit_without_sampler_statistics():
    from ppmlib.models.families import family
    from ppmlib.inference.posterior import Fit
    rng = np.random.default_rng(4)
    X = np.column_stack([np.ones(5), np.arange(5.0)])
    beta, sigma = rng.normal(size=(6, 2)), rng.uniform(1, 2, 6)
    fit = Fit(family("normal"), rng.normal(size=5), X, np.ones(5), {"beta": beta, "sigma": sigma}, {}, 2, "by hand", 0)
    data = fit.to_arviz()
    assert data.posterior["beta"].shape == (2, 3, 2) and "sample_stats" not in data.groups()
    np.testing.assert_array_equal(data.posterior["beta"].values[1], beta[3:])
    assert fit.subset(np.ones(6, bool)).to_arviz().posterior["sigma"].shape == (2, 3)  # nothing dropped
    for dropped in ([2], [0, 1]):  # 4 draws left would still split into 2 chains, wrongly: refused too
        with pytest.raises(ValueError, match=f"holds {6 - len(dropped)} of its draws .* where each of its 2 chains"):
            fit.subset(~np.isin(np.arange(6), dropped)).to_arviz()


def test_to_arviz_says_how_to_get_arviz(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "arviz", None)  # import arviz now raises ImportError
    with pytest.raises(ImportError, match="pip install arviz"):
        ppmlib.example_fit().to_arviz()


def test_failing_names_the_fits_that_miss_the_gate_in_order():
    from types import SimpleNamespace
    good = {"max_rhat": 1.001, "min_ess_bulk": 500.0, "min_ess_tail": 450.0, "divergences": 0}
    fits = {"a": SimpleNamespace(diagnostics={**good, "max_rhat": 1.02}), "b": SimpleNamespace(diagnostics=good),
            "c": SimpleNamespace(diagnostics={**good, "divergences": 1})}
    assert diagnostics.failing(fits) == ["a", "c"]
    assert diagnostics.failing({"b": fits["b"]}) == []


def test_a_truncated_fit_keeps_the_diagnostics_of_its_whole_run():
    """After draws are dropped (truncation) the chains cannot be told apart: the gate judges the run."""
    from ppmlib.models.families import family
    from ppmlib.inference.posterior import Fit
    rng = np.random.default_rng(5)
    X = np.column_stack([np.ones(5), np.arange(5.0)])
    draws = {"beta": rng.normal(size=(400, 2)), "sigma": rng.uniform(1, 2, 400)}
    draws["beta"][200:] += 3.0                          # the second chain sits elsewhere: R-hat far above 1
    fit = Fit(family("normal"), rng.normal(size=5), X, np.ones(5), draws, {"divergent__": np.zeros(400)}, 2, "by hand", 0)
    truncated = fit.subset(np.arange(400) != 7)         # 399 draws: no longer two equal chains
    assert fit.diagnostics["max_rhat"] > 1.5
    assert truncated.diagnostics == fit.diagnostics
    assert fit.subset(np.ones(400, bool)).diagnostics == fit.diagnostics   # nothing dropped: computed as before


def test_combine_takes_the_worst_and_skips_nan_whatever_the_order():
    """A constant quantity has NaN R-hat; Python's max(nan, x) depends on the order (nan first wins)."""
    combine = diagnostics.combine
    one = {"max_rhat": np.nan, "min_ess_bulk": np.nan, "min_ess_tail": 500.0, "divergences": 1}
    two = {"max_rhat": 1.02, "min_ess_bulk": 300.0, "min_ess_tail": np.nan, "divergences": 2}
    for diags in ([one, two], [two, one]):
        assert combine(diags) == {"max_rhat": 1.02, "min_ess_bulk": 300.0, "min_ess_tail": 500.0, "divergences": 3}
    assert np.isnan(combine([one, one])["max_rhat"])


@pytest.mark.parametrize("draws", [1, 2, 3])
@pytest.mark.parametrize("chains", [1, 4])
def test_too_short_chains_give_nan_and_fail_the_gate_without_a_crash(draws, chains):
    # one or two draws per split half-chain: R-hat and ESS are undefined (an IndexError and numpy's
    # zero-size error before); the gate then cannot pass
    x = np.random.default_rng(draws).normal(size=chains * draws)
    diag = summarize({"mu": x}, {"divergent__": np.zeros(x.size)}, chains=chains)
    assert np.isnan([diag["max_rhat"], diag["min_ess_bulk"], diag["min_ess_tail"]]).all() and not is_ok(diag)
    four = summarize({"mu": np.random.default_rng(0).normal(size=chains * 4)}, {}, chains=chains)
    assert np.isfinite(four["min_ess_bulk"]) and np.isfinite(four["max_rhat"])
