"""The rerun tool a reader uses: parameters listed, values type-checked before anything runs,
standalone HTML, and a failed run that says which cell failed."""
import nbformat
import pytest

from conftest import NOTEBOOK_FRONT_MATTER
from ppmlib import rerun

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


def test_a_file_given_relative_to_the_command_reaches_the_chapter_as_an_absolute_path(tmp_path, monkeypatch):
    """make run PARAMS="data='my.csv'" runs in the clone's root; the chapter runs in book/."""
    (tmp_path / "my.csv").write_text("x\n1\n")
    monkeypatch.chdir(tmp_path)
    assert rerun._file_path("my.csv") == str(tmp_path / "my.csv")
    assert rerun._file_path("cps1988") == "cps1988" and rerun._file_path(["my.csv"]) == ["my.csv"]
