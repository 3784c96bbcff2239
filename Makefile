# Two commands on a fresh machine: `make dev` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
UV_VERSION := 0.13.9
UV := .tools/bin/uv
VENV := .venv
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: dev test bootstrap lint typecheck pytest frontend validate build bench clean

bootstrap: $(VENV)/.installed frontend

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.installed: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	touch $@

# The web chat is built when there is one (frontend/package.json).
frontend:
	@if [ -f frontend/package.json ]; then $(MAKE) --no-print-directory frontend/dist/index.html; fi

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $@

frontend/dist/index.html: frontend/node_modules/.installed $(shell find frontend/src frontend/index.html frontend/vite.config.ts -type f 2>/dev/null)
	cd frontend && npm run build

dev: bootstrap
	$(VENV)/bin/pa dev

test: bootstrap lint typecheck pytest

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck:
	$(VENV)/bin/mypy

pytest:
	$(VENV)/bin/pytest -q

bench: bootstrap
	$(VENV)/bin/python bench/cold_start.py

clean:
	rm -rf .venv .tools .local .aws-sam frontend/dist frontend/node_modules
