"""ppmlib.inference.parallel.map_jobs and the Monte Carlo study on it: input order, errors, the same numbers
whatever the number of workers, and a Dask LocalCluster with two worker processes."""
import numpy as np
import pandas as pd
import pytest

from ppmlib import Sampler

from ppmlib.evaluate import audit

from ppmlib.inference import backends

from ppmlib.studies import asymptotic_dp as montecarlo
from ppmlib.inference.parallel import local_cluster, map_jobs

TINY = dict(n=120, R=3, n_values=[60], R_sweep=2, sampler=Sampler(chains=2, draws=150, warmup=150), m=2, seed=7,
            progress=False)


def slow_square(x):
    import time
    time.sleep(0.05 * (3 - x % 3))  # later items finish first on two workers
    return x * x


def fails_on_three(x):
    if x == 3:
        raise ArithmeticError("job 3 failed")
    return x


def cache_message(_=None):
    """Run one tiny PyStan fit on this worker and return PyStan's own build message."""
    from ppmlib.models.families import _censor_by_group
    data = {"n": 3, "sum_w": 3.0, "sum_wy": 30.0, "sum_w_lgamma": 0.0, "prior_shape": 1.0, "prior_rate": 0.001,
            "emit_log_lik": 0, "y": [], **_censor_by_group(None, None, None)}  # no censoring
    return backends.sample("poisson", data, chains=1, draws=10, warmup=10, seed=1).messages


@pytest.fixture(scope="module")
def client():
    with local_cluster(2) as c:
        yield c


def test_serial_map_keeps_order_and_checks_arguments():
    assert map_jobs(slow_square, range(5), progress=False) == [0, 1, 4, 9, 16]
    with pytest.raises(ValueError, match="n_jobs"):
        map_jobs(abs, [1], n_jobs=0)
    with pytest.raises(TypeError, match="client"):
        map_jobs(abs, [1, 2], client=42)


def test_dask_map_keeps_input_order_and_raises_job_errors(client):
    assert len(client.scheduler_info()["workers"]) == 2
    assert map_jobs(slow_square, range(9), client=client, progress=False) == [x * x for x in range(9)]
    with pytest.raises(ArithmeticError, match="job 3 failed"):
        map_jobs(fails_on_three, range(6), client=client, progress=False)


@pytest.mark.stan
def test_workers_load_compiled_models_from_the_cache(client):
    if backends.backend() != "pystan":
        pytest.skip("checks PyStan's model cache")
    # every worker process, not just one: each must find the model compiled, never build it
    messages = client.run(cache_message)
    assert len(messages) == 2
    for text in messages.values():
        assert "found in cache" in text, text[:500]


@pytest.mark.stan
def test_study_is_identical_serial_on_dask_and_with_two_local_workers(client):
    serial = montecarlo.run_study(["poisson", "nb_mixture"], **TINY)
    on_dask = montecarlo.run_study(["poisson", "nb_mixture"], client=client, **TINY)
    # 2 models x (3 databases at n = 120 + 2 at n = 60) x 2 synthesizers
    assert len(serial.deltas) == 2 * 5 * 2
    assert serial.deltas["delta"].nunique() == len(serial.deltas)  # every database really differs
    pd.testing.assert_frame_equal(serial.deltas, on_dask.deltas, check_exact=True)
    pd.testing.assert_frame_equal(serial.estimands, on_dask.estimands, check_exact=True)
    two_local = montecarlo.run_study(["poisson"], n_jobs=2, **TINY)
    pd.testing.assert_frame_equal(serial.deltas[serial.deltas["model"] == "Poisson"].reset_index(drop=True),
                                  two_local.deltas, check_exact=True)


@pytest.mark.stan
def test_study_rows_match_a_direct_run_of_one_database():
    study = montecarlo.run_study(["poisson"], **{**TINY, "n_values": []})
    # job 1 of the list (Poisson, n = 120, r = 1) gets seeds(7, 3)[1]; redo it by hand
    from ppmlib import seeds, synthesizer
    data_seed, unweighted_seed, lw_seed = seeds(seeds(7, 3)[1], 3)
    y = montecarlo.database("poisson", 120, data_seed)
    run = dict(sampler=Sampler(chains=2, draws=150, warmup=150), m=2)
    unweighted = synthesizer("poisson", y, "unweighted", seed=unweighted_seed, **run)
    lw = synthesizer("poisson", y, "lw", base=unweighted, seed=lw_seed, **run)
    row = study.deltas.set_index(["r", "synthesizer"])["delta"]
    assert row[(1, "Unweighted")] == unweighted.delta
    assert row[(1, "LW")] == lw.delta
    data_mean = study.estimands.query("r == 1 and source == 'Data' and statistic == 'mean'")["value"]
    assert data_mean.item() == pytest.approx(y.mean(), rel=1e-12)


def test_study_rejects_unknown_models_and_missing_dependencies():
    with pytest.raises(ValueError, match="unknown generating model"):
        montecarlo.run_study(["gamma"], R=1)
    with pytest.raises(ValueError, match="needs"):
        montecarlo.run_study(["poisson"], R=1, synthesizers=["LW"])
    with pytest.raises(ValueError, match="LW_final' in synthesizers needs \\['LW'\\]"):
        montecarlo.run_study(["poisson"], R=1, synthesizers=["Unweighted", "LW_final"])
    with pytest.raises(ValueError, match="unknown synthesizer 'CW' in sweep_synthesizers"):
        montecarlo.run_study(["poisson"], R=1, sweep_synthesizers=["Unweighted", "CW"])


def test_contraction_and_exceedance_by_hand():
    deltas = pd.DataFrame({"model": "M", "synthesizer": "LW", "n": [10] * 4 + [20] * 4,
                           "delta": [1.0, 2.0, 3.0, 6.0, 2.0, 2.5, 3.0, 3.5]})
    table = montecarlo.contraction(deltas)
    assert table.loc[("M", "LW", 10), "max - min"] == 5.0
    assert table.loc[("M", "LW", 20), "max - min"] == 1.5
    assert table.loc[("M", "LW", 20), "95th pct"] == pytest.approx(3.425)
    assert table.loc[("M", "LW", 10), "sd"] == pytest.approx((14 / 3) ** 0.5)   # deviations -2, -1, 0, 3
    assert table.loc[("M", "LW", 10), "IQR"] == pytest.approx(3.75 - 1.75)
    estimate = montecarlo.estimate_global_delta(deltas, level=0.95)
    assert estimate[("M", "LW")] == pytest.approx(3.425)
    shares = montecarlo.exceedance(deltas, estimate)
    assert shares.loc[("M", "LW", 10), "share above (pi)"] == 0.25   # only 6.0 > 3.425
    assert shares.loc[("M", "LW", 20), "share above (pi)"] == 0.25   # 3.5
    assert shares.loc[("M", "LW", 10), "epsilon"] == pytest.approx(6.85)
    low, high = audit.clopper_pearson(1, 4)                                  # 1 of 4 databases above
    assert (shares.loc[("M", "LW", 10), "pi 95% low"], shares.loc[("M", "LW", 10), "pi 95% high"]) == (low, high)


def test_rank_correlation_by_hand():
    deltas = pd.DataFrame({"model": "M", "n": 10, "r": [0, 1, 2, 0, 1, 2],
                           "synthesizer": ["LW"] * 3 + ["Unweighted"] * 3,
                           "delta": [1.0, 2.0, 3.0, 30.0, 10.0, 11.0]})
    # LW ranks (1, 2, 3), Unweighted ranks (3, 1, 2): Spearman = 1 - 6 * (4 + 1 + 1) / (3 * 8) = -0.5
    assert montecarlo.rank_correlation(deltas).loc["M", 10] == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="no synthesizer"):
        montecarlo.rank_correlation(deltas, "LW", "SW")


# --- issue 24, point 5: an address that is not a Dask scheduler fails fast, naming it ----------------
@pytest.fixture(params=["silent", "garbage"])
def not_a_scheduler(request):
    """A local TCP server that accepts connections and then never answers, or answers garbage."""
    import socket
    import threading
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)
            if request.param == "garbage":  # what a web server or anything else might send
                conn.sendall(b"\xff" * 8 + b"HTTP/1.1 400 Bad Request\r\n\r\n" * 40)
    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in accepted:
        conn.close()


def test_a_scheduler_address_that_does_not_answer_fails_with_its_address(not_a_scheduler):
    import time
    start = time.monotonic()
    with pytest.raises(ConnectionError, match=rf"no Dask scheduler answered at '{not_a_scheduler}' within 2 s"):
        map_jobs(slow_square, [1, 2, 3], client=not_a_scheduler, progress=False, connect_timeout=2)
    assert time.monotonic() - start < 10  # not the hang it was


def test_connect_timeout_must_be_positive():
    with pytest.raises(ValueError, match="connect_timeout must lie in"):
        map_jobs(slow_square, [1], client="tcp://127.0.0.1:1", connect_timeout=0)


def test_a_real_scheduler_address_still_answers(client):
    assert map_jobs(slow_square, range(4), client=client.scheduler.address, progress=False, connect_timeout=20) == [0, 1, 4, 9]


def seeded_fit_name(_=None):
    """The name httpstan would store a seeded fit under in this worker (ppmlib's housekeeping on)."""
    import httpstan.fits
    if backends._HOUSEKEEPING is None:
        backends._HOUSEKEEPING = backends._HttpstanHousekeeping()
    name = httpstan.fits.calculate_fit_name("hmc_nuts_diag_e_adapt", "models/abc", {"random_seed": 1})
    backends._HOUSEKEEPING.fit_names.clear()
    return name


@pytest.mark.stan
def test_workers_never_share_a_seeded_fit_name(client):
    # Dask gives every worker the same hash seed, so httpstan alone names one request alike in all
    # of them, and a worker that deletes its fit deletes the one another worker is still reading
    names = list(client.run(seeded_fit_name).values())
    assert len(names) == 2 and names[0] != names[1]
