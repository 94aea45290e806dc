"""ppmlib's identification risk against the authors' R package IdentificationRiskCalculation.

The oracle files in tests/oracles/identification_risk/ were written once by
tests/oracles/identification_risk.R (the package installed from its source into a temporary R
library, run on the committed inputs); this test needs no R. Per record: c_i (matches), T_i (own
record among them), K_i, F_i and the risk T_i / c_i; per dataset: s, EMR, TMR and FMR.
"""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppmlib.evaluate.disclosure import identification_risk

ORACLE = Path(__file__).resolve().parent / "oracles" / "identification_risk"
CATEGORICAL = ["UrbanRural", "Race", "IncomeGroup"]

# scenario -> (keys, synthesized, radius, relative), as the R script calls the package
SCENARIOS = {
    "continuous_relative": (["UrbanRural"], "Income", 0.1, True),
    "continuous_absolute": (["UrbanRural"], "Income", 2000.0, False),
    "mixed_relative": (["UrbanRural"], ["Race", "Income"], 0.1, True),
    "known_continuous": (["UrbanRural", "Expenditure"], "Income", {"Income": 0.1, "Expenditure": 0.05}, True),
    "categorical": (["UrbanRural"], ["Race", "IncomeGroup"], None, True),
}


def _read(name: str) -> pd.DataFrame:
    frame = pd.read_csv(ORACLE / name)
    return frame.astype({column: str for column in CATEGORICAL})  # the package's factors


@pytest.fixture(scope="module")
def inputs():
    synthetic = sorted(ORACLE.glob("synthetic_*.csv"))
    return _read("confidential.csv"), [_read(path.name) for path in synthetic]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_identification_risk_equals_the_authors_package(scenario, inputs):
    confidential, releases = inputs
    keys, synthesized, radius, relative = SCENARIOS[scenario]
    risk = identification_risk(confidential, releases, keys, synthesized, radius=radius, relative=relative)
    records = pd.read_csv(ORACLE / f"{scenario}_records.csv")
    rates = pd.read_csv(ORACLE / f"{scenario}_rates.csv")
    m = len(releases)

    def block(part):
        return records[[f"{part}_{l}" for l in range(1, m + 1)]].to_numpy()

    np.testing.assert_array_equal(risk.matches, block("c"))
    np.testing.assert_array_equal(risk.own, block("T"))
    np.testing.assert_array_equal(risk.true_match, block("K"))
    np.testing.assert_array_equal(risk.false_match, block("F"))
    np.testing.assert_allclose(risk.risk, block("Risk"), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(risk.unique, rates["s"].to_numpy())
    for ours, theirs in ((risk.emr, "EMR"), (risk.tmr, "TMR"), (risk.fmr, "FMR")):
        np.testing.assert_allclose(ours, rates[theirs].to_numpy(), rtol=0, atol=1e-12)


def test_the_oracle_is_not_trivial():
    """Every scenario has unique matches, right and wrong ones, and records with no match."""
    for scenario in SCENARIOS:
        records = pd.read_csv(ORACLE / f"{scenario}_records.csv")
        assert (records.filter(like="K_").to_numpy().sum() > 0) and (records.filter(like="F_").to_numpy().sum() > 0)
        assert (records.filter(like="c_").to_numpy() == 0).any()


def test_where_the_definitions_differ_a_negative_value_has_a_ball():
    """The package's relative radius r * y_i is negative for a negative value, so it finds no match
    (run by hand: c = 0, 1, 1 below); ppmlib's radius is r * abs(y_i), so the record is found."""
    confidential = pd.DataFrame({"g": ["a"] * 3, "y": [-100.0, 50.0, 1000.0]})
    release = pd.DataFrame({"g": ["a"] * 3, "y": [-101.0, 51.0, 1000.0]})
    risk = identification_risk(confidential, release, "g", "y", radius=0.1)
    assert risk.matches[:, 0].tolist() == [1, 1, 1] and risk.emr[0] == 3.0


def test_the_ball_is_open_as_in_the_package():
    confidential = pd.DataFrame({"g": ["a"] * 2, "y": [100.0, 300.0]})
    on_the_edge = pd.DataFrame({"g": ["a"] * 2, "y": [110.0, 300.0]})   # exactly 10% away: no match
    risk = identification_risk(confidential, on_the_edge, "g", "y", radius=10.0, relative=False)
    assert risk.matches[:, 0].tolist() == [0, 1]
