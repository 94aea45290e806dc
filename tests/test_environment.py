"""The pip route (pyproject.toml) and the conda route (environment.yml) install the same packages."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# conda-only: the interpreter, pip itself, and CmdStan (which the pip route cannot install)
CONDA_ONLY = {"python", "pip", "cmdstan"}


def _name(spec: str) -> str:
    return re.split(r"[<>=!~ \[;]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pip_packages() -> dict:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + [s for extra in project["optional-dependencies"].values() for s in extra]
    return {_name(s): s.replace(" ", "") for s in specs}


def _conda_packages() -> dict:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    specs = [s for s in env["dependencies"] if isinstance(s, str)]
    specs += [s for d in env["dependencies"] if isinstance(d, dict) for s in d.get("pip", [])]
    return {_name(s): s.replace(" ", "") for s in specs if _name(s) not in CONDA_ONLY}


def test_same_packages_in_both_routes():
    assert set(_pip_packages()) == set(_conda_packages())


def test_same_version_bounds_in_both_routes():
    assert _pip_packages() == _conda_packages()


def test_jupyter_book_pinned_to_the_1x_line():
    assert _pip_packages()["jupyter-book"] == "jupyter-book>=1.0.4,<2"


def test_conda_route_brings_cmdstan():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert any(_name(s) == "cmdstan" for s in env["dependencies"] if isinstance(s, str))


def _locked() -> dict:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[_name(name)] = version.split(";")[0].strip()
    return pins


def test_the_lock_pins_every_dependency_inside_its_range():
    """make lock regenerates requirements.lock; a dependency added to pyproject without it fails here."""
    from packaging.requirements import Requirement
    pins = _locked()
    for spec in _pip_packages().values():
        req = Requirement(spec)
        name = _name(req.name)
        assert name in pins, f"{name} is in pyproject.toml but not in requirements.lock: run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"requirements.lock pins {name}=={pins[name]}, outside pyproject's {req.specifier}: run `make lock`"
