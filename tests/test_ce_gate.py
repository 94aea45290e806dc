"""The CE chapter's gate over seeds: which fits pass on which seed, read from its ledger and ce_gate.json."""
import pytest

from ppmlib.studies import ce_income

GATE = ce_income.GATE_CLAIM


def _row(seed, value):
    return {"seed": seed, "quantity": GATE, "value": value, "held": value == "yes", "asserted": False}


def test_the_gate_table_reads_the_failing_fits_from_the_ledgers_claim_row():
    rows = [_row(2017, "no: Unweighted; the claims computed from them are reported, not asserted"),
            {"seed": 2017, "quantity": "divergences Unweighted", "value": 1},
            _row(1, "yes"),
            _row(2, "no: Unweighted, SW (EMweighted); the claims computed from them are reported, not asserted")]
    table = ce_income.gate_by_seed(rows)
    assert list(table.columns) == ["seed 2017", "seed 1", "seed 2"]
    assert list(table.index) == list(ce_income.NAMES)
    assert table["seed 2017"].tolist() == [False, True, True, True, True]
    assert table["seed 1"].all()
    assert table["seed 2"].tolist() == [False, True, False, True, True]
    with pytest.raises(ValueError, match=r"seed 3: the gate claim names fits that are not the chapter's: \['LW'\]"):
        ce_income.gate_by_seed([_row(3, "no: LW; the claims ...")])


def test_the_settings_table_says_why_a_fit_failed():
    base = {"max R-hat": 1.003, "min bulk ESS": 900, "min tail ESS": 800, "leapfrog steps per draw": 60.0,
            "seconds": 100.0}
    rows = [{**base, "seed": 2017, "adapt_delta": 0.9, "warmup": 1000, "divergences": 1, "passes": False},
            {**base, "seed": 1, "adapt_delta": 0.9, "warmup": 1000, "divergences": 0, "passes": True},
            {**base, "seed": 2017, "adapt_delta": 0.95, "warmup": 1000, "divergences": 0, "passes": False,
             "max R-hat": 1.012, "min tail ESS": 350, "leapfrog steps per draw": 90.0},
            {**base, "seed": 1, "adapt_delta": 0.95, "warmup": 1000, "divergences": 3, "passes": False,
             "leapfrog steps per draw": 100.0}]
    table = ce_income.gate_by_setting(rows)
    assert table.loc[(0.9, 1000), "seed 2017"] == "1 divergence" and table.loc[(0.9, 1000), "seed 1"] == "pass"
    assert table.loc[(0.95, 1000), "seed 2017"] == "R-hat 1.012, ESS 350"
    assert table.loc[(0.95, 1000), "seed 1"] == "3 divergences"
    assert table.loc[(0.95, 1000), "mean leapfrog steps per draw"] == 95.0
    assert table["seeds passed"].tolist() == ["1 of 2", "0 of 2"]


def test_two_backends_fits_are_compared_at_the_same_seed_and_setting():
    row = {"seed": 2017, "adapt_delta": 0.9, "warmup": 1000, "Delta": 9.815, "divergences": 0, "max R-hat": 1.0021,
           "min bulk ESS": 933, "min tail ESS": 1248, "seconds": 128.5}
    cmdstan = [row, {**row, "seed": 1, "Delta": 9.269}]
    assert ce_income.same_fits(cmdstan, [{**row, "seconds": 483.9}]) == (1, 1)      # time is not a draw
    assert ce_income.same_fits(cmdstan, [{**row, "divergences": 1}, {**row, "seed": 1}]) == (0, 2)
    assert ce_income.same_fits(cmdstan, [{**row, "warmup": 2000}]) == (0, 0)
