"""The command's survey path: --weights releases the synthetic (outcome, weight) pairs as the main path
releases a column (the user's table with both replaced, the same files, manifest, flags and defaults)
and reports the weighted tables beside the release; bad weights and flags are refused with nothing
written. The safety rules (--out, --report, the lock, signals, leftovers) are tested over both paths
in tests/test_command_safety.py and tests/test_command_kill.py."""
import json

import numpy as np
import pandas as pd
import pytest

from ppmlib.release import survey as survey_release
from ppmlib.errors import BudgetExceeded, DataRefused
from ppmlib.inference.posterior import Sampler
from ppmlib.release import command as syn
from ppmlib.release import data as rdata, plan as rplan


@pytest.fixture()
def survey_csv(tmp_path):
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "stratum": np.repeat([1, 2], n // 2),
                          "psu": np.tile(np.arange(4), n // 4), "yedu": rng.integers(8, 19, n),
                          "age": rng.integers(18, 88, n), "region": rng.choice(["north", "south"], n)})
    frame["w"] = np.round(np.exp(rng.normal(7.5, 0.4, n)))
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    return path, frame


def command(path, out, *extra):
    return [str(path), "--column", "yedu", "--weights", "w", "--guarantee", "local", "--predictors", "sex",
            "--m", "3", "--chains", "1", "--draws", "200", "--out", str(out), *map(str, extra)]


def draws(k):
    """k exact draws per conditional (the survey path's draws are chains x draws of its sampler)."""
    return Sampler(chains=1, draws=k, warmup=k)


def survey(path, out, *, cells=(), m=2, report=True):
    """The survey path from Python: the data object, the plan (local, m datasets), 50 draws."""
    table = survey_release.read(path, "yedu", "w", cells=cells)
    return syn.synthesize(table, rplan.privacy_plan("local", m=m), sampler=draws(50), out=out, report=report)


def run(argv, capsys):
    status = syn.main([str(a) for a in argv])
    said = capsys.readouterr()
    return status, said.out, said.err


def no_fit(monkeypatch):
    monkeypatch.setattr(survey_release, "survey_synthesizer",
                        lambda *a, **k: pytest.fail("the survey path fitted before refusing"))


def test_release_and_report_beside_it(survey_csv, tmp_path):
    path, frame = survey_csv
    out = tmp_path / "release"
    table = survey_release.read(path, "yedu", "w", cells=["sex"], strata="stratum", psu="psu")
    s = syn.synthesize(table, rplan.privacy_plan("local", epsilon=2.0, m=3), sampler=draws(100), out=out).synthesis
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.json", "synthetic_1.csv", "synthetic_2.csv",
                                                     "synthetic_3.csv"]
    first = pd.read_csv(out / "synthetic_1.csv")
    # the user's table, columns in its order, with the outcome and the weight replaced; the rest dropped
    assert list(first.columns) == ["sex", "stratum", "psu", "yedu", "w"]
    pd.testing.assert_frame_equal(first[["sex", "stratum", "psu"]], frame[["sex", "stratum", "psu"]])
    np.testing.assert_allclose(first["w"], s.synthetic_weights[0])
    np.testing.assert_allclose(first["yedu"], s.synthetic_outcome[0])
    meta = json.loads((out / "synthetic.json").read_text())
    assert meta["total_epsilon"] == pytest.approx(3 * s.epsilon)
    assert meta["columns"]["synthesized"] == "yedu" and meta["columns"]["also_synthesized"] == ["w"]
    assert meta["columns"]["dropped"] == ["age", "region"]
    page = survey_release.report_path(out).read_text()
    assert "this database only (removal of one of its records" in page and "synthetic SE" in page and "What the weights' synthesis changed" in page
    # the confidential mean of the females' cell is shown as the report's table has it
    females = frame[frame["sex"] == "f"]
    assert f"{np.average(females['yedu'], weights=females['w']):.3f}" in page
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]      # no staging left


def test_the_manifest_has_the_main_paths_keys_and_the_report_its_statement(survey_csv, tmp_path, capsys, exact_draws):
    import html
    path, _ = survey_csv
    main = [str(path), "--column", "yedu", "--model", "poisson", "--guarantee", "local", "--m", "3", "--chains", "4",
            "--draws", "500", "--no-report", "--out", str(tmp_path / "main")]
    assert run(main, capsys)[0] == 0
    status, said, err = run(command(path, tmp_path / "survey"), capsys)
    assert status == 0, err
    ours = json.loads((tmp_path / "survey" / "synthetic.json").read_text())
    theirs = json.loads((tmp_path / "main" / "synthetic.json").read_text())
    assert sorted(set(theirs) - set(ours)) == []
    assert sorted(set(theirs["columns"]) - set(ours["columns"])) == []
    page = html.unescape(survey_release.report_path(tmp_path / "survey").read_text())
    assert ours["epsilon_covers"] in page
    for line in ours["ledger"]["statement"]:
        assert line in page and line in said


@pytest.mark.parametrize("bad", ["missing", "zero", "constant", "text"])
def test_bad_weights_write_nothing(survey_csv, tmp_path, bad):
    path, frame = survey_csv
    w = frame["w"].astype(object)
    if bad == "missing":
        w[3] = np.nan
    elif bad == "zero":
        w[3] = 0
    elif bad == "constant":
        w[:] = 10.0
    else:
        w[3] = "n/a"
    frame.assign(w=w).to_csv(path, index=False)
    with pytest.raises(DataRefused):
        survey(path, tmp_path / "r", cells=["sex"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


def test_budget_refused_before_fitting(survey_csv, tmp_path):
    path, _ = survey_csv
    with pytest.raises(BudgetExceeded, match="nothing was fitted or written"):
        syn.synthesize(survey_release.read(path, "yedu", "w"), rplan.privacy_plan("local", epsilon=2.0, m=5, budget=5.0),
                       out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_without_epsilon_the_default_target_applies_and_the_budget_with_it(survey_csv, tmp_path, capsys, monkeypatch):
    path, _ = survey_csv
    status, said, err = run(command(path, tmp_path / "r", "--no-report"), capsys)
    assert status == 0, err
    eps = json.loads((tmp_path / "r" / "synthetic.json").read_text())["epsilon_per_dataset"]
    assert 0.95 * rplan.STRICT_EPSILON <= eps <= rplan.STRICT_EPSILON       # LW at c = 1 would spend far more
    no_fit(monkeypatch)
    status, _, err = run(command(path, tmp_path / "r2", "--no-report", "--m", "20", "--budget", "10"), capsys)
    assert status == 2 and "cost 20 > budget = 10" in err, err
    assert not (tmp_path / "r2").exists()


def test_total_epsilon_sets_the_per_dataset_epsilon(survey_csv, tmp_path, capsys):
    from ppmlib.mechanism.ledger import solve_per_dataset_epsilon
    path, _ = survey_csv
    status, said, err = run(command(path, tmp_path / "r", "--no-report", "--total-epsilon", "8"), capsys)
    assert status == 0, err
    eps = json.loads((tmp_path / "r" / "synthetic.json").read_text())["epsilon_per_dataset"]
    target = solve_per_dataset_epsilon(8, 1e-6, 3)
    assert 0.95 * target <= eps <= target


@pytest.mark.parametrize("flags, message", [
    (["--column", "w"], "is the synthesized column itself"),
    (["--predictors", "sex,w"], "is also among the predictors"),
    (["--strata", "w"], "is also a design column"),
    (["--keep", "w"], "keep names the synthesized column 'w'"),
    (["--predictors", "age"], "predictor 'age' is numeric (70 distinct values)"),
    (["--predictors", "place"], "predictor 'place' has 60 levels, more than max_levels = 50"),
    (["--dask", "tcp://127.0.0.1:1"], "leave out --dask"),
])
def test_wrong_columns_and_flags_are_refused_before_any_fit(survey_csv, tmp_path, capsys, monkeypatch, flags, message):
    path, frame = survey_csv
    frame.assign(place=[f"p{i % 60}" for i in range(len(frame))]).to_csv(path, index=False)
    no_fit(monkeypatch)
    argv = command(path, tmp_path / "o")
    for flag, value in zip(flags[::2], flags[1::2]):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    status, _, err = run(argv, capsys)
    assert status == 2 and message in err, err
    assert err.count("\n") == 2 and "Traceback" not in err      # one line, and "nothing was written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


@pytest.mark.parametrize("flags, message", [
    (["--weights", "w", "--guarantee", "local", "--model", "poisson"], "--model cannot be used"),
    (["--weights", "w"], "only --guarantee local is available"),
    (["--strata", "stratum"], "need --weights"),
    (["--weights", "nope", "--guarantee", "local"], "not in the data"),
])
def test_the_command_refuses_clearly_and_writes_nothing(survey_csv, tmp_path, capsys, flags, message):
    path, _ = survey_csv
    status = syn.main([str(path), "--column", "yedu", *flags, "--m", "2", "--draws", "50", "--out", str(tmp_path / "o")])
    assert status == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


def test_parquet_keep_and_allow_failed_fits_as_on_the_main_path(survey_csv, tmp_path, capsys):
    from ppmlib.release import load
    path, frame = survey_csv
    out = tmp_path / "r"
    status, said, err = run(command(path, out, "--format", "parquet", "--keep", "region", "--allow-failed-fits",
                                    "--no-report"), capsys)
    assert status == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.json", "synthetic.parquet"]
    stacked, meta = load(out)
    assert list(stacked.columns) == ["dataset", "sex", "yedu", "region", "w"]
    assert stacked["dataset"].tolist() == [1] * 400 + [2] * 400 + [3] * 400
    assert stacked.loc[stacked["dataset"] == 2, "region"].tolist() == frame["region"].tolist()
    assert not np.isin(stacked["w"], frame["w"]).any()
    assert meta["columns"]["kept_declared_public"] == ["region"] and meta["columns"]["dropped"] == ["stratum", "psu",
                                                                                                      "age"]
    assert meta["diagnostics"]["released_anyway"] is False and meta["diagnostics"]["failing"] == []
    assert "dropped (not released): stratum, psu, age" in said


def test_drop_missing_and_encoding_as_on_the_main_path(survey_csv, tmp_path, capsys):
    path, frame = survey_csv
    frame = frame.astype({"yedu": float})
    frame.loc[7, "yedu"] = np.nan
    frame.loc[0, "region"] = "Montréal"
    frame.to_csv(path, index=False, encoding="latin-1")
    status, _, err = run(command(path, tmp_path / "a", "--no-report"), capsys)
    assert status == 2 and "cannot be decoded" in err and "--encoding latin-1" in err, err
    status, _, err = run(command(path, tmp_path / "a", "--no-report", "--encoding", "latin-1"), capsys)
    assert status == 2 and "1 of 400 records have a missing value (yedu: 1)" in err and "--drop-missing" in err, err
    status, said, err = run(command(path, tmp_path / "a", "--no-report", "--encoding", "latin-1", "--drop-missing",
                                    "--keep", "region"), capsys)
    assert status == 0, err
    first = pd.read_csv(tmp_path / "a" / "synthetic_1.csv")
    assert len(first) == 399 and first["region"].tolist() == frame["region"].drop(index=7).tolist()
    assert "1 dropped with missing values" in said


def test_the_input_is_read_once_before_the_fit(survey_csv, tmp_path, capsys, monkeypatch):
    """A file replaced during the fit (its rows reversed) changes nothing: the release was read before."""
    path, frame = survey_csv
    fit = survey_release.survey_synthesizer

    def meanwhile(*args, **kwargs):
        frame.iloc[::-1].to_csv(path, index=False)
        return fit(*args, **kwargs)

    monkeypatch.setattr(survey_release, "survey_synthesizer", meanwhile)
    status, _, err = run(command(path, tmp_path / "r", "--keep", "region,age"), capsys)
    assert status == 0, err
    first = pd.read_csv(tmp_path / "r" / "synthetic_1.csv")
    assert first["age"].tolist() == frame["age"].tolist()


def test_the_report_goes_where_asked_never_inside_the_release(survey_csv, tmp_path):
    path, _ = survey_csv
    with pytest.raises(ValueError, match="inside out="):
        survey(path, tmp_path / "r", report=tmp_path / "r" / "page.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]
    survey(path, tmp_path / "r", report=tmp_path / "p.html")
    assert "Survey synthesis report" in (tmp_path / "p.html").read_text()
    assert not survey_release.report_path(tmp_path / "r").exists()


@pytest.mark.parametrize("cells, n, refused", [([], 19, True), ([], 20, False), (["sex"], 29, True), (["sex"], 30, False)])
def test_too_few_records_for_the_cells_are_refused_before_any_fit(survey_csv, tmp_path, monkeypatch, cells, n, refused):
    """The main path's rule (minimum_records): 20 records, and 5 per coefficient (3 per cell: the outcome's mean,
    the log weight's intercept and slope)."""
    path, frame = survey_csv
    frame.iloc[:n].to_csv(path, index=False)
    monkeypatch.setattr(survey_release, "survey_synthesizer", lambda *a, **k: "fitted")
    monkeypatch.setattr(survey_release, "_check_finite", lambda synthesis: None)
    if refused:
        with pytest.raises(DataRefused, match=f"{n} records are too few"):
            survey(path, None, cells=cells)
    else:
        assert survey(path, None, cells=cells).synthesis == "fitted"


def test_a_run_that_would_not_fit_in_memory_is_refused_before_fitting(survey_csv, tmp_path, capsys, monkeypatch):
    path, _ = survey_csv
    no_fit(monkeypatch)
    need = survey_release.memory_needed(400, 3)
    monkeypatch.setattr(rdata, "available_memory", lambda: need - 1)
    status, _, err = run(command(path, tmp_path / "r"), capsys)
    assert status == 2 and f"needs about {need / 1e6:.0f} MB" in err and "MB are available" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]
    monkeypatch.setattr(rdata, "available_memory", lambda: need)
    monkeypatch.setattr(survey_release, "survey_synthesizer", lambda *a, **k: pytest.fail("fitted: the check passed"))
    with pytest.raises(pytest.fail.Exception, match="the check passed"):
        syn.main(command(path, tmp_path / "r"))
