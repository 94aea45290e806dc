"""The book's structure: table of contents, MyST, cross-references and citations build cleanly.

Execution is switched off here (the chapters themselves run in the nbval smoke tests); this
catches a broken _toc.yml, a bad reference or a MyST error in seconds instead of at `make book`.
"""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ppmlib import rerun

ROOT = Path(__file__).resolve().parent.parent


def test_book_builds_with_warnings_as_errors(tmp_path):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    # figure labels ({numref} targets) come from executed cell outputs, absent here; the
    # executing build (make book, -W -n) still checks every figure reference
    config["sphinx"]["config"]["suppress_warnings"] = [*config["sphinx"]["config"].get("suppress_warnings", []),
                                                        "ref.numref"]
    cfg = tmp_path / "_config.yml"
    cfg.write_text(yaml.safe_dump(config))
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jb), "build", str(ROOT), "--config", str(cfg), "--path-output", str(tmp_path),
                             "-W", "-n", "--keep-going"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert (tmp_path / "_build" / "html" / "index.html").exists()


def test_every_toc_chapter_has_a_parameters_cell_and_imports_ppmlib():
    import jupytext
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = [entry["file"] for entry in toc.get("chapters", [])]
    notebooks = [c for c in chapters if "kernelspec" in (ROOT / f"{c}.md").read_text()[:500]]
    for chapter in notebooks:
        nb = jupytext.read(ROOT / f"{chapter}.md")
        assert rerun.parameter_names(nb), chapter
        assert any("import ppmlib" in cell.source for cell in nb.cells if cell.cell_type == "code"), chapter


def test_every_notebook_chapter_has_smoke_parameters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = [entry["file"] for entry in toc.get("chapters", [])]
    notebooks = {Path(c).name + ".md" for c in chapters if "kernelspec" in (ROOT / f"{c}.md").read_text()[:500]}
    assert notebooks <= set(rerun.smoke_parameters())


def test_parse_assignment():
    assert rerun.parse_assignment("n=500") == ("n", 500)
    assert rerun.parse_assignment("mus=[100, 100]") == ("mus", [100, 100])
    assert rerun.parse_assignment("check_claims=False") == ("check_claims", False)
    assert rerun.parse_assignment("model=negbin") == ("model", "negbin")
    with pytest.raises(Exception, match="name=value"):
        rerun.parse_assignment("n500")


TINY_CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# Tiny

```{code-cell} ipython3
:tags: [parameters]
n = 3
label = "default"
```

```{code-cell} ipython3
import ppmlib
print(f"{label}:{sum(range(n))}")
```
"""


def test_rerun_injects_parameters_and_executes(tmp_path):
    import nbformat
    chapter = tmp_path / "tiny.md"
    chapter.write_text(TINY_CHAPTER)
    out = rerun.run(chapter, {"n": 5, "label": "rerun"}, tmp_path / "runs")
    executed = nbformat.read(out, as_version=4)
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "rerun:10" in printed  # sum(range(5)) with the injected label
    with pytest.raises(ValueError, match=r"has no parameter\(s\) \['size'\]; it takes \['label', 'n'\]"):
        rerun.run(chapter, {"size": 5}, tmp_path / "runs")


def test_a_failing_cell_fails_the_book_build(tmp_path):
    """The book's execution settings must turn an error in any chapter into a failed build."""
    (tmp_path / "book").mkdir()
    (tmp_path / "_config.yml").write_text((ROOT / "_config.yml").read_text())
    (tmp_path / "book" / "references.bib").write_text((ROOT / "book" / "references.bib").read_text())
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/bad\n")
    (tmp_path / "book" / "bad.md").write_text(TINY_CHAPTER.replace('print(f"{label}:{sum(range(n))}")',
                                                                  'raise RuntimeError("fails on purpose")'))
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jb), "build", str(tmp_path), "-W", "-n", "--keep-going"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode != 0
    assert "fails on purpose" in result.stdout + result.stderr
