# memoryhub: `make run` starts it, `make test` tests it. Only Python 3.11 is needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MEM0_STAMP := $(VENV)/.installed-mem0
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: install run manage test fuzz lint format bench load screenshots docs chromium nginx clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[embedded,test]'
	touch $(STAMP)

# Real mem0 for the tests marked `mem0`. torch 2.13.0 (the CPU build) goes first, so that
# the range in the extra is met and no CUDA build is downloaded.
$(MEM0_STAMP): $(STAMP)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[embedded,test,mem0]'
	touch $(MEM0_STAMP)

# The bench extra: the BM25 peers the real-text search benchmark measures (Tantivy).
$(BENCH_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[embedded,test,bench]'
	touch $(BENCH_STAMP)

install: $(STAMP)

## Start memoryhub on http://127.0.0.1:8000 (embedded PostgreSQL unless DATABASE_URL is set).
run: $(STAMP)
	$(BIN)/python -m memoryhub.devrun

## A management command beside make run (its database, development settings):
## make manage ARGS='create_workspace "Acme"'
manage: $(STAMP)
	$(BIN)/python manage.py $(ARGS)

## The browser tests drive Debian's Chromium; installed with apt when root may, never downloaded.
chromium:
	@[ -x /usr/bin/chromium ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
		{ echo "the browser tests need Debian's chromium: sudo apt-get install chromium" >&2; exit 1; }

## The proxy tests (tests/deploy) run Debian's nginx in the foreground, on ports of their own;
## installed with apt when root may, and not left running as a service.
nginx:
	@[ -x /usr/sbin/nginx ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx && \
		{ service nginx stop >/dev/null 2>&1 || true; }; } || \
		{ echo "the proxy tests need Debian's nginx: sudo apt-get install nginx" >&2; exit 1; }

## Run the whole test suite against real PostgreSQL and Redis (started if need be).
test: $(MEM0_STAMP) chromium nginx
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m memoryhub.embedded $(BIN)/python -m pytest --ds=memoryhub.test_settings $(PYTEST_ARGS)

## Schemathesis with many more examples per operation than make test (FUZZ_EXAMPLES).
FUZZ_EXAMPLES ?= 200
fuzz: $(STAMP)
	MEMORYHUB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m memoryhub.embedded \
		$(BIN)/python -m pytest --ds=memoryhub.test_settings tests/test_schemathesis.py $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Benchmarks: figures go to bench/results.json.
bench: $(BENCH_STAMP)
	$(BIN)/python -m memoryhub.embedded $(BIN)/python -m bench $(BENCH_ARGS)

## Load: simulated agent runtimes against two web processes and two Celery workers for a
## bounded time, then a check of the database; figures under "load" in bench/results.json.
LOAD_ARGS ?= --agents 8 --seconds 60
load: $(STAMP)
	$(BIN)/python -m memoryhub.embedded $(BIN)/python -m bench.load $(LOAD_ARGS)

## PNGs of the panel's main pages, from the browser tests on the demo data.
SCREENSHOTS ?= docs/screenshots
screenshots: $(STAMP) chromium
	MEMORYHUB_SCREENSHOTS=$(abspath $(SCREENSHOTS)) $(BIN)/python -m memoryhub.embedded \
		$(BIN)/python -m pytest --ds=memoryhub.test_settings -m browser tests/browser $(PYTEST_ARGS)

## The documentation site (mkdocs.yml, docs/) in site/; a broken link or anchor fails it.
## make test builds it too (tests/test_docs.py), and runs the examples of README.md and docs/.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) .data .pytest_cache .ruff_cache site
