import pytest

from ppmlib.inference import backends, exact


def pytest_report_header(config):
    try:
        return f"ppmlib Stan backend: {backends.backend()} (CmdStan found: {backends.cmdstan_available()})"
    except Exception as err:  # noqa: BLE001 - the header must never break collection
        return f"ppmlib Stan backend: unavailable ({err})"


@pytest.fixture
def exact_draws(monkeypatch):
    """The command's NUTS replaced by exact draws of the Poisson model (no Stan)."""
    from ppmlib.release import command
    monkeypatch.setattr(command, "Sampler", lambda chains, draws, warmup: exact.ConjugateSampler(chains, draws, warmup))


def fast_book_config(folder):
    """A copy of _config.yml that builds the book without executing any chapter (seconds, not
    minutes). Without outputs a figure made by a code cell has no label, so references to figures
    ({numref}) are not checked here; the full build (make book, -W) checks them."""
    from pathlib import Path

    import yaml
    root = Path(__file__).resolve().parent.parent
    config = yaml.safe_load((root / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    sphinx_config = config["sphinx"]["config"]
    sphinx_config["suppress_warnings"] = [*sphinx_config.get("suppress_warnings", []), "ref.numref"]
    path = Path(folder) / "_config.yml"
    path.write_text(yaml.safe_dump(config))
    return path


# The front matter that makes a MyST markdown file a notebook chapter (tests build tiny chapters).
NOTEBOOK_FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
