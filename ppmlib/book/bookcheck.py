"""Check the built HTML book as a reader meets it.

``python -m ppmlib.book.bookcheck html _build/html`` reads every page and reports: an internal link or
anchor that does not resolve, an image that is missing or empty, a page without a title, and an
output cell that shows a Python traceback, a warning or anything else written to stderr.

``python -m ppmlib.book.bookcheck browser _build/html`` renders every page in headless Chromium
(Debian's ``chromium`` package), saves a screenshot per page under ``_build/screenshots/`` and
reports a page that does not render, a JavaScript error, or math left unrendered by MathJax.
Both exit 1 when they find a problem and print one line per problem.
"""
from __future__ import annotations

__all__ = ["pages", "link_problems", "image_problems", "title_problems", "output_problems", "html_problems",
           "find_browser", "rendered_problems", "browser_problems", "main"]

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Sphinx's generated pages carry no chapter content
SKIP_PAGES = {"genindex.html", "search.html", "py-modindex.html"}
WARNING_TEXT = re.compile(r"\b[A-Z]\w*Warning\b|Traceback \(most recent call last\)")


def pages(html_dir: Path) -> list[Path]:
    """The book's content pages (not Sphinx's index/search pages, not static assets)."""
    html_dir = Path(html_dir)
    return sorted(p for p in html_dir.rglob("*.html")
                  if p.name not in SKIP_PAGES and "_static" not in p.parts and "_sources" not in p.parts)


def _soup(path: Path):
    from bs4 import BeautifulSoup
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _ids(soup) -> set[str]:
    return {el.get("id") for el in soup.find_all(id=True)} | {el.get("name") for el in soup.find_all("a", attrs={"name": True})}


def _local_target(page: Path, ref: str, html_dir: Path):
    """(file, fragment) for a link inside the book, or None for an external or special link."""
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc or ref.startswith(("mailto:", "javascript:", "data:")):
        return None
    file = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
    if file.is_dir():
        file = file / "index.html"
    return file, unquote(parts.fragment)


def link_problems(page: Path, soup, html_dir: Path, id_cache: dict) -> list[str]:
    problems = []
    for a in soup.find_all("a", href=True):
        target = _local_target(page, a["href"], html_dir)
        if target is None:
            continue
        file, fragment = target
        if not file.exists():
            problems.append(f"{page.name}: link to a missing file {a['href']!r}")
            continue
        if fragment and file.suffix == ".html":
            if file not in id_cache:
                id_cache[file] = _ids(_soup(file)) if file != page else _ids(soup)
            if fragment not in id_cache[file]:
                problems.append(f"{page.name}: link to a missing anchor {a['href']!r}")
    return problems


def image_problems(page: Path, soup) -> list[str]:
    problems = []
    for img in soup.find_all("img"):
        src = img.get("src", "")
        if not src:
            problems.append(f"{page.name}: an image without a source")
        elif src.startswith("data:"):
            if len(src.split(",", 1)[-1]) < 100:
                problems.append(f"{page.name}: an embedded image with (almost) no data")
        elif not urlsplit(src).scheme:
            file = (page.parent / unquote(urlsplit(src).path)).resolve()
            if not file.is_file() or file.stat().st_size == 0:
                problems.append(f"{page.name}: image {src!r} is missing or empty")
    return problems


def title_problems(page: Path, soup) -> list[str]:
    title = soup.title.get_text(strip=True) if soup.title else ""
    heading = soup.find("h1")
    if not title or heading is None or not heading.get_text(strip=True).rstrip("#"):
        return [f"{page.name}: no title (an empty <title> or no <h1>)"]
    return []


def output_problems(page: Path, soup) -> list[str]:
    problems = []
    for out in soup.select("div.cell_output"):
        if out.select(".stderr, .traceback"):
            text = " ".join(out.get_text(" ", strip=True).split())[:120]
            problems.append(f"{page.name}: an output cell writes to stderr or shows an error: {text!r}")
        elif WARNING_TEXT.search(out.get_text(" ")):
            problems.append(f"{page.name}: an output cell shows a warning or traceback: "
                            f"{WARNING_TEXT.search(out.get_text(' ')).group(0)!r}")
    return problems


def html_problems(html_dir) -> list[str]:
    """Every problem found in the built book under ``html_dir`` (the folder holding index.html).

    One line per problem, from :func:`link_problems`, :func:`image_problems`, :func:`title_problems`
    and :func:`output_problems` on every page; an empty list is a clean book.

    See Also
    --------
    browser_problems : the same book rendered in a browser.

    Examples
    --------
    >>> html_problems("_build/html")          # doctest: +SKIP
    []
    """
    html_dir = Path(html_dir).resolve()
    if not (html_dir / "index.html").exists():
        raise FileNotFoundError(f"{html_dir} has no index.html: build the book first")
    problems, id_cache = [], {}
    for page in pages(html_dir):
        soup = _soup(page)
        redirect = soup.find("meta", attrs={"http-equiv": "Refresh"})
        if redirect is not None:  # e.g. the top-level index.html: only its target must exist
            ref = redirect.get("content", "").split("url=", 1)[-1]
            if not (page.parent / ref).exists():
                problems.append(f"{page.name}: redirects to a missing page {ref!r}")
            continue
        problems += title_problems(page, soup) + link_problems(page, soup, html_dir, id_cache)
        problems += image_problems(page, soup) + output_problems(page, soup)
    return problems


# --- headless Chromium ------------------------------------------------------------------------

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
RAW_MATH = re.compile(r"\\\(|\\\[|\$\$")


def find_browser() -> str:
    for name in BROWSERS:
        if shutil.which(name):
            return shutil.which(name)
    raise FileNotFoundError("no headless Chromium found: install Debian's package with "
                            "`apt-get install chromium` (nothing is installed by this check)")


def _chromium(browser: str, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000", "--window-size=1280,1600"]
    return subprocess.run(base + list(args), capture_output=True, text=True, timeout=timeout)


def rendered_problems(page: Path, dom: str, log: str) -> list[str]:
    """What a rendered page (its DOM after scripts ran, and the browser's log) shows wrong."""
    from bs4 import BeautifulSoup
    problems = []
    soup = BeautifulSoup(dom, "html.parser")
    if soup.find("h1") is None:
        problems.append(f"{page.name}: did not render (no heading in the rendered page)")
    for line in log.splitlines():
        if "CONSOLE" in line and ("Uncaught" in line or "Error" in line):
            problems.append(f"{page.name}: JavaScript error: {line.strip()[:200]}")
    raw = [el for el in soup.select(".math") if not el.find("mjx-container") and RAW_MATH.search(el.get_text())]
    if raw:
        problems.append(f"{page.name}: {len(raw)} math element(s) left unrendered, "
                        f"e.g. {raw[0].get_text()[:60]!r}")
    return problems


def browser_problems(html_dir, screenshots) -> list[str]:
    """Render every page in headless Chromium; one screenshot per page into ``screenshots``.

    Returns one line per problem (:func:`rendered_problems` of every page); an empty list is a
    clean book.

    See Also
    --------
    html_problems : the checks that need no browser.
    """
    browser = find_browser()
    html_dir, screenshots = Path(html_dir).resolve(), Path(screenshots)
    screenshots.mkdir(parents=True, exist_ok=True)
    problems = []
    for page in pages(html_dir):
        if _soup(page).find("meta", attrs={"http-equiv": "Refresh"}) is not None:
            continue
        url = page.as_uri()
        shot = screenshots / (page.relative_to(html_dir).as_posix().replace("/", "__")[:-5] + ".png")
        taken = _chromium(browser, f"--screenshot={shot}", url)
        if taken.returncode != 0 or not shot.is_file() or shot.stat().st_size == 0:
            problems.append(f"{page.name}: no screenshot (chromium exit {taken.returncode})")
        dumped = _chromium(browser, "--dump-dom", url)
        problems += rendered_problems(page, dumped.stdout, dumped.stderr + taken.stderr)
    return problems


def main(argv=None) -> int:
    """The command line (module docstring); returns 1 when a problem is found, else 0."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=("html", "browser"))
    parser.add_argument("html_dir", type=Path, nargs="?", default=Path("_build/html"))
    parser.add_argument("--screenshots", type=Path, default=Path("_build/screenshots"))
    args = parser.parse_args(argv)
    try:
        if args.check == "html":
            problems = html_problems(args.html_dir)
        else:
            problems = html_problems(args.html_dir) + browser_problems(args.html_dir, args.screenshots)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    n = len(pages(args.html_dir))
    print(f"{n} pages checked, {len(problems)} problem(s)" + (f"; screenshots in {args.screenshots}"
                                                              if args.check == "browser" else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
