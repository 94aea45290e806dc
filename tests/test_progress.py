"""Progress bars stay quiet when asked (the executed-chapter test in test_backends.py checks that
tqdm's ipywidgets warning never reaches a cell)."""
from ppmlib.progress import progress_bar


def test_disabled_bar_prints_nothing_and_still_iterates(capsys):
    assert list(progress_bar(range(3), desc="x", enabled=False)) == [0, 1, 2]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""

