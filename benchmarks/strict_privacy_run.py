"""Record one execution of the strict privacy chapter at its defaults: wall time, the slowest cells,
the claim table and the real-data fits' diagnostics, read from the executed notebook.

Run the chapter first (one process, CmdStan for speed)::

    PPMLIB_BACKEND=cmdstanpy CMDSTAN=... nice -n 10 python -m ppmlib.book.rerun book/strict_privacy.md --out /tmp/strict_run

then ``PYTHONPATH=. .venv/bin/python benchmarks/strict_privacy_run.py /tmp/strict_run/strict_privacy.ipynb``.
Writes ``benchmarks/results/strict_privacy.json`` (machine, date, load, command). The wall time is
papermill's own (the notebook's metadata); the tables are the executed cells' HTML outputs, so the
record holds what the run printed, not a recomputation.
"""
import argparse
import json

from bs4 import BeautifulSoup

from _results import record


def html_tables(cell) -> list:
    """Every HTML table a cell displayed, as a list of rows (dicts of column -> cell text)."""
    tables = []
    for out in cell.get("outputs", []):
        html = out.get("data", {}).get("text/html")
        if not html:
            continue
        for table in BeautifulSoup("".join(html), "html.parser").find_all("table"):
            header = [th.get_text(" ", strip=True) for th in table.find("thead").find_all("tr")[-1].find_all("th")]
            rows = []
            for tr in table.find("tbody").find_all("tr"):
                cells = [c.get_text(" ", strip=True) for c in tr.find_all(["th", "td"])]
                rows.append(dict(zip(header if len(header) == len(cells) else ["index", *header][-len(cells):], cells)))
            tables.append(rows)
    return tables


def printed(cell) -> str:
    return "".join("".join(out.get("text", "")) for out in cell.get("outputs", []) if out.get("output_type") == "stream")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    args = parser.parse_args(argv)
    nb = json.load(open(args.notebook))
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    wall = nb["metadata"]["papermill"]["duration"]
    # the chapter's defaults, or the values papermill injected over them (the last such cell wins)
    params = [("".join(c["source"])) for c in cells
              if {"parameters", "injected-parameters"} & set(c["metadata"].get("tags", []))][-1]
    claims = next(c for c in cells if "claims.finish(" in "".join(c["source"]))
    fits = next(c for c in cells if "strict.fit_table(" in "".join(c["source"]))
    slow = sorted(((c["metadata"]["papermill"]["duration"] or 0.0, "".join(c["source"]).splitlines()[0]) for c in cells),
                  reverse=True)[:5]
    rows = [{"table": "claims", **row} for row in html_tables(claims)[0]]
    designs = [line for line in printed(fits).splitlines() if line and not line.startswith("failing")]
    for design, table in zip(designs, html_tables(fits)):
        rows += [{"table": f"fits: {design}", **row} for row in table]
    scores = next(c for c in cells if 'columns = ["synthesizer", "total epsilon"' in "".join(c["source"]))
    for design, table in zip([line for line in printed(scores).splitlines() if line], html_tables(scores)):
        rows += [{"table": f"scores: {design}", **row} for row in table]
    keys = sorted({k for r in rows for k in r} - {"", "index"})
    rows = [{key: row.get(key, "") for key in keys} for row in rows]
    notes = (f"wall time {wall:.0f} s for the whole chapter in one process; slowest cells: "
             + "; ".join(f"{s:.0f} s ({src[:60]})" for s, src in slow)
             + f". {printed(fits).strip().splitlines()[-1]}. Parameters: " + " | ".join(
                 line.split("#")[0].strip() for line in params.splitlines() if "=" in line))
    written = record("strict_privacy", title="book/strict_privacy.md executed at its defaults (one process, "
                     "ppmlib.book.rerun): the claim table, every real-data fit's diagnostics and every synthesizer's scores", rows=rows, notes=notes)
    print(f"written: {written}")


if __name__ == "__main__":
    main()
