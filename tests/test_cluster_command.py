"""The command over the row groups of a Parquet file (``--dask``): on a two-worker LocalCluster the
release is the serial run's, byte for byte; Delta and epsilon are the in-memory command's where the
pipelines coincide; the calibration's sums are the in-memory ones; the strict guarantee is refused
and a dead scheduler fails fast, nothing written."""
import json
import time
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ppmlib.errors import BackendUnavailable, BadArgument, DataRefused
from ppmlib.inference.posterior import Fit, Sampler
from ppmlib.mechanism import partitioned
from ppmlib.mechanism.calibration import predict_delta, predictions
from ppmlib.mechanism.weights import lw_weights
from ppmlib.models.families import Normal
from ppmlib.release import cluster, command, staging, tables
from ppmlib.release import data as rdata
from ppmlib.release.plan import privacy_plan

ROWS = 2 * partitioned.BLOCK + 3000          # three row groups, the last one short
SAMPLER = Sampler(chains=2, draws=150, warmup=150)
DEAD = "tcp://127.0.0.1:1"                   # nothing listens on port 1


def _balanced(rng, size):
    """+-1, half each, in a random order: mean exactly 0 and standard deviation exactly 1 in any
    summation order, so the standardized design is the in-memory command's bit for bit."""
    return rng.permutation(np.repeat([-1, 1], size // 2))


@pytest.fixture(scope="module")
def wages(tmp_path_factory):
    rng = np.random.default_rng(11)
    a = np.concatenate([_balanced(rng, k) for k in (partitioned.BLOCK, partitioned.BLOCK, 3000)])
    b = 2 * np.concatenate([_balanced(rng, k) for k in (partitioned.BLOCK, partitioned.BLOCK, 3000)])
    log_wage = 2.5 + 0.3 * a + 0.1 * b + rng.standard_t(4, ROWS) * 0.4
    frame = pd.DataFrame({"id": np.arange(ROWS), "a": a, "wage": np.exp(log_wage), "b": b,
                          "secret": rng.normal(size=ROWS)})
    path = tmp_path_factory.mktemp("wages") / "wages.parquet"
    frame.to_parquet(path, row_group_size=partitioned.BLOCK)
    return path


@pytest.fixture(scope="module")
def dask_client():
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as local, \
            Client(local, timeout=20) as client:
        yield client


def _run(path, out, client, epsilon=None):
    table = cluster.read(path, "wage", predictors=("a", "b"), keep=("id",))
    with staging.Staging(out) as stage:
        return cluster.run(table, epsilon=epsilon, m=2, seed=5, sampler=SAMPLER, budget=None, delta=1e-6,
                           staging=stage, client=client, allow_failed_fits=True, progress=False)


@pytest.mark.stan
def test_the_cluster_release_is_the_serial_one_and_deltas_are_the_in_memory_commands(wages, dask_client, tmp_path):
    on_cluster = _run(wages, tmp_path / "cluster", dask_client)
    serial = _run(wages, tmp_path / "serial", None)
    # the same files, byte for byte (the manifest lists each file's SHA-256)
    listed = [json.loads((tmp_path / name / "synthetic.json").read_text())["files"] for name in ("cluster", "serial")]
    assert listed[0] == listed[1] and len(listed[0]) == 3
    assert [f["file"] for f in listed[0]] == [tables.part_file(i) for i in range(3)]
    # the run's result is a record of what was released, not a lineup with attributes bolted on
    assert (on_cluster.n, on_cluster.m, on_cluster.released, on_cluster.files) == (ROWS, 2, "LW", listed[0])
    assert list(on_cluster) == ["Unweighted", "LW"] and on_cluster.out is None and on_cluster.delta == 1e-6
    assert set(on_cluster.seconds) >= {"checks and standardization", "synthesis and writing"}
    with pytest.raises(AttributeError):
        on_cluster.verdict = {}
    # and the command's summary of a --dask run reads it
    shown = command._cluster_summary(SimpleNamespace(column="wage"), replace(on_cluster, out=tmp_path / "cluster"))
    assert f"released 2 synthetic datasets of 'wage' ({ROWS} records, model normal, LW)" in shown
    assert "3 Parquet files, one per row group" in shown and "stages: checks and standardization" in shown
    released, meta = tables.load_folder(tmp_path / "cluster")
    assert list(released.columns) == ["dataset", "id", "a", "wage", "b"]        # "secret" is dropped
    assert released["id"].tolist() == [*range(ROWS), *range(ROWS)]            # the input's order, per dataset
    assert meta["columns"]["dropped"] == ["secret"] and meta["m_datasets"] == 2
    assert meta["epsilon_per_dataset"] == on_cluster["LW"].epsilon == serial["LW"].epsilon
    # the in-memory command on the same file, LW at c = 1: the same sums, draws, bounds and Delta
    in_memory = command.synthesize(rdata.read(str(wages), "wage", predictors="a,b"), privacy_plan("local", m=2),
                                   seed=5, sampler=SAMPLER, out=None, progress=False)
    for name in ("Unweighted", "LW"):
        np.testing.assert_array_equal(on_cluster[name].fit.draws["beta"], in_memory[name].fit.draws["beta"])
    assert on_cluster["LW"].delta == in_memory["LW"].delta
    assert on_cluster["LW"].epsilon == in_memory["LW"].epsilon
    assert on_cluster["Unweighted"].delta == in_memory["Unweighted"].delta
    # synthetic values: log-scale mean near the file's (the values are seeded per dataset and row
    # group, so not the in-memory command's, which draws all n at once)
    synthetic = np.log(released.loc[released["dataset"] == 1, "wage"].to_numpy())
    assert abs(synthetic.mean() - np.log(in_memory.prepared.values).mean()) < 0.02


@pytest.mark.stan
def test_a_target_epsilon_is_reached_in_few_fits_on_the_cluster(wages, dask_client, tmp_path):
    found = _run(wages, tmp_path / "calibrated", dask_client, epsilon=20.0)
    calibration = found["LW"].calibration
    assert abs(found["LW"].epsilon - 20.0) < 2 * calibration["atol"]
    # the prediction from the first LW fit is trusted (PSIS over the partitions' sums) and lands near the
    # target; whether a fit lands within tau of it is up to the draws' noise in Delta (S = 300 here)
    assert calibration["predictions"][1]["trusted"] and abs(calibration["history"][1][1] - 10.0) < 0.2
    assert calibration["fits"] <= 5
    # the release is LW at the c found, as the in-memory lineup fits it there: the same draws and Delta
    from ppmlib.mechanism import lineup
    prepared = rdata.prepare(rdata.load_table(str(wages)), "wage", "normal", ("a", "b"))
    at_c = lineup.run(["Unweighted", lineup.member("LW", c=calibration["value"])], "normal", prepared.y,
                      X=prepared.X, m=2, sampler=SAMPLER, seed=5, progress=False)["LW"]
    np.testing.assert_array_equal(found["LW"].fit.draws["beta"], at_c.fit.draws["beta"])
    assert found["LW"].delta == at_c.delta


def test_the_calibration_sums_are_the_in_memory_predictions(tmp_path):
    rng = np.random.default_rng(4)
    n, S, K = 300, 200, 2
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = X @ [1.0, 0.5] + rng.standard_t(3, n) * 0.5
    path = tmp_path / "records.parquet"
    pd.DataFrame({"y": y, "x0": X[:, 0], "x1": X[:, 1]}).to_parquet(path, row_group_size=64)
    parts = partitioned.row_groups(path, block=16)
    plain = {"beta": rng.normal([1.0, 0.5], 0.03, size=(S, K)), "sigma": rng.uniform(0.45, 0.55, S)}
    near = {"beta": rng.normal([1.0, 0.5], 0.03, size=(S, K)), "sigma": rng.uniform(0.45, 0.55, S)}
    risk = partitioned.risk_range(parts, "y", ["x0", "x1"], plain)
    grid, c0 = np.geomspace(0.2, 2.0, 7), 0.7
    log_lik = Normal().log_lik(plain, y, X)
    alpha0 = lw_weights(log_lik, c=c0)
    fitted = Fit(Normal(), y, X, alpha0, near, {}, 2, "test", 0)
    expected = predict_delta(fitted, np.stack([lw_weights(log_lik, c=c) for c in grid]))
    found = predictions(*partitioned.calibration_sums(parts, "y", ["x0", "x1"], plain, grid, risk=risk, c0=c0,
                                                      proposal=near))
    np.testing.assert_allclose(found.delta, expected.delta, rtol=1e-9)
    np.testing.assert_allclose(found.khat, expected.khat, rtol=1e-6)
    assert np.ptp(found.delta) > 0.1                                     # the candidates differ


def test_the_strict_guarantee_and_other_models_are_refused_with_the_reason(wages, tmp_path, capsys):
    out = tmp_path / "never"
    with pytest.raises(BadArgument, match=r"needs every record in one process.*guarantee='local'"):
        command.synthesize(cluster.read(str(wages), "wage", predictors="a,b"), privacy_plan(), out=out, client=DEAD)
    with pytest.raises(BadArgument, match="normal model only"):
        cluster.read(str(wages), "wage", model="mixture")
    with pytest.raises(BadArgument, match="releases LW.*the plan releases CW"):
        command.synthesize(cluster.read(str(wages), "wage"), privacy_plan("local", "cw", radius=1.0), client=DEAD)
    with pytest.raises(BadArgument, match="read it with ppmlib.release.cluster.read"):
        command.synthesize(rdata.read(str(wages), "wage"), privacy_plan("local"), client=DEAD)
    code = command.main([str(wages), "--column", "wage", "--predictors", "a,b", "--out", str(out), "--dask", DEAD])
    error = capsys.readouterr().err
    assert code == 2 and "--guarantee local" in error and "--dask" in error
    assert not out.exists()


def test_a_csv_file_is_refused_and_a_text_predictor_named(wages, tmp_path):
    csv = tmp_path / "wages.csv"
    pd.read_parquet(wages).to_csv(csv, index=False)
    with pytest.raises(BadArgument, match="needs a Parquet file"):
        cluster.read(str(csv), "wage")
    text = tmp_path / "text.parquet"
    pd.DataFrame({"wage": [1.0, 2.0], "region": ["N", "S"]}).to_parquet(text)
    with pytest.raises(DataRefused, match="predictor 'region' is (large_)?string, not a number"):
        cluster.design(text, "wage", ("region",))


def test_a_dead_scheduler_fails_fast_and_writes_nothing(wages, tmp_path, monkeypatch):
    from ppmlib.inference import parallel
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", 1.0)
    out = tmp_path / "release"
    start = time.perf_counter()
    with pytest.raises(BackendUnavailable, match=r"tcp://127\.0\.0\.1:1"):
        command.synthesize(cluster.read(str(wages), "wage", predictors="a,b"), privacy_plan("local"), out=out,
                           client=DEAD)
    assert time.perf_counter() - start < 15
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_the_one_writer_writes_the_manifest_of_parts_the_workers_wrote(tmp_path):
    from ppmlib.mechanism.partitioned_lw import PartitionedFit, WrittenParts
    from ppmlib.release import release
    from ppmlib.errors import BudgetExceeded
    folder = tmp_path / "release"
    folder.mkdir()
    frame = pd.DataFrame({tables.DATASET: [1, 1, 2, 2], "id": [0, 1, 0, 1], "wage": [1.5, 2.5, 3.5, 4.5]})
    frame.to_parquet(folder / tables.part_file(0))
    files = [{"file": tables.part_file(0), "datasets": "1-2", "records": "0-1",
              "sha256": tables.file_sha256(folder / tables.part_file(0))}]
    fit = SimpleNamespace(model=SimpleNamespace(name="normal"))
    parts = WrittenParts(PartitionedFit("LW", fit, 1.0, 0.75), m=2, n=2, files=files)
    where = dict(column="wage", keep=("id",), names=["id", "wage", "secret"], format="parquet")
    with pytest.raises(BudgetExceeded, match=r"2 datasets at epsilon = 1.5 each cost m \* epsilon = 3 > max_epsilon = 2"):
        release(parts, folder, max_epsilon=2.0, **where)
    assert not (folder / tables.MANIFEST).exists()
    assert release(parts, folder, max_epsilon=3.0, delta=1e-6, extra={"run": "test"}, **where) == folder
    stacked, meta = tables.load_folder(folder)                     # every listed file's SHA-256 checked
    assert stacked["wage"].tolist() == [1.5, 2.5, 3.5, 4.5]
    assert (meta["m_datasets"], meta["n_records_per_dataset"], meta["epsilon_per_dataset"]) == (2, 2, 1.5)
    assert meta["total_epsilon"] == 3.0 and meta["ledger"]["m"] == 2 and meta["ledger"]["guarantee"] == "local"
    assert meta["files"] == files and meta["rows"] == tables.PARTS_ROWS and meta["run"] == "test"
    assert meta["columns"]["dropped"] == ["secret"] and "datasets_file" not in meta
    with pytest.raises(FileExistsError, match="exists; pass overwrite=True"):
        release(parts, folder, **where)
    (folder / tables.part_file(0)).unlink()
    with pytest.raises(BadArgument, match="lacks the written datasets"):
        release(parts, folder, overwrite=True, **where)
