"""A small Sphinx extension for the book's HTML (listed in ``_config.yml``).

It sets the substitution ``build_versions`` (a table of the software the book was built with,
from :func:`ppmlib.book.provenance.versions`), shown on the landing page as ``{{ build_versions }}``.

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


def add_build_versions(app, config) -> None:
    from ppmlib.book.provenance import markdown_table
    config.myst_substitutions = {**(config.myst_substitutions or {}), "build_versions": markdown_table()}


def setup(app):
    app.connect("config-inited", add_build_versions)
    # early: Sphinx stops calling html-page-context handlers at the first one that returns a template
    app.connect("html-page-context", drop_repeated_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
