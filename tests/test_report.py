"""The report's tables: records by rank (never by value), the privacy statement, the diagnostics gate."""
import html
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ppmlib.mechanism import ledger as L
from ppmlib.release import report
from ppmlib.release.data import prepare

GOOD = {"max_rhat": 1.001, "min_ess_bulk": 900.0, "min_ess_tail": 800.0, "divergences": 0, "chains": 4, "draws": 4000}


def fake(bounds, weights, diagnostics=GOOD, name="X", m=5):
    bounds = np.asarray(bounds, float)
    return SimpleNamespace(name=name, bounds=bounds, weights=np.asarray(weights, float), delta=bounds.max(),
                           epsilon=2 * bounds.max(), synthetic=np.zeros((m, bounds.size)), diagnostics=diagnostics)


@pytest.fixture
def prepared():
    table = pd.DataFrame({"wage": [100.0, 900.0, 300.0, 5000.0] * 5, "region": ["n", "s", "s", "s"] * 4 + ["w"] * 4})
    return prepare(table, "wage", "normal", ["region"])


def test_drivers_rank_records_by_bound_and_say_where_they_sit(prepared):
    bounds = np.arange(20.0)                      # record 19 has the largest bound, record 18 the next
    results = {"Unweighted": fake(bounds, np.ones(20)), "LW": fake(bounds / 2, np.linspace(1, 0, 20))}
    table = report.drivers(results, prepared, k=3)
    assert table.index.tolist() == [1, 2, 3]
    assert table["bound Unweighted"].tolist() == [19.0, 18.0, 17.0]
    assert table["weight LW"].tolist() == pytest.approx([0.0, 1 / 19, 2 / 19])
    # record 19 sits in the top of the column (wage 5000) and in region w, a cell of 4 records
    assert table["value percentile"].iloc[0] == pytest.approx(100 * pd.Series(prepared.values).rank(pct=True)[19])
    assert table["cell size (region)"].tolist() == [4, 4, 4]
    for value in prepared.values:                  # by rank, never by value
        assert value not in table.to_numpy()


def test_a_boolean_predictor_is_a_cell_like_the_synthesizer_treats_it():
    """The synthesizer one-hot codes a bool predictor (design.is_categorical); the report's cells
    must group by it too (it took bool for a number, numeric by pandas' dtype, and left it out)."""
    table = pd.DataFrame({"wage": [100.0, 900.0, 300.0, 5000.0] * 5, "region": ["n", "s", "s", "s"] * 4 + ["w"] * 4,
                          "union": [True] * 19 + [False]})
    bounds = np.arange(20.0)
    table = report.drivers({"Unweighted": fake(bounds, np.ones(20))}, prepare(table, "wage", "normal", ["region", "union"]), k=2)
    assert table["cell size (region, union)"].tolist() == [1, 3]   # record 19 is alone in (w, False)


class Released(dict):
    released, delta, budget, verdict = "S", 1e-5, None, None


@pytest.mark.parametrize("guarantee", ["strict", "strict, weights as given", "local"])
def test_the_privacy_statement_is_the_manifests_for_every_guarantee(guarantee):
    from ppmlib.release.publish import manifest
    synthesis = fake([1.0, 2.5], [1, 1], name="S", m=4)
    synthesis.guarantee, synthesis.fit = guarantee, SimpleNamespace(model=SimpleNamespace(name="poisson"))
    results = Released(S=synthesis)
    stated = manifest(synthesis, "synthetic.csv", None, delta=1e-5)["ledger"]["statement"]
    assert report.privacy_statement(results) == stated
    assert stated[0] == f"guarantee: {guarantee}; every number below holds for {L.SCOPES[guarantee]}"
    page = report.privacy_html(results)
    assert [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", page)] == stated
    assert "(5, 0)-DP" not in page and "basic composition of m = 4 datasets: (20, 0)-DP" in page
    local = guarantee == "local"
    assert ("4 Delta = 10" in page) == local and ("Delta = 2.5 being the largest record bound" in page) == local


def test_diagnostics_warning_names_the_failing_fits_only():
    bad = {**GOOD, "min_ess_tail": 120.0}
    results = {"Unweighted": fake([1.0], [1.0]), "LW": fake([1.0], [1.0], diagnostics=bad)}
    assert report.diagnostics_warning(results).startswith("WARNING: the fits of LW fail")
    assert report.diagnostics(results)["passes"].tolist() == ["yes", "NO"]
    assert report.diagnostics_warning({"Unweighted": results["Unweighted"]}) is None


def test_measures_are_the_direct_pmse_and_identification_risk_of_the_releases(prepared):
    from ppmlib.evaluate.disclosure import identification_risk
    from ppmlib.evaluate.utility import pmse
    rng = np.random.default_rng(4)
    near = prepared.y + rng.normal(0, 0.01, (3, prepared.n))       # log scale, as the fits draw
    far = prepared.y + 1.0 + rng.normal(0, 0.01, (3, prepared.n))   # e times the truth: never within 10%
    results = {"near": fake(np.ones(prepared.n), np.ones(prepared.n)), "far": fake(np.ones(prepared.n), np.ones(prepared.n))}
    results["near"].synthetic, results["far"].synthetic = near, far
    table = report.measures(results, prepared, radius=0.1)
    data = prepared.table[["region", "wage"]].reset_index(drop=True)
    for name, synthetic in (("near", near), ("far", far)):
        releases = [data.assign(wage=np.exp(row)) for row in synthetic]      # in dollars, the column's units
        assert table.loc[name, "S_pMSE logit"] == pytest.approx(pmse(data, releases).summary()["S_pMSE"], rel=1e-12)
        risk = identification_risk(data, releases, ["region"], "wage", radius=0.1).summary()
        assert table.loc[name, ["EMR", "TMR", "FMR"]].tolist() == pytest.approx([risk["EMR"], risk["TMR"], risk["FMR"]])
    # within 1% of the truth every record is found among its cell's matches; a shift of e^1 finds none
    assert table.loc["near", "EMR"] > table.loc["far", "EMR"] == 0
    for value in prepared.values:
        assert value not in table.to_numpy()


def test_measures_leave_out_identification_risk_without_categorical_predictors():
    counts = prepare(pd.DataFrame({"visits": np.arange(40) % 7}), "visits", "negbin")
    results = {"X": fake(np.ones(40), np.ones(40))}
    results["X"].synthetic = np.tile(counts.y, (2, 1)).astype(float)        # the data itself: nothing to tell apart
    table = report.measures(results, counts)
    assert list(table.columns) == ["S_pMSE logit"] and table.loc["X", "S_pMSE logit"] == pytest.approx(0, abs=1e-9)


def test_the_report_kernel_runs_its_blas_on_one_thread(tmp_path):
    """The report's kernel starts with one thread in every BLAS pool (a pool of threads on a busy
    machine made its regressions seconds slower): NumPy's BLAS in the kernel reports one thread."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import numpy\nfrom threadpoolctl import threadpool_info\n"
        "print(sorted({p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'}))")])
    report._execute(notebook, tmp_path)
    printed = "".join(o.get("text", "") for o in notebook.cells[0].outputs if o.get("output_type") == "stream")
    assert printed.strip() == "[1]"
