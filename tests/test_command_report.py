"""The command's report: beside the release and not in it, escaped, without code, summary first.

The in-process tests fit the Poisson model with exact draws (no Stan); the report's kernel runs
for real. The Stan tests run both entry points (``python -m`` and the console script's import)
in a child process, and put markup into the predictors and their levels.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bs4 import BeautifulSoup

from ppmlib.release import report
from ppmlib.inference import exact
from ppmlib.release import command as syn
from ppmlib.mechanism import lineup as mlineup
from ppmlib.release.data import read
from ppmlib.release.plan import privacy_plan

ROOT = Path(__file__).resolve().parent.parent
GOOD = ["--chains", "4", "--draws", "500"]
MARKUP = "<script>alert(2)</script>"
IMG = "<img src=x onerror=alert(1)>"


def page(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def assert_inert(html: BeautifulSoup) -> None:
    """No markup the report did not write runs or renders: no script holding an alert, no handler
    attribute, no image of the data, no javascript: link."""
    assert not [s for s in html.find_all("script") if "alert" in (s.string or "")]
    assert not [(tag.name, a) for tag in html.find_all(True) for a in tag.attrs if a.lower().startswith("on")]
    assert not [img for img in html.find_all("img") if img.get("src") == "x"]
    assert not [a for a in html.find_all("a") if a.get("href", "").lower().startswith("javascript")]


def test_the_report_is_beside_the_release_escaped_without_code_and_opens_with_its_summary(tmp_path, capsys,
                                                                                          exact_draws):
    data = tmp_path / f"{IMG}.csv"
    rng = np.random.default_rng(2)
    pd.DataFrame({MARKUP: rng.poisson(5, 60)}).to_csv(data, index=False)
    out = tmp_path / "release"
    status = syn.main([str(data), "--column", MARKUP, "--model", "poisson", "--m", "3", "--out", str(out), *GOOD,
                       "--strict-scheme", "cm"])
    said = capsys.readouterr()
    assert status == 0, said.err
    # 8: the release folder holds the release only; the report is beside it, named as confidential
    assert sorted(p.name for p in out.iterdir()) == ["synthetic.json", "synthetic_1.csv", "synthetic_2.csv", "synthetic_3.csv"]
    target = tmp_path / "release.report-confidential.html"
    assert f"report (confidential, not for publication): {target}" in said.out
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    html = page(target)
    # 4: the column's and the file's markup are text, never markup
    assert_inert(html)
    words = " ".join(html.get_text().split())
    assert MARKUP in words and IMG in words
    # 33.6: no code cell, the summary first, every table titled, the glossary named
    assert not html.select(".jp-CodeMirrorEditor, .highlight, .jp-InputPrompt")
    assert "load_state" not in words and "state =" not in words
    headings = [h.get_text().rstrip("¶") for h in html.find_all(["h1", "h2"])]
    assert headings[:3] == ["Synthesis report: confidential, not for publication", "Summary",
                            "Privacy: what the release costs"]
    assert len(html.find_all("img")) == 3          # bounds and weights, the distributions, the two estimands
    tables = html.find_all("table")
    assert len(tables) == 6 and all(t.find("caption") and t.find("caption").get_text().strip() for t in tables)
    summary = html.find("section", class_="ppm-summary").get_text(" ")
    for phrase in ("Privacy", "Diagnostics", "passed", "S_pMSE", "Identification risk", "Glossary"):
        assert phrase in " ".join(summary.split()), phrase
    assert "book's chapter" not in words


@pytest.mark.parametrize("guarantee", ["strict", "local"])
def test_the_report_states_the_manifests_privacy_statement_word_for_word(tmp_path, capsys, exact_draws, guarantee):
    """The summary's Privacy row, the privacy section and the printed summary are the manifest's
    ledger statement, line for line, for either guarantee; the privacy section shows the ledger's table.
    (A strict release's report used to say "epsilon = 2 Delta ... removal neighbours", the local wording.)"""
    data = tmp_path / "visits.csv"
    pd.DataFrame({"visits": np.random.default_rng(3).poisson(5, 60)}).to_csv(data, index=False)
    out = tmp_path / "release"
    status = syn.main([str(data), "--column", "visits", "--model", "poisson", "--m", "3", "--out", str(out),
                       "--guarantee", guarantee, *GOOD, *(["--strict-scheme", "cm"] if guarantee == "strict" else [])])
    said = capsys.readouterr()
    assert status == 0, said.err
    statement = json.loads((out / "synthetic.json").read_text())["ledger"]["statement"]
    assert statement[0].startswith(f"guarantee: {guarantee};")
    html = page(tmp_path / "release.report-confidential.html")
    lists = html.find_all("ul", class_="ppm-privacy")
    assert len(lists) == 2                        # the summary's Privacy row and the privacy section
    for shown in lists:
        assert [" ".join(li.get_text().split()) for li in shown.find_all("li")] == [" ".join(x.split()) for x in statement]
    assert html.find("section", class_="ppm-summary").find("ul", class_="ppm-privacy") is not None
    ledger = next(t for t in html.find_all("table") if "privacy ledger" in t.find("caption").get_text())
    assert f"{json.loads((out / 'synthetic.json').read_text())['ledger']['rho_zcdp']:.4g}" in ledger.get_text()
    assert all(line in said.out for line in statement)
    shown = " ".join(" ".join(x.get_text().split()) for x in lists)
    assert ("Delta" in shown) == (guarantee == "local") and ("removal of one of its records" in shown) == (guarantee == "local")


def test_a_report_path_inside_out_or_over_a_foreign_file_is_refused(tmp_path, capsys, exact_draws, monkeypatch):
    data = tmp_path / "visits.csv"
    pd.DataFrame({"visits": np.arange(60) % 7}).to_csv(data, index=False)
    out = tmp_path / "release"
    monkeypatch.setattr(mlineup, "run", lambda *a, **k: pytest.fail("fitted before refusing"))
    base = [str(data), "--column", "visits", "--model", "poisson", "--strict-scheme", "cm", "--out", str(out)]
    assert syn.main(base + ["--report", str(out / "report.html")]) == 2
    assert "inside --out" in capsys.readouterr().err
    (tmp_path / "mine.html").write_text("<p>my notes</p>")
    assert syn.main(base + ["--report", str(tmp_path / "mine.html"), "--overwrite"]) == 2
    assert "not a report of ppm-synthesize" in capsys.readouterr().err
    assert (tmp_path / "mine.html").read_text() == "<p>my notes</p>"


def test_the_kernel_gets_plain_data_that_reads_back_without_pickle(tmp_path, exact_draws):
    data = pd.DataFrame({"visits": np.arange(80) % 9})
    results = syn.synthesize(read(data, "visits", model="poisson"), privacy_plan("local", m=2),
                             sampler=exact.ConjugateSampler(4, 500), progress=False)
    folder = report.write_state(results, tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["state.json", "state.npz", "table.parquet"]
    with np.load(folder / "state.npz", allow_pickle=False) as stored:   # no object arrays: no pickle inside
        assert all(stored[key].dtype != object for key in stored.files)
    back, prepared = report.load_state(folder)
    assert list(back) == ["Unweighted", "LW"] and back.released == "LW"
    np.testing.assert_array_equal(back["LW"].synthetic, results["LW"].synthetic)
    np.testing.assert_array_equal(prepared.values, results.prepared.values)
    assert back["LW"].epsilon == results["LW"].epsilon
    pd.testing.assert_frame_equal(report.drivers(back, prepared), report.drivers(results, results.prepared))
    pd.testing.assert_frame_equal(report.overview(back), report.overview(results), check_dtype=False)


# --- with Stan: both entry points, markup in predictors and levels -------------------------------

def entry_point(kind: str) -> list:
    """How a user starts the command: ``python -m ppmlib.synthesize``, or what the console script
    ``ppm-synthesize`` runs (its module imported, then ``main()``; __main__ is another module)."""
    if kind == "module":
        return [sys.executable, "-m", "ppmlib.synthesize"]
    import tomllib
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["ppm-synthesize"]
    module, function = target.split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())"]


@pytest.mark.stan
@pytest.mark.parametrize("kind", ["module", "console script"])
def test_both_entry_points_write_a_report(tmp_path, kind):
    data = tmp_path / "visits.csv"
    pd.DataFrame({"visits": np.random.default_rng(4).poisson(6, 80)}).to_csv(data, index=False)
    out = tmp_path / "release"
    done = subprocess.run(entry_point(kind) + [str(data), "--column", "visits", "--model", "poisson", "--strict-scheme", "cm", "--m", "2",
                                               "--chains", "2", "--draws", "150", "--allow-failed-fits", "--out",
                                               str(out)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PPMLIB_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr[-3000:]
    html = page(tmp_path / "release.report-confidential.html")
    assert "FAILED" in html.find("section", class_="ppm-summary").get_text()     # 2 x 150 draws: the gate fails
    assert json.loads((out / "synthetic.json").read_text())["diagnostics"]["released_anyway"] is True


@pytest.mark.stan
def test_markup_in_predictors_and_levels_stays_text(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 120
    frame = pd.DataFrame({IMG: rng.choice([MARKUP, "[x](javascript:alert(3))", "plain"], n),
                          "age": rng.integers(20, 60, n)})
    frame["pay$"] = np.exp(10 + 0.2 * (frame[IMG] == "plain") + rng.normal(0, 0.4, n)).round(2)
    data = tmp_path / "pay.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "release"
    status = syn.main([str(data), "--column", "pay$", "--model", "normal", "--strict-scheme", "cm", "--predictors", f"{IMG},age", "--m", "2",
                       "--chains", "2", "--draws", "150", "--allow-failed-fits", "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    html = page(tmp_path / "release.report-confidential.html")
    assert_inert(html)
    words = " ".join(html.get_text().split())
    assert f"{IMG}=[x](javascript:alert(3))" in words           # a level as a design column (the first is the reference)
    assert f"cell size ({IMG})" in words and "pay$" in words
