"""Kill tests: a run of the command stopped by a signal leaves nothing behind.

Each test starts the command in a child process (with PyStan, so that httpstan's worker processes
exist), waits until it reaches a point (fitting, writing the report, publishing), and signals it.
Afterwards: no process of the run is left, no staging folder, no release or report, no file in
the temporary folder, no record of paths to clean. SIGKILL cannot be caught: then the children
die with their parent (a parent-death signal), and the next run removes what the killed one left,
and says so.

Every process the run starts carries a token in its environment, so the test finds them all,
whatever their parent or session. The command's two paths run: the single column (``main``) and
the survey pair (``survey``, ``--weights``: exact draws and an HTML report made in-process, so its
fit and report points are reached by slowing those steps down).
"""
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.stan

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = "ppmlib.inference.backends" if (ROOT / "ppmlib" / "inference").is_dir() else "ppmlib.inference.backends"

# The command, with one step slowed down (never changed) so that a signal lands inside it.
DRIVER = textwrap.dedent("""
    import os, sys, time, pathlib
    marker, point = pathlib.Path(os.environ["KILLTEST_MARKER"]), os.environ["KILLTEST_POINT"]
    from ppmlib.release import command as cmd, staging
    from ppmlib.inference import backends

    def reached():
        marker.write_text(point)
        time.sleep(120)

    if point == "fit":             # the second fit: httpstan's workers exist (the first fit started them)
        sample, calls = backends.sample, []
        def slow_sample(*args, **kwargs):
            calls.append(1)
            if len(calls) == 2:
                reached()
            return sample(*args, **kwargs)
        backends.sample = slow_sample
    elif point == "publish":       # everything written in staging, the report included
        publish = staging.Staging.publish
        def slow_publish(self):
            reached()
            return publish(self)
        staging.Staging.publish = slow_publish
    elif point == "survey-fit":    # the survey pair's fit
        from ppmlib.release import survey
        fit = survey.survey_synthesizer
        def slow_fit(*args, **kwargs):
            reached()
            return fit(*args, **kwargs)
        survey.survey_synthesizer = slow_fit
    elif point == "survey-report":  # the release written in staging, the survey report being made
        from ppmlib.release import survey
        page = survey.report_html
        def slow_page(*args, **kwargs):
            text = page(*args, **kwargs)
            reached()
            return text
        survey.report_html = slow_page
    elif point == "report-copy":   # the report being copied into its folder (--report elsewhere), as a temporary file
        copy = staging.shutil.copyfileobj
        def slow_copy(source, target, *args, **kwargs):
            if str(getattr(source, "name", "")).endswith("report.html"):     # staging's report, to its target
                reached()
            return copy(source, target, *args, **kwargs)
        staging.shutil.copyfileobj = slow_copy
    elif point == "between-renames":   # the release's data files written in staging, its manifest not yet
        from ppmlib.release import tables
        write = tables._write_bytes
        def torn(path, data):
            if path.name == tables.MANIFEST:
                reached()
            return write(path, data)
        tables._write_bytes = torn
    sys.exit(cmd.main(sys.argv[1:]))
""")


def token_processes(token: str) -> list[int]:
    """The pids of every process whose environment holds KILLTEST_TOKEN=token."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"KILLTEST_TOKEN={token}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kernel_running(token: str) -> bool:
    for pid in token_processes(token):
        try:
            if b"ipykernel" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            pass
    return False


class Run:
    """One run of the command in a child process, in a folder of its own."""

    def __init__(self, tmp_path: Path, point: str = "", report: bool = True, kind: str = "main", report_to=None):
        self.tmp, self.token = tmp_path, uuid.uuid4().hex
        (tmp_path / "data").mkdir(exist_ok=True)
        (tmp_path / "tmp").mkdir(exist_ok=True)
        self.data = tmp_path / "data" / "visits.csv"
        rng = np.random.default_rng(3)
        pd.DataFrame({"visits": rng.poisson(6, 80), "grade": rng.choice(["a", "b"], 80),
                      "w": np.round(np.exp(rng.normal(6, 0.5, 80)), 1)}).to_csv(self.data, index=False)
        if kind == "survey":
            point = {"fit": "survey-fit", "report": "survey-report"}.get(point, point)
        self.out, self.marker = tmp_path / "release", tmp_path / "reached"
        self.env = {**os.environ, "KILLTEST_TOKEN": self.token, "KILLTEST_MARKER": str(self.marker),
                    "KILLTEST_POINT": point, "TMPDIR": str(tmp_path / "tmp"), "PPMLIB_CACHE": str(tmp_path / "cache"),
                    "PYTHONPATH": str(ROOT)}
        model = (["--model", "poisson", "--strict-scheme", "cm"] if kind == "main" else
                 ["--weights", "w", "--predictors", "grade", "--guarantee", "local", "--epsilon", "4"])
        argv = [str(self.data), "--column", "visits", *model, "--m", "2", "--chains", "2", "--draws",
                "150", "--allow-failed-fits", "--out", str(self.out)] + ([] if report else ["--no-report"])
        argv += ["--report", str(report_to)] if report_to is not None else []
        self.process = subprocess.Popen([sys.executable, "-c", DRIVER, *argv], env=self.env, cwd=tmp_path,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)

    def wait_for(self, ready, timeout=240):
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.process.poll() is None, self.process.communicate()
            assert time.monotonic() < deadline, "the run never reached the point"
            time.sleep(0.2)

    def finish(self, timeout=60):
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out.decode(), err.decode()

    def leftovers(self) -> list[str]:
        """What remains of the run beside its data: staging folders, locks, out, report, temporary files."""
        left = [p.name for p in self.tmp.iterdir() if p.name not in ("data", "tmp", "cache")]
        # cmdstanpy makes an empty folder when it is imported and removes it at exit, which a
        # SIGKILL skips: empty, so not counted
        left += [f"tmp/{p.name}" for p in (self.tmp / "tmp").iterdir() if not (p.is_dir() and not any(p.iterdir()))]
        running = self.tmp / "cache" / "running"
        left += [f"record {p.name}" for p in running.glob("*")] if running.is_dir() else []
        return left

    def orphans(self, wait=10.0) -> list[int]:
        deadline = time.monotonic() + wait
        while token_processes(self.token) and time.monotonic() < deadline:
            time.sleep(0.2)
        return token_processes(self.token)


POINTS = {"fit": lambda run: run.marker.exists(),
          "report": lambda run: kernel_running(run.token) and (run.tmp / "reached").touch() is None,
          "publish": lambda run: run.marker.exists()}
#: The command's paths: the single column, and the survey pair (--weights).
KINDS = ("main", "survey")


def reached(run: Run, point: str, kind: str) -> bool:
    """Whether the run is at ``point``: the main path's report runs a kernel; the survey path's is slowed down."""
    return run.marker.exists() if kind == "survey" else POINTS[point](run)


def slowed(point: str, kind: str) -> str:
    """The step the driver slows down for ``point`` (none for the main path's report: its kernel is found)."""
    return "" if point == "report" and kind == "main" else point


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("point", list(POINTS))
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_at_any_point_leaves_nothing(tmp_path, point, signum, kind):
    run = Run(tmp_path, point=slowed(point, kind), kind=kind)
    run.wait_for(lambda: reached(run, point, kind))
    if point == "report" and kind == "main":
        time.sleep(1.0)          # inside the report's execution
    os.kill(run.process.pid, signum)
    status, said, err = run.finish()
    assert status == 128 + signum, err
    assert "stopped by" in err and "nothing was written" in err, err
    assert run.orphans() == []
    (tmp_path / "reached").unlink(missing_ok=True)
    assert run.leftovers() == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("point", ["report", "between-renames"])
def test_after_sigkill_the_children_die_and_the_next_run_removes_what_was_left(tmp_path, point, kind):
    run = Run(tmp_path, point=slowed(point, kind), kind=kind)
    run.wait_for(lambda: kernel_running(run.token) if point == "report" and kind == "main" else run.marker.exists())
    if point == "report" and kind == "main":
        time.sleep(1.0)
    records = list((tmp_path / "cache" / "running").glob("*.paths"))
    recorded = [Path(line) for r in records for line in r.read_text().splitlines()]
    assert any(".ppm-staging-" in p.name for p in recorded)
    os.kill(run.process.pid, signal.SIGKILL)
    run.finish()
    assert run.orphans() == []                                # the kernel and httpstan's workers died with it
    assert not run.out.exists()                               # never a torn or partial release in --out
    assert any(".ppm-staging-" in name for name in run.leftovers())
    # the confidential part (the report's inputs, the report) went at once, with the watchdog
    assert not [n for n in run.leftovers() if ".ppm-staging-" in n
                and ((tmp_path / n / "private").exists() or (tmp_path / n / "report.html").exists())]
    # the next run (here: the cleaning command make clean-cache calls) removes it and says so
    cleaned = subprocess.run([sys.executable, "-m", BACKENDS, "--clean-cache"], env=run.env,
                             capture_output=True, text=True, timeout=120)
    assert cleaned.returncode == 0, cleaned.stderr
    assert "left by a killed run" in cleaned.stdout and ".ppm-staging-" in cleaned.stdout
    assert all(not p.exists() for p in recorded)
    (tmp_path / "reached").unlink(missing_ok=True)
    assert run.leftovers() == []


@pytest.mark.parametrize("kind", KINDS)
def test_the_next_run_removes_what_a_killed_run_left_and_says_so(tmp_path, kind):
    run = Run(tmp_path, point="publish", kind=kind)
    run.wait_for(lambda: run.marker.exists())
    os.kill(run.process.pid, signal.SIGKILL)
    run.finish()
    assert any(".ppm-staging-" in name for name in run.leftovers())
    run.marker.unlink()
    again = Run(tmp_path, report=False, kind=kind)
    status, said, err = again.finish(timeout=240)
    assert status == 0, err
    assert "removed" in err and "left by a killed run" in err
    assert sorted(p.name for p in run.out.iterdir()) == ["synthetic.json", "synthetic_1.csv", "synthetic_2.csv"]
    assert run.leftovers() == ["release"]


@pytest.mark.parametrize("kind", KINDS)
def test_after_sigkill_the_reports_temporary_file_elsewhere_is_removed_by_the_next_run(tmp_path, kind):
    """With --report in another folder the report is copied there as a hidden temporary file, then renamed:
    a SIGKILL in between leaves it, and the next run removes it."""
    pages = tmp_path / "pages"
    pages.mkdir()
    run = Run(tmp_path, point="report-copy", kind=kind, report_to=pages / "page.html")
    run.wait_for(lambda: run.marker.exists())
    os.kill(run.process.pid, signal.SIGKILL)
    run.finish()
    assert [p.name for p in pages.iterdir() if ".ppm-staging-" in p.name], list(pages.iterdir())
    cleaned = subprocess.run([sys.executable, "-m", BACKENDS, "--clean-cache"], env=run.env,
                             capture_output=True, text=True, timeout=120)
    assert cleaned.returncode == 0, cleaned.stderr
    assert "left by a killed run" in cleaned.stdout
    assert list(pages.iterdir()) == []
    run.marker.unlink()
    assert run.leftovers() == ["pages"]
