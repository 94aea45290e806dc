"""Survey weights: the weighted tables against R's survey package, the conjugate draws, the joint
bound of (y, w), the synthesizer's refusals and calibration, and the Laplace baseline."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppmlib.baselines.laplace_tables import laplace_sensitivity, laplace_table
from ppmlib.errors import DataRefused
from ppmlib.evaluate.survey import combined_table, release_tables, weighted_table
from ppmlib.evaluate.utility import combine
from ppmlib.mechanism import survey

ORACLES = Path(__file__).parent / "oracles"


# --- weighted tables: R's survey package is the oracle --------------------------------------------

@pytest.mark.parametrize("design", ["strata_psu", "psu", "records"])
def test_weighted_table_equals_r_survey(design):
    data = pd.read_csv(ORACLES / "survey_data.csv")
    oracle = pd.read_csv(ORACLES / "survey_oracle.csv")
    oracle = oracle[oracle["design"] == design]
    kwargs = {"strata_psu": {"strata": data["stratum"], "psu": data["psu"]}, "psu": {"psu": data["psu"]},
              "records": {}}[design]
    table = weighted_table(data["y"], data["w"], data["cell"], **kwargs)
    ours = [table.loc[row.cell, row.statistic] for row in oracle.itertuples()]
    ours_se = [table.loc[row.cell, f"{row.statistic}_se"] for row in oracle.itertuples()]
    np.testing.assert_allclose(ours, oracle["estimate"], rtol=1e-8)
    np.testing.assert_allclose(ours_se, oracle["se"], rtol=1e-8)


def test_psu_labels_are_nested_in_strata():
    """The same PSU label in two strata is two PSUs (survey's nest = TRUE)."""
    data = pd.read_csv(ORACLES / "survey_data.csv")
    relabelled = data.groupby("stratum")["psu"].transform(lambda p: p.rank(method="dense"))  # 1, 2, ... per stratum
    a = weighted_table(data["y"], data["w"], data["cell"], strata=data["stratum"], psu=data["psu"])
    b = weighted_table(data["y"], data["w"], data["cell"], strata=data["stratum"], psu=relabelled)
    pd.testing.assert_frame_equal(a, b)


def test_weighted_table_refuses_bad_designs():
    y, w, cells = [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 1.0, 2.0], ["a", "a", "b", "b"]
    with pytest.raises(DataRefused, match="single PSU"):
        weighted_table(y, w, cells, strata=[1, 1, 2, 2], psu=[1, 2, 3, 3])
    with pytest.raises(DataRefused, match="record 1 is not"):
        weighted_table(y, [1.0, 0.0, 1.0, 1.0], cells)
    with pytest.raises(DataRefused, match="3 entries for 4 records"):
        weighted_table(y, w[:3], cells)


def test_combined_table_applies_reiters_rules_cell_by_cell():
    rng = np.random.default_rng(3)
    cells = np.repeat(["a", "b"], 50)
    tables = [weighted_table(rng.normal(10, 2, 100), rng.uniform(1, 3, 100), cells) for _ in range(4)]
    out = combined_table(tables)
    for cell in ("a", "b"):
        expected = combine([t.loc[cell, "mean"] for t in tables], [t.loc[cell, "mean_se"] ** 2 for t in tables])
        assert out.loc[cell, "mean"] == pytest.approx(expected["estimate"], rel=1e-12)
        assert out.loc[cell, "mean_se"] == pytest.approx(np.sqrt(expected["T"]), rel=1e-12)
        assert out.loc[cell, "mean_lower"] == pytest.approx(expected["lower"], rel=1e-12)


# --- the joint model ---------------------------------------------------------------------------------

def test_conjugate_draws_weight_half_on_duplicated_records_equals_weight_one():
    """alpha = 1/2 on every record twice is the same pseudo posterior as alpha = 1 once: identical draws."""
    rng = np.random.default_rng(1)
    X = np.column_stack([np.ones(40), rng.normal(size=40)])
    z = X @ [2.0, -1.0] + rng.normal(0, 0.5, 40)
    once = survey.conjugate_normal_draws(z, X, np.ones(40), 50, seed=9)
    twice = survey.conjugate_normal_draws(np.tile(z, 2), np.tile(X, (2, 1)), np.full(80, 0.5), 50, seed=9)
    np.testing.assert_allclose(once["beta"], twice["beta"], rtol=1e-9)
    np.testing.assert_allclose(once["sigma"], twice["sigma"], rtol=1e-9)


def test_conjugate_draws_match_the_closed_form_posterior():
    """Intercept-only, prior scale huge: the posterior mean is the alpha-weighted mean, E[s^2] = scale / (shape - 1)."""
    rng = np.random.default_rng(2)
    z, alpha = rng.normal(5, 2, 200), rng.uniform(0.2, 1, 200)
    d = survey.conjugate_normal_draws(z, np.ones((200, 1)), alpha, 40000, seed=0, prior={"beta_scale": 1e6})
    weighted_mean = (alpha * z).sum() / alpha.sum()
    shape = 1.0 + alpha.sum() / 2
    scale = 1.0 + (alpha * (z - weighted_mean) ** 2).sum() / 2
    assert d["beta"].mean() == pytest.approx(weighted_mean, abs=4 * np.sqrt(scale / (shape - 1) / alpha.sum() / 40000))
    assert (d["sigma"] ** 2).mean() == pytest.approx(scale / (shape - 1), rel=0.01)


def test_joint_bound_is_the_paired_max_of_the_two_log_densities():
    """_bounds against scipy's normal log density on every draw, record and conditional."""
    rng = np.random.default_rng(4)
    n, S = 30, 60
    codes = rng.integers(0, 3, n)
    codes[:3] = [0, 1, 2]
    y, log_w = rng.normal(12, 3, n), rng.normal(8, 0.5, n)
    alpha = rng.uniform(0, 1, n)
    X_y, X_w = np.ones((n, 1)), np.column_stack([np.ones(n), y - 12])
    dy = survey.cell_draws(y, X_y, codes, alpha, S, seed=1)
    dw = survey.cell_draws(log_w, X_w, codes, alpha, S, seed=2)
    f_y = stats.norm.logpdf(y, dy["beta"][:, codes, 0], dy["sigma"][:, codes])
    mean_w = dw["beta"][:, codes, 0] + dw["beta"][:, codes, 1] * (y - 12)
    f_w = stats.norm.logpdf(log_w, mean_w, dw["sigma"][:, codes])
    bounds = survey._bounds([(dy, y, X_y, codes), (dw, log_w, X_w, codes)], alpha, S, block=7)
    np.testing.assert_allclose(bounds.paired, np.abs(alpha * (f_y + f_w)).max(axis=0), rtol=1e-12)
    np.testing.assert_allclose(bounds.conditional[:, 1], np.abs(alpha * f_w).max(axis=0), rtol=1e-12)
    assert (bounds.paired <= bounds.summed + 1e-12).all()


@pytest.fixture(scope="module")
def small_survey():
    rng = np.random.default_rng(11)
    n = 600
    sex, insured = rng.choice(["f", "m"], n), rng.choice(["yes", "no"], n, p=[0.8, 0.2])
    y = np.clip(np.round(rng.normal(13 + (insured == "yes"), 2.5)), 0, 18)
    w = np.round(np.exp(rng.normal(8 - 0.05 * (y - 12), 0.5)))
    return pd.DataFrame({"sex": sex, "insured": insured, "yedu": y, "w": w})


@pytest.mark.parametrize("bad, message", [
    ([np.nan], "1 missing or infinite value"),
    ([0.0], "record 0 is not"),
    ([-3.0], "record 0 is not"),
    (["heavy"], "must be numeric; record 0"),
    ("constant", "is constant"),
])
def test_bad_weights_are_refused(small_survey, bad, message):
    data = small_survey.copy()
    if bad == "constant":
        data["w"] = 5.0
    else:
        data["w"] = data["w"].astype(object)
        data.loc[0, "w"] = bad[0]
    with pytest.raises(DataRefused, match=message):
        survey.survey_synthesizer(data, "yedu", "w", ["sex", "insured"], m=2, draws=20)


def test_synthesizer_reaches_the_target_epsilon_and_releases_the_pair(small_survey):
    s = survey.survey_synthesizer(small_survey, "yedu", "w", ["sex", "insured"], epsilon=3.0, m=3, draws=200,
                                  centre=12, seed=5)
    assert 0.95 * 3.0 <= s.epsilon <= 3.0
    assert s.epsilon == pytest.approx(2 * s.bounds.paired.max())
    assert s.synthetic_outcome.shape == s.synthetic_weights.shape == (3, 600)
    assert (s.synthetic_weights > 0).all()
    assert not np.isin(s.synthetic_weights, small_survey["w"].to_numpy()).all()   # the weights are synthetic
    assert list(s.dataset(0).columns) == ["sex", "insured", "yedu", "w"]
    unweighted = survey.survey_synthesizer(small_survey, "yedu", "w", ["sex", "insured"], scheme="unweighted",
                                           m=3, draws=200, centre=12, seed=5)
    assert unweighted.epsilon > 2 * s.epsilon


def test_keeping_the_weights_bounds_the_outcome_alone(small_survey):
    s = survey.survey_synthesizer(small_survey, "yedu", "w", ["sex", "insured"], scheme="unweighted", m=2,
                                  draws=100, synthesize_weights=False, weight_centre=8, seed=1)
    assert s.bounds.conditional.shape == (600, 1)
    np.testing.assert_array_equal(s.synthetic_weights[1], small_survey["w"].to_numpy())


# --- the Laplace baseline -----------------------------------------------------------------------------

def test_laplace_noise_has_the_stated_scale():
    y, w, cells = np.full(2000, 3.0), np.full(2000, 2.0), np.repeat(np.arange(400), 5)   # 400 cells of 5
    assert laplace_sensitivity(2.0, 18.0) == 38.0
    totals = np.concatenate([laplace_table(y, w, cells, 1.0, 2.0, 18.0, seed=s)["total"].to_numpy() for s in range(10)])
    # Laplace(b) has variance 2 b^2 with b = 38 / 1; the exact totals are 30
    assert totals.mean() == pytest.approx(30.0, abs=3 * 38 * np.sqrt(2 / 4000))
    assert totals.var() == pytest.approx(2 * 38.0**2, rel=0.12)


def test_laplace_table_at_huge_epsilon_is_the_exact_table():
    rng = np.random.default_rng(0)
    y, w, cells = rng.integers(0, 19, 300), rng.uniform(100, 900, 300), rng.choice(["a", "b", "c"], 300)
    exact = weighted_table(y, w, cells)
    noisy = laplace_table(y, w, cells, 1e9, 1000.0, 18.0, seed=1)
    np.testing.assert_allclose(noisy["mean"], exact["mean"], rtol=1e-6)


def test_release_holds_the_pair_and_the_public_columns_never_alpha(small_survey, tmp_path):
    from ppmlib.errors import BudgetExceeded
    from ppmlib.release import load, release

    s = survey.survey_synthesizer(small_survey, "yedu", "w", ["sex", "insured"], epsilon=3.0, m=2, draws=100,
                                  centre=12, seed=2)
    with pytest.raises(BudgetExceeded, match="Nothing was written"):
        release(s, tmp_path / "survey", max_epsilon=1.0)
    assert not any(tmp_path.iterdir())
    release(s, tmp_path / "survey", max_epsilon=10.0)
    table, meta = load(tmp_path / "survey")
    assert list(table.columns) == ["sex", "insured", "dataset_1_yedu", "dataset_1_w", "dataset_2_yedu", "dataset_2_w"]
    np.testing.assert_allclose(table["dataset_2_w"], s.synthetic_weights[1])
    assert meta["total_epsilon"] == pytest.approx(2 * s.epsilon)
    assert meta["variables"] == ["yedu", "w"] and "whole record" in meta["epsilon_covers"]
    written = (tmp_path / "survey.json").read_text()
    assert '"alpha"' not in written and '"weights"' not in written
    assert not any(repr(float(a)) in written for a in s.weights[s.weights < 1][:20])
    assert not np.isin(table[["dataset_1_w", "dataset_2_w"]].to_numpy(), small_survey["w"].to_numpy()).any()


def test_release_tables_put_the_confidential_table_beside_the_combined_synthetic_one(small_survey):
    s = survey.survey_synthesizer(small_survey, "yedu", "w", ["sex", "insured"], epsilon=3.0, m=3, draws=100,
                                  centre=12, seed=4)
    out = release_tables(s, small_survey, ["sex", "insured"])
    conf = weighted_table(small_survey["yedu"], small_survey["w"], small_survey[["sex", "insured"]])
    synth = combined_table([weighted_table(s.synthetic_outcome[l], s.synthetic_weights[l], s.public)
                            for l in range(3)])
    np.testing.assert_allclose(out["table"]["mean SE"], conf["mean_se"], rtol=1e-12)
    np.testing.assert_allclose(out["table"]["synthetic SE"], synth["mean_se"], rtol=1e-12)
    assert out["epsilon"]["outcome and weight (released)"] == s.epsilon
    assert out["epsilon"]["outcome's term alone, same alpha"] == pytest.approx(2 * s.bounds.conditional[:, 0].max())
    assert out["weights"].loc["50% quantile", "confidential"] == np.median(small_survey["w"])


def test_privacy_statement_names_neighbours_database_and_totals(small_survey):
    s = survey.survey_synthesizer(small_survey, "yedu", "w", ["sex", "insured"], epsilon=2.0, m=4, draws=100,
                                  centre=12, seed=3)
    from ppmlib.mechanism.ledger import of_release
    text = "\n".join(of_release(s).statement())     # the one statement: the manifest's and the report's
    assert "this database only (removal of one of its records" in text
    assert f"basic composition of m = 4 datasets: ({4 * s.epsilon:.4g}, 0)-DP" in text
    assert "whole record" in s.model_entry()["epsilon_covers"]
