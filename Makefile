# dpcore — two commands do everything on a fresh machine:
#   make figures   run every notebook (PROFILE=quick -> figures/, PROFILE=paper -> figures/paper/; NB='<key or glob>');
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
export PYTHONHASHSEED := 0
# Offline data mirror (README "Data"): $DPCORE_DATA_MIRROR if set, else ../shared/data when it exists;
# override with `make figures DATA_MIRROR=/path`. Empty: no mirror (cache, then download).
DATA_MIRROR ?= $(or $(DPCORE_DATA_MIRROR),$(if $(wildcard ../shared/data),../shared/data,))
export DPCORE_DATA_MIRROR := $(if $(strip $(DATA_MIRROR)),$(abspath $(DATA_MIRROR)),)

.PHONY: figures test lab bench lint venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,bench,scale]'
	@touch $(STAMP)

figures: $(STAMP)
	$(PY) -m dpcore.runner --profile $(PROFILE) --nb '$(NB)'

test: $(STAMP)
	$(PY) -m dpcore.runner --prepare-nbval build/nbval
	$(PY) -m pytest tests build/nbval --nbval-lax --nbval-current-env -p no:cacheprovider --timeout 900 --durations=25
	$(PY) -m dpcore.runner --check-claims build/nbval/figures

lint: $(STAMP)
	$(PY) -m ruff check dpcore tests benchmarks

bench: $(STAMP)
	$(PY) benchmarks/throughput.py --quick --out benchmarks/results.json

# Jupyter generates a random token and prints the full URL with it.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 --no-browser --allow-root --notebook-dir=notebooks

clean:
	rm -rf build
