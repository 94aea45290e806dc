"""The built book as a reader sees it: ppmlib.book.bookcheck on handmade pages (each problem it must
catch) and on the real book, built with execution off (fast; the chapters run in the smoke tests)."""
import subprocess
import sys
from pathlib import Path

import pytest

from ppmlib.book import bookcheck

ROOT = Path(__file__).resolve().parent.parent
PNG = "iVBORw0KGgo" + "A" * 200

PAGE = """<html><head><title>{title}</title></head><body><h1>{h1}</h1>
<p id="here">text</p>{body}</body></html>"""


def write_site(folder: Path, body: str = "", title: str = "A page", h1: str = "A page") -> Path:
    (folder / "book").mkdir(parents=True)
    (folder / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/a.html" />')
    (folder / "book" / "a.html").write_text(PAGE.format(title=title, h1=h1, body=body))
    (folder / "book" / "b.html").write_text(PAGE.format(title="B", h1="B", body='<a href="a.html#here">ok</a>'))
    (folder / "book" / "fig.png").write_bytes(b"\x89PNG" + b"0" * 100)
    return folder


def test_a_clean_site_passes(tmp_path):
    body = f'<a href="b.html">b</a><a href="#here">self</a><img src="fig.png"><img src="data:image/png;base64,{PNG}">'
    assert bookcheck.html_problems(write_site(tmp_path, body)) == []


@pytest.mark.parametrize("body, problem", [
    ('<a href="missing.html">x</a>', "link to a missing file 'missing.html'"),
    ('<a href="b.html#nowhere">x</a>', "link to a missing anchor 'b.html#nowhere'"),
    ('<a href="#nowhere">x</a>', "link to a missing anchor '#nowhere'"),
    ('<img src="gone.png">', "image 'gone.png' is missing or empty"),
    ('<img src="data:image/png;base64,">', "an embedded image with (almost) no data"),
    ('<div class="cell_output"><div class="output stderr"><pre>oops</pre></div></div>', "writes to stderr"),
    ('<div class="cell_output"><pre>Traceback (most recent call last):</pre></div>', "shows a warning or traceback"),
    ('<div class="cell_output"><pre>file.py:3: RuntimeWarning: overflow</pre></div>', "'RuntimeWarning'"),
])
def test_each_problem_is_caught(tmp_path, body, problem):
    problems = bookcheck.html_problems(write_site(tmp_path, body))
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_page_without_a_title_is_caught(tmp_path):
    assert bookcheck.html_problems(write_site(tmp_path, title="", h1="x")) == ["a.html: no title (an empty <title> or no <h1>)"]
    (tmp_path / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/none.html" />')
    assert "redirects to a missing page" in bookcheck.html_problems(tmp_path)[-1]


def test_rendered_page_problems():
    ok = '<h1>T</h1><span class="math"><mjx-container>x</mjx-container></span>'
    assert bookcheck.rendered_problems(Path("p.html"), ok, "") == []
    raw = '<h1>T</h1><span class="math notranslate">\\(x^2\\)</span>'
    assert "1 math element(s) left unrendered" in bookcheck.rendered_problems(Path("p.html"), raw, "")[0]
    log = '[1:1:INFO:CONSOLE:62] "Uncaught SyntaxError: Identifier \'A\' has already been declared"'
    assert "JavaScript error" in bookcheck.rendered_problems(Path("p.html"), ok, log)[0]
    assert "did not render" in bookcheck.rendered_problems(Path("p.html"), "<html></html>", "")[0]


def test_the_built_book_has_no_broken_link_image_or_title(tmp_path):
    from conftest import fast_book_config
    config = fast_book_config(tmp_path)
    jb = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jb), "build", str(ROOT), "--config", str(config),
                             "--path-output", str(tmp_path), "-W", "-n", "--keep-going"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    html = tmp_path / "_build" / "html"
    assert bookcheck.html_problems(html) == []
    # the page-script fix (ppmlib.book.sphinx_ext): sphinx-thebe's const is declared once per page
    landing = (html / "book" / "intro.html").read_text()
    assert landing.count("const THEBE_JS_URL") == 1
    # the landing page states what the book was built with
    import numpy
    import scipy
    assert f"<td><p>{numpy.__version__}</p></td>" in landing and f"<td><p>{scipy.__version__}</p></td>" in landing
    assert "<td><p>Stan backend</p></td>" in landing
