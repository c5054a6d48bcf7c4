# One venv, created from the project's own files: `make setup` on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SERVER ?=
TRANSPORT ?=
export OMP_NUM_THREADS ?= 1

.PHONY: setup demo test test-long conformance inspector generate check-generated lint typecheck bench bench-scale clean

# PYTHONWARNINGS: setuptools' generic "Editable installation ... be careful with folders" box has nothing to act on.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# System packages (fonts, poppler, openssl) come from the distribution; see tools/system-deps.sh.
setup: $(VENV)/.installed
	@sh tools/system-deps.sh

# The main job: index a folder and search it (offline; the local model ships with the package).
DEMO_ROOT ?= examples/demo
DEMO_QUERY ?= how do I keep edits safe when two agents change the same file
# The demo's index is thrown away each run: it belongs to the folder it indexed, so a run on another
# DEMO_ROOT would be refused (decision 535). Values are quoted for the shell (spaces, quotes).
shell_quote = '$(subst ','\'',$(1))'
DEMO_INDEX = $(CURDIR)/.demo-index/index.db
demo: setup
	rm -rf $(call shell_quote,$(CURDIR)/.demo-index)
	$(PY) -m local_vector_search_mcp --root $(call shell_quote,$(DEMO_ROOT)) --storage-path $(call shell_quote,$(DEMO_INDEX)) --reindex
	$(PY) -m local_vector_search_mcp --root $(call shell_quote,$(DEMO_ROOT)) --storage-path $(call shell_quote,$(DEMO_INDEX)) call kb_search --query $(call shell_quote,$(DEMO_QUERY)) --top-k 3

test: setup check-generated
	$(PY) -m pytest -q --durations=25
	$(MAKE) --no-print-directory typecheck lint

test-long: setup
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q

conformance: setup
	$(PY) -m pytest -q tests/conformance $(if $(SERVER),--server "$(SERVER)") $(if $(TRANSPORT),--transport $(TRANSPORT)) $(if $(ENGINES),--engines $(ENGINES))

# A second, independent MCP client: the official Inspector CLI must list our tools.
INSPECTOR := .inspector/node_modules/.bin/mcp-inspector
$(INSPECTOR):
	mkdir -p .inspector && cd .inspector && npm install --silent --no-audit --no-fund @modelcontextprotocol/inspector@2.12.0
inspector: setup $(INSPECTOR)
	$(PY) tests/inspector_check.py $(INSPECTOR) $(VENV)/bin/local-vector-search-mcp

generate: setup
	$(PY) tools/generate.py

check-generated: setup
	$(PY) tools/generate.py --check

typecheck: setup
	$(PY) -m mypy

lint: setup
	$(PY) -m ruff check src tests tools bench
	$(PY) -m ruff format --check src tests tools bench

bench: setup
	$(PY) bench/run.py

# The scale run at 1M chunks too (tens of minutes on 2 cores); `make bench` runs 100k only.
bench-scale: setup
	BENCH_SCALE=1M $(PY) bench/bench_scale.py

clean:
	rm -rf $(VENV) .inspector .pytest_cache .mypy_cache .hypothesis .demo-index
