"""The command's survey path: --weights releases the synthetic (outcome, weight) pairs and reports the
weighted tables beside the release; bad weights are refused with nothing written."""
import json

import numpy as np
import pandas as pd
import pytest

from ppmlib.release import survey as survey_release
from ppmlib.errors import BudgetExceeded, DataRefused


@pytest.fixture()
def survey_csv(tmp_path):
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "stratum": np.repeat([1, 2], n // 2),
                          "psu": np.tile(np.arange(4), n // 4), "yedu": rng.integers(8, 19, n)})
    frame["w"] = np.round(np.exp(rng.normal(7.5, 0.4, n)))
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_release_and_report_beside_it(survey_csv, tmp_path):
    path, frame = survey_csv
    out = tmp_path / "release"
    s = survey_release.synthesize_survey(path, "yedu", "w", cells=["sex"], strata="stratum", psu="psu",
                                         epsilon=2.0, m=3, draws=100, out=out)
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.csv", "synthetic.json"]
    released = pd.read_csv(out / "synthetic.csv")
    assert list(released.columns[:3]) == ["sex", "stratum", "psu"]
    assert json.loads((out / "synthetic.json").read_text())["total_epsilon"] == pytest.approx(3 * s.epsilon)
    page = survey_release.report_path(out).read_text()
    assert "removal neighbours" in page and "synthetic SE" in page and "What the weights' synthesis changed" in page
    # the confidential mean of the females' cell is shown as the report's table has it
    females = frame[frame["sex"] == "f"]
    assert f"{np.average(females['yedu'], weights=females['w']):.3f}" in page
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]      # no staging left


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
        survey_release.synthesize_survey(path, "yedu", "w", cells=["sex"], m=2, draws=50, out=tmp_path / "r")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


def test_budget_refused_before_fitting(survey_csv, tmp_path):
    path, _ = survey_csv
    with pytest.raises(BudgetExceeded, match="nothing was fitted or written"):
        survey_release.synthesize_survey(path, "yedu", "w", epsilon=2.0, m=5, budget=5.0, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_the_command_with_weights_releases_and_reports(survey_csv, tmp_path, capsys):
    from ppmlib.release.command import main

    path, _ = survey_csv
    out = tmp_path / "cmd"
    status = main([str(path), "--column", "yedu", "--weights", "w", "--guarantee", "local", "--predictors", "sex",
                   "--strata", "stratum", "--psu", "psu", "--epsilon", "2", "--m", "3", "--chains", "1", "--draws", "100", "--out", str(out)])
    assert status == 0
    printed = capsys.readouterr().out
    assert "removal neighbours" in printed and "('yedu', 'w')" in printed
    assert (out / "synthetic.csv").exists() and survey_release.report_path(out).exists()


@pytest.mark.parametrize("flags, message", [
    (["--weights", "w", "--guarantee", "local", "--model", "poisson"], "--model cannot be used"),
    (["--weights", "w"], "only --guarantee local is available"),
    (["--weights", "w", "--guarantee", "local", "--total-epsilon", "5"], "--total-epsilon cannot be used"),
    (["--strata", "stratum"], "need --weights"),
    (["--weights", "nope", "--guarantee", "local"], "not in the data"),
])
def test_the_command_refuses_clearly_and_writes_nothing(survey_csv, tmp_path, capsys, flags, message):
    from ppmlib.release.command import main

    path, _ = survey_csv
    status = main([str(path), "--column", "yedu", *flags, "--m", "2", "--draws", "50", "--out", str(tmp_path / "o")])
    assert status == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


def test_the_report_goes_where_asked_never_inside_the_release(survey_csv, tmp_path):
    path, _ = survey_csv
    with pytest.raises(DataRefused, match="inside the release folder"):
        survey_release.synthesize_survey(path, "yedu", "w", m=2, draws=50, out=tmp_path / "r",
                                         report=tmp_path / "r" / "page.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]
    survey_release.synthesize_survey(path, "yedu", "w", m=2, draws=50, out=tmp_path / "r", report=tmp_path / "p.html")
    assert "Survey synthesis report" in (tmp_path / "p.html").read_text()
    assert not survey_release.report_path(tmp_path / "r").exists()
