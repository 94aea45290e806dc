"""The two Stan backends: the same numbers from the same seed, and nothing written into cells.

PyStan 3.10 (httpstan 4.13) and CmdStan 2.35 run the same Stan 2.35 sampler. With the same program,
data, seed, chain ids (1..N on both) and full-precision CmdStan output, their draws are identical
bit for bit, not merely close: the parity tests below assert exact equality. They need a CmdStan
2.35 installation (CMDSTAN=<path>, or the conda-forge route) and are skipped without one; `.ci/run`
builds one with ../shared/tools/cmdstan-offline when that folder is there.
"""
import io
import logging
import os
import re
import tempfile

import nbformat
import numpy as np
import pytest

import ppmlib
from ppmlib.errors import BackendUnavailable
from ppmlib.inference import backends
from ppmlib.book import rerun

pytestmark = pytest.mark.stan


def _both_backends_and_same_stan() -> tuple[bool, str]:
    if not (backends.cmdstan_available() and backends.pystan_available()):
        return False, "needs both PyStan 3 and a CmdStan installation (CMDSTAN=<path>)"
    import cmdstanpy
    version = cmdstanpy.cmdstan_version()
    if version is None or tuple(version[:2]) != (2, 35):
        return False, f"CmdStan {version} is not the Stan 2.35 that PyStan 3.10 runs: draws may differ"
    return True, ""


_ok, _why = _both_backends_and_same_stan()
needs_both = pytest.mark.skipif(not _ok, reason=_why)


@pytest.fixture(scope="module")
def counts():
    return ppmlib.datasets.simulate.nb_mixture(60, [100, 100], [5, 20], [0.2, 0.8], seed=11)


def _on(backend, monkeypatch, *args, **kwargs):
    monkeypatch.setenv("PPMLIB_BACKEND", backend)
    fit = ppmlib.fit(*args, **kwargs)
    assert fit.backend == backend
    return fit


def test_chain_one_of_a_four_chain_fit_is_the_one_chain_fit(counts):
    """Chain k's draws depend only on (seed, k): chain 1 of a 4-chain fit is the 1-chain fit, and
    the draws come chain after chain (the order rhat and ESS assume)."""
    one = ppmlib.fit("negbin", counts, seed=21, sampler=ppmlib.Sampler(chains=1, draws=150, warmup=150))
    four = ppmlib.fit("negbin", counts, seed=21, sampler=ppmlib.Sampler(chains=4, draws=150, warmup=150))
    for name in one.draws:
        np.testing.assert_array_equal(four.draws[name][:150], one.draws[name])
    np.testing.assert_array_equal(four.sampler["stepsize__"][:150], one.sampler["stepsize__"])
    # and the other chains are other chains
    assert not np.array_equal(four.draws["mu"][150:300], one.draws["mu"])


@needs_both
@pytest.mark.parametrize("censored", [False, True], ids=["pseudo posterior", "censored"])
@pytest.mark.parametrize("model", ["poisson", "negbin", "normal", "mixture"])
def test_both_backends_give_identical_draws(model, censored, counts, monkeypatch):
    rng = np.random.default_rng(4)
    X, y, prior = None, counts, None
    if model in ("normal", "mixture"):
        x = rng.normal(size=counts.size)
        X = np.column_stack([np.ones_like(x), x])
        y = 1.0 + 0.5 * x + rng.normal(scale=0.7, size=x.size)
    if model == "mixture":
        prior = {"K": 2, "prior_centre_mean": 1.0}
    weights = rng.uniform(0.1, 1.0, counts.size)
    kwargs = dict(X=X, weights=weights, seed=31, sampler=ppmlib.Sampler(chains=3, draws=200, warmup=200), emit_log_lik=True,
                  prior=prior, censoring=1.0 if censored else None)   # the strict mechanism's switch, the same programs
    cmd, py = (_on(b, monkeypatch, model, y, **kwargs) for b in ("cmdstanpy", "pystan"))
    assert cmd.draws.keys() == py.draws.keys() and "log_lik" in cmd.draws
    for name in cmd.draws:
        np.testing.assert_array_equal(cmd.draws[name], py.draws[name], err_msg=name)
        # the same memory layout too: numpy's arithmetic on them then rounds alike (and runs as fast)
        assert cmd.draws[name].strides == py.draws[name].strides, name
    for name in ("lp__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"):
        np.testing.assert_array_equal(cmd.sampler[name], py.sampler[name], err_msg=name)
    np.testing.assert_array_equal(cmd.log_lik, py.log_lik)


@needs_both
def test_adapt_delta_reaches_both_backends(counts, monkeypatch):
    """A higher target acceptance rate adapts smaller steps, identically on both backends."""
    fits = {}
    for backend in ("cmdstanpy", "pystan"):
        for delta in (0.8, 0.95):
            sampler = ppmlib.Sampler(chains=2, draws=150, warmup=150, adapt_delta=delta)
            fits[backend, delta] = _on(backend, monkeypatch, "negbin", counts, seed=5, sampler=sampler)
    for delta in (0.8, 0.95):
        np.testing.assert_array_equal(fits["cmdstanpy", delta].draws["mu"], fits["pystan", delta].draws["mu"])
    step = {delta: np.median(fits["pystan", delta].sampler["stepsize__"]) for delta in (0.8, 0.95)}
    assert step[0.95] < 0.8 * step[0.8]


@needs_both
def test_max_treedepth_reaches_both_backends(counts, monkeypatch):
    """A tree-depth cap of 2 holds every draw to at most 2**2 leapfrog steps, identically on both backends."""
    fits = {}
    for backend in ("cmdstanpy", "pystan"):
        sampler = ppmlib.Sampler(chains=2, draws=150, warmup=150, max_treedepth=2)
        fits[backend] = _on(backend, monkeypatch, "negbin", counts, seed=5, sampler=sampler)
    np.testing.assert_array_equal(fits["cmdstanpy"].draws["mu"], fits["pystan"].draws["mu"])
    for fit in fits.values():
        assert fit.sampler["treedepth__"].max() <= 2 and fit.sampler["n_leapfrog__"].max() <= 4
    # uncapped, the same fit does take deeper trees (the cap above is not idle)
    free = _on("pystan", monkeypatch, "negbin", counts, seed=5, sampler=ppmlib.Sampler(chains=2, draws=150, warmup=150))
    assert free.sampler["treedepth__"].max() > 2


@needs_both
def test_lw_pipeline_gives_the_same_delta_on_both_backends(monkeypatch):
    """The issue's example: 1000 Poisson counts, LW weights from the unweighted fit, the weighted
    fit's Delta. With 6-digit CmdStan output Delta_LW was 3.624 against PyStan's 3.592."""
    y = ppmlib.datasets.simulate.poisson(1000, 100, seed=1)
    run = dict(sampler=ppmlib.Sampler(chains=1, draws=1000, warmup=1000))
    deltas = {}
    for backend in ("cmdstanpy", "pystan"):
        base = _on(backend, monkeypatch, "poisson", y, seed=1, **run)
        alpha = ppmlib.lw_weights(base.log_lik, c=1.0, g=0.0)
        private = _on(backend, monkeypatch, "poisson", y, weights=alpha, seed=2, **run)
        deltas[backend] = (ppmlib.lipschitz_bound(base.log_lik), ppmlib.lipschitz_bound(private.log_lik, alpha))
    assert deltas["cmdstanpy"] == deltas["pystan"]
    assert deltas["pystan"][1] < deltas["pystan"][0]  # the weights did cut Delta


@pytest.mark.skipif(not backends.cmdstan_available(), reason="no CmdStan installation found")
def test_cmdstanpy_chatter_stays_out_of_output(capfd, counts, monkeypatch):
    """Mirror of test_pystan_chatter_stays_out_of_output (below): nothing on fd 1/2 nor on the
    streams cmdstanpy's log would reach, and the messages (INFO lines, Stan's non-fatal gamma_lpdf
    rejections in early warmup) kept on Draws."""
    from cmdstanpy.utils import get_logger
    monkeypatch.setenv("PPMLIB_BACKEND", "cmdstanpy")
    # cmdstanpy's handler keeps the sys.stderr of its first use (in a kernel: the cell), and records
    # propagate to the root logger's handlers (a notebook's logging.basicConfig): watch both
    log_stream = io.StringIO()
    for handler in get_logger().handlers:
        monkeypatch.setattr(handler, "stream", log_stream)
    root_handler = logging.StreamHandler(log_stream)
    logging.getLogger().addHandler(root_handler)
    try:
        data = ppmlib.models.families.family("poisson").stan_data(counts, None, np.ones(counts.size),
                                                          {"prior_shape": 1.0, "prior_rate": 0.001}, False)
        draws = backends.sample("poisson", data, chains=4, draws=200, warmup=200, seed=5)
    finally:
        logging.getLogger().removeHandler(root_handler)
    out, err = capfd.readouterr()
    for seen in (out, err, log_stream.getvalue()):
        assert "cmdstanpy" not in seen and "Chain [" not in seen and "gamma_lpdf" not in seen, seen[:500]
    assert "CmdStan start processing" in draws.messages
    assert "gamma_lpdf: Random variable is inf" in draws.messages  # this seed hits it: it is kept
    assert draws.params["lambda"].shape == (800,)


# Lines either backend (or the C++ compiler) would print if it leaked into a cell. (The chapters
# themselves print "Stan backend: cmdstanpy", which is wanted.)
STAN_CHATTER = re.compile(r"- cmdstanpy -|Chain \[\d+\]|Non-fatal error|gamma_lpdf|Informational Message"
                          r"|Building:|Sampling:|Messages from stanc|Gradient evaluation took|warning:"
                          r"|IProgress not found|TqdmWarning")  # tqdm.auto's warning without ipywidgets
SMOKE_CHAPTER = "vector_weighted.md"


def _printed(notebook) -> str:
    """Everything a reader would see under the code cells: streams, tracebacks, text results."""
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            parts.append(output.get("text", ""))
            parts.append("\n".join(output.get("traceback", [])))
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_executed_smoke_chapter_has_no_stan_chatter(tmp_path):
    """One chapter executed at smoke parameters in a Jupyter kernel, on whichever backend ppmlib
    picks (CI runs this once per backend): its cells show no compiler or sampler output."""
    params = rerun.smoke_parameters()[SMOKE_CHAPTER]
    executed = nbformat.read(rerun.run(rerun.ROOT / "book" / SMOKE_CHAPTER, params, tmp_path), as_version=4)
    printed = _printed(executed)
    assert "weight" in printed.lower()  # the chapter did print its tables
    leaked = sorted({line.strip() for line in printed.splitlines() if STAN_CHATTER.search(line)})
    assert not leaked, f"{backends.backend()} output leaked into {SMOKE_CHAPTER}: {leaked[:10]}"


def test_a_failed_fit_raises_with_the_backends_own_output():
    """Both backends report a failure the same way: RuntimeError naming the backend, with the tail of
    what Stan and the compiler printed (captured, not shown in the cell)."""
    with pytest.raises(RuntimeError, match=r"(PyStan|cmdstanpy) failed; its last output was:\n") as caught:
        backends.sample("poisson", {"n": 1}, chains=1, draws=10, warmup=10, seed=1)  # the other data are missing
    assert len(str(caught.value).splitlines()) > 1


def test_forced_backend_must_exist(monkeypatch):
    monkeypatch.setenv("PPMLIB_BACKEND", "nonsense")
    with pytest.raises(ValueError, match="PPMLIB_BACKEND must be one of"):
        backends.backend()
    if not backends.cmdstan_available():
        monkeypatch.setenv("PPMLIB_BACKEND", "cmdstanpy")
        with pytest.raises(BackendUnavailable, match="no CmdStan installation"):
            backends.backend()


needs_cmdstan = pytest.mark.skipif(
    not backends.cmdstan_available(),
    reason="no CmdStan installation found (the conda-forge route in environment.yml provides one); "
           "the pip route runs the same programs through PyStan")


@needs_cmdstan
def test_both_backends_give_draws_in_the_same_form(monkeypatch, counts):
    forms = {}
    for name in ("cmdstanpy", "pystan"):
        monkeypatch.setenv("PPMLIB_BACKEND", name)
        fit = ppmlib.fit("negbin", counts, seed=3, sampler=ppmlib.Sampler(draws=500, warmup=500))
        forms[name] = fit
        assert fit.backend == name
    a, b = forms["cmdstanpy"], forms["pystan"]
    assert a.draws.keys() == b.draws.keys()
    for key in a.draws:
        assert a.draws[key].shape == b.draws[key].shape
    assert a.log_lik.shape == b.log_lik.shape
    # same posterior (the draws are in fact identical with CmdStan 2.35: tests/test_backends.py)
    assert abs(a.draws["mu"].mean() - b.draws["mu"].mean()) < 5 * a.draws["mu"].std() / np.sqrt(500)


def test_pystan_chatter_stays_out_of_output(capfd, counts, monkeypatch):
    if not backends.pystan_available():
        pytest.skip("PyStan not installed")
    monkeypatch.setenv("PPMLIB_BACKEND", "pystan")
    fit = ppmlib.fit("poisson", counts, seed=12, sampler=ppmlib.Sampler(draws=100, warmup=100))
    out, err = capfd.readouterr()
    assert "Building" not in out + err and "Sampling" not in out + err
    assert fit.n_draws == 400


def test_no_backend_says_what_to_install(monkeypatch):
    monkeypatch.delenv("PPMLIB_BACKEND", raising=False)
    monkeypatch.setattr(backends, "cmdstan_available", lambda: False)
    monkeypatch.setattr(backends, "pystan_available", lambda: False)
    with pytest.raises(BackendUnavailable, match="pip install pystan.*cmdstan"):
        ppmlib.fit("poisson", [1, 2, 3], seed=1)


# --- issue 24: nothing confidential in an error -------------------------------------------------
# Values with seven distinct digits, so that finding one in a message cannot be a coincidence.
SECRET_Y = np.array([7340211, 8155079, 6092133, 9301457, 5520893, 7340211])


def _failing_requests():
    """(what goes wrong, program, data, seed): each reaches the backend and makes it fail."""
    negbin = ppmlib.models.families.FAMILIES["negbin"]
    good = negbin.stan_data(SECRET_Y, None, np.ones(SECRET_Y.size), dict(negbin.default_prior), True)
    negative_value = {**good, "values": -good["values"], "y": -good["y"]}
    negative_sd = {**good, "prior_log_mu_sd": -1.0}
    missing = {k: v for k, v in good.items() if k != "n_values"}
    poisson = ppmlib.models.families.FAMILIES["poisson"].stan_data(SECRET_Y, None, np.ones(SECRET_Y.size),
                                                          dict(ppmlib.POISSON_PRIOR), True)
    return [("seed at Stan's limit", "negbin", good, 2**31), ("seed far too large", "poisson", poisson, 2**40),
            ("negative counts", "negbin", negative_value, 1), ("negative prior sd", "negbin", negative_sd, 1),
            ("a data entry missing", "negbin", missing, 1),
            ("wrong length", "poisson", {**poisson, "y": poisson["y"][:-1]}, 1),
            ("a seed the backend refuses", "poisson", poisson, 2**40)]


@pytest.mark.parametrize("backend", BACKENDS_HERE := [b for b in backends.BACKENDS
                                                      if (b == "pystan" and backends.pystan_available())
                                                      or (b == "cmdstanpy" and backends.cmdstan_available())])
@pytest.mark.parametrize("case", range(7), ids=[c[0] for c in _failing_requests()])
def test_no_confidential_value_in_any_backend_error(backend, case, monkeypatch):
    """Issue 24, point 1: a failing fit's error (its text, its chained causes, its traceback) holds the
    backend's message but no value of y nor of anything computed from it."""
    import traceback
    monkeypatch.setenv("PPMLIB_BACKEND", backend)
    what, program, data, seed = _failing_requests()[case]
    if what == "a seed the backend refuses":  # past ppmlib's own check, to the backend's error path
        monkeypatch.setattr(backends, "STAN_SEED_LIMIT", 2**62)
    with pytest.raises((RuntimeError, ValueError)) as caught:
        backends.sample(program, data, chains=1, draws=10, warmup=10, seed=seed)
    text = "".join(traceback.format_exception(caught.value))
    secrets = {str(abs(int(v))) for v in SECRET_Y} | {repr(float(data.get("sum_wy", 0.5)))}
    leaked = sorted(s for s in secrets if s in text)
    assert not leaked, f"{what} on {backend}: {leaked} in\n{text[-2000:]}"
    assert len(str(caught.value)) > 20  # a message, not an empty one


# --- issue 24, point 4: what a fit leaves on disk ----------------------------------------------------
@pytest.mark.skipif(not backends.pystan_available(), reason="PyStan not installed")
def test_a_pystan_fit_leaves_no_fit_file_no_socket_and_no_build_folder(tmp_path, monkeypatch, counts):
    """httpstan kept every seeded fit (0644, draws of the confidential data's posterior), one socket
    per chain in /tmp, and compiled in the working folder (build/). ppmlib keeps none of them."""
    import httpstan.cache
    import httpstan.services_stub
    import stan
    monkeypatch.setenv("PPMLIB_BACKEND", "pystan")
    small = ppmlib.Sampler(chains=2, draws=50, warmup=50)
    ppmlib.fit("negbin", counts, seed=1, sampler=small)  # warm: whatever is set up once is set up
    fits, sockets, build_folders = {}, [], []
    dump, mkstemp, build = httpstan.cache.dump_fit, httpstan.services_stub.tempfile.mkstemp, stan.build

    def recording_dump(fit_bytes, name):
        dump(fit_bytes, name)
        fits[name] = httpstan.cache.fit_path(name).stat().st_mode & 0o777

    def recording_mkstemp(*args, **kwargs):
        fd, name = mkstemp(*args, **kwargs)
        sockets.append(name)
        return fd, name

    def recording_build(*args, **kwargs):
        build_folders.append(os.getcwd())
        return build(*args, **kwargs)

    monkeypatch.setattr(httpstan.cache, "dump_fit", recording_dump)
    monkeypatch.setattr(httpstan.services_stub.tempfile, "mkstemp", recording_mkstemp)
    monkeypatch.setattr(stan, "build", recording_build)
    monkeypatch.chdir(tmp_path)
    ppmlib.fit("negbin", counts, seed=2, sampler=small)
    assert len(fits) == 2 and set(fits.values()) == {0o600}, fits          # one file per chain, owner only,
    assert not [n for n in fits if httpstan.cache.fit_path(n).exists()]     # and gone once read
    assert len(sockets) == 2 and not [s for s in sockets if os.path.exists(s)]
    assert all(os.path.dirname(s) != tempfile.gettempdir() for s in sockets)  # not loose in /tmp
    assert build_folders and os.getcwd() not in build_folders and not (tmp_path / "build").exists()
    assert not [f for f in build_folders if os.path.exists(f)]             # the compile's folder is removed


@pytest.mark.skipif(not backends.pystan_available(), reason="PyStan not installed")
def test_httpstans_read_loop_does_not_wait_on_a_silent_chain(monkeypatch, counts):
    """httpstan reads a chain's socket in a loop that yields to the other chains only when its select
    times out (10 ms); a chain that writes more often starves the others' sockets, which fill and
    stop those chains (the CE fit: 13.8 s instead of 10.9 s). After ppmlib's set-up the loop's select
    answers at once, with what is readable."""
    import socket
    import time

    import httpstan.services_stub
    monkeypatch.setenv("PPMLIB_BACKEND", "pystan")
    ppmlib.fit("negbin", counts, seed=1, sampler=ppmlib.Sampler(chains=1, draws=20, warmup=20))
    chain, reader = socket.socketpair()
    with chain, reader:
        start = time.perf_counter()
        readable, _, _ = httpstan.services_stub.select.select([reader], [], [], 3.0)
        assert readable == [] and time.perf_counter() - start < 1.0   # the real select waits 3 s here
        chain.sendall(b"draw")
        readable, _, _ = httpstan.services_stub.select.select([reader], [], [], 3.0)
        assert readable == [reader] and reader.recv(16) == b"draw"


def test_clean_caches_removes_stored_fits_sockets_and_temporary_folders(tmp_path):
    cache, temp = tmp_path / "httpstan", tmp_path / "tmp"
    (cache / "models" / "abc" / "fits").mkdir(parents=True)
    (cache / "models" / "abc" / "fits" / "x.jsonlines.gz").write_bytes(b"12345")
    (cache / "models" / "abc" / "model.so").write_bytes(b"compiled")
    (temp / "ppmlib-build-1" / "build").mkdir(parents=True)
    (temp / "ppmlib-build-1" / "build" / "a.o").write_bytes(b"123")
    (temp / "httpstan_q.sock").write_bytes(b"")
    (temp / "other.txt").write_bytes(b"keep")
    assert backends.clean_caches(httpstan_cache=cache, temp=temp) == {"files": 3, "bytes": 8}
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "httpstan/models/abc/model.so", "tmp/other.txt"]


def test_the_backends_error_ends_the_message_after_a_long_compile_log():
    """A compile writes warnings straight to file descriptor 2, which the capture collects only when
    it ends: the error must still be the message's last line, not pushed out by the log."""
    import os

    def work(chatter):
        os.write(2, b"warning: memset clearing an object\n" * 500)   # about 18,000 characters
        raise ValueError("Fit `models/x/fits/y` not found.")

    with pytest.raises(RuntimeError) as caught:
        backends._run_captured("PyStan", work, {"n": 3})
    assert str(caught.value).splitlines()[-1] == "ValueError: Fit `models/x/fits/y` not found."


@needs_both
@pytest.mark.parametrize("model", ["negbin", "normal"])
def test_both_backends_start_the_chains_at_the_same_given_point(model, counts, monkeypatch):
    """A censored fit started at an unweighted fit's posterior mean: the same draws on both backends."""
    rng = np.random.default_rng(5)
    X, y = None, counts
    if model == "normal":
        x = rng.normal(size=counts.size)
        X = np.column_stack([np.ones_like(x), x])
        y = 1.0 + 0.5 * x + rng.normal(scale=0.7, size=x.size)
    small = ppmlib.Sampler(chains=2, draws=150, warmup=150)
    unweighted = ppmlib.fit(model, y, X=X, seed=32, sampler=small)
    kwargs = dict(X=X, seed=33, sampler=small, censoring=1.0, start=unweighted)
    cmd, py = (_on(b, monkeypatch, model, y, **kwargs) for b in ("cmdstanpy", "pystan"))
    for name in cmd.draws:
        np.testing.assert_array_equal(cmd.draws[name], py.draws[name], err_msg=name)
    np.testing.assert_array_equal(cmd.sampler["lp__"], py.sampler["lp__"])


def test_pystan_requests_have_no_time_limit():
    """A compile is one HTTP request to httpstan; aiohttp's default 5-minute limit failed the
    mixture's compile on a loaded machine. Once ppmlib's PyStan worker runs (as for every PyStan
    call), PyStan's client sessions wait for as long as the compile takes."""
    pytest.importorskip("stan")
    import asyncio

    import stan.common

    backends._on_pystan_worker(lambda: None)

    async def timeout():
        session = stan.common.aiohttp.ClientSession()
        try:
            return session.timeout.total
        finally:
            await session.close()
    assert asyncio.run(timeout()) is None
