"""Typed errors: a caller can catch what went wrong by class, and the message speaks Python."""
import ast
import re
from pathlib import Path

import numpy as np
import pytest

import ppmlib
from ppmlib import errors
from ppmlib.inference.exact import ConjugateSampler

PACKAGE = Path(ppmlib.__file__).parent


def test_each_error_is_still_the_builtin_callers_caught_before():
    assert issubclass(errors.BadArgument, ValueError) and issubclass(errors.DataRefused, ValueError)
    assert issubclass(errors.BudgetExceeded, ValueError)
    assert issubclass(errors.CalibrationFailed, RuntimeError) and issubclass(errors.BackendUnavailable, RuntimeError)
    assert issubclass(errors.FitRejected, RuntimeError)
    assert all(issubclass(getattr(errors, name), errors.PPMError) for name in errors.__all__)


def test_bad_data_is_refused_and_a_bad_setting_is_a_bad_argument():
    exact = ConjugateSampler()
    with pytest.raises(errors.DataRefused, match="record 2 is negative"):
        ppmlib.synthesizer("poisson", np.array([3, 4, -1, 5]), sampler=exact, seed=1)
    with pytest.raises(errors.DataRefused, match="non-finite"):
        ppmlib.synthesizer("poisson", np.array([3.0, np.nan]), sampler=exact, seed=1)
    with pytest.raises(errors.BadArgument, match=r"^q must lie in"):
        ppmlib.synthesizer("poisson", np.array([3, 4, 5]), q=1.5, sampler=exact, seed=1)
    with pytest.raises(errors.BadArgument, match="unknown scheme 'nope'"):
        ppmlib.synthesizer("poisson", np.array([3, 4, 5]), "nope", sampler=exact, seed=1)


def test_a_failed_calibration_keeps_its_history():
    failed = errors.CalibrationFailed("did not reach 5", history=[(0.5, 2.0), (1.0, 4.0)])
    assert failed.history == [(0.5, 2.0), (1.0, 4.0)] and str(failed) == "did not reach 5"


def _raised_messages(path: Path):
    """The string constants of every ``raise X(...)`` in a module."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    yield node.lineno, part.value


def test_the_library_raises_no_plain_value_error_and_speaks_no_flags():
    # only the command's main translates into flags (checked below); the book's tooling has its own command line
    core = [p for p in PACKAGE.rglob("*.py") if not {"book", "_stan", "_data"} & set(p.parts)
            and p.relative_to(PACKAGE).as_posix() not in {"release/command.py", "release/staging.py"}]
    plain = [f"{p.relative_to(PACKAGE)}:{n.lineno}" for p in core for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call) and getattr(n.exc.func, "id", "") == "ValueError"]
    assert plain == [], "raise a class of ppmlib.errors instead"
    flags = [f"{p.relative_to(PACKAGE)}:{line}: {text}" for p in core for line, text in _raised_messages(p)
             if re.search(r"(^|\s)--[a-z]", text)]
    assert flags == []


def test_the_python_path_of_the_command_speaks_python_and_only_main_speaks_flags(tmp_path, capsys):
    # every raise in command.py and staging.py is reachable from ppmlib.release.command.synthesize;
    # main translates name=value into the flags after the fact
    from ppmlib.release import command
    from ppmlib.release.data import read
    from ppmlib.release.plan import privacy_plan
    flags = [f"{name}:{line}: {text}" for name in ("release/command.py", "release/staging.py")
             for line, text in _raised_messages(PACKAGE / name) if re.search(r"(^|\s|\()--[a-z]", text)]
    assert flags == []
    frame = __import__("pandas").DataFrame({"salary": np.linspace(20_000, 90_000, 40)})
    with pytest.raises(errors.BadArgument, match="needs the policy radius: radius=R .* relative=True"):
        privacy_plan(weighting="cw", guarantee="local")
    with pytest.raises(errors.BadArgument) as err:
        privacy_plan(weighting="cw", radius=0.3, guarantee="strict", strict_scheme="cm")
    assert "weighting= and radius= choose" in str(err.value) and "guarantee='local'" in str(err.value)
    assert "--" not in str(err.value)
    assert command._in_flags(str(err.value)) == ("--weighting and --radius choose the local mechanism's weights; "
                                                 "--guarantee strict releases CM (give --guarantee local to use them)")
    assert command._in_flags("pass drop_missing=True; total_epsilon= (the release)") == \
        "pass --drop-missing; --total-epsilon (the release)"
    assert command._in_flags("report='/r.html' is inside out=: the report; out= is empty ('')") == \
        "--report '/r.html' is inside --out: the report; --out is empty ('')"
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    assert command.main([str(data), "--column", "salary", "--weighting", "cw", "--radius", "0.3",
                         "--out", str(tmp_path / "out")]) == 2
    assert "--weighting and --radius choose" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("not a release")
    with pytest.raises(errors.PPMError, match=r"out='.*full' exists and is not empty; .* pass overwrite=True"):
        command.synthesize(read(frame, "salary"), privacy_plan(), out=tmp_path / "full")
    assert command.main([str(data), "--column", "salary", "--out", str(tmp_path / "full")]) == 2
    assert re.search(r"--out '.*full' exists and is not empty; .* pass --overwrite \(", capsys.readouterr().err)
