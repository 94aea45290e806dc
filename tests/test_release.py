"""A release holds the synthetic datasets and epsilon, nothing else, and is written whole or not at all."""
import json

import numpy as np
import pandas as pd
import pytest

import ppmlib


@pytest.fixture(scope="module")
def lw():
    y = ppmlib.simulate.poisson(120, 30, seed=4)
    base = ppmlib.synthesizer("poisson", y, seed=1, sampler=ppmlib.Sampler(chains=2, draws=200, warmup=200), m=5)
    return ppmlib.synthesizer("poisson", y, "lw", base=base, seed=2, sampler=ppmlib.Sampler(chains=2, draws=200, warmup=200), m=5)


def _secret_strings(result):
    """Text forms of every weight, bound and draw: none may appear in a release."""
    values = list(result.weights) + list(result.bounds)
    values += [v for arr in result.fit.draws.values() for v in np.ravel(arr)]
    return {repr(float(v)) for v in values if v not in (0.0, 1.0)}


@pytest.mark.stan
def test_release_holds_only_synthetic_values_and_epsilon(lw, tmp_path):
    csv_path, json_path = lw.release(tmp_path / "lw_release")
    table = pd.read_csv(csv_path)
    assert list(table.columns) == [f"dataset_{j}" for j in range(1, 6)]
    np.testing.assert_array_equal(table.to_numpy().T, lw.synthetic)
    for column in table:  # the confidential data are not a column, in any order
        assert not np.array_equal(np.sort(table[column]), np.sort(lw.fit.y))
    meta = json.loads(json_path.read_text())
    assert set(meta) == {"synthesizer", "model", "datasets_file", "m_datasets", "n_records_per_dataset",
                         "epsilon_per_dataset", "total_epsilon", "composition", "budget_max_epsilon",
                         "neighbours", "guarantee", "not_covered"}
    assert meta["epsilon_per_dataset"] == pytest.approx(2 * lw.delta)
    assert meta["total_epsilon"] == pytest.approx(5 * 2 * lw.delta)
    assert "add/remove one record" in meta["neighbours"] and "weights as fixed" in meta["not_covered"]
    assert not any(isinstance(v, (list, dict)) for v in meta.values())  # no arrays of anything
    text = csv_path.read_text() + json_path.read_text()
    leaked = [s for s in _secret_strings(lw) if s in text]
    assert not leaked, leaked[:5]


@pytest.mark.stan
def test_budget_refuses_and_writes_nothing(lw, tmp_path):
    total = 5 * lw.epsilon
    with pytest.raises(ValueError, match=r"release refused: 5 datasets .* > max_epsilon"):
        lw.release(tmp_path / "r", max_epsilon=0.99 * total)
    assert list(tmp_path.iterdir()) == []
    lw.release(tmp_path / "r", max_epsilon=1.01 * total)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]
    with pytest.raises(FileExistsError, match="overwrite=True"):
        lw.release(tmp_path / "r.csv")
    with pytest.raises(ValueError, match="max_epsilon must lie in"):
        lw.release(tmp_path / "s", max_epsilon=-1.0)


@pytest.mark.stan
def test_a_failed_rename_leaves_neither_file(lw, tmp_path, monkeypatch):
    import os
    real_replace, calls = os.replace, []

    def second_rename_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", second_rename_fails)
    with pytest.raises(OSError, match="disk full"):
        lw.release(tmp_path / "half")
    assert list(tmp_path.iterdir()) == []  # neither the csv nor any temp file
