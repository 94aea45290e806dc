"""ppmlib.release.command: one command from a user's file to a release and its report.

Bad input is refused before anything is fitted or written (the message names the column and
counts, never shows a value); a good run writes synthetic_<k>.csv (or synthetic.parquet) and synthetic.json into --out and
the confidential report beside it. (tests/test_command_safety.py, test_command_report.py and
test_command_kill.py test what the command does to the disk.)
"""
import json

import numpy as np
import pandas as pd
import pytest
from bs4 import BeautifulSoup

import ppmlib
from ppmlib.release import command as syn
from ppmlib.release import data as rdata, plan as rplan
from ppmlib.release.data import read
from ppmlib.release.plan import privacy_plan

TINY = ppmlib.Sampler(chains=2, draws=100, warmup=100)
TINY_ARGS = ["--chains", "2", "--draws", "100"]


def wages(n=120, seed=1) -> pd.DataFrame:
    """A small file like the CPS one: a positive long-tailed salary, a categorical and a numeric predictor, counts."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"grade": rng.choice(["a", "b", "c"], n), "age": rng.integers(20, 60, n)})
    frame["salary"] = np.exp(10 + 0.3 * (frame["grade"] == "b") + 0.01 * frame["age"] + rng.normal(0, 0.5, n)).round(2)
    frame["visits"] = rng.poisson(5, n)
    return frame


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "wages.csv"
    wages().to_csv(path, index=False)
    return path


def refused(capsys, argv, out, message):
    """The command exits with status 2, says ``message`` and leaves ``out`` as it was."""
    before = sorted(p.name for p in out.iterdir()) if out.exists() else None
    assert syn.main(argv + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "nothing was written" in err
    assert (sorted(p.name for p in out.iterdir()) if out.exists() else None) == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]  # no staging left behind
    return err


# --- loading and checking, no Stan -------------------------------------------------------------

def test_cps1988_is_the_public_wage_file_as_the_data_card_says():
    table = rdata.load_table("cps1988")
    assert table.shape == (28155, 7)
    assert list(table.columns) == ["wage", "education", "experience", "ethnicity", "smsa", "region", "parttime"]
    assert table["wage"].min() == pytest.approx(50.05) and table["wage"].max() == pytest.approx(18777.2)
    assert table["wage"].median() == pytest.approx(522.32)


def test_csv_and_parquet_give_the_same_table(tmp_path):
    frame = wages()
    frame.to_csv(tmp_path / "w.csv", index=False)
    frame.to_parquet(tmp_path / "w.parquet")
    pd.testing.assert_frame_equal(rdata.load_table(tmp_path / "w.csv"), rdata.load_table(tmp_path / "w.parquet"))
    with pytest.raises(ValueError, match=r"must be a \.csv or \.parquet file, got '\.txt'"):
        (tmp_path / "w.txt").write_text("x")
        rdata.load_table(tmp_path / "w.txt")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rdata.load_table(tmp_path / "nope.csv")


def test_prepare_builds_log_y_one_hot_and_standardized_columns():
    frame = wages()
    p = rdata.prepare(frame, "salary", "normal", ["grade", "age"])
    assert p.terms == ("(Intercept)", "grade=b", "grade=c", "age")
    np.testing.assert_allclose(p.y, np.log(frame["salary"]))
    np.testing.assert_allclose(p.X[:, 1], (frame["grade"] == "b").astype(float))
    assert p.X[:, 3].mean() == pytest.approx(0, abs=1e-12) and p.X[:, 3].std() == pytest.approx(1)
    mixture = rdata.prepare(frame, "salary", "mixture", "grade,age")
    assert mixture.prior == {"prior_centre_mean": round(float(np.log(frame["salary"]).mean()), 1)}
    assert rdata.prepare(frame, "visits").model == "negbin"            # auto: counts without predictors
    assert rdata.prepare(frame, "salary").model == "normal"            # auto: anything else, on the log scale
    np.testing.assert_array_equal(rdata.prepare(frame, "visits", "poisson").y, frame["visits"])


def test_nested_predictors_keep_only_independent_columns_and_the_mixture_fits_them():
    """A region inside a band: the band's one-hot column is a sum of the region's, which the mixture's
    QR design refuses; prepare leaves it out and the design has full rank."""
    frame = wages(60)
    frame["region"] = np.where(frame.index % 3 == 0, "north", np.where(frame.index % 3 == 1, "east", "west"))
    frame["band"] = np.where(frame["region"] == "north", "cold", "warm")
    p = rdata.prepare(frame, "salary", "mixture", ["region", "band"])
    assert p.terms == ("(Intercept)", "region=north", "region=west")          # band=warm = 1 - region=north
    assert np.linalg.matrix_rank(p.X) == p.X.shape[1]
    ppmlib.models.families.family("mixture").check_X(p.X, len(p.y))                    # refused before


def test_minimum_records_counts_every_coefficient_of_every_component():
    assert rdata.minimum_records("negbin") == 20
    assert rdata.minimum_records("normal", 6) == 30
    assert rdata.minimum_records("mixture", 6, {"K": 3}) == 90


@pytest.mark.parametrize("change, args, message", [
    (None, dict(column="income"), "column(s) ['income'] not in the data"),
    (lambda f: f.assign(salary=f["salary"].astype(str).where(f.index % 10 > 0, "n/a")), dict(column="salary"),
     "column 'salary' is not numeric: 12 of 120 rows are not numbers"),
    (lambda f: f.assign(salary=f["salary"].where(f.index % 40 > 0)), dict(column="salary"),
     "3 of 120 records have a missing value (salary: 3); pass drop_missing=True"),
    (lambda f: f.assign(visits=f["visits"] - 6), dict(column="visits", model="poisson"), "negative and 0 non-integer"),
    (lambda f: f.assign(visits=f["visits"] + 0.5), dict(column="visits", model="negbin"),
     "has 0 negative and 120 non-integer values; the negbin model synthesizes counts"),
    (lambda f: f.assign(salary=f["salary"] - 30000), dict(column="salary", model="mixture"), "values <= 0; the mixture"),
    (lambda f: f.assign(grade=[f"g{i}" for i in range(len(f))]), dict(column="salary", predictors=["grade"]),
     "predictor 'grade' has 120 levels, more than max_levels = 50"),
    (lambda f: f.assign(age=40), dict(column="salary", predictors=["age"]), "numeric predictor 'age' is constant"),
    (lambda f: f.head(15), dict(column="salary", model="normal", predictors=["grade", "age"]),
     "15 records are too few for the normal model with 4 design columns (coefficients): it needs at least 20"),
    (None, dict(column="visits", model="poisson", predictors=["grade"]), "the poisson model is intercept-only"),
    (None, dict(column="salary", predictors=["salary"]), "cannot predict itself"),
])
def test_prepare_refuses_what_the_model_cannot_take(change, args, message):
    frame = wages() if change is None else change(wages())
    with pytest.raises(ValueError) as err:
        rdata.prepare(frame, **args)
    assert message in str(err.value)


def test_too_few_records_counts_the_mixture_components():
    with pytest.raises(ValueError, match=r"50 records are too few for the mixture model with 4 design .* at least 60"):
        rdata.prepare(wages(50), "salary", "mixture", ["grade", "age"])


def test_errors_never_show_a_confidential_value():
    frame = wages().assign(salary=lambda f: f["salary"] * np.where(np.arange(120) == 7, -1, 1))
    with pytest.raises(ValueError) as err:
        rdata.prepare(frame, "salary", "normal")
    assert "1 values <= 0" in str(err.value)
    assert str(frame.loc[7, "salary"]) not in str(err.value) and str(-frame.loc[7, "salary"]) not in str(err.value)


def test_drop_missing_drops_and_counts():
    frame = wages().assign(grade=lambda f: f["grade"].where(f.index % 30 > 0))
    p = rdata.prepare(frame, "salary", "normal", ["grade"], drop_missing=True)
    assert p.dropped == 4 and p.n == 116


@pytest.mark.parametrize("weighting, epsilon, radius, members, released", [
    ("lw", None, None, ["Unweighted", "LW"], "LW"),
    ("lw", 5.0, None, ["Unweighted", "LW"], "LW"),
    ("lw_final", None, None, ["Unweighted", "LW", "LW_final"], "LW_final"),
    ("cw", None, 0.5, ["Unweighted", "CW"], "CW"),
])
def test_lineup_for_each_weighting(weighting, epsilon, radius, members, released):
    lineup, name = rplan.lineup_for(weighting, epsilon, radius)
    assert [m if isinstance(m, str) else m.name for m in lineup] == members and name == released
    if epsilon is not None:
        assert lineup[1].epsilon == 5.0 and lineup[1].match is None
    if radius is not None:
        assert lineup[1].settings == {"radius": 0.5, "relative": False}


# --- the command refuses bad input and writes nothing (no Stan: all refused before fitting) -----

@pytest.mark.parametrize("extra, message", [
    (["--column", "income"], "column(s) ['income'] not in the data"),
    (["--column", "grade"], "column 'grade' is not numeric: 120 of 120 rows are not numbers"),
    (["--column", "visits", "--model", "poisson", "--predictors", "grade", "--strict-scheme", "cm"], "intercept-only"),
    (["--column", "visits", "--model", "poisson"], "--model poisson is a count model: give --strict-scheme cm for it"),
    (["--column", "salary", "--model", "negbin"], "non-integer values; the negbin model synthesizes counts"),
    (["--column", "salary", "--guarantee", "local", "--weighting", "cw"], "--weighting cw needs the policy radius"),
    (["--column", "salary", "--guarantee", "local", "--radius", "0.3"], "--radius is the CW policy radius"),
    (["--column", "salary", "--guarantee", "local", "--weighting", "cw", "--radius", "0.3", "--epsilon", "4"],
     "cannot be combined"),
    (["--column", "salary", "--weighting", "cw", "--radius", "0.3"], "--guarantee strict releases NSS"),
    (["--column", "salary", "--strict-scheme", "cm", "--weighting", "cw", "--radius", "0.3"],
     "--guarantee strict releases CM"),
    (["--column", "salary", "--epsilon", "1"], "--epsilon is CM's epsilon per dataset; the default strict scheme"),
    (["--column", "salary", "--strict-scheme", "cm", "--epsilon", "1", "--total-epsilon", "5"], "not both"),
    (["--column", "salary", "--strict-scheme", "cm", "--epsilon", "4", "--m", "10", "--budget", "30"],
     "cost 40 > budget = 30"),
    (["--column", "salary", "--bounds-share", "1"], "--bounds-share 1 must lie strictly between 0 and 1"),
    (["--column", "salary", "--bounds-share", "0.2", "--log-bounds", "9,12"], "not both"),
    (["--column", "salary", "--strict-scheme", "nss-bins", "--guarantee", "local"], "takes none"),
    (["--column", "salary", "--m", "0"], "m must be"),
])
def test_command_refuses_bad_options_and_leaves_out_untouched(csv, tmp_path, capsys, extra, message):
    refused(capsys, [str(csv)] + extra, tmp_path / "release", message)


def test_command_refuses_missing_values_then_drops_them_when_told(tmp_path, capsys):
    path = tmp_path / "gaps.csv"
    wages().assign(salary=lambda f: f["salary"].where(f.index % 40 > 0)).to_csv(path, index=False)
    refused(capsys, [str(path), "--column", "salary"], tmp_path / "release", "3 of 120 records have a missing value")


def test_command_refuses_a_non_empty_out_and_keeps_its_files(csv, tmp_path, capsys):
    out = tmp_path / "release"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    refused(capsys, [str(csv), "--column", "salary"], out, "exists and is not empty; choose another folder or pass "
                                                           "--overwrite")
    assert (out / "mine.txt").read_text() == "keep me"


def test_command_refuses_a_missing_or_unreadable_file(tmp_path, capsys):
    refused(capsys, [str(tmp_path / "nope.csv"), "--column", "salary"], tmp_path / "release", "does not exist")
    (tmp_path / "data.xlsx").write_text("x")
    refused(capsys, [str(tmp_path / "data.xlsx"), "--column", "salary"], tmp_path / "release", "'.xlsx'")


def test_help_speaks_to_a_statistician(capsys):
    with pytest.raises(SystemExit):
        syn.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for phrase in ("--column", "--predictors", "--epsilon", "--budget", "--drop-missing", "removal neighbours",
                   "adding an arbitrary record is not covered", "m * epsilon", "4 Delta", "outside the guarantee", "reveals n", "partially synthetic",
                   "strict (default)", "every database", "zCDP ledger"):
        assert phrase in text, phrase


# --- end to end (Stan) --------------------------------------------------------------------------

def report_text(out):
    return BeautifulSoup(out.with_name(out.name + ".report-confidential.html").read_text(), "html.parser")


@pytest.mark.stan
def test_command_writes_release_and_report_on_a_csv(tmp_path, capsys):
    csv = tmp_path / "gaps.csv"   # three records lack their grade: dropped when told, and counted in the report
    wages().assign(grade=lambda f: f["grade"].where(f.index % 50 != 7)).to_csv(csv, index=False)
    out = tmp_path / "release"
    assert syn.main([str(csv), "--column", "salary", "--model", "normal", "--predictors", "grade,age", "--m", "4",
                     "--seed", "3", "--drop-missing", "--allow-failed-fits", "--guarantee", "local", "--out", str(out)] + TINY_ARGS) == 0
    said = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.json"] + [f"synthetic_{k}.csv" for k in range(1, 5)]
    meta = json.loads((out / "synthetic.json").read_text())
    released = pd.concat([pd.read_csv(out / f"synthetic_{k}.csv")["salary"].rename(k) for k in range(1, 5)], axis=1)
    assert meta["synthesizer"] == "LW" and meta["m_datasets"] == 4 and released.shape == (117, 4)
    assert (released.to_numpy() > 0).all() and released.to_numpy().min() > 1000  # dollars, not log dollars
    eps = meta["epsilon_per_dataset"]
    assert all(line in said for line in meta["ledger"]["statement"])   # the manifest's statement, printed
    assert f"per dataset: epsilon = {eps:.4g}" in said and f"4 Delta = {2 * eps:.4g}" in said
    # the Python call with the same arguments gives the same numbers (seeded)
    again = syn.synthesize(read(csv, "salary", model="normal", predictors=["grade", "age"], drop_missing=True),
                           privacy_plan("local", m=4), seed=3, sampler=TINY, progress=False)
    np.testing.assert_allclose(np.exp(again["LW"].synthetic).T, released.to_numpy(), rtol=1e-12)
    assert again["LW"].epsilon == pytest.approx(eps, rel=1e-12)
    # the report: every section, the released epsilon, diagnostics of every fit, risk, drivers by rank
    html = report_text(out)
    headings = [h.get_text().rstrip("¶") for h in html.find_all(["h1", "h2"])]
    assert headings == ["Synthesis report: confidential, not for publication", "Summary",
                        "Privacy: what the release costs", "The records that drive Δ",
                        "Convergence of every fit", "Utility: distributions and the analyst's estimands",
                        "Disclosure risk"]
    text = " ".join(html.get_text().split())
    assert all(" ".join(line.split()) in text for line in meta["ledger"]["statement"]) and "(117 records)" in text
    assert "117 records used (3 dropped for missing values)" in text
    assert "WARNING: the fits of Unweighted, LW fail the diagnostics gate" in text   # 2 x 100 draws: too few
    tables = {t.find("thead").get_text(" ", strip=True)[:40]: t for t in html.find_all("table")}
    assert any("max_rhat" in head for head in tables) and any("median P(true)" in str(t) for t in tables.values())
    assert "grade=b" in text and "(Intercept)" in text                            # the regression's coefficients
    assert len(html.find_all("img")) == 5          # bounds, histogram, the largest cells (grade), two estimands
    assert "The largest cells: the data's and the synthetic quantiles, KS" in text
    confidential = wages()["salary"]
    assert str(confidential.max()) not in text and str(confidential.min()) not in text  # ranks, never values
    measures = [t for head, t in tables.items() if "S_pMSE logit" in head]   # grade is categorical: risk too
    assert len(measures) == 1 and "EMR" in measures[0].find("thead").get_text()


@pytest.mark.stan
def test_counts_epsilon_target_parquet_and_overwrite(tmp_path):
    path = tmp_path / "counts.parquet"
    wages().to_parquet(path)
    out = tmp_path / "release"
    syn.synthesize(read(path, "visits", model="poisson"), privacy_plan(m=2, strict_scheme="cm"), seed=1, sampler=TINY, out=out,
                   report=False, allow_failed_fits=True, progress=False)
    results = syn.synthesize(read(path, "visits", model="negbin"), privacy_plan("local", epsilon=4.0, m=3), seed=1,
                             sampler=TINY, out=out, overwrite=True, report=False, allow_failed_fits=True, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.json", "synthetic_1.csv", "synthetic_2.csv",
                                                     "synthetic_3.csv"]    # the old release (m = 2) replaced
    meta = json.loads((out / "synthetic.json").read_text())
    assert abs(meta["epsilon_per_dataset"] - 4.0) <= 2 * 0.05                                # LW calibrated to 4
    assert results["LW"].calibration["target_epsilon"] == 4.0
    released = np.stack([pd.read_csv(out / f"synthetic_{k}.csv")["visits"].to_numpy() for k in range(1, 4)])
    np.testing.assert_array_equal(released, results["LW"].synthetic)                     # counts as counts


@pytest.mark.stan
def test_unreachable_epsilon_and_a_budget_exceeded_after_fitting_write_nothing(csv, tmp_path, capsys):
    out = tmp_path / "release"
    err = refused(capsys, [str(csv), "--column", "visits", "--model", "poisson", "--epsilon", "1000", "--m", "3",
                           "--no-report", "--allow-failed-fits", "--guarantee", "local"] + TINY_ARGS, out, "target_epsilon = 1000 is out of reach")
    assert "reaches epsilon from" in err
    refused(capsys, [str(csv), "--column", "visits", "--model", "poisson", "--m", "3", "--budget", "0.5",
                     "--no-report", "--allow-failed-fits", "--guarantee", "local"] + TINY_ARGS, out, "release refused: 3 datasets at epsilon")


@pytest.mark.stan
def test_cw_and_lw_final_release_their_own_synthesizer(csv, tmp_path):
    cw = syn.synthesize(read(csv, "visits", model="poisson"), privacy_plan("local", "cw", radius=2.0, m=3), seed=2,
                        sampler=TINY, out=tmp_path / "cw", report=False, allow_failed_fits=True, progress=False)
    assert json.loads((tmp_path / "cw" / "synthetic.json").read_text())["synthesizer"] == "CW"
    assert cw["CW"].settings["radius"] == 2.0 and list(cw) == ["Unweighted", "CW"]
    final = syn.synthesize(read(csv, "visits", model="negbin"), privacy_plan("local", "lw_final", m=3), seed=2,
                           sampler=TINY, progress=False)
    assert list(final) == ["Unweighted", "LW", "LW_final"] and final.released == "LW_final"
    assert abs(final["LW_final"].delta - final["LW"].delta) < 0.05


@pytest.mark.stan
def test_a_strict_cm_release_says_so_word_for_word(csv, tmp_path, capsys):
    """--strict-scheme cm (the default before the bins scheme): CM at the total epsilon asked for; the
    printed lines are the ledger's, and the manifest carries the same lines and numbers."""
    from ppmlib.mechanism.ledger import SCOPES, ledger, solve_per_dataset_epsilon
    out = tmp_path / "release"
    assert syn.main([str(csv), "--column", "visits", "--model", "poisson", "--m", "3", "--total-epsilon", "6",
                     "--strict-scheme", "cm", "--delta", "1e-5", "--no-report", "--allow-failed-fits", "--out", str(out)] + TINY_ARGS) == 0
    said = capsys.readouterr().out
    meta = json.loads((out / "synthetic.json").read_text())
    eps = solve_per_dataset_epsilon(6.0, 1e-5, 3)
    book = ledger(eps, 3, delta=1e-5, guarantee="strict")
    assert meta["synthesizer"] == "CM" and meta["epsilon_per_dataset"] == pytest.approx(eps, rel=1e-12)
    assert meta["ledger"]["statement"] == book.statement() and meta["ledger"]["covers"] == SCOPES["strict"]
    assert meta["ledger"]["release_epsilon"] == pytest.approx(6.0, rel=1e-9)
    assert all(line in said for line in book.statement()) and "2 Delta" not in said
    assert meta["neighbours"] == SCOPES["strict"]


# --- the chapter on real wages, run on a file of one's own ----------------------------------------

@pytest.mark.stan
def test_the_real_wages_chapter_runs_on_a_csv_written_here(tmp_path):
    from ppmlib.book import rerun
    path = tmp_path / "mine.csv"
    wages(150, seed=5).to_csv(path, index=False)
    params = {**rerun.smoke_parameters()["real_wages.md"], "data": str(path), "column": "salary",
              "predictors": ["grade", "age"], "model": "normal", "baseline": "", "analyst": ["age"], "squared": [],
              "epsilon": 6.0}
    executed = rerun.run(rerun.ROOT / "book" / "real_wages.md", params, tmp_path / "runs")
    import nbformat
    cells = nbformat.read(executed, as_version=4).cells
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                     for c in cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "150 records (0 dropped for missing values); design: (Intercept), grade=b, grade=c, age" in text
    assert "LW at eps 6" in text and "median P(true)" in text          # the lineup and the normal model's risk
    assert "S_pMSE logit" in text and "EMR" in text                    # the agencies' measures (grade is categorical)
    assert not [o for c in cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
