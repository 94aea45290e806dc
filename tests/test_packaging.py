"""ppmlib as a package: a built wheel works without the checkout, and `import ppmlib` stays light.

The wheel test builds ppmlib the way `python -m build` does (a source distribution from a copy of
the checkout, then a wheel from that), installs it with pip into a folder of its own, and imports
it in a fresh interpreter started outside the checkout: it must find every Stan program and both
data sets in the installed copy, identical to the checkout's. Everything runs offline with the
packages already installed (no build isolation, no dependencies fetched); about 10 s.
"""
from __future__ import annotations

import doctest
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from ppmlib import _shipped

from ppmlib.inference import backends

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted(p.name for p in (ROOT / "stan").glob("*.stan"))
DATA_FILES = sorted(p.name for p in (ROOT / "data").iterdir() if p.suffix in (".csv", ".json", ".md"))
# what a clone may hold besides the sources: never part of a build
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "_build", "build", "dist", "runs", "*.egg-info",
                                     "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "*.ipynb")


def _python(code: str, *, cwd: Path, path: Path, timeout: int = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with only ``path`` put before site-packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", _shipped.STAN_DIR_VARIABLE)}
    env["PYTHONPATH"] = str(path)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _pip(*args: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a source distribution of a copy of the checkout (as `python -m build`)."""
    work = tmp_path_factory.mktemp("build")
    source = work / "clone"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES)
    made = subprocess.run([sys.executable, "-c", "from setuptools import build_meta as b; "
                           f"print(b.build_sdist({str(work / 'sdist')!r}))"],
                          cwd=source, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    sdist = work / "sdist" / made.stdout.strip().splitlines()[-1]
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "--wheel-dir", str(work / "wheel"),
         str(sdist), cwd=work)
    (found,) = (work / "wheel").glob("ppmlib-*.whl")
    return found


def test_the_wheel_carries_every_stan_program_and_data_file(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(n.split("/")[-1] for n in names if n.startswith("ppmlib/_stan/")) == PROGRAMS
    assert sorted(n.split("/")[-1] for n in names if n.startswith("ppmlib/_data/")) == DATA_FILES
    assert "ppmlib/_shipped.py" in names
    assert "ppmlib/release/synthesis_report.md" in names  # the report notebook ppm-synthesize executes
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ppm-synthesize = ppmlib.release.command:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_wheel_is_the_library_alone(wheel):
    """The book's chapter modules, its tooling and the tests' oracles stay in the checkout."""
    names = zipfile.ZipFile(wheel).namelist()
    library = {n.split("/")[1] for n in names if n.startswith("ppmlib/") and n.count("/") >= 2}
    assert library == {"models", "inference", "mechanism", "evaluate", "baselines", "datasets", "release",
                       "synthesize", "_stan", "_data"}
    assert not [n for n in names if "oracle" in n or n.startswith(("tests/", "benchmarks/", "book/"))]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed by pip into a folder of its own (the folder that holds ``ppmlib/``)."""
    target = tmp_path_factory.mktemp("site")
    _pip("install", "--no-deps", "--no-index", "--target", str(target), str(wheel), cwd=target.parent)
    return target


def test_the_installed_wheel_works_without_the_checkout(installed, tmp_path):
    done = _python(f"""
        import json
        import ppmlib
        from ppmlib.inference import backends
        from ppmlib.datasets import ce_like
        from ppmlib.datasets import salary_like
        programs = {{name: str(backends.program_path(name[:-5])) for name in {PROGRAMS!r}}}
        print(json.dumps({{"ppmlib": ppmlib.__file__, "programs": programs,
                          "ce_like": ce_like.load().to_dict(orient="list"),
                          "salary_like": salary_like.load().tolist(),
                          "example_fit": ppmlib.example_fit().draws["lambda"].tolist()}}))
        """, cwd=tmp_path, path=installed)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert Path(found["ppmlib"]).parent == installed / "ppmlib"  # the installed copy, not the checkout
    assert sorted(found["programs"]) == PROGRAMS
    for name, path in found["programs"].items():
        assert Path(path) == installed / "ppmlib" / "_stan" / name
        assert Path(path).read_text() == (ROOT / "stan" / name).read_text()
    ce_like = pd.read_csv(ROOT / "data" / "ce_like.csv")
    pd.testing.assert_frame_equal(pd.DataFrame(found["ce_like"]), ce_like)
    assert found["salary_like"] == pd.read_csv(ROOT / "data" / "salary_like.csv")["salary"].tolist()
    assert found["example_fit"] == json.loads((ROOT / "data" / "example_fit.json").read_text())["draws"]["lambda"]


def test_a_program_missing_from_the_installed_copy_is_named_with_where_ppmlib_looked(installed, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(installed, broken)
    (broken / "ppmlib" / "_stan" / PROGRAMS[0]).unlink()
    done = _python(f"""
        from ppmlib.inference import backends
        backends.program_path({PROGRAMS[0][:-5]!r})
        """, cwd=tmp_path, path=broken)
    assert "FileNotFoundError" in done.stderr
    searched = broken / "ppmlib" / "_stan"
    assert f"stan/{PROGRAMS[0]} not found; searched {searched} (the installed package)" in done.stderr
    assert "PPMLIB_STAN_DIR" in done.stderr


@pytest.mark.stan
def test_the_installed_copy_fits_a_model_with_the_checkouts_draws(installed, tmp_path):
    import ppmlib
    y = ppmlib.datasets.simulate.poisson(40, mu=10, seed=3)
    done = _python(f"""
        import json
        import ppmlib
        fit = ppmlib.fit("poisson", {y.tolist()!r}, sampler=ppmlib.Sampler(chains=1, draws=200, warmup=200), seed=5)
        print(json.dumps(fit.draws["lambda"].tolist()))
        """, cwd=tmp_path, path=installed, timeout=600)
    assert done.returncode == 0, done.stderr
    # same program, data and seed on the same backend: the same draws, bit for bit
    assert json.loads(done.stdout) == ppmlib.fit("poisson", y, sampler=ppmlib.Sampler(chains=1, draws=200, warmup=200),
                                                       seed=5).draws["lambda"].tolist()


def test_a_checkout_reads_its_own_stan_and_data_folders_before_an_installed_copy(tmp_path, monkeypatch):
    # an installed copy with every file, as if a wheel had been unpacked into this package
    for folder, names in (("_stan", PROGRAMS), ("_data", DATA_FILES)):
        (tmp_path / folder).mkdir()
        for name in names:
            (tmp_path / folder / name).write_text("an older copy\n")
    monkeypatch.setattr(_shipped, "PACKAGE", tmp_path)
    for name in PROGRAMS:  # a reader's edits to stan/ take effect at once
        assert backends.program_path(name[:-5]) == ROOT / "stan" / name
    for name in DATA_FILES:
        assert _shipped.shipped_file("data", name) == ROOT / "data" / name


def test_ppmlib_stan_dir_overrides_and_is_the_only_place_searched(tmp_path, monkeypatch):
    (tmp_path / "mine.stan").write_text("// a reader's own program\n")
    monkeypatch.setenv(_shipped.STAN_DIR_VARIABLE, str(tmp_path))
    assert backends.program_path("mine") == tmp_path / "mine.stan"
    with pytest.raises(FileNotFoundError, match=r"stan/poisson\.stan not found; searched .*\(\$PPMLIB_STAN_DIR\)"):
        backends.program_path("poisson")  # in the checkout, but the override is not mixed with it


def test_shipped_file_rejects_an_unknown_folder_and_its_example_runs():
    with pytest.raises(ValueError, match="folder must be one of"):
        _shipped.shipped_file("notebooks", "x.md")
    assert doctest.testmod(_shipped).failed == 0


# --- `import ppmlib` is light --------------------------------------------------------------------

HEAVY = ("matplotlib", "pandas", "cmdstanpy", "stan", "httpstan")


def test_import_ppmlib_loads_neither_pandas_nor_matplotlib_nor_a_stan_backend(tmp_path):
    done = _python(f"""
        import json, sys
        import ppmlib
        loaded = [m for m in {HEAVY!r} if m in sys.modules]
        from ppmlib import plots          # a submodule loaded on first use
        after_plots = "matplotlib" in sys.modules
        table = ppmlib.book.claims.Claims([dict(claim="c", paper="p", ours="o", holds=True, checked=True)]).table()
        print(json.dumps({{"loaded": loaded, "after_plots": after_plots, "file": ppmlib.__file__,
                          "same": ppmlib.plots is plots and ppmlib.evaluate.utility is sys.modules["ppmlib.evaluate.utility"],
                          "table": table.to_dict(orient="list")}}))
        """, cwd=tmp_path, path=ROOT)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert Path(found["file"]).parent == ROOT / "ppmlib"
    assert found["loaded"] == []
    assert found["after_plots"] and found["same"]
    assert found["table"]["reproduced?"] == ["yes"]


def test_every_public_name_resolves():
    import ppmlib
    missing = [name for name in ppmlib.__all__ if getattr(ppmlib, name, None) is None]
    assert missing == []
    assert set(ppmlib.__all__) <= set(dir(ppmlib))
    with pytest.raises(AttributeError, match="no attribute 'plot'"):
        ppmlib.plot  # noqa: B018 - a typo still fails as usual
