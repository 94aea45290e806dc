"""Paragraphs a reader can follow: every chapter in _toc.yml is measured, paragraph by paragraph.

A paragraph is a markdown block between blank lines outside front matter, code cells, tables,
math blocks, headings and directives (a list item counts as its own paragraph; the prose inside
exercise, solution and admonition directives is measured like the rest). A paragraph fails when it
has more than MAX_WORDS words or when its sentences average more than MAX_SENTENCE words.

Run as a script to print the measures per chapter:
``python tests/test_prose.py [book/chapter.md ...]``.
"""
import re
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_WORDS = 90        # words in one paragraph
MAX_SENTENCE = 30     # mean words per sentence within one paragraph

# Chapters measured by name but not held to the thresholds (none today).
EXEMPT: dict[str, str] = {}

PROSE_DIRECTIVES = {"exercise", "solution", "note", "tip", "warning", "important", "admonition",
                    "dropdown", "seealso", "attention", "caution", "hint"}
FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\{([\w-]+)\})?")
LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "cf.", "etc.", "Fig.", "Eq.", "approx.", "resp.")


def chapters() -> list[Path]:
    """The chapter files named in _toc.yml, in order."""
    names = re.findall(r"file:\s*(\S+)", (ROOT / "_toc.yml").read_text())
    names.insert(0, re.search(r"root:\s*(\S+)", (ROOT / "_toc.yml").read_text()).group(1))
    return [ROOT / f"{name}.md" for name in names if (ROOT / f"{name}.md").exists()]


def _prose_lines(lines: list[str]) -> list[str]:
    """The lines of prose: fenced blocks dropped except the body of prose directives, math blocks,
    tables, headings, comments, labels and MyST option lines blanked."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line.strip())
        if fence:
            marker, name = fence.group(1), fence.group(3)
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(marker):
                j += 1
            body = lines[i + 1:j]
            if name in PROSE_DIRECTIVES:
                out.append("")
                out.extend(_prose_lines(_drop_options(body)))
            out.append("")
            i = j + 1
            continue
        if line.strip().startswith("$$"):
            j = i if line.strip().count("$$") >= 2 and line.strip() != "$$" else i + 1
            while j < len(lines) and "$$" not in lines[j]:
                j += 1
            out.append("")
            i = (j if j > i else i) + 1
            continue
        stripped = line.strip()
        if (stripped.startswith(("|", "#", "%", "+++", "<")) or re.match(r"^\(.+\)=$", stripped)):
            out.append("")
        else:
            out.append(line)
        i += 1
    return out


def _drop_options(body: list[str]) -> list[str]:
    """A directive's body without its `:key: value` lines and its `---` yaml header."""
    if body and body[0].strip() == "---":
        end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), 0)
        body = body[end + 1:]
    return [line for line in body if not re.match(r"^\s*:[\w-]+:", line)]


def paragraphs(text: str) -> list[str]:
    """The chapter's prose paragraphs (list items split into their own paragraphs)."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    blocks, current = [], []
    for line in _prose_lines(text.splitlines()) + [""]:
        if not line.strip() or (LIST_ITEM.match(line) and current):
            if current:
                blocks.append(" ".join(current))
            current = [line.strip()] if line.strip() else []
        else:
            current.append(line.strip())
    return [b for b in blocks if words(b)]


def _plain(block: str) -> str:
    block = re.sub(r"\$[^$]+\$", "X", block)                 # inline math is one word
    block = re.sub(r"\{[\w:-]+\}`[^`]*`", "X", block)        # roles: {cite}`...`, {doc}`...`
    block = re.sub(r"`[^`]*`", "X", block)                   # inline code
    block = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", block)   # links keep their text
    return LIST_ITEM.sub("", block)


def words(block: str) -> int:
    """Words in a block, inline math, code and roles counted as one word each."""
    return len(re.findall(r"[\w$X][^\s]*", _plain(block)))


def sentences(block: str) -> int:
    """Sentences in a block: a full stop, ? or ! followed by a space and a capital, a digit or a
    bracket (common abbreviations are not sentence ends)."""
    plain = _plain(block)
    for abbr in ABBREVIATIONS:
        plain = plain.replace(abbr, abbr.replace(".", ""))
    ends = re.findall(r"[.!?][)*\"']*\s+(?=[A-Z0-9(*\"'X])", plain)
    return len(ends) + 1


def measure(path: Path) -> dict:
    """Mean and max words per paragraph and per sentence, and the paragraphs over the limits."""
    paras = paragraphs(path.read_text())
    n_words = [words(p) for p in paras]
    per_sentence = [words(p) / sentences(p) for p in paras]
    all_sentences = sum(sentences(p) for p in paras)
    too_long = [(w, round(s, 1), p[:70]) for p, w, s in zip(paras, n_words, per_sentence)
                if w > MAX_WORDS or s > MAX_SENTENCE]
    return {"paragraphs": len(paras),
            "mean_words": statistics.mean(n_words) if paras else 0,
            "max_words": max(n_words, default=0),
            "mean_sentence": sum(n_words) / all_sentences if paras else 0,
            "max_sentence": max(per_sentence, default=0),
            "failing": too_long}


def test_the_measures_count_what_a_reader_sees():
    text = ("---\nx: 1\n---\n# Title\n\nOne short sentence. And another one here.\n\n"
            "```{code-cell} ipython3\nthis is code with many words in it\n```\n\n"
            "| a | b |\n|---|---|\n\n$$\nx = 1\n$$\n\n"
            "- first item, e.g. a list\n- second item with $a + b$ and {cite}`key`\n\n"
            "```{exercise}\n:label: ex\n\nDo this now.\n```\n")
    paras = paragraphs(text)
    assert paras == ["One short sentence. And another one here.", "- first item, e.g. a list",
                     "- second item with $a + b$ and {cite}`key`", "Do this now."]
    assert [words(p) for p in paras] == [7, 5, 6, 3]
    assert [sentences(p) for p in paras] == [2, 1, 1, 1]


@pytest.mark.parametrize("path", chapters(), ids=lambda p: p.stem)
def test_paragraphs_are_short(path):
    if path.stem in EXEMPT:
        pytest.skip(EXEMPT[path.stem])
    failing = measure(path)["failing"]
    assert not failing, (f"{path.name}: {len(failing)} paragraph(s) over {MAX_WORDS} words or "
                         f"{MAX_SENTENCE} words a sentence (words, words/sentence, start): {failing}")


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or chapters()
    print(f"{'chapter':24} {'paras':>5} {'mean w/para':>11} {'max w/para':>10} "
          f"{'mean w/sent':>11} {'max w/sent':>10} {'failing':>7}")
    for path in paths:
        r = measure(path)
        print(f"{path.stem:24} {r['paragraphs']:5d} {r['mean_words']:11.1f} {r['max_words']:10d} "
              f"{r['mean_sentence']:11.1f} {r['max_sentence']:10.1f} {len(r['failing']):7d}")
