"""The release as the user's own table (synthpop's convention): each dataset is the table with the
synthesized column replaced, rows in their order; only public columns go in with it.

The command runs with the Poisson model and exact draws (no Stan), as in test_command_safety.py.
"""
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import ppmlib
from ppmlib.errors import BadArgument, DataRefused
from ppmlib.inference import exact
from ppmlib.release import command as syn
from ppmlib.release import load, tables
from ppmlib.release.data import read
from ppmlib.release.plan import privacy_plan

GOOD = ["--chains", "4", "--draws", "500"]


@pytest.fixture
def data(tmp_path):
    """A file whose kept columns pandas would not write back byte for byte (2.50, 007, a quoted comma)."""
    folder = tmp_path / "data"
    folder.mkdir()
    rng = np.random.default_rng(5)
    n = 40
    lines = ["zip,grade,visits,ssn,score"]
    for i in range(n):
        grade = '"b, upper"' if i % 3 == 0 else "a"
        lines.append(f"{i % 7:03d},{grade},{rng.poisson(5)},{100000000 + 7919 * i},{i % 4 + 0.5:.2f}")
    path = folder / "visits.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _column_text(path, name):
    return pd.read_csv(path, dtype=str, keep_default_na=False)[name].tolist()


def _run(data, out, *extra):
    return syn.main([str(a) for a in [data, "--column", "visits", "--model", "poisson", "--m", "3", "--out", out,
                                      "--no-report", "--guarantee", "local", *GOOD, *extra]])


def test_csv_release_is_the_users_table_with_the_column_replaced(data, tmp_path, capsys, exact_draws):
    out = tmp_path / "release"
    assert _run(data, out, "--keep", "score,zip") == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.json", "synthetic_1.csv", "synthetic_2.csv",
                                                     "synthetic_3.csv"]
    meta = json.loads((out / "synthetic.json").read_text())
    assert meta["columns"] == {"synthesized": "visits", "kept_public_by_model": [],
                               "kept_declared_public": ["zip", "score"], "dropped": ["grade", "ssn"],
                               "order": ["zip", "visits", "score"]}
    assert "dropped (not released): grade, ssn" in said
    original = pd.read_csv(data)
    for k in (1, 2, 3):
        path = out / f"synthetic_{k}.csv"
        assert path.read_text().splitlines()[0] == "zip,visits,score"          # the user's order, dropped ones absent
        assert _column_text(path, "zip") == _column_text(data, "zip")        # byte-equal: 000 stays 000
        assert _column_text(path, "score") == _column_text(data, "score")    # 2.50 stays 2.50
        assert not np.array_equal(pd.read_csv(path)["visits"], original["visits"])
    stacked, again = load(out)
    assert again == meta and list(stacked.columns) == ["dataset", "zip", "visits", "score"]
    assert stacked["dataset"].tolist() == [1] * 40 + [2] * 40 + [3] * 40
    assert "ssn" not in stacked and not stacked["visits"].isna().any()


def test_predictors_are_kept_and_a_tampered_file_is_refused(data, tmp_path, exact_draws):
    out = tmp_path / "release"
    table = pd.read_csv(data)
    results = syn.synthesize(read(data, "visits", model="poisson", keep=["grade"]), privacy_plan("local", m=2), seed=4,
                             out=out, report=False, progress=False, sampler=exact.ConjugateSampler(4, 500, 500))
    stacked, meta = load(out)
    np.testing.assert_array_equal(stacked["visits"].to_numpy().reshape(2, -1), results["LW"].synthetic)
    assert _column_text(out / "synthetic_2.csv", "grade") == _column_text(data, "grade")   # "b, upper" quoted again
    assert meta["columns"]["dropped"] == ["zip", "ssn", "score"]
    assert len(stacked) == 2 * len(table)
    path = out / "synthetic_2.csv"
    path.write_text(path.read_text() + "a,0\n")                                  # one record added
    with pytest.raises(DataRefused, match="synthetic_2.csv.*SHA-256 differs"):
        load(out)


def test_parquet_release_is_one_file_with_a_dataset_column(tmp_path, exact_draws, capsys):
    frame = pd.DataFrame({"region": pd.Series(["n", "s", "e", "w"] * 10, dtype="string"),
                          "visits": np.random.default_rng(1).poisson(4, 40), "income": np.linspace(1e4, 9e4, 40),
                          "age": np.arange(40, dtype=np.int16)})
    data = tmp_path / "in" / "v.parquet"
    data.parent.mkdir()
    frame.to_parquet(data)
    out = tmp_path / "release"
    assert _run(data, out, "--keep", "age,region", "--format", "parquet") == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.json", "synthetic.parquet"]
    stacked, meta = load(out)
    assert meta["format"] == "parquet" and meta["columns"]["dropped"] == ["income"]
    assert list(stacked.columns) == ["dataset", "region", "visits", "age"]
    assert stacked["age"].dtype == np.int16                                   # kept with its type
    for k in (1, 2, 3):
        one = stacked[stacked["dataset"] == k].reset_index(drop=True)
        pd.testing.assert_series_equal(one["age"], frame["age"])
        pd.testing.assert_series_equal(one["region"], frame["region"])
        assert not np.array_equal(one["visits"], frame["visits"])
    raw = bytearray((out / "synthetic.parquet").read_bytes())
    raw[len(raw) // 2] ^= 1
    (out / "synthetic.parquet").write_bytes(bytes(raw))
    with pytest.raises(DataRefused, match="SHA-256 differs"):
        load(out)


def test_keep_may_not_name_the_synthesized_column_or_a_missing_one(data, tmp_path, capsys, exact_draws):
    for keep, message in (("visits", "its values are the confidential ones"), ("nope", "not in the data")):
        assert _run(data, tmp_path / "r", "--keep", keep) == 2
        assert message in capsys.readouterr().err
        assert not (tmp_path / "r").exists()


def _stand_in(m=2, n=5, seed=0):
    synthetic = np.random.default_rng(seed).poisson(20, size=(m, n))
    return SimpleNamespace(name="LW", fit=SimpleNamespace(model=SimpleNamespace(name="poisson")),
                           synthetic=synthetic, epsilon=1.5)


def test_python_release_as_table_and_its_columns():
    columns = tables.public_columns(["a", "y", "b", "c"], "y", public=["b"], keep="c")
    assert (columns.order, columns.public_by_model, columns.declared_public, columns.dropped) == \
        (("y", "b", "c"), ("b",), ("c",), ("a",))
    with pytest.raises(BadArgument, match="confidential"):
        tables.public_columns(["a", "y"], "y", keep=["y"])


def test_python_release_writes_a_folder_and_replaces_only_a_release(tmp_path):
    table = pd.DataFrame({"x": list("pqrst"), "y": [1, 2, 3, 4, 5], "secret": [9, 8, 7, 6, 5]})
    lw = _stand_in()
    folder = ppmlib.release(lw, tmp_path / "rel", table=table, column="y", public=["x"])
    stacked, meta = load(folder)
    np.testing.assert_array_equal(stacked["y"].to_numpy().reshape(2, 5), lw.synthetic)
    assert meta["columns"]["dropped"] == ["secret"] and "secret" not in stacked
    assert meta["total_epsilon"] == 3.0 and "datasets_sha256" not in meta
    with pytest.raises(FileExistsError, match="overwrite=True"):
        ppmlib.release(lw, folder, table=table, column="y")
    ppmlib.release(_stand_in(m=3, seed=2), folder, table=table, column="y", format="parquet", overwrite=True)
    assert sorted(p.name for p in folder.iterdir()) == ["synthetic.json", "synthetic.parquet"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a release"):
        ppmlib.release(lw, tmp_path / "mine", table=table, column="y", overwrite=True)
    assert [p.name for p in tmp_path.iterdir() if ".staging-" in p.name] == []


def test_help_says_what_the_release_contains(capsys):
    with pytest.raises(SystemExit):
        syn.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for phrase in ("What the release contains", "--keep A,B", "synthetic_1.csv ... synthetic_M.csv",
                   "one synthetic.parquet with a 'dataset' column", "name the dropped columns", "SHA-256"):
        assert phrase in text, phrase


def test_a_column_synthesized_with_another_is_in_the_order_and_never_kept_or_public():
    from ppmlib.errors import BadArgument
    from ppmlib.release.tables import public_columns
    names = ["id", "sex", "income", "note", "w"]
    columns = public_columns(names, "income", ["sex"], ["id"], also=["w"])
    assert columns.order == ("id", "sex", "income", "w") and columns.all_synthesized == ("income", "w")
    assert columns.dropped == ("note",) and columns.to_dict()["also_synthesized"] == ["w"]
    assert "also_synthesized" not in public_columns(names, "income", ["sex"]).to_dict()
    for public, keep, also, message in ((["sex"], ["w"], ["w"], "keep names the synthesized column 'w'"),
                                        (["sex", "w"], [], ["w"], "'w' is also a public column"),
                                        (["sex"], [], ["income"], "name one column twice")):
        with pytest.raises(BadArgument, match=message):
            public_columns(names, "income", public, keep, also=also)
