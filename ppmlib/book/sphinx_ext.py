"""A small Sphinx extension for the book's HTML (listed in ``_config.yml``).

It sets two substitutions: ``build_versions`` (a table of the software the book was built with,
from :func:`ppmlib.book.provenance.versions`), shown on the landing page as ``{{ build_versions }}``,
and ``scheme_glossary`` (the glossary's entries for the synthesizers, generated from
:data:`ppmlib.mechanism.schemes.REGISTRY` so that they never drift from it), shown on
``book/glossary.md``. It also has Sphinx read the performance page again whenever the files of
``benchmarks/results/`` changed, so the page always shows the current measurements.

It also works around a duplicated script: sphinx-thebe adds its inline configuration script (``const THEBE_JS_URL = ...``) once per
``env-before-read-docs`` event, which fires more than once in a Jupyter Book build; the second
copy redeclares a ``const`` and every page then logs "Uncaught SyntaxError: Identifier
'THEBE_JS_URL' has already been declared" (found by ``make check-html``). Dropping repeated
script entries from each page's context removes the error without touching the theme.
"""
from __future__ import annotations


def _key(script) -> tuple:
    attributes = tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items()))
    # the second copy is registered with filename '' where the first has None: compare them as equal
    return getattr(script, "filename", None) or "", attributes


def drop_repeated_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique  # in place: Sphinx restores its own list before the next page


#: The chapter that introduces each kind of synthesizer; a glossary entry links to it.
CHAPTER_OF_KIND = {"unweighted": "vector_weighted", "lw": "vector_weighted", "cw": "vector_weighted",
                   "sw": "vector_weighted", "final": "reweighting"}

#: What each guarantee of the registry means, in the glossary's words.
GUARANTEES = {"none": "none: it is not differentially private",
              "strict": "ε per dataset for every database, against adding or removing one record",
              "strict, weights as given": "ε per dataset for every database, against adding or removing one "
                                          "record, with its weights held as given (they come from the data)",
              "local": "ε = 2Δ per dataset for this database against its removal neighbours, "
                       "with the weights treated as fixed (a local guarantee)"}

#: The page that shows the measured figures of ``benchmarks/results/``.
PERFORMANCE_PAGE = "book/guide/performance"


def scheme_glossary() -> str:
    """The glossary's entries for the book's synthesizers, one per entry of the registry.

    Returns
    -------
    str
        A MyST ``{glossary}`` directive: each key (and the paper's alias) as terms, with what its
        weights are, what it is built on and matched to, whether the command releases it, its
        guarantee, and a link to the chapter that introduces it.
    """
    from ppmlib.mechanism.schemes import REGISTRY
    lines = ["```{glossary}"]
    for s in (s for s in REGISTRY.values() if s.shown):
        lines += [s.key] + ([s.alias] if s.alias else [])
        facts = [f"Built on {s.base}." if s.base else "",
                 f"Its Δ is matched to {s.match}'s." if s.match else "",
                 "`ppm-synthesize` can release it." if s.releasable else "The command does not release it.",
                 f"Guarantee: {GUARANTEES.get(s.guarantee, s.guarantee)}."]
        chapter = CHAPTER_OF_KIND.get(s.kind)
        if chapter:
            facts.append(f"See [the chapter]({chapter}.md).")
        definition = f"{s.summary[0].upper()}{s.summary[1:]}. " + " ".join(f for f in facts if f)
        lines += [f"   {definition}", ""]
    return "\n".join(lines[:-1] + ["```"])


def add_substitutions(app, config) -> None:
    from ppmlib.book.provenance import markdown_table
    config.myst_substitutions = {**(config.myst_substitutions or {}), "build_versions": markdown_table(),
                                 "scheme_glossary": scheme_glossary()}


def _results_digest() -> str:
    import hashlib

    from ppmlib.book.results import RESULTS
    h = hashlib.sha256()
    for path in sorted(RESULTS.glob("*.json")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def reread_performance(app, env, added, changed, removed) -> list:
    """The performance page, when the result files changed since the last build (Sphinx keeps the digest)."""
    digest = _results_digest()
    if getattr(env, "ppmlib_results_digest", None) == digest:
        return []
    env.ppmlib_results_digest = digest
    return [PERFORMANCE_PAGE] if PERFORMANCE_PAGE in env.found_docs else []


def setup(app):
    app.connect("config-inited", add_substitutions)
    app.connect("env-get-outdated", reread_performance)
    # early: Sphinx stops calling html-page-context handlers at the first one that returns a template
    app.connect("html-page-context", drop_repeated_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
