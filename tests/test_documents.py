"""The front door stays a front door: README.md and ppmlib/ carry no history, the README's Python
example runs, every guide page is in the book, and every measured figure says where it came from.

Issue numbers, load averages and measured times belong in CHANGELOG.md and benchmarks/results/,
which a reader can date; README.md and the library's docstrings must stay true forever.
"""
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

# "issue 12", "issues 9 and 12", "issue #12", "issue-22", and a bare "#12" (not a colour, not "&#12;")
ISSUE = re.compile(r"\bissues?[\s-]+#?\d+|(?<![&\w])#\d{1,4}\b(?![0-9a-fA-F])", re.IGNORECASE)
# a measured load: "load average 4-6", "load average about 20", "load 3.9", "load of 0.7-1.8"
LOAD = re.compile(r"\bload(?:[\s_-]?av(?:era)?ge?)?s?\s+(?:(?:of|about|was|is|near|around)\s+)?~?\d", re.IGNORECASE)


def history_lines(text: str) -> list[str]:
    """The lines of ``text`` that name an issue number or a load average."""
    return [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
            if ISSUE.search(line) or LOAD.search(line)]


# a calendar date typed into a text that should stay true until the code changes
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")


def front_door_files() -> list[Path]:
    """The README, the library, the chapters and guides, the Stan programs, the data card, the smoke sizes."""
    package = ROOT / "ppmlib"
    return [ROOT / "README.md", ROOT / "data" / "README.md", ROOT / "book" / "smoke.yml",
            *sorted((ROOT / "stan").glob("*.stan")), *sorted((ROOT / "book").rglob("*.md")),
            *sorted(p for p in package.rglob("*") if p.suffix in {".py", ".md", ".yml", ".stan"} and p.is_file())]


def test_the_history_pattern_finds_issue_numbers_and_load_averages_and_nothing_else():
    found = ["see issue 12", "Issues 9 and 12", "(issue-22)", "fixed in #7", "measured at load average about 3",
             "load 3.9 on 2 cores", "the load average was 10-25"]
    clean = ["a colour #1f77b4", "&#12;", "an issue with the prior", "load the data", "# 12 records",
             "the workload", "#ffffff", "loaded 3 files", "os.getloadavg()", "load average {value}"]
    assert [s for s in found if not history_lines(s)] == []
    assert [s for s in clean if history_lines(s)] == []


@pytest.mark.parametrize("path", front_door_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_number_load_average_or_date_in_the_readme_the_book_or_the_library(path):
    text = path.read_text(errors="replace")
    assert history_lines(text) == [], (
        f"{path.relative_to(ROOT)} names an issue number or a load average: history goes to CHANGELOG.md, "
        f"measurements to benchmarks/results/ (written by a benchmark script)")
    dated = [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1) if DATE.search(line)]
    assert dated == [], f"{path.relative_to(ROOT)} types a date: history goes to CHANGELOG.md"


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.DOTALL | re.MULTILINE)


def test_the_readme_python_example_runs_and_prints_epsilon(capsys):
    blocks = python_blocks((ROOT / "README.md").read_text())
    assert blocks, "README.md has no ```python example"
    for block in blocks:
        with warnings.catch_warnings():
            warnings.simplefilter("error", FutureWarning)   # the example uses today's names
            exec(compile(block, "README.md", "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out
    epsilon = float(re.search(r"epsilon per dataset ([0-9.]+)", printed).group(1))
    assert 0 < epsilon < 50 and "(20, 1000)" in printed


def toc_files(toc: dict) -> list[str]:
    files = [toc["root"]] if "root" in toc else []
    for key in ("parts", "chapters", "sections"):
        for entry in toc.get(key, []):
            files += [entry["file"]] if "file" in entry else []
            files += toc_files({k: v for k, v in entry.items() if k != "file"})
    return files


def test_every_guide_page_and_the_glossary_are_in_the_book():
    in_toc = set(toc_files(yaml.safe_load((ROOT / "_toc.yml").read_text())))
    pages = {f"book/guide/{p.stem}" for p in (ROOT / "book" / "guide").glob("*.md")} | {"book/glossary"}
    assert {"book/guide/install", "book/guide/your_file", "book/guide/rerun", "book/guide/caches",
            "book/guide/dask", "book/guide/performance"} <= pages
    assert sorted(pages - in_toc) == []


def test_the_intro_links_every_guide():
    intro = (ROOT / "book" / "intro.md").read_text()
    assert [p.stem for p in (ROOT / "book" / "guide").glob("*.md") if f"guide/{p.stem}" not in intro] == []


def test_every_shipped_result_states_its_provenance():
    from ppmlib.book import results
    found = results.benchmark_results()
    assert {r["file"] for r in found} >= {"lipschitz.json", "disclosure.json", "fit.json", "scale.json", "mixture.json"}
    for result in found:
        assert result["machine"] and result["date"] and result["command"] and result["load"], result["file"]


def test_a_benchmark_script_writes_a_result_the_book_reads(tmp_path):
    script = (f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
              f"from _results import record\n"
              f"record('toy', title='a toy', rows=[{{'n': 10, 'seconds': 0.5}}], folder={str(tmp_path)!r})\n")
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
    from ppmlib.book import results
    (found,) = results.benchmark_results(tmp_path)
    assert found["rows"] == [{"n": 10, "seconds": 0.5}] and found["command"].startswith("python ")
    assert len(found["load"]["start"]) == 3 and "CPUs" in found["machine"]
    assert "a toy" not in results.provenance(found) and "load average" in results.provenance(found)
    assert list(results.table(found).columns) == ["n", "seconds"]
    (tmp_path / "bad.json").write_text(json.dumps({"title": "no rows"}))
    with pytest.raises(ValueError, match="bad.json lacks"):
        results.benchmark_results(tmp_path)


def test_the_glossary_lists_every_synthesizer_of_the_registry(monkeypatch):
    from ppmlib.book import sphinx_ext
    from ppmlib.mechanism import schemes
    glossary = (ROOT / "book" / "glossary.md").read_text()
    assert "{{ scheme_glossary }}" in glossary
    terms = [line for line in sphinx_ext.scheme_glossary().splitlines() if line and not line.startswith((" ", "`"))]
    assert terms == [name for s in schemes.REGISTRY.values() if s.shown for name in (s.key, s.alias) if name]
    assert {"DPweighted", "EMweighted", "Countweighted", "LW_final", "CW_final", "Unweighted"} <= set(terms)
    # a synthesizer added to the registry appears in the glossary without editing it
    extra = schemes.Scheme("NEW", "lw", "pseudo posterior", "local", "a new synthesizer", released="local",
                           alias="Newweighted", base="LW")
    monkeypatch.setattr(schemes, "REGISTRY", {**schemes.REGISTRY, "NEW": extra})
    text = sphinx_ext.scheme_glossary()
    assert "\nNEW\nNewweighted\n   A new synthesizer. Built on LW. `ppm-synthesize` can release it." in text


def test_the_performance_page_is_read_again_when_a_result_changes(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from ppmlib.book import results, sphinx_ext
    (tmp_path / "a.json").write_text("{}")
    monkeypatch.setattr(results, "RESULTS", tmp_path)
    env = SimpleNamespace(found_docs={sphinx_ext.PERFORMANCE_PAGE, "book/intro"})
    assert sphinx_ext.reread_performance(None, env, set(), set(), set()) == [sphinx_ext.PERFORMANCE_PAGE]
    assert sphinx_ext.reread_performance(None, env, set(), set(), set()) == []     # nothing changed
    (tmp_path / "a.json").write_text('{"rows": []}')
    assert sphinx_ext.reread_performance(None, env, set(), set(), set()) == [sphinx_ext.PERFORMANCE_PAGE]
