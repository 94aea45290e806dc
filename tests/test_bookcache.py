"""The execution cache: an unchanged chapter is not re-run; a change to the library re-runs it."""
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import NOTEBOOK_FRONT_MATTER
from ppmlib.book import bookcache

ROOT = Path(__file__).resolve().parent.parent

CHAPTER = NOTEBOOK_FRONT_MATTER + """# Cached

```{{code-cell}} ipython3
with open({counter!r}, "a") as f:
    f.write("executed\\n")
```
"""


def build(book: Path) -> None:
    jb = Path(sys.executable).parent / "jupyter-book"
    bookcache.refresh(book, dependencies=("lib",))
    result = subprocess.run([str(jb), "build", str(book), "-W", "-n", "--keep-going"],
                            capture_output=True, text=True, timeout=300, cwd=book)
    assert result.returncode == 0, result.stdout[-3000:]


def test_unchanged_chapters_come_from_the_cache_and_a_library_change_reruns_them(tmp_path):
    book = tmp_path / "book_root"
    (book / "book").mkdir(parents=True)
    (book / "lib").mkdir()
    (book / "lib" / "model.py").write_text("def f():\n    return 1\n")
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    shutil.copy(ROOT / "book" / "references.bib", book / "book" / "references.bib")
    (book / "_toc.yml").write_text("format: jb-book\nroot: book/cached\n")
    counter = tmp_path / "executions.txt"
    (book / "book" / "cached.md").write_text(CHAPTER.format(counter=str(counter)))

    def runs() -> int:
        return counter.read_text().count("executed") if counter.exists() else 0

    build(book)
    assert runs() == 1
    build(book)
    assert runs() == 1                       # nothing changed: nothing re-executed
    (book / "lib" / "model.py").write_text("def f():\n    return 2\n")
    build(book)
    assert runs() == 2                       # the library changed: the chapter ran again
    assert bookcache.refresh(book, dependencies=("lib",), fresh=True)
    assert not bookcache.refresh(book, dependencies=("lib",))


def test_digest_sees_content_and_names_but_not_bytecode(tmp_path):
    (tmp_path / "lib" / "__pycache__").mkdir(parents=True)
    (tmp_path / "lib" / "a.py").write_text("x = 1\n")
    before = bookcache.digest(tmp_path, ("lib",))
    (tmp_path / "lib" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    assert bookcache.digest(tmp_path, ("lib",)) == before
    (tmp_path / "lib" / "a.py").write_text("x = 2\n")
    assert bookcache.digest(tmp_path, ("lib",)) != before


READER = NOTEBOOK_FRONT_MATTER + """# Reads a ledger

```{{code-cell}} ipython3
import json
with open({counter!r}, "a") as f:
    f.write("executed\\n")
json.load(open({ledger!r}))["rows"]
```
"""


def test_a_chapter_runs_again_when_a_results_file_it_reads_changes_and_only_then(tmp_path):
    book = tmp_path / "book_root"
    (book / "book").mkdir(parents=True)
    (book / "lib").mkdir()
    results = book / "benchmarks" / "results"
    results.mkdir(parents=True)
    (book / "lib" / "model.py").write_text("def f():\n    return 1\n")
    (results / "toy_seeds.json").write_text('{"rows": [1]}')
    (results / "other_seeds.json").write_text('{"rows": [1]}')
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    shutil.copy(ROOT / "book" / "references.bib", book / "book" / "references.bib")
    (book / "_toc.yml").write_text("format: jb-book\nroot: book/reader\nchapters:\n- file: book/cached\n")
    counter, other = tmp_path / "executions.txt", tmp_path / "other.txt"
    (book / "book" / "reader.md").write_text(READER.format(counter=str(counter), ledger=str(results / "toy_seeds.json")))
    (book / "book" / "cached.md").write_text(CHAPTER.format(counter=str(other)))
    assert [p.name for p in bookcache.results_read(book / "book" / "reader.md", book)] == ["toy_seeds.json"]

    def runs(path) -> int:
        return path.read_text().count("executed") if path.exists() else 0

    build(book)
    assert (runs(counter), runs(other)) == (1, 1)
    (results / "other_seeds.json").write_text('{"rows": [2]}')   # a file the chapter does not read
    build(book)
    assert (runs(counter), runs(other)) == (1, 1)
    (results / "toy_seeds.json").write_text('{"rows": [2]}')     # the ledger it shows
    build(book)
    assert (runs(counter), runs(other)) == (2, 1)               # that chapter ran again, the other did not


def test_the_book_s_chapters_depend_on_the_ledgers_they_show():
    read = {path.name for path in bookcache.results_read(ROOT / "book" / "attribute_risk.md")}
    assert {"attribute_risk_seeds.json", "attribute_risk_lower_tail_seeds.json"} <= read
    assert "against_alternatives_seeds.json" not in read
    every = {path.name for path in (ROOT / "benchmarks" / "results").glob("*.json")}
    assert {path.name for path in bookcache.results_read(ROOT / "book" / "guide" / "performance.md")} == every
