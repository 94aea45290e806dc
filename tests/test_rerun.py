"""The rerun tool a reader uses: parameters listed, values type-checked before anything runs,
standalone HTML, and a failed run that says which cell failed."""
from pathlib import Path

import nbformat
import pytest

from conftest import NOTEBOOK_FRONT_MATTER
from ppmlib.book import rerun

CHAPTER = NOTEBOOK_FRONT_MATTER + """# Tiny

```{code-cell} ipython3
:tags: [parameters]
n = 3              # how many terms
scale = 1.5        # a real number
label = "default"  # printed before the sum
sizes = [1, 2]     # a list of ints
check = True       # a switch
```

```{code-cell} ipython3
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import ppmlib
if label == "boom":
    raise RuntimeError("fails on purpose")
if label == "sleep":
    import time
    time.sleep(120)
print(f"{label}:{sum(range(n)) * scale}")
plt.plot(sizes);
```
"""


@pytest.fixture
def chapter(tmp_path):
    path = tmp_path / "tiny.md"
    path.write_text(CHAPTER)
    return path


def test_list_shows_each_parameter_with_default_and_comment(chapter, capsys):
    assert rerun.main([str(chapter), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[2:]] == ["n", "scale", "label", "sizes", "check"]
    assert "n      3          how many terms" in lines[2]
    assert lines[5].split("  ")[0:1] == ["sizes"] and "[1, 2]" in lines[5] and lines[5].endswith("a list of ints")


@pytest.mark.parametrize("params, message", [
    ({"n": 2.5}, r"parameter 'n' of tiny.md must be int \(default 3\), got 2.5 \(float\)"),
    ({"check": "false"}, r"'check' of tiny.md must be bool \(default True\), got 'false' \(str\)"),
    ({"check": 1}, r"'check' of tiny.md must be bool"),
    ({"n": True}, r"'n' of tiny.md must be int"),
    ({"sizes": 3}, r"'sizes' of tiny.md must be list \(default \[1, 2\]\), got 3"),
    ({"sizes": [1, 2.5]}, r"'sizes' of tiny.md must be a list of int"),
    ({"label": 7}, r"'label' of tiny.md must be str"),
    ({"scale": "big"}, r"'scale' of tiny.md must be a number \(default 1.5\)"),
])
def test_a_wrong_type_is_refused_before_anything_runs(chapter, tmp_path, params, message):
    out = tmp_path / "runs"
    with pytest.raises(TypeError, match=message):
        rerun.run(chapter, params, out)
    assert not out.exists()  # nothing executed, nothing written


def test_compatible_values_are_accepted(chapter):
    nb = __import__("jupytext").read(chapter)
    rerun.check_parameters(nb, {"scale": 2, "n": 5, "sizes": [], "label": "x", "check": False}, chapter)


def test_rerun_writes_the_notebook_and_a_standalone_html_page(chapter, tmp_path, capsys):
    out = tmp_path / "runs"
    assert rerun.main([str(chapter), "-p", "n=4", "-p", "label=again", "--html", "--out", str(out)]) == 0
    executed = nbformat.read(out / "tiny.ipynb", as_version=4)
    text = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "again:9.0" in text  # sum(range(4)) * 1.5
    page = (out / "tiny.html").read_text()
    assert "again:9.0" in page and "data:image/png;base64," in page  # the figure is embedded
    assert not list(out.glob("*.partial"))


def test_a_failed_rerun_exits_nonzero_names_the_cell_and_keeps_the_good_result(chapter, tmp_path, capsys):
    out = tmp_path / "runs"
    assert rerun.main([str(chapter), "--out", str(out)]) == 0
    good = (out / "tiny.ipynb").read_bytes()
    capsys.readouterr()
    assert rerun.main([str(chapter), "-p", "label=boom", "--html", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    # cell [3]: papermill's injected-parameters cell runs second
    assert "tiny.md failed in cell [3]: RuntimeError: fails on purpose" in err
    assert 'raise RuntimeError("fails on purpose")' in err  # the traceback, without colour codes
    assert "\x1b[" not in err.split("failed in cell")[1]
    assert (out / "tiny.failed.ipynb").exists()
    assert (out / "tiny.ipynb").read_bytes() == good  # the previous complete run is untouched
    assert not (out / "tiny.html").exists()


def test_bad_parameters_exit_2_with_the_message(chapter, tmp_path, capsys):
    assert rerun.main([str(chapter), "-p", "n=2.5", "--out", str(tmp_path / "r")]) == 2
    assert "must be int" in capsys.readouterr().err


def test_parse_assignment():
    assert rerun.parse_assignment("n=500") == ("n", 500)
    assert rerun.parse_assignment("mus=[100, 100]") == ("mus", [100, 100])
    assert rerun.parse_assignment("check_claims=False") == ("check_claims", False)
    assert rerun.parse_assignment("model=negbin") == ("model", "negbin")
    # what a shell leaves of predictors=['grade','age'] in make run PARAMS="..."
    assert rerun.parse_assignment("predictors=[grade,age]") == ("predictors", ["grade", "age"])
    assert rerun.parse_assignment("mixed=[grade, 3]") == ("mixed", ["grade", 3])
    with pytest.raises(Exception, match="name=value"):
        rerun.parse_assignment("n500")


# --- issue 24: a bad --out, a hung cell, a killed rerun --------------------------------------------
@pytest.mark.parametrize("where", ["a file", "under a file", "a read-only place"])
def test_an_out_that_cannot_be_written_exits_2_before_anything_runs(chapter, tmp_path, capsys, where):
    (tmp_path / "file").write_text("not a folder")
    out = {"a file": tmp_path / "file", "under a file": tmp_path / "file" / "runs",
           "a read-only place": Path("/proc/ppmlib-runs")}[where]
    assert rerun.main([str(chapter), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"error: the output folder '{out}' cannot be written: " in err and "Traceback" not in err
    assert (tmp_path / "file").read_text() == "not a folder"


def test_a_cell_that_hangs_fails_the_run_after_the_cell_timeout(chapter, tmp_path, capsys):
    import time
    start = time.monotonic()
    assert rerun.main([str(chapter), "-p", "label=sleep", "--cell-timeout", "3", "--out", str(tmp_path / "r")]) == 1
    assert time.monotonic() - start < 60
    err = capsys.readouterr().err
    assert "tiny.md failed: CellTimeoutError: A cell timed out while it was being executed, after 3 seconds" in err
    assert "longer than cell_timeout = 3 s (--cell-timeout raises it)" in err
    assert (tmp_path / "r" / "tiny.failed.ipynb").exists() and not (tmp_path / "r" / "tiny.ipynb").exists()


def test_a_new_notebook_never_sits_beside_an_earlier_runs_page(chapter, tmp_path):
    out = tmp_path / "runs"
    assert rerun.main([str(chapter), "-p", "label=first", "--html", "--out", str(out)]) == 0
    assert "first:" in (out / "tiny.html").read_text()
    assert rerun.main([str(chapter), "-p", "label=second", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["tiny.ipynb"]


def command_line(process) -> str:
    """A process's command line, or "" for one that exits or is a zombie while we look (a short-lived
    child of the kernel's start-up was one in CI)."""
    import psutil
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):  # ZombieProcess is a NoSuchProcess
        return ""


def test_a_terminated_rerun_stops_its_kernel(chapter, tmp_path):
    """kill (SIGTERM) of a running rerun left its kernel (about 170 MB) running with no parent."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil
    out, temp = tmp_path / "runs", tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(rerun.__file__).resolve().parent.parent), "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-m", "ppmlib.book.rerun", str(chapter), "-p", "label=sleep", "--out", str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    parent, kernels = psutil.Process(proc.pid), []
    for _ in range(600):  # wait for the kernel to start and the sleeping cell to run
        kernels = [c for c in parent.children(recursive=True) if "ipykernel" in command_line(c)]
        if kernels and kernels[0].cpu_times().user > 0.5:
            break
        time.sleep(0.1)
    assert kernels, "no kernel started"
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    gone, alive = psutil.wait_procs(kernels, timeout=30)
    for stray in alive:
        stray.kill()
    assert not alive, f"kernel(s) {[k.pid for k in alive]} outlived the rerun"
    assert proc.returncode == 130 and not (out / "tiny.ipynb").exists()
    assert "the kernel was shut down and no result was written" in proc.stderr.read().decode()
    assert list(temp.iterdir()) == []  # the converted chapter, the partial notebook, the kernel's connection file


def test_a_file_given_relative_to_the_command_reaches_the_chapter_as_an_absolute_path(tmp_path, monkeypatch):
    """make run PARAMS="data='my.csv'" runs in the clone's root; the chapter runs in book/."""
    (tmp_path / "my.csv").write_text("x\n1\n")
    monkeypatch.chdir(tmp_path)
    assert rerun._file_path("my.csv") == str(tmp_path / "my.csv")
    assert rerun._file_path("cps1988") == "cps1988" and rerun._file_path(["my.csv"]) == ["my.csv"]
