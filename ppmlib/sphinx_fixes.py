"""A small Sphinx extension for the book's HTML (listed in ``_config.yml``).

sphinx-thebe adds its inline configuration script (``const THEBE_JS_URL = ...``) once per
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


def setup(app):
    # early: Sphinx stops calling html-page-context handlers at the first one that returns a template
    app.connect("html-page-context", drop_repeated_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
