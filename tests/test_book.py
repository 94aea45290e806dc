"""The book's structure: table of contents, MyST, cross-references and citations build cleanly.

Execution is switched off here (the chapters themselves run in the nbval smoke tests); this
catches a broken _toc.yml, a bad reference or a MyST error in seconds instead of at `make book`.
"""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import NOTEBOOK_FRONT_MATTER
from ppmlib.book import rerun

ROOT = Path(__file__).resolve().parent.parent


def test_book_builds_with_warnings_as_errors(tmp_path):
    from conftest import fast_book_config
    cfg = fast_book_config(tmp_path)
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jb), "build", str(ROOT), "--config", str(cfg), "--path-output", str(tmp_path),
                             "-W", "-n", "--keep-going"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert (tmp_path / "_build" / "html" / "index.html").exists()


def toc_files(toc: dict) -> list[str]:
    """Every file the toc names, root first, walking parts, chapters and sections at any depth."""
    files = [toc["root"]] if "root" in toc else []
    for key in ("parts", "chapters", "sections"):
        for entry in toc.get(key, []):
            files += [entry["file"]] if "file" in entry else []
            files += toc_files({k: v for k, v in entry.items() if k != "file"})
    return files


def notebook_chapters(toc: dict, root: Path = ROOT) -> list[str]:
    """The toc's files that are MyST notebooks (a kernelspec in their front matter)."""
    return [c for c in toc_files(toc) if "kernelspec" in (root / f"{c}.md").read_text()[:500]]


def missing_parameters_or_import(toc: dict, root: Path = ROOT) -> list[str]:
    """Notebook chapters without a `parameters` cell or without `import ppmlib`."""
    import jupytext
    bad = []
    for chapter in notebook_chapters(toc, root):
        nb = jupytext.read(root / f"{chapter}.md")
        imports = any("import ppmlib" in cell.source for cell in nb.cells if cell.cell_type == "code")
        try:
            parameters = rerun.parameter_names(nb)
        except ValueError:  # no cell tagged `parameters`
            parameters = []
        if not parameters or not imports:
            bad.append(chapter)
    return bad


def missing_smoke_entries(toc: dict, smoke: set, root: Path = ROOT) -> set:
    """Notebook chapters with no entry in book/smoke.yml."""
    return {Path(c).relative_to("book").as_posix() + ".md" for c in notebook_chapters(toc, root)} - smoke


BOOK_TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())


def test_the_toc_walk_finds_every_chapter_of_the_book():
    files = toc_files(BOOK_TOC)
    assert {"book/dp_definitions", "book/vector_weighted", "book/attribute_risk"} <= set(files)
    assert set(files) >= {f"book/{p.stem}" for p in (ROOT / "book").glob("*.md")}
    nested = {"root": "a", "parts": [{"chapters": [{"file": "b", "sections": [{"file": "c"}]}]}],
              "chapters": [{"file": "d"}]}
    assert toc_files(nested) == ["a", "b", "c", "d"]


def test_every_toc_chapter_has_a_parameters_cell_and_imports_ppmlib():
    assert len(notebook_chapters(BOOK_TOC)) >= 3
    assert missing_parameters_or_import(BOOK_TOC) == []


def test_every_notebook_chapter_has_smoke_parameters():
    assert missing_smoke_entries(BOOK_TOC, set(rerun.smoke_parameters())) == set()


def test_the_toc_checks_reject_a_bad_chapter_nested_in_parts(tmp_path):
    # a notebook chapter with neither a parameters cell nor `import ppmlib`, two levels deep in parts/sections
    (tmp_path / "book").mkdir()
    for name in ("good", "bad"):
        (tmp_path / "book" / f"{name}.md").write_text(TINY_CHAPTER)
    bad = TINY_CHAPTER.replace(":tags: [parameters]\n", "").replace("import ppmlib\n", "")
    (tmp_path / "book" / "bad.md").write_text(bad)
    toc = {"format": "jb-book", "root": "book/good",
           "parts": [{"caption": "P", "chapters": [{"file": "book/good", "sections": [{"file": "book/bad"}]}]}]}
    assert missing_parameters_or_import(toc, tmp_path) == ["book/bad"]
    assert missing_smoke_entries(toc, {"good.md"}, tmp_path) == {"bad.md"}
    assert missing_smoke_entries(toc, {"good.md", "bad.md"}, tmp_path) == set()


TINY_CHAPTER = NOTEBOOK_FRONT_MATTER + """# Tiny

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


def exercise_problems(toc: dict, root: Path = ROOT) -> list[str]:
    """Notebook chapters (the landing page aside) that do not end with 2-4 exercises, each with a
    hidden solution, at least one solution with a code cell, and at least one rerun exercise."""
    import re
    problems = []
    for chapter in notebook_chapters(toc, root):
        if chapter == toc.get("root") or chapter.startswith("book/guide/"):  # guides are not chapters
            continue
        text = (root / f"{chapter}.md").read_text()
        exercises = re.findall(r"```\{exercise\}\n:label: (\S+)", text)
        solutions = re.findall(r"```\{solution-start\} (\S+)\n:class: dropdown", text)
        tail = text.split("## Exercises")[-1] if "## Exercises" in text else ""
        if not 2 <= len(exercises) <= 4 or set(solutions) != set(exercises):
            problems.append(f"{chapter}: {len(exercises)} exercises, hidden solutions for {sorted(solutions)}")
        elif "```{code-cell}" not in tail or "make run CHAPTER=" not in tail:
            problems.append(f"{chapter}: no executable solution or no rerun exercise")
    return problems


def test_every_chapter_ends_with_exercises_and_hidden_executable_solutions():
    assert exercise_problems(BOOK_TOC) == []


def test_the_exercise_check_rejects_a_chapter_without_them(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "bare.md").write_text(TINY_CHAPTER)
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    assert exercise_problems({"root": "book/intro", "chapters": [{"file": "book/bare"}]}, tmp_path) == \
        ["book/bare: 0 exercises, hidden solutions for []"]
