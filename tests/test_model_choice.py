"""The log models the command offers (normal, interactions, hetero, mixture), their designs, and the
default ``--model auto`` takes: the candidate that measured best on public files."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppmlib.datasets.design import interaction_design
from ppmlib.datasets.model_choice import AUTO_LOG_MODEL, LOG_SYNTHESIZERS, bins_prior, has_censored_fit, model_design
from ppmlib.errors import BadArgument
from ppmlib.release import command as cmd
from ppmlib.release import data as rdata

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "models.json"


@pytest.fixture(scope="module")
def wages():
    rng = np.random.default_rng(3)
    n = 300
    a, b = rng.choice(["n", "s", "w"], n), rng.choice(["full", "part"], n)
    wage = np.exp(6.0 + 0.3 * (a == "s") - 0.8 * (b == "part") * (a == "w") + rng.normal(0, 0.5, n))
    return pd.DataFrame({"region": a, "hours": b, "years": rng.uniform(0, 40, n), "wage": wage})


def test_the_interaction_design_is_the_cell_means_design_for_two_predictors(wages):
    """Least squares on the interactions reproduce every cell's average (one mean per cell)."""
    X = interaction_design(wages, ["region", "hours"])
    assert X.shape[1] == 6 and np.linalg.matrix_rank(X.to_numpy()) == 6
    y = np.log(wages["wage"].to_numpy())
    fitted = X.to_numpy() @ np.linalg.lstsq(X.to_numpy(), y, rcond=None)[0]
    cell_means = pd.Series(y).groupby([wages["region"], wages["hours"]]).transform("mean").to_numpy()
    np.testing.assert_allclose(fitted, cell_means, atol=1e-10)


def test_each_name_has_its_family_and_design(wages):
    families = {name: model_design(name, wages, ["region", "hours"])[0] for name in LOG_SYNTHESIZERS}
    assert families == {"normal": "normal", "interactions": "normal", "hetero": "hetnormal", "mixture": "mixture",
                        "binned": "binned", "cells": "cellnormal", "cells_iid": "cellnormal_iid"}
    assert model_design("normal", wages, ["region", "hours"])[1].shape[1] == 4
    assert model_design("auto", wages, ["region", "hours"])[0] == LOG_SYNTHESIZERS[AUTO_LOG_MODEL][0]
    with pytest.raises(BadArgument, match="unknown model"):
        model_design("cell", wages, ["region"])


@pytest.mark.parametrize("model, family, columns", [("interactions", "normal", 7), ("hetero", "hetnormal", 7),
                                                    ("normal", "normal", 5)])
def test_the_command_prepares_each_log_model(wages, model, family, columns):
    """Numeric predictors enter as main effects, the categorical ones with their interactions."""
    prepared = rdata.prepare(wages, "wage", model, ("region", "hours", "years"))
    assert prepared.family == family and prepared.X.shape == (300, columns)
    assert prepared.log_scale and rdata.design_columns(wages, ("region", "hours", "years"),
                                                     interactions=model != "normal") == columns


def test_auto_takes_the_model_chosen_on_public_files(wages):
    assert rdata.prepare(wages, "wage", "auto", ("region", "hours")).model == AUTO_LOG_MODEL


def test_the_binned_models_bins_are_the_public_bounds():
    assert bins_prior(3.5, 10.0) == {"bin_low": 3.5, "bin_high": 10.0, "bin_width": 0.25}
    with pytest.raises(BadArgument, match="whole bins"):
        bins_prior(3.5, 10.1)


def test_the_default_is_the_best_measured_candidate():
    """AUTO_LOG_MODEL has the smallest mean S_pMSE over the measured cells of
    benchmarks/results/models.json among the candidates with a censored fit (the command's default
    guarantee, strict, needs one), a cell being a (public file, seed, fit) triple, unweighted or
    strict (CM), that every such candidate was measured on; at least the three files' unweighted fits."""
    rows = json.loads(RESULTS.read_text())["rows"]
    candidates = {r["candidate"] for r in rows if r["candidate"] in LOG_SYNTHESIZERS and has_censored_fit(r["candidate"])}
    by_cell = {}
    for r in rows:
        if r["candidate"] in candidates:
            by_cell.setdefault((r["file"], r.get("seed", 1), r["fit"]), {})[r["candidate"]] = r["S_pMSE logit"]
    complete = [cell for cell in by_cell.values() if set(cell) == candidates]
    assert len(complete) >= 3 and {"normal", "hetero"} <= candidates
    scores = {name: np.mean([cell[name] for cell in complete]) for name in candidates}
    assert min(scores, key=scores.get) == AUTO_LOG_MODEL, scores


def test_only_the_cell_normal_models_lack_a_censored_fit():
    assert {name for name in LOG_SYNTHESIZERS if not has_censored_fit(name)} == {"cells", "cells_iid"}
    with pytest.raises(BadArgument, match="unknown model"):
        has_censored_fit("cell")
