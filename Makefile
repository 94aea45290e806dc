# The two commands: `make book` (build the HTML book) and `make test` (run every test).
# Both create .venv on first use and install everything from PyPI; they need only Python 3.11
# and g++ (PyStan compiles the Stan programs with it, once, then caches them).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# The exact versions the book was built and tested with; pyproject.toml keeps the ranges for people
# who use ppmlib as a library. `make lock` regenerates it (after a change to the dependencies).
LOCK   := requirements.lock
SMOKE  := _build/smoke

.PHONY: book book-fresh test venv lock run clean clean-cache bench check-html

venv: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/python -m uv pip compile pyproject.toml --extra book --extra test --extra compare --python-version 3.11 \
		--annotation-style line --custom-compile-command "make lock" --quiet -o $(LOCK)

# The HTML book, every chapter executed with its (paper-sized) default parameters. Chapters whose
# code, and ppmlib/, stan/ and data/, did not change since the last build come from the execution cache.
book: $(STAMP)
	$(BIN)/python -m ppmlib.book.bookcache
	$(BIN)/jupyter-book build -W -n --keep-going .
	@echo "Book: _build/html/index.html"

# The same, every chapter executed again whatever the cache holds.
book-fresh: $(STAMP)
	$(BIN)/python -m ppmlib.book.bookcache --fresh
	$(BIN)/jupyter-book build --all -W -n --keep-going .
	@echo "Book: _build/html/index.html"

# Unit tests, the book's structure, and every chapter executed by nbval at smoke parameters.
test: $(STAMP)
	rm -rf $(SMOKE)
	$(BIN)/python -m ppmlib.book.rerun --smoke --out $(SMOKE)
	$(BIN)/python -m pytest tests $(SMOKE) --nbval-lax --nbval-cell-timeout=1800 -p no:cacheprovider

# Rerun one chapter with your own parameters, e.g.
#   make run CHAPTER=book/vector_weighted.md PARAMS="n=500 seed=7"
run: $(STAMP)
	$(BIN)/python -m ppmlib.book.rerun $(CHAPTER) $(foreach p,$(PARAMS),-p $(p)) --out runs

# Every page of the built book (make book first) rendered in headless Chromium: a screenshot per page
# in _build/screenshots/, and a failure for a page that does not render, a JavaScript error, math left
# unrendered, a broken link or image, or an output showing a traceback or warning. Installs nothing:
# it needs Debian's chromium (apt-get install chromium).
check-html: $(STAMP)
	$(BIN)/python -m ppmlib.book.bookcheck browser _build/html --screenshots _build/screenshots

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_lipschitz.py
	$(BIN)/python benchmarks/bench_fit.py
	$(BIN)/python benchmarks/bench_disclosure.py
	$(BIN)/python benchmarks/bench_audit.py
	$(BIN)/python benchmarks/bench_mixture.py

clean:
	rm -rf _build runs build

# What a killed run leaves: first every path a killed ppmlib process recorded (a ppm-synthesize
# staging folder beside its --out, stored fits, sockets; it names each), then httpstan's stored fits,
# its chain sockets and ppmlib's temporary folders (compiled models are kept). Run it when nothing is fitting.
clean-cache: $(STAMP)
	$(BIN)/python -m ppmlib.inference.backends --clean-cache
