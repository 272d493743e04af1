# dpcore — two commands do everything on a fresh machine:
#   make figures   run every notebook (PROFILE=quick -> figures/, PROFILE=paper -> figures/paper/; NB='<key or glob>';
#                  JOBS=<n> notebooks at once, default one per core);
#                  fails if a notebook fails or a claim is `differs`; writes claims.csv, SCORECARD.md, figures/ERRATA.md
#   make test      unit tests + nbval over every notebook (quick profile, claims into build/nbval/figures), then
#                  the claims check: no `differs` and no drift from the committed figures/claims.csv
# Both create .venv and install the pinned dependencies (constraints.txt) when needed.

PYTHON  ?= $(shell command -v python3.11 || command -v python3)
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
PROFILE ?= quick
NB      ?= *
# notebooks run at once by `make figures` (one kernel, one thread each): one per core
JOBS    ?= $(shell nproc 2>/dev/null || echo 1)
export PYTHONHASHSEED := 0
# Offline data mirror (README "Data"): $DPCORE_DATA_MIRROR if set, else ../shared/data when it exists;
# override with `make figures DATA_MIRROR=/path`. Empty: no mirror (cache, then download).
DATA_MIRROR ?= $(or $(DPCORE_DATA_MIRROR),$(if $(wildcard ../shared/data),../shared/data,))
export DPCORE_DATA_MIRROR := $(if $(strip $(DATA_MIRROR)),$(abspath $(DATA_MIRROR)),)

.PHONY: figures test lab bench lint venv clean chromium explore docs

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,bench,scale,docs]'
	@touch $(STAMP)

figures: $(STAMP)
	$(PY) -m dpcore.runner --profile $(PROFILE) --nb '$(NB)' --jobs $(JOBS)

# Browser tests (tests/browser/) drive Debian's Chromium through Playwright (which cannot download its own
# browser here): install it once when it is missing and we are root; otherwise say why the browser tests skip.
CHROMIUM ?= /usr/bin/chromium
chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium (apt-get) for the browser tests"; \
	  (apt-get install -y -qq chromium || (apt-get update -qq && apt-get install -y -qq chromium)) >/dev/null; \
	else echo "chromium: $(CHROMIUM) is missing and we are not root: the browser tests will skip (apt-get install chromium)"; fi

# pytest-xdist: one worker per core (each at 1 torch thread, tests/conftest.py); a test file -- and so a notebook's
# cells, which share one kernel -- always runs whole on one worker (--dist loadfile); the notebooks are collected
# first so that the long training notebooks start at once. TEST_WORKERS=0: serial.
TEST_WORKERS ?= auto
XDIST := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

test: $(STAMP) chromium
	@mkdir -p build && date +%s > build/.test-start
	$(PY) -m pytest --doctest-modules dpcore --doctest-glob=README.md README.md -p no:cacheprovider --timeout 900 -q $(XDIST)  # docstring + README examples
	$(PY) -m dpcore.runner --prepare-nbval build/nbval
	$(PY) -m pytest build/nbval tests --nbval-lax --nbval-current-env -p no:cacheprovider --timeout 900 --durations=25 $(XDIST)
	$(PY) -m dpcore.runner --check-claims build/nbval/figures
	@echo "make test: tests took $$(( $$(date +%s) - $$(cat build/.test-start) )) s wall ($(TEST_WORKERS) workers; install excluded)"

lint: $(STAMP)
	$(PY) -m ruff check dpcore tests benchmarks

bench: $(STAMP)
	$(PY) benchmarks/throughput.py --quick --out benchmarks/results.json
	$(PY) benchmarks/ic_overhead.py --out benchmarks/ic_overhead.json
	$(PY) benchmarks/latency.py --out benchmarks/latency.json  # the speed goals the tests do not assert (issue 54)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. $(PY) benchmarks/accounting.py --out benchmarks  # ε and calibration vs dp_accounting / Opacus, one PLD's evidence, the front door (issue 52) -> accounting.md

# Jupyter generates a random token and prints the full URL with it.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --config=etc/jupyter_server_config.py --ip=127.0.0.1 --no-browser --allow-root  # saves without outputs; browser shows notebooks/ and build/scratch/

# The explorer notebooks (notebooks/explore/) as dashboards, code hidden; outputs go to build/scratch/, never figures/.
# Template dpcore (dpcore/explore/dashboard.py, written to build/voila/): a landing page listing each explorer with
# its title, and no CDN request (Voila's lab template fetches Font Awesome from cdn.jsdelivr.net; offline it fails).
# etc/voila.py: leaving or closing a page shuts its kernel down (the _xsrf cookie its shutdown beacon needs; a culler).
EXPLORE_PORT ?= 8866
explore: $(STAMP)
	$(PY) -m dpcore.explore.dashboard build/voila >/dev/null
	@echo "explorers: http://127.0.0.1:$(EXPLORE_PORT)/ (Ctrl-C stops the server)"
	JUPYTER_PATH=$(CURDIR)/build/voila $(VENV)/bin/voila --no-browser --Voila.ip=127.0.0.1 --port=$(EXPLORE_PORT) \
		--strip_sources=True --template=dpcore --Voila.config_file_paths=$(CURDIR)/etc notebooks/explore

# The documentation site -> build/docs/index.html (docs/build_site.py: from figures/, the claims and the
# notebooks of the last `make figures`; never trains; Sphinx warnings are errors; writes nothing tracked).
docs: $(STAMP)
	$(PY) docs/build_site.py --out build/docs --src build/docs-src

clean:
	rm -rf build
