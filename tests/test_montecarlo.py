"""ppmlib.studies.asymptotic_dp: the exact Poisson study, LW_final and the cap, and the summaries of issue 23."""
import numpy as np
import pandas as pd
import pytest

import ppmlib
from ppmlib import seeds
from ppmlib.evaluate import audit
from ppmlib.inference import exact
from ppmlib.studies import asymptotic_dp as montecarlo

TINY = ppmlib.Sampler(chains=2, draws=150, warmup=150)


@pytest.fixture(scope="module")
def one_database():
    y = ppmlib.datasets.simulate.poisson(400, 100, seed=12)
    rows = {row["synthesizer"]: row for row in montecarlo.exact_database(y, 77, draws=3000)}
    return y, rows


def test_exact_database_unweighted_and_lw_are_the_books_pipeline_on_exact_draws(one_database):
    y, rows = one_database
    unweighted_seed, lw_seed = seeds(77, 5)[1:3]
    lam = exact.sample(y, None, size=3000, seed=unweighted_seed)
    L = exact.poisson_log_lik(lam, y).T                                # S x n, every draw
    assert rows["Unweighted"]["delta"] == pytest.approx(ppmlib.lipschitz_bound(L), rel=1e-12)
    alpha = ppmlib.lw_weights(L)                                       # the book's LW weights, full matrix
    lw_lam = exact.sample(y, alpha, size=3000, seed=lw_seed)
    assert rows["LW"]["delta"] == pytest.approx(ppmlib.lipschitz_bound(exact.poisson_log_lik(lw_lam, y).T, alpha),
                                                rel=1e-12)
    assert rows["LW"]["share down-weighted"] == pytest.approx(np.mean(alpha < 1))
    assert (rows["LW"]["f_min"], rows["LW"]["f_max"]) == pytest.approx((np.abs(L).max(0).min(), np.abs(L).max(0).max()))


def test_exact_lw_final_is_within_tau_of_lw_and_the_cap_is_min_one_cap_over_f(one_database):
    y, rows = one_database
    assert rows["LW_final"]["converged"]
    assert abs(rows["LW_final"]["delta"] - rows["LW"]["delta"]) < 0.25
    # Delta at k0 = 0.95 (3.21) is within tau = 0.25 of LW's (3.37): Algorithm 1 stops at its first k
    assert rows["LW_final"]["k"] == 0.95 and rows["LW_final"]["delta"] < rows["LW"]["delta"]
    f = exact.draw_record_bounds(y, None, 3000, seeds(77, 5)[1])
    assert rows["Capped"]["share down-weighted"] == pytest.approx(np.mean(f > 3.5))       # alpha = min(1, 3.5 / f)
    cap_weights = np.minimum(1.0, 3.5 / f)
    assert rows["Capped"]["delta"] == pytest.approx(exact.draw_record_bounds(y, cap_weights, 3000, seeds(77, 5)[4]).max(),
                                                    rel=1e-12)


def test_exact_study_is_seeded_and_its_databases_are_the_stan_studys():
    first = montecarlo.run_exact_study([60, 90], R=2, mus=[50.0], seed=3, draws=500, progress=False)
    again = montecarlo.run_exact_study([60, 90], R=2, mus=[50.0], seed=3, draws=500, progress=False)
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert len(first) == 2 * 2 * 4 and set(first["synthesizer"]) == set(montecarlo.EXACT_SYNTHESIZERS)
    # job (mu, n = 90, r = 1) is the 4th: its database is seeds(job seed, 5)[0], as the Stan study's data seed
    job_seed = seeds(3, 4)[3]
    row = first[(first["n"] == 90) & (first["r"] == 1) & (first["synthesizer"] == "Unweighted")].iloc[0]
    assert row["seed"] == job_seed
    y = montecarlo.database("poisson", 90, seeds(job_seed, 4)[0], {"mu": 50.0})      # the Stan study's split
    assert row["delta"] == montecarlo.exact_database(y, job_seed, draws=500)[0]["delta"]


def test_share_above_and_formula_by_hand():
    deltas = pd.DataFrame({"model": "M", "synthesizer": "LW", "n": 10, "delta": [1.0, 2.0, 3.0, 4.0, np.nan],
                           "f_min": [3.0] * 5, "f_max": [8.0, 9.0, 10.0, 11.0, 12.0]})
    row = montecarlo.share_above(deltas, 2.5).loc[("M", "LW", 10)]
    assert (row["databases"], row["share above 2.5"]) == (4, 0.5)          # the NaN row is left out
    assert (row["95% low"], row["95% high"]) == pytest.approx(tuple(audit.clopper_pearson(2, 4)))
    formula = montecarlo.with_formula(deltas)
    assert formula["formula"].iloc[0] == pytest.approx(64 / 20)            # 8^2 / (4 (8 - 3))
    assert formula["Delta / formula"].iloc[0] == pytest.approx(1.0 / 3.2)


def test_leaving_a_model_out_of_the_sweep_keeps_every_other_jobs_seed(monkeypatch):
    captured = {}

    def fake_map_jobs(fn, jobs, **kwargs):
        captured.setdefault("runs", []).append(jobs)
        return []

    monkeypatch.setattr(montecarlo, "map_jobs", fake_map_jobs)
    args = dict(n=100, R=3, n_values=[50, 200], R_sweep=2, seed=4, progress=False)
    montecarlo.run_study(["poisson", "nb_mixture"], **args)
    montecarlo.run_study(["poisson", "nb_mixture"], sweep_models=["nb_mixture"], sweep_synthesizers=["Unweighted"], **args)
    full, reduced = captured["runs"]
    by_key = {(j["design"], j["n"], j["r"]): j for j in full}
    assert len(full) == 2 * (3 + 2 + 2) and len(reduced) == 3 + 7            # Poisson keeps its main study only
    for job in reduced:
        assert job["seed"] == by_key[(job["design"], job["n"], job["r"])]["seed"]
        assert job["synthesizers"] == (("Unweighted", "LW") if job["n"] == 100 else ("Unweighted",))


@pytest.mark.stan
def test_a_failed_reweighting_loses_its_own_row_and_refits_nothing(monkeypatch):
    """LW_final cannot reach tau = 1e-9 in one refit: its row says so, and Unweighted and LW are the
    fits made before it (they were fitted again from scratch, with the same seeds, before)."""
    from ppmlib.inference import backends
    from ppmlib.studies import asymptotic_dp
    fits = []
    sample = backends.sample
    monkeypatch.setattr(backends, "sample", lambda *a, **k: fits.append(1) or sample(*a, **k))
    settings = {"c": 1.0, "g": 0.0, "m": 2, "tau": 1e-9, "k0": 0.95, "max_iter": 1, "sampler": TINY,
                **asymptotic_dp.DEFAULT_DESIGN_SETTINGS}
    job = {"design": "poisson", "n": 80, "r": 0, "seed": 9, "settings": settings, "synthesizers": asymptotic_dp.SYNTHESIZERS}
    rows = {row["synthesizer"]: row for row in asymptotic_dp.run_database(job)["deltas"]}
    assert not rows["LW_final"]["converged"] and np.isnan(rows["LW_final"]["delta"])
    assert len(fits) == 3                                  # Unweighted, LW, one LW_final refit: nothing again
    alone = {row["synthesizer"]: row for row in
             asymptotic_dp.run_database({**job, "synthesizers": ("Unweighted", "LW")})["deltas"]}
    assert [rows[n]["delta"] for n in ("Unweighted", "LW")] == [alone[n]["delta"] for n in ("Unweighted", "LW")]


@pytest.mark.stan
def test_exact_twin_agrees_with_stan_and_lw_final_runs_in_the_study():
    study = montecarlo.run_study(["poisson"], n=150, R=3, synthesizers=["Unweighted", "LW", "LW_final"], m=2,
                                 sampler=TINY, seed=5, progress=False)
    assert set(study.deltas["synthesizer"]) == {"Unweighted", "LW", "LW_final"}
    final = study.deltas[study.deltas["synthesizer"] == "LW_final"]
    assert final["converged"].all() and (final["k"] > 0).all()
    twin = montecarlo.exact_twin(study, draws=600)     # 600 exact draws against Stan's 300
    assert len(twin) == 9
    # the two routes draw from the same pseudo posterior: the bounds agree up to Monte Carlo error
    np.testing.assert_allclose(twin["Stan"], twin["exact"], rtol=0.08)


def test_twin_agreement_by_hand():
    # LW: Stan / exact = 1.02, 0.99, 1.1 (median 1.02, mean 1.037); LW_final: 1.02, 1.0 (median 1.01); worst 10% off
    twin = pd.DataFrame({"synthesizer": ["LW", "LW", "LW", "LW_final", "LW_final"],
                         "Stan": [3.06, 2.97, 4.4, 3.06, 2.0], "exact": [3.0, 3.0, 4.0, 3.0, 2.0]})
    median_off, worst = montecarlo.twin_agreement(twin)
    assert median_off == pytest.approx(0.02) and worst == pytest.approx(0.1)
    # mismatched: LW's exact bounds rolled to 4, 3, 3 -> 0.765, 0.99, 1.467 (median 0.99);
    # LW_final's to 2, 3 -> 1.53, 0.667 (median 1.098); worst 53% off
    median_off, worst = montecarlo.twin_agreement(twin, mismatched=True)
    assert median_off == pytest.approx((1.53 + 2.0 / 3.0) / 2 - 1) and worst == pytest.approx(0.53)


def test_formula_agreement_by_hand():
    # n = 1: Delta / formula = 1, 1, 0.909 (median 1), ranks agree (Spearman 1);
    # n = 2: 0.909, 0.909, 0.6 (median 0.909), ranks (1, 3, 2) against (1, 2, 3): Spearman 1 - 6 * 2 / 24 = 0.5
    rows = pd.DataFrame({"n": [1, 1, 1, 2, 2, 2], "delta": [1.0, 2.0, 3.0, 2.0, 4.0, 3.0],
                         "formula": [1.0, 2.0, 3.3, 2.2, 4.4, 5.0]})
    off, rank = montecarlo.formula_agreement(rows)
    assert off == pytest.approx(1 - 2 / 2.2) and rank == pytest.approx(0.5)
    # mismatched: formulas rolled to 3.3, 1, 2 (median ratio 1.5, Spearman -0.5) and 5, 2.2, 4.4 (Spearman -1)
    off, rank = montecarlo.formula_agreement(rows, mismatched=True)
    assert off == pytest.approx(0.5) and rank == pytest.approx(-1.0)
