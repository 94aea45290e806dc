"""Rerun a chapter with your own parameters: ``python -m ppmlib.book.rerun book/CHAPTER.md -p n=500``.

Chapters are MyST-markdown notebooks; papermill reads ``.ipynb``, so the chapter is converted
with jupytext, its ``parameters`` cell overridden by papermill, and executed. The executed
notebook lands in ``--out`` (default ``runs/``); ``--html`` also writes a standalone page of it.
``--list`` prints the chapter's parameters with their defaults and comments. Values are checked
against the defaults' types before anything runs. ``--smoke`` instead writes every chapter with the
small parameters of ``book/smoke.yml``, unexecuted, for ``pytest --nbval-lax`` to run.
"""
from __future__ import annotations

__all__ = ["parse_assignment", "Parameter", "parameters", "parameter_names", "check_parameters", "describe",
           "converted", "parameterized", "smoke_parameters", "write_smoke", "RerunFailed", "write_html", "run", "main"]

import argparse
import ast
import io
import shutil
import sys
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from ppmlib import _checks
from . import ROOT

SMOKE_FILE = ROOT / "book" / "smoke.yml"
#: Seconds one cell may run before the rerun fails (a cell that hangs, e.g. waiting on a network).
CELL_TIMEOUT = 3600


def parse_assignment(text: str) -> tuple[str, object]:
    """``name=value`` with ``value`` read as a Python literal (``n=500``, ``mus=[100,100]``)
    and kept as a string when it is not one (``model=negbin``). A bracketed list whose items are
    not literals is a list of strings: ``predictors=[grade,age]``, which is what a shell leaves of
    ``predictors=['grade','age']`` in ``make run PARAMS="..."``.

    Examples
    --------
    >>> parse_assignment("mus=[100, 100]"), parse_assignment("model=negbin")
    (('mus', [100, 100]), ('model', 'negbin'))
    >>> parse_assignment("predictors=[grade, age]"), parse_assignment("squared=[]")
    (('predictors', ['grade', 'age']), ('squared', []))
    """
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"parameter {text!r} must look like name=value")
    name, raw = text.split("=", 1)
    if _nesting(raw) > MAX_NESTING:
        raise argparse.ArgumentTypeError(f"parameter {name.strip()!r} is too deeply nested to read (more than "
                                         f"{MAX_NESTING} levels)")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = _unquoted_list(raw.strip())
    except (RecursionError, MemoryError):
        raise argparse.ArgumentTypeError(f"parameter {name.strip()!r} is too deeply nested to read") from None
    return name.strip(), value


#: The deepest brackets (or signs in a row) a parameter's value may have
MAX_NESTING = 50


def _nesting(raw: str) -> int:
    """The deepest bracket nesting of ``raw``, or its longest run of signs (-----1 nests as deep)."""
    depth = deepest = signs = longest = 0
    for char in raw:
        depth += char in "([{"
        depth -= char in ")]}"
        deepest = max(deepest, depth)
        signs = signs + 1 if char in "+-~" else 0
        longest = max(longest, signs)
    return max(deepest, longest)


def _unquoted_list(raw: str):
    """``[a, b]`` -> ["a", "b"] (each item a literal where it is one); anything else stays the string."""
    if not (raw.startswith("[") and raw.endswith("]")):
        return raw
    items = [item.strip() for item in raw[1:-1].split(",") if item.strip()]
    return [parse_assignment(f"_={item}")[1] for item in items]


@dataclass(frozen=True)
class Parameter:
    """One name of a chapter's ``parameters`` cell: its default value and its comment."""
    name: str
    default: object
    comment: str


def _parameters_cell(notebook):
    for cell in notebook.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    raise ValueError("the chapter has no cell tagged 'parameters'")


def parameters(notebook) -> list[Parameter]:
    """Every name assigned in the chapter's ``parameters`` cell, in order, with its default
    (a Python literal; otherwise the source text) and the comment on its line."""
    source = _parameters_cell(notebook).source
    comments = {tok.start[0]: tok.string.lstrip("#").strip()
                for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT}
    found = []
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        try:
            default = ast.literal_eval(node.value)
        except ValueError:
            default = ast.get_source_segment(source, node.value)
        comment = comments.get(node.lineno, "")
        found += [Parameter(t.id, default, comment) for t in targets if isinstance(t, ast.Name)]
    return found


def parameter_names(notebook) -> set[str]:
    """Names assigned in the chapter's cell tagged ``parameters``."""
    return {p.name for p in parameters(notebook)}


def _type_name(value) -> str:
    return type(value).__name__


def _fits(value, default) -> bool:
    """Whether ``value`` may replace ``default``: same kind, an int where a float is expected,
    lists stay lists (their items checked against the default's items when those share a kind)."""
    if default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return False
        kinds = {_type_name(d) for d in default}
        return len(kinds) != 1 or all(_fits(v, default[0]) for v in value)
    return isinstance(value, type(default))


def check_parameters(notebook, params: dict, chapter: Path) -> None:
    """Reject unknown names and values whose type does not match the default's, naming each."""
    known = {p.name: p for p in parameters(notebook)}
    unknown = set(params) - set(known)
    if unknown:
        raise ValueError(f"{chapter.name} has no parameter(s) {sorted(unknown)}; it takes {sorted(known)}")
    for name, value in params.items():
        default = known[name].default
        if not _fits(value, default):
            expected = "a number" if isinstance(default, float) else _type_name(default)
            if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
                expected = f"a list of {_type_name(default[0])}"
            raise TypeError(f"parameter {name!r} of {chapter.name} must be {expected} (default {default!r}), "
                            f"got {value!r} ({_type_name(value)})")


def describe(chapter: Path) -> str:
    """The chapter's parameters as a table: name, default, comment."""
    import jupytext
    rows = [(p.name, repr(p.default), p.comment) for p in parameters(jupytext.read(chapter))]
    width = [max(len(r[i]) for r in rows + [("name", "default", "")]) for i in (0, 1)]
    lines = [f"{'name':<{width[0]}}  {'default':<{width[1]}}  meaning", "-" * (width[0] + width[1] + 12)]
    lines += [f"{name:<{width[0]}}  {default:<{width[1]}}  {comment}" for name, default, comment in rows]
    return "\n".join(lines)


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


class RerunFailed(RuntimeError):
    """A cell of the chapter raised; the message names the cell and the error."""


def _failure_message(chapter: Path, err) -> str:
    """The failing cell's number and error as papermill reports it (with the traceback)."""
    cell = getattr(err, "exec_count", None)
    head = f"{chapter.name} failed" + (f" in cell [{cell}]" if cell is not None else "")
    if hasattr(err, "ename"):
        trace = "\n".join(getattr(err, "traceback", []) or [])
        return f"{head}: {err.ename}: {err.evalue}\n{_strip_ansi(trace)}"
    return f"{head}: {type(err).__name__}: {err}"


def _strip_ansi(text: str) -> str:
    import re
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def write_html(notebook_path: Path, target: Path) -> Path:
    """A standalone HTML page of an executed notebook, figures embedded, written atomically."""
    import nbconvert
    import nbformat
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.read(notebook_path, as_version=4))
    from ppmlib._files import write_text_atomically
    return write_text_atomically(target, body)


def _writable_folder(out: Path) -> Path:
    """``out``, created if needed, once a file could be written in it: a bad ``--out`` is refused
    before an hour of computing rather than after."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise ValueError(f"the output folder {str(out)!r} cannot be written: {err.strerror or err}") from None
    return out


def run(chapter: Path, params: dict, out: Path, *, html: bool = False, cell_timeout: int = CELL_TIMEOUT,
        cwd: Path | None = None) -> Path:
    """Execute ``chapter`` with ``params``; the executed notebook is ``out/<chapter>.ipynb``.

    Parameters are checked (names and types) before anything runs or is written. A failed run
    keeps the partly executed notebook as ``out/<chapter>.failed.ipynb`` and raises
    :class:`RerunFailed` naming the failing cell; a previous good result is never replaced by a
    partial one. ``html=True`` also writes ``out/<chapter>.html``.

    Parameters
    ----------
    chapter : pathlib.Path
        A MyST-markdown chapter with a cell tagged ``parameters``.
    params : dict
        Names of that cell and their new values (of the defaults' types).
    out : pathlib.Path
        Folder of the executed notebook.
    html : bool
        Also write a standalone HTML page of it. A page of an earlier run is removed when the new
        notebook lands, so the folder never holds a notebook beside another run's page.
    cell_timeout : int
        Seconds a cell may run; a cell that takes longer fails the run like an error.
    cwd : pathlib.Path, optional
        The folder the notebook runs in (default: the book's ``book/``, where chapters find their files).

    Returns
    -------
    pathlib.Path
        The executed notebook.

    Raises
    ------
    ValueError, TypeError
        A bad parameter, or an ``out`` that cannot be written (nothing ran).
    RerunFailed
        A cell failed or timed out.

    See Also
    --------
    describe : the chapter's parameters, defaults and comments.
    main : the same from the command line (``python -m ppmlib.book.rerun``).

    Examples
    --------
    >>> run(Path("book/vector_weighted.md"), {"n": 500}, Path("runs"))     # doctest: +SKIP
    PosixPath('runs/vector_weighted.ipynb')
    """
    import jupytext
    import papermill

    check_parameters(jupytext.read(chapter), params, chapter)
    cell_timeout = _checks.integer(cell_timeout, "cell_timeout", low=1)
    _writable_folder(out)
    target = out / f"{chapter.stem}.ipynb"
    page = out / f"{chapter.stem}.html"
    with tempfile.TemporaryDirectory() as folder:
        partial = Path(folder) / target.name
        try:
            papermill.execute_notebook(str(converted(chapter, Path(folder))), str(partial), parameters=params,
                                       execution_timeout=cell_timeout,
                                       cwd=str(cwd or ROOT / "book"), progress_bar=True)
        except Exception as err:
            message = _failure_message(chapter, err)
            if type(err).__name__ == "CellTimeoutError":
                message += f"\na cell ran longer than cell_timeout = {cell_timeout} s (--cell-timeout raises it)"
            if partial.exists():  # keep what ran, for debugging, without replacing a good result
                failed = out / f"{chapter.stem}.failed.ipynb"
                shutil.move(partial, failed)
                message += f"\nthe partly executed notebook is {failed}"
            raise RerunFailed(message) from err
        page.unlink(missing_ok=True)  # an earlier run's page must not sit beside this run's notebook
        shutil.move(partial, target)  # only a complete run replaces the previous result
    if html:
        write_html(target, page)
    return target


def _interrupt_on_termination() -> None:
    """Turn SIGTERM and SIGHUP (``kill``, ``timeout``, a closed terminal) into KeyboardInterrupt, as
    Ctrl-C is: the executing kernel is then shut down and the temporary folder removed, instead of
    a kernel left running with nobody to stop it. (SIGKILL cannot be caught.)"""
    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"rerun stopped by signal {signum}")

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), interrupt)


def _file_path(value):
    """A string naming an existing file (relative to where the command runs) becomes its absolute
    path: the chapter runs in book/, where the relative path would point elsewhere."""
    try:
        if isinstance(value, str) and value and Path(value).is_file():
            return str(Path(value).resolve())
    except (OSError, ValueError):   # a name too long for the system, or with a NUL: not a file
        pass
    return value


def main(argv=None) -> int:
    """The command line (module docstring); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapter", nargs="?", type=Path, help="book/CHAPTER.md")
    parser.add_argument("-p", "--param", action="append", type=parse_assignment, default=[],
                        metavar="NAME=VALUE", help="override a parameter (repeatable)")
    parser.add_argument("--out", type=Path, default=ROOT / "runs", help="output folder")
    parser.add_argument("--list", action="store_true", help="print the chapter's parameters, defaults and comments")
    parser.add_argument("--html", action="store_true", help="also write a standalone HTML page of the executed chapter")
    parser.add_argument("--smoke", action="store_true", help="write every chapter at smoke parameters, unexecuted")
    parser.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT, metavar="SECONDS",
                        help=f"fail the run when one cell takes longer (default {CELL_TIMEOUT})")
    args = parser.parse_args(argv)
    if args.smoke:
        for path in write_smoke(args.out):
            print(f"smoke notebook: {path}")
        return 0
    if args.chapter is None:
        parser.error("name a chapter (book/CHAPTER.md) or pass --smoke")
    if not args.chapter.is_file():
        parser.error(f"no chapter file {args.chapter}")
    if args.list:
        print(describe(args.chapter))
        return 0
    _interrupt_on_termination()
    try:
        params = {name: _file_path(value) for name, value in args.param}
        target = run(args.chapter.resolve(), params, args.out, html=args.html, cell_timeout=args.cell_timeout)
    except (ValueError, TypeError) as err:  # bad parameters or --out: nothing ran, nothing was written
        print(f"error: {err}", file=sys.stderr)
        return 2
    except RerunFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:  # Ctrl-C or a signal: the kernel and temporary files are gone
        print(f"error: {err or 'interrupted'}; the kernel was shut down and no result was written", file=sys.stderr)
        return 130
    print(f"executed: {target}" + (f" and {target.with_suffix('.html')}" if args.html else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
