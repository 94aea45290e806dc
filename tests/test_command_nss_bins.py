"""ppm-synthesize --strict-scheme nss-bins: noisy counts over public bins as a strict scheme of the
command (not the default). The release's layout, its manifest's privacy fields (the noisy ledger's,
and the Laplace mechanism's epsilon = sensitivity / scale), the report's statement, determinism, and
the refusals before any work. No Stan: the scheme's posterior is drawn exactly."""
import html
import json
import re

import numpy as np
import pandas as pd
import pytest

from ppmlib.mechanism import nss
from ppmlib.mechanism.ledger import of_release
from ppmlib.release import command
from ppmlib.release.data import read
from ppmlib.release.plan import DEFAULT_POSTERIOR_DRAWS as DEFAULT_K
from ppmlib.release.plan import privacy_plan

BINS = ["--strict-scheme", "nss-bins", "--log-bounds", "4,8", "--total-epsilon", "3", "--m", "3", "--seed", "5"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(1)
    n = 300
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "region": rng.choice(["north", "south", "east"], n),
                          "age": rng.integers(20, 60, n)})
    frame["wage"] = np.round(np.exp(6 + 0.3 * (frame.sex == "m") + rng.normal(0, 0.4, n)), 2)
    path = tmp_path_factory.mktemp("nssdata") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run(data, out, *extra):
    return command.main([str(data), "--column", "wage", "--predictors", "sex,region", *BINS, *extra,
                         "--out", str(out)])


@pytest.fixture(scope="module")
def released(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("nss") / "rel"
    assert run(data, out) == 0
    return out


def test_the_release_is_the_users_table_with_the_column_from_the_bins(released):
    files = sorted(p.name for p in released.iterdir())
    assert files == ["synthetic.json", "synthetic_1.csv", "synthetic_2.csv", "synthetic_3.csv"]
    manifest = json.loads((released / "synthetic.json").read_text())
    assert manifest["synthesizer"] == "NSS" and manifest["m_datasets"] == 3 and manifest["n_records_per_dataset"] == 300
    first = pd.read_csv(released / "synthetic_1.csv")
    assert list(first.columns) == ["sex", "region", "wage"]          # age is dropped, not released
    assert np.all((first.wage >= np.exp(4)) & (first.wage <= np.exp(8)))   # drawn within the public bins
    assert not {"weights", "bounds", "alpha", "counts", "diagnostics_of_fits"} & set(manifest)


def test_the_manifests_privacy_fields_are_the_noisy_ledgers(data, released):
    manifest = json.loads((released / "synthetic.json").read_text())
    plan = privacy_plan(strict_scheme="nss-bins", log_bounds="4,8", total_epsilon=3, m=3)
    done = command.synthesize(read(str(data), "wage", predictors="sex,region"), plan, seed=5, progress=False)["NSS"]
    book = of_release(done)
    assert manifest["ledger"] == json.loads(json.dumps(book.to_dict()))
    assert manifest["total_epsilon"] == book.total[0] and manifest["epsilon_per_dataset"] is None
    assert manifest["neighbours"] == book.scope and manifest["not_covered"] == book.not_covered
    # the oracle: Laplace noise of scale b on counts of L1 sensitivity 1 is (1 / b, 0)-DP
    assert done.statistics.scale == pytest.approx(1 / 3)
    assert manifest["ledger"]["release_epsilon"] == pytest.approx(1 / done.statistics.scale)
    assert manifest["ledger"]["release_delta"] == 0.0 and manifest["ledger"]["k_draws"] == "mean shape"
    assert "CM" not in manifest["guarantee"] and "censor" not in json.dumps(manifest).lower()
    assert manifest["diagnostics"]["verdict"] == "no fits"


def test_the_manifest_states_k_when_the_datasets_come_from_k_draws(data, tmp_path, capsys):
    assert run(data, tmp_path / "k", "--posterior-draws", "2", "--no-report") == 0
    book = json.loads((tmp_path / "k" / "synthetic.json").read_text())["ledger"]
    assert book["k_draws"] == 2 and "come from k = 2 posterior draws" in book["statement"][2]
    printed = capsys.readouterr().out
    assert "\n".join(book["statement"]) in printed         # the summary prints the manifest's statement
    assert "no model fit, NSS" in printed and "CM" not in printed


def test_the_report_states_the_manifests_privacy_and_has_no_fits(data, tmp_path):
    out = tmp_path / "rep"
    assert run(data, out, "--report", str(tmp_path / "r.html")) == 0
    page = (tmp_path / "r.html").read_text()
    manifest = json.loads((out / "synthetic.json").read_text())
    lists = re.findall(r'<ul class="ppm-privacy">(.*?)</ul>', page, flags=re.S)
    assert lists
    for found in lists:
        items = [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", found, flags=re.S)]
        assert items == manifest["ledger"]["statement"]
    assert "There are no Stan fits to diagnose" in page and "The largest cells" in page
    assert "share of the budget choosing the bins" in page          # none here: --log-bounds are public


def test_same_seed_same_bytes(data, released, tmp_path):
    assert run(data, tmp_path / "again", "--no-report") == 0
    for name in ("synthetic_1.csv", "synthetic_2.csv", "synthetic_3.csv"):
        assert (tmp_path / "again" / name).read_bytes() == (released / name).read_bytes()
    assert command.main([str(data), "--column", "wage", "--predictors", "sex,region", *BINS[:-1], "6", "--no-report",
                         "--out", str(tmp_path / "other")]) == 0
    assert (tmp_path / "other" / "synthetic_1.csv").read_bytes() != (released / "synthetic_1.csv").read_bytes()


@pytest.mark.parametrize("extra, flag", [
    (["--posterior-draws", "4"], "--posterior-draws"),                 # k > m
    (["--posterior-draws", "0"], "--posterior-draws"),                 # k < 1
    (["--log-bounds", "8,12"], "--log-bounds"),                        # excludes most of the data
    (["--log-bounds", "8,4"], "--log-bounds"),
    (["--bin-width", "0.3"], "--bin-width"),                           # not whole bins
    (["--epsilon", "1"], "--epsilon"),
    (["--guarantee", "local"], "--guarantee local"),
    (["--budget", "2.5"], "exceeds --budget 2.5"),                     # the release costs 3
])
def test_bad_settings_are_refused_naming_the_flag_and_nothing_is_written(data, tmp_path, capsys, extra, flag):
    out = tmp_path / "never"
    assert run(data, out, *extra) == 2
    assert flag in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob("never*"))


def test_too_many_cells_x_bins_and_numeric_keys_are_refused(data, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(nss, "MAX_CELL_BINS", 50)                      # 6 cells x 16 bins = 96
    assert run(data, tmp_path / "never") == 2
    assert "--bin-width" in capsys.readouterr().err
    monkeypatch.undo()
    assert command.main([str(data), "--column", "wage", "--predictors", "sex,age", *BINS, "--out",
                         str(tmp_path / "never")]) == 2
    assert "['age'] are numeric" in capsys.readouterr().err
    # no --log-bounds: 300 records cannot pay for choosing the range at 0.1 of a total of 1
    monkeypatch.setattr(nss, "private_quantile", lambda *a, **k: pytest.fail("the bounds were drawn"))
    assert command.main([str(data), "--column", "wage", "--predictors", "sex,region", "--out",
                         str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert "n = 300 records" in err and "--log-bounds LOW,HIGH" in err and "--bounds-share" in err
    assert not list(tmp_path.glob("never*"))


def test_the_default_strict_release_is_nss_bins_with_the_share_and_k_in_its_manifest(data, tmp_path, capsys):
    """No strict flags: nss-bins, its range chosen at the declared share of the total, the manifest
    stating the share, k and a total equal to --total-epsilon (9: 300 records need n x 0.1 x 9 >= 255)."""
    out = tmp_path / "default"
    assert command.main([str(data), "--column", "wage", "--predictors", "sex,region", "--total-epsilon", "9",
                         "--m", "3", "--no-report", "--out", str(out)]) == 0
    manifest = json.loads((out / "synthetic.json").read_text())
    book = manifest["ledger"]
    assert manifest["synthesizer"] == "NSS" and book["bounds_share"] == nss.BOUNDS_SHARE
    assert book["bounds_epsilon"] == pytest.approx(9 * nss.BOUNDS_SHARE) and book["release_epsilon"] == pytest.approx(9)
    assert book["k_draws"] == ("mean shape" if DEFAULT_K is None else DEFAULT_K)
    assert f"share {nss.BOUNDS_SHARE:g}" in manifest["guarantee"] and "chosen from the data" in manifest["guarantee"]
    assert "\n".join(book["statement"]) in capsys.readouterr().out
    plan = privacy_plan()
    assert plan.released == "NSS" and plan.bins.bounds is None and plan.bins.bounds_share == nss.BOUNDS_SHARE


def test_cm_is_asked_for_by_name_and_nss_is_the_registrys_strict_scheme():
    assert privacy_plan(strict_scheme="cm").released == "CM" and privacy_plan(strict_scheme="cm").bins is None
    assert privacy_plan("local").bins is None
    plan = privacy_plan(strict_scheme="nss-bins", log_bounds=(4, 8), m=3)
    assert plan.released == "NSS" and plan.members == () and plan.bins.width == 0.25
