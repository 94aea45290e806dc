"""The survey-tables crossover experiment: its summary, and the chapter's asserted totals against the committed run."""
import re
from pathlib import Path

import pytest

from ppmlib.book import results
from ppmlib.studies import survey_tables

ROWS = [
    {"total epsilon": 5.0, "seed": 1, "PPM (y, w) RMSE": 0.2, "Laplace RMSE": 0.5, "no-privacy RMSE": 0.1},
    {"total epsilon": 5.0, "seed": 2, "PPM (y, w) RMSE": None, "Laplace RMSE": 0.5, "no-privacy RMSE": 0.1},
    {"total epsilon": 10.0, "seed": 1, "PPM (y, w) RMSE": 0.2, "Laplace RMSE": 0.3, "no-privacy RMSE": 0.1},
    {"total epsilon": 10.0, "seed": 2, "PPM (y, w) RMSE": 0.25, "Laplace RMSE": 0.4, "no-privacy RMSE": 0.3},
    {"total epsilon": 80.0, "seed": 1, "PPM (y, w) RMSE": 0.2, "Laplace RMSE": 0.05, "no-privacy RMSE": 0.1},
    {"total epsilon": 80.0, "seed": 2, "PPM (y, w) RMSE": 0.3, "Laplace RMSE": 0.35, "no-privacy RMSE": 0.3},
]


def test_crossover_counts_wins_and_failed_syntheses_as_losses():
    table = survey_tables.crossover(ROWS)
    assert table.loc[5.0, ["seeds", "PPM wins", "PPM failed"]].tolist() == [2, 1, 1]
    assert table.loc[10.0, "PPM wins"] == 2 and table.loc[80.0, "PPM wins"] == 1
    assert table.loc[10.0, "no-privacy RMSE"] == pytest.approx(0.2)
    assert survey_tables.winning_totals(table) == [10.0]


def test_the_chapters_asserted_totals_are_where_the_committed_experiment_wins_on_every_seed():
    run = results.read(results.RESULTS / "survey_crossover.json")
    table = survey_tables.crossover(run["rows"])
    assert table["seeds"].min() >= 12
    assert len({seed for drawn in run["drawn"] for seed in drawn["seeds"]}) >= 4    # the margin rule's drawn seeds
    chapter = (Path(__file__).resolve().parents[1] / "book" / "survey_tables.md").read_text()
    asserted = [float(x) for x in re.search(r"^claim_epsilons = \[([^\]]*)\]", chapter, re.M).group(1).split(",")]
    assert set(asserted) <= set(survey_tables.winning_totals(table))
