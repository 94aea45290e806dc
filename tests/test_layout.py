"""The package's layout: concept folders whose imports point one way, and old names that warn.

The folders of ``ppmlib`` are layers (DESIGN.md): a module may import from its own layer and the
layers below it, never from one above, so the core (models, inference, datasets, mechanism,
evaluate, baselines) never reaches a study or the book's tooling, and no two layers import each
other. Names that moved keep working for one release, each with a FutureWarning naming where it
went; the project's own code uses only the new names (pyproject.toml turns the warning into an error).
"""
import ast
import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import ppmlib
from ppmlib import _moved

PACKAGE = Path(ppmlib.__file__).parent
ROOT = PACKAGE.parent

# bottom to top; a module's layer is its folder, or its own name for the top-level modules
LAYERS = [
    {"_checks", "_children", "_files", "_lazy", "_leftovers", "_moved", "_shipped", "errors", "seeding",
     "progress"},
    {"models"}, {"inference"}, {"datasets"}, {"mechanism"}, {"evaluate"}, {"baselines"},
    {"release", "synthesize"}, {"plots"}, {"book"}, {"studies"}, {"__init__"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def runtime_imports(path: Path) -> set[str]:
    """The ppmlib modules ``path`` imports when it runs (at any depth; ``if TYPE_CHECKING:`` excluded)."""
    tree = ast.parse(path.read_text())
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
               for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ppmlib"):
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ppmlib")}
    return found


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if {"_stan", "_data"} & set(path.parts):
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


# no exception: the syntheses expose what is written and the release layer writes them (ppmlib.release)
ALLOWED_UPWARD: set = set()


def test_every_module_belongs_to_a_layer():
    unknown = sorted({layer_of(m) for m in modules()} - set(RANK))
    assert not unknown, f"modules outside every layer of tests/test_layout.py: {unknown}"


def test_imports_point_down_the_layers():
    # the package's own __init__ re-exports the public names from everywhere: it is the top layer
    known = modules()
    upward = []
    for module, path in known.items():
        for target in runtime_imports(path):
            if target not in known or target == "ppmlib":
                continue
            if RANK[layer_of(target)] > RANK[layer_of(module)]:
                upward.append(f"{module} -> {target}")
    assert sorted(set(upward) - ALLOWED_UPWARD) == [], sorted(set(upward) - ALLOWED_UPWARD)


def test_no_two_layers_import_each_other():
    known = modules()
    edges = {(layer_of(m), layer_of(t)) for m, p in known.items() for t in runtime_imports(p)
             if t in known and t != "ppmlib" and layer_of(m) != layer_of(t) and f"{m} -> {t}" not in ALLOWED_UPWARD}
    both_ways = sorted((a, b) for a, b in edges if (b, a) in edges and a < b)
    assert both_ways == []


def test_the_core_never_imports_a_study_or_the_books_tooling():
    core = {"models", "inference", "datasets", "mechanism", "evaluate", "baselines", "errors"}
    offenders = [f"{m} -> {t}" for m, p in modules().items() if layer_of(m) in core
                 for t in runtime_imports(p) if layer_of(t) in {"studies", "book"}]
    assert offenders == []


@pytest.mark.parametrize("old", sorted(_moved.MODULES))
def test_an_old_module_path_warns_and_forwards(old):
    new = f"ppmlib.{_moved.MODULES[old]}"
    done = subprocess.run([sys.executable, "-W", "always::FutureWarning", "-c",
                           # import_module, not "import ... as": ppmlib.release is also the name of a function
                           f"import importlib, ppmlib.{old} as m; n = importlib.import_module('{new}'); print(sorted(n.__all__)[0] if hasattr(n, '__all__') "
                           f"else ''); assert all(getattr(m, x) is getattr(n, x) for x in getattr(n, '__all__', []))"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert f"FutureWarning: ppmlib.{old} moved to {new}" in done.stderr


@pytest.mark.parametrize("name", sorted(_moved.NAMES))
def test_a_name_that_left_the_top_warns_and_names_its_new_home(name):
    with pytest.warns(FutureWarning, match=re.escape(f"ppmlib.{name} moved to ppmlib.{_moved.NAMES[name]}")):
        obj = getattr(ppmlib, name)
    module, _, attr = _moved.NAMES[name].rpartition(".")
    assert obj is getattr(importlib.import_module(f"ppmlib.{module}"), attr)


def test_an_unknown_name_is_an_attribute_error_not_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no_such_name"):
            ppmlib.no_such_name  # noqa: B018


def test_the_projects_own_code_uses_no_old_path():
    # the chapters and benchmarks are not imported by the tests: their text is checked instead
    old = "|".join(sorted(_moved.MODULES))
    pattern = re.compile(rf"\bppmlib\.({old})\b(?!\.)|from ppmlib import [^\n]*\b({old})\b")
    files = [*ROOT.glob("book/*.md"), *ROOT.glob("benchmarks/*.py"), *ROOT.glob("tests/*.py"), *PACKAGE.rglob("*.py")]
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files if p.name not in {"_moved.py", "test_layout.py"}
            for m in pattern.finditer(p.read_text())]
    assert hits == [], hits


def test_contributing_names_only_files_that_exist():
    # each recipe names every file to edit: a file that moved would send a contributor nowhere
    text = (ROOT / "CONTRIBUTING.md").read_text()
    named = set(re.findall(r"`((?:[\w.-]+/)*[\w.-]+\.(?:py|md|stan|yml|json))`", text))
    assert {"ppmlib/mechanism/schemes.py", "ppmlib/release/publish.py", "ppmlib/baselines/peers.py"} <= named
    assert sorted(p for p in named if not (ROOT / p).exists() and not (ROOT / "tests" / p).exists()) == []


def test_the_command_is_thin_and_its_entry_point_takes_a_data_object_and_a_plan():
    # the house's "done when": release/command.py under 400 lines, and synthesize(table, plan) with the
    # run's options only (the data's and the plan's settings belong to data.read and plan.privacy_plan)
    import inspect

    from ppmlib.release import command
    import ppmlib.synthesize
    lines = len(Path(command.__file__).read_text().splitlines())
    assert lines < 400, f"ppmlib/release/command.py has {lines} lines"
    assert list(inspect.signature(command.synthesize).parameters) == [
        "table", "plan", "sampler", "seed", "out", "report", "overwrite", "allow_failed_fits", "progress", "client"]
    assert ppmlib.synthesize.synthesize is command.synthesize
