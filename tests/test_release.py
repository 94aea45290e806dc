"""A release holds the synthetic datasets and epsilon, nothing else, and is written whole or not at all."""
import json

import numpy as np
import pandas as pd
import pytest

import ppmlib


@pytest.fixture(scope="module")
def lw():
    y = ppmlib.datasets.simulate.poisson(120, 30, seed=4)
    base = ppmlib.synthesizer("poisson", y, seed=1, sampler=ppmlib.Sampler(chains=2, draws=200, warmup=200), m=5)
    return ppmlib.synthesizer("poisson", y, "lw", base=base, seed=2, sampler=ppmlib.Sampler(chains=2, draws=200, warmup=200), m=5)


def _secret_strings(result):
    """Text forms of every weight, bound and draw: none may appear in a release."""
    values = list(result.weights) + list(result.bounds)
    values += [v for arr in result.fit.draws.values() for v in np.ravel(arr)]
    return {repr(float(v)) for v in values if v not in (0.0, 1.0)}


@pytest.mark.stan
def test_release_holds_only_synthetic_values_and_epsilon(lw, tmp_path):
    csv_path, json_path = release(lw, tmp_path / "lw_release")
    table = pd.read_csv(csv_path)
    assert list(table.columns) == [f"dataset_{j}" for j in range(1, 6)]
    np.testing.assert_array_equal(table.to_numpy().T, lw.synthetic)
    for column in table:  # the confidential data are not a column, in any order
        assert not np.array_equal(np.sort(table[column]), np.sort(lw.fit.y))
    meta = json.loads(json_path.read_text())
    assert set(meta) == {"synthesizer", "model", "datasets_file", "datasets_sha256", "m_datasets", "n_records_per_dataset",
                         "epsilon_per_dataset", "total_epsilon", "composition", "budget_max_epsilon",
                         "neighbours", "guarantee", "not_covered", "ledger"}
    assert meta["epsilon_per_dataset"] == pytest.approx(2 * lw.delta)
    assert "this database" in json.dumps(meta["ledger"])  # LW's epsilon is local: the ledger says whom it covers
    assert meta["total_epsilon"] == pytest.approx(5 * 2 * lw.delta)
    assert "removal neighbours" in meta["neighbours"] and "weights as fixed" in meta["not_covered"]
    # no arrays of anything: scalars and texts, the ledger a flat block of them
    assert not any(isinstance(v, (list, dict)) for k, v in meta.items() if k != "ledger")
    assert not any(isinstance(v, (list, dict)) for k, v in meta["ledger"].items() if k != "statement")
    assert all(isinstance(line, str) for line in meta["ledger"]["statement"])  # the ledger in words
    text = csv_path.read_text() + json_path.read_text()
    leaked = [s for s in _secret_strings(lw) if s in text]
    assert not leaked, leaked[:5]


@pytest.mark.stan
def test_budget_refuses_and_writes_nothing(lw, tmp_path):
    total = 5 * lw.epsilon
    with pytest.raises(ValueError, match=r"release refused: 5 datasets .* > max_epsilon"):
        release(lw, tmp_path / "r", max_epsilon=0.99 * total)
    assert list(tmp_path.iterdir()) == []
    release(lw, tmp_path / "r", max_epsilon=1.01 * total)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]
    with pytest.raises(FileExistsError, match="overwrite=True"):
        release(lw, tmp_path / "r.csv")
    with pytest.raises(ValueError, match="max_epsilon must lie in"):
        release(lw, tmp_path / "s", max_epsilon=-1.0)


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
        release(lw, tmp_path / "half")
    assert list(tmp_path.iterdir()) == []  # neither the csv nor any temp file


# --- issue 24: atomic for real, arithmetic that fails closed, names that round-trip ----------------
import math
import os
import tempfile
from types import SimpleNamespace

from ppmlib.release import load, release


def _stand_in(m=2, epsilon=1.5, seed=0, n=6):
    """What release() reads from a Synthesis, without a Stan fit (the mechanics under test are the files)."""
    synthetic = np.random.default_rng(seed).poisson(20, size=(m, n))
    return SimpleNamespace(name="LW", fit=SimpleNamespace(model=SimpleNamespace(name="poisson")),
                           synthetic=synthetic, epsilon=epsilon)


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# every call the writing makes that can fail: temporary files, writes to disk, links, renames, opens
STEPS = [(tempfile, "mkstemp"), (os, "fsync"), (os, "link"), (os, "replace"), (os, "open")]


def _fail_at(k, patch) -> list:
    """Make the k-th call of any STEP raise; returns a counter of the calls made."""
    calls = [0]
    for owner, name in STEPS:
        real = getattr(owner, name)

        def failing(*args, _real=real, _name=name, **kwargs):
            calls[0] += 1
            if calls[0] == k:
                raise OSError(f"injected failure at step {k} ({_name})")
            return _real(*args, **kwargs)
        patch.setattr(owner, name, failing)
    return calls


def _restore(folder, snapshot):
    for path in folder.iterdir():
        path.unlink()
    for name, content in snapshot.items():
        (folder / name).write_bytes(content)


@pytest.mark.parametrize("previous", [True, False], ids=["over a previous release", "first release"])
def test_a_failure_at_any_step_leaves_the_previous_release_and_no_temporary(tmp_path, previous):
    """Issue 24, point 2: inject a failure at each step of the write in turn. A failure raises and
    leaves the folder byte for byte as it was (the old pair, or nothing); a failure the write can
    absorb (no hard links: it copies instead) gives the whole new release."""
    if previous:
        release(_stand_in(m=2, epsilon=1.0, seed=1), tmp_path / "r")
    before = _snapshot(tmp_path)
    new = _stand_in(m=5, epsilon=3.0, seed=2)
    failed, k = [], 0
    while True:
        k += 1
        _restore(tmp_path, before)
        with pytest.MonkeyPatch.context() as patch:
            calls = _fail_at(k, patch)
            try:
                release(new, tmp_path / "r", overwrite=True)
            except OSError as err:
                failed.append(str(err))
                assert _snapshot(tmp_path) == before, failed[-1]
                continue
        table, meta = load(tmp_path / "r")  # succeeded: the new release, whole, and nothing else
        assert meta["m_datasets"] == 5 and meta["total_epsilon"] == 15.0
        np.testing.assert_array_equal(table.to_numpy().T, new.synthetic)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]
        if calls[0] < k:  # no call was left to fail
            break
    # per file: a temporary file (mkstemp and its open), its fsync, its rename; then the folder's open
    # and fsync (a failed backup link is absorbed by a copy)
    assert [f.split("(")[1] for f in failed] == ["mkstemp)", "open)", "fsync)"] * 2 + ["replace)"] * 2 + ["open)", "fsync)"]


def test_a_torn_pair_is_refused_by_load(tmp_path):
    """A crash between the two renames leaves a new CSV beside the old manifest: load() says so."""
    release(_stand_in(m=2, seed=1), tmp_path / "old")
    release(_stand_in(m=5, seed=2), tmp_path / "new")
    os.replace(tmp_path / "new.csv", tmp_path / "old.csv")
    with pytest.raises(ValueError, match="torn or altered release"):
        load(tmp_path / "old")


@pytest.mark.parametrize("epsilon, error, message", [
    (float("nan"), ValueError, "epsilon per dataset is nan"), (math.inf, ValueError, "epsilon per dataset is inf"),
    (-0.5, ValueError, "epsilon per dataset is -0.5"), ("3", TypeError, "synthesis.epsilon must be a number")])
@pytest.mark.parametrize("max_epsilon", [None, 100.0])
def test_an_epsilon_that_is_not_a_finite_number_is_refused(tmp_path, epsilon, error, message, max_epsilon):
    """Issue 24, point 3: a NaN epsilon passed max_epsilon, an infinite one was written as Infinity."""
    with pytest.raises(error, match=message):
        release(_stand_in(epsilon=epsilon), tmp_path / "r", max_epsilon=max_epsilon)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("max_epsilon", [float("nan"), math.inf, -1.0, 0.0])
def test_a_budget_that_is_not_a_positive_number_is_refused(tmp_path, max_epsilon):
    with pytest.raises(ValueError, match="max_epsilon must"):
        release(_stand_in(), tmp_path / "r", max_epsilon=max_epsilon)
    assert list(tmp_path.iterdir()) == []


def test_epsilon_of_delta_refuses_what_is_not_a_bound():
    assert ppmlib.epsilon(1.25) == 2.5 and ppmlib.epsilon(np.float64(0.0)) == 0.0 and ppmlib.epsilon(math.inf) == math.inf
    with pytest.raises(ValueError, match="delta must be a Lipschitz bound >= 0, got -1.0"):
        ppmlib.epsilon(-1)
    with pytest.raises(ValueError, match="got nan"):
        ppmlib.epsilon(float("nan"))
    with pytest.raises(TypeError, match="delta must be a real number, got str"):
        ppmlib.epsilon("3")


def test_the_manifest_is_strict_json_with_the_neighbours_stated(tmp_path):
    _, json_path = release(_stand_in(m=3, epsilon=0.75), tmp_path / "r")

    def no_constants(name):
        raise AssertionError(f"{name} is not JSON")
    meta = json.loads(json_path.read_text(), parse_constant=no_constants)
    assert meta["total_epsilon"] == 2.25 and meta["n_records_per_dataset"] == 6
    neighbours = meta["neighbours"]
    assert "removal neighbours of this database" in neighbours and "one of its records removed" in neighbours
    assert "adding an arbitrary record is not covered" in neighbours and "4 Delta" in neighbours
    assert "reveals the number of records n exactly" in meta["not_covered"]


def test_names_round_trip(tmp_path):
    """lw.v1 and lw.v2 were both written as lw.csv; "dir/" wrote dir.csv beside the folder."""
    one = release(_stand_in(seed=1), tmp_path / "lw.v1")
    two = release(_stand_in(seed=2), tmp_path / "lw.v2")
    assert [p.name for p in one + two] == ["lw.v1.csv", "lw.v1.json", "lw.v2.csv", "lw.v2.json"]
    assert [p.name for p in release(_stand_in(), tmp_path / "r.json")] == ["r.csv", "r.json"]
    (tmp_path / "folder").mkdir()
    for given in (tmp_path / "folder", str(tmp_path / "new") + "/"):
        with pytest.raises(ValueError, match="names a folder; give a file name in it"):
            release(_stand_in(), given)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "folder", "lw.v1.csv", "lw.v1.json", "lw.v2.csv", "lw.v2.json", "r.csv", "r.json"]
    assert list((tmp_path / "folder").iterdir()) == []


def test_replacing_a_two_file_release_warns_and_names_the_folder_call(tmp_path):
    # the two-file form's replacement takes two renames: a crash between them tears the pair
    from ppmlib.inference.exact import ConjugateSampler
    base = ppmlib.example_fit()
    made = [ppmlib.synthesizer("poisson", base.y, "lw", base=base, c=0.5, m=m, sampler=ConjugateSampler(), seed=3)
            for m in (3, 2)]
    release(made[0], tmp_path / "r")
    with pytest.warns(FutureWarning, match=r"ppmlib\.release\(synthesis, folder, table=records, column=name"):
        release(made[1], tmp_path / "r", overwrite=True)
    assert load(tmp_path / "r")[1]["m_datasets"] == 2
    # the folder form: replaced in one step, even where os.rename would fail between two renames
    folder = release(made[0], tmp_path / "f", table=pd.DataFrame({"y": base.y}), column="y")
    renames = []

    def no_rename(a, b):
        renames.append((a, b))
        raise OSError("the second rename fails")
    import os
    real = os.rename
    os.rename = no_rename
    try:
        release(made[1], folder, table=pd.DataFrame({"y": base.y}), column="y", overwrite=True)
    finally:
        os.rename = real
    assert not renames and load(folder)[1]["m_datasets"] == 2
