"""Rerun a chapter with your own parameters: ``python -m ppmlib.rerun book/CHAPTER.md -p n=500``.

Chapters are MyST-markdown notebooks; papermill reads ``.ipynb``, so the chapter is converted
with jupytext, its ``parameters`` cell overridden by papermill, and executed. The executed
notebook lands in ``--out`` (default ``runs/``). ``--smoke`` instead writes every chapter with the
small parameters of ``book/smoke.yml``, unexecuted, for ``pytest --nbval-lax`` to run.
"""
from __future__ import annotations

import argparse
import ast
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMOKE_FILE = ROOT / "book" / "smoke.yml"


def parse_assignment(text: str) -> tuple[str, object]:
    """``name=value`` with ``value`` read as a Python literal (``n=500``, ``mus=[100,100]``)
    and kept as a string when it is not one (``model=negbin``)."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"parameter {text!r} must look like name=value")
    name, raw = text.split("=", 1)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return name.strip(), value


def parameter_names(notebook) -> set[str]:
    """Names assigned in the chapter's cell tagged ``parameters``."""
    for cell in notebook.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            tree = ast.parse(cell.source)
            return {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Name)}
    raise ValueError("the chapter has no cell tagged 'parameters'")


def check_parameters(notebook, params: dict, chapter: Path) -> None:
    unknown = set(params) - parameter_names(notebook)
    if unknown:
        raise ValueError(f"{chapter.name} has no parameter(s) {sorted(unknown)}; "
                         f"it takes {sorted(parameter_names(notebook))}")


def converted(chapter: Path, folder: Path) -> Path:
    """Write the MyST chapter as an unexecuted .ipynb into ``folder`` (papermill reads only .ipynb)."""
    import jupytext
    notebook = jupytext.read(chapter)
    notebook.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    target = folder / f"{chapter.stem}.source.ipynb"
    jupytext.write(notebook, target)
    return target


def parameterized(chapter: Path, params: dict):
    """The chapter as an unexecuted notebook with ``params`` injected after its parameters cell."""
    import jupytext
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    check_parameters(jupytext.read(chapter), params, chapter)
    with tempfile.TemporaryDirectory() as folder:
        notebook = load_notebook_node(str(converted(chapter, Path(folder))))
    return parameterize_notebook(notebook, params)


def smoke_parameters() -> dict:
    import yaml
    return yaml.safe_load(SMOKE_FILE.read_text()) or {}


def write_smoke(out: Path) -> list[Path]:
    import nbformat
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, params in smoke_parameters().items():
        target = out / f"{Path(name).stem}.ipynb"
        nbformat.write(parameterized(ROOT / "book" / name, params or {}), target)
        written.append(target)
    return written


def run(chapter: Path, params: dict, out: Path) -> Path:
    """Execute ``chapter`` with ``params``; the executed notebook is ``out/<chapter>.ipynb``."""
    import jupytext
    import papermill

    check_parameters(jupytext.read(chapter), params, chapter)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{chapter.stem}.ipynb"
    with tempfile.TemporaryDirectory() as folder:
        partial = Path(folder) / target.name
        try:
            papermill.execute_notebook(str(converted(chapter, Path(folder))), str(partial), parameters=params,
                                       cwd=str(ROOT / "book"), progress_bar=True)
        except Exception:
            if partial.exists():  # keep what ran, for debugging, without replacing a good result
                failed = out / f"{chapter.stem}.failed.ipynb"
                shutil.move(partial, failed)
                print(f"{chapter.name} failed; the partly executed notebook is {failed}", file=sys.stderr)
            raise
        shutil.move(partial, target)  # only a complete run replaces the previous result
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapter", nargs="?", type=Path, help="book/CHAPTER.md")
    parser.add_argument("-p", "--param", action="append", type=parse_assignment, default=[],
                        metavar="NAME=VALUE", help="override a parameter (repeatable)")
    parser.add_argument("--out", type=Path, default=ROOT / "runs", help="output folder")
    parser.add_argument("--smoke", action="store_true", help="write every chapter at smoke parameters, unexecuted")
    args = parser.parse_args(argv)
    if args.smoke:
        for path in write_smoke(args.out):
            print(f"smoke notebook: {path}")
        return 0
    if args.chapter is None:
        parser.error("name a chapter (book/CHAPTER.md) or pass --smoke")
    print(f"executed: {run(args.chapter.resolve(), dict(args.param), args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
