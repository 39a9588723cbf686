# Two commands for a fresh machine: `make` (set up, build both sites, run the demo grading cycle) and `make test`.
# `make` is safe on a live course: the demo is graded in its own course root (demo/), never in autograder/.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.installed
# The lab extra accepts torch>=2.4; here it is pinned to the local CPU wheel (any other spec downloads GBs).
TORCH_PIN := torch==2.13.0

.PHONY: all setup build demo test format clean

all: build demo

# System packages (chromium, a CJK font, bubblewrap), the Python environment with torch's CPU wheel, MathJax/mermaid
# and Pyodide (npm), and the wheels the in-browser kernel loads (PyPI, pinned by hash; course.tools.jupyterlite).
$(READY): pyproject.toml package.json lite/pyodide-wheels.txt scripts/setup-system.sh
	bash scripts/setup-system.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test,lab]' '$(TORCH_PIN)'
	npm install --no-package-lock --no-audit --no-fund --silent
	$(BIN)/pip download --quiet --disable-pip-version-check --no-deps --require-hashes --only-binary=:all: \
	    --implementation py --python-version 3.14 --platform any -r lite/pyodide-wheels.txt \
	    -d $(VENV)/share/course/pyodide-wheels
	touch $@

# The students' message catalogs (src/course/messages.py), compiled from their .po files; the .mo files are not
# committed.
CATALOGS := $(patsubst %.po,%.mo,$(wildcard src/course/locale/*/LC_MESSAGES/*.po))
%.mo: %.po $(READY)
	$(BIN)/pybabel compile --statistics -D course -d src/course/locale

# rfc3987-syntax (pulled in by jupyter-events for jsonschema's optional "iri" formats, which no notebook, nbgrader or
# course schema uses) is removed after each install: it compiles its grammars in every process that imports jsonschema
# (each kernel, notebook runner, Jupyter server and Quarto hook: about 1.7 CPU-s each); jsonschema skips the format.
LEAN := $(VENV)/.without-iri-grammars
$(LEAN): $(READY)
	$(BIN)/pip uninstall --quiet --yes rfc3987-syntax
	touch $@

setup: $(READY) $(LEAN) $(CATALOGS)

# pandoc always, whatever Quarto the machine has: `make` gives the same site everywhere (docs/authors.md).
build: setup
	$(BIN)/course build --renderer pandoc

demo: build
	$(BIN)/course demo lesson05

# Quarto for the tests that render with it: installed by the shared setup script where it exists (CI always has
# it beside the clone), and named to them in COURSE_TEST_QUARTO; without it those tests are skipped, saying so.
QUARTO_SETUP := ../shared/tools/quarto/setup.sh

# Every test, spread over pytest-xdist workers: one per core for the busy files and one more for the files that mostly
# wait (marked `waits`; while one is left, tests/lanes.py runs no more busy files at once than there are cores, then
# every worker takes busy files). A test file stays on
# one worker, so its module fixtures (a built course, a browser) are made once; files are handed out in collection
# order, the longest first (tests/collection_order.py). Side by side on 2 cores (2026-12-07, built checkout): 482 s
# this way against 524 s with one worker per core and xdist's own file scheduling (idle CPU 35 against 110 CPU-s).
# Three workers without the lane were slower (2026-12-06: 479-486 s on fresh clones against 471 s). TEST_WORKERS=N
# sets another number.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: setup
	@if [ -f $(QUARTO_SETUP) ] && [ -z "$$COURSE_TEST_QUARTO" ]; then \
	  q=$$(bash $(QUARTO_SETUP)) || { echo "make test: $(QUARTO_SETUP) failed" >&2; exit 1; }; \
	  export COURSE_TEST_QUARTO=$$q; \
	fi; $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# ruff's own fixes and its formatting over the whole tree, then what is left to fix by hand (tests/test_lint.py
# fails on it; so it does on ESLint's findings in the sites' scripts, all fixed by hand).
format:
	$(BIN)/ruff check --fix --exit-zero --silent --no-cache .
	$(BIN)/ruff format --no-cache .
	$(BIN)/ruff check --no-cache --statistics .

clean:
	rm -rf _site .course-cache autograder/source autograder/release autograder/submitted autograder/autograded \
	       autograder/feedback autograder/exchange autograder/gradebook.db autograder/reports .course-hub \
	       $(filter-out demo/classes,$(wildcard demo/*)) demo/.course-grade demo/.nbgrader.log
