# Two commands on a fresh machine: `make dev` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
UV_VERSION := 0.13.9
UV := .tools/bin/uv
VENV := .venv
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: localstack dev test bootstrap browser sandbox tmux lint typecheck pytest frontend validate build deploy bench clean openapi importlint

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

dev: bootstrap sandbox
	$(VENV)/bin/pa dev

test: bootstrap browser sandbox tmux lint importlint typecheck validate localstack pytest

# The browser tests drive Debian's Chromium (never a downloaded one). As root it is installed here; otherwise
# make stops at once with the one command to run.
CHROMIUM := /usr/bin/chromium
browser:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make: installing chromium for the browser tests (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
			>/dev/null; \
	else \
		echo "make test: the browser tests need Chromium at $(CHROMIUM); run: sudo apt-get install -y chromium" >&2; \
		exit 1; \
	fi

# `pa chat`'s tests drive it in a real terminal: tmux (Debian's). As root it is installed here; otherwise make stops
# at once with the one command to run.
TMUX := /usr/bin/tmux
tmux:
	@if [ -x $(TMUX) ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make: installing tmux for the terminal client's tests (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tmux >/dev/null; \
	else \
		echo "make test: the terminal client's tests need tmux at $(TMUX); run: sudo apt-get install -y tmux" >&2; \
		exit 1; \
	fi

# `run_python`'s local sandbox runs code under bubblewrap (Debian's bwrap: user, PID, network and mount namespaces).
# As root it is installed here; otherwise make says how, and `pa dev` runs without the tool (never unconfined:
# /health/deps says why). The sandbox attack tests need it.
BWRAP := /usr/bin/bwrap
sandbox:
	@if [ -x $(BWRAP) ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make: installing bubblewrap for the code sandbox (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap \
			>/dev/null; \
	else \
		echo "make: the code sandbox (run_python) needs bubblewrap; run: sudo apt-get install -y bubblewrap" >&2; \
		if [ "$(MAKECMDGOALS)" != dev ]; then exit 1; fi; \
	fi

# ruff for the Python, ESLint (Vue and TypeScript presets, frontend/eslint.config.mjs) for the web chat.
lint: frontend/node_modules/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	cd frontend && npm run --silent lint

# The layers, no import cycle, and handlers that import only entry points ([tool.importlinter] in pyproject.toml).
importlint:
	$(VENV)/bin/lint-imports

typecheck:
	$(VENV)/bin/mypy

# Three shards at once: the browser tests (tests/e2e/test_web_*.py); half of the other `pa dev` end-to-end tests
# (each module starts its own `pa dev`, mostly waiting on it); and integration + unit followed by the other half
# (every other file, in name order). Each has its own temp dir (short, under /tmp: Postgres' socket paths), embedded
# Postgres, Valkey and emulators on free ports; the background shards' logs are printed when all end (`--durations`
# names the slowest).
SHARDS := test-artifacts/shards
DEV_E2E = $(shell ls tests/e2e/test_*.py | grep -v '/test_web_')
DEV_E2E_A = $(shell ls tests/e2e/test_*.py | grep -v '/test_web_' | awk 'NR % 2 == 1')
DEV_E2E_B = $(filter-out $(DEV_E2E_A),$(DEV_E2E))
pytest:
	@rm -rf $(SHARDS) && mkdir -p $(SHARDS); tmp=$$(mktemp -d /tmp/pa-test.XXXXXX); \
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=15 --basetemp=$$tmp/web tests/e2e/test_web_*.py \
		>$(SHARDS)/web.log 2>&1 & web=$$!; \
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=15 --basetemp=$$tmp/dev $(DEV_E2E_A) \
		>$(SHARDS)/dev.log 2>&1 & dev=$$!; \
	$(VENV)/bin/pytest -q --durations=15 --basetemp=$$tmp/rest tests --ignore=tests/e2e; rest=$$?; \
	echo "---- the other half of the pa dev end-to-end tests, after them ----"; \
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=15 --basetemp=$$tmp/dev2 $(DEV_E2E_B); dev2=$$?; \
	wait $$web; web_status=$$?; wait $$dev; dev_status=$$?; \
	echo "---- half of the pa dev end-to-end tests, run beside (tests/e2e, not test_web_*) ----"; cat $(SHARDS)/dev.log; \
	echo "---- the browser tests, run beside (tests/e2e/test_web_*.py) ----"; cat $(SHARDS)/web.log; \
	[ $$rest -eq 0 ] && [ $$dev2 -eq 0 ] && [ $$web_status -eq 0 ] && [ $$dev_status -eq 0 ]

# The API's OpenAPI document (checked in) and the web chat's types generated from it; run after changing a route.
# tests/unit/test_openapi_drift.py fails while either is stale.
openapi: $(VENV)/.installed frontend/node_modules/.installed
	$(VENV)/bin/python -m personal_agent.local.openapi_export frontend/src/api/openapi.json
	cd frontend && npm run gen:api && npm run gen:operations

# ---- LocalStack: the second AWS emulator (`pa dev --aws localstack`; the durable tests run on it too) ----
# Its own venv like the SAM CLI: LocalStack core needs Python 3.13 and pins of its own
# (infra/localstack/requirements.in says why each). Reinstalled when the locked requirements change.
LOCALSTACK_STAMP := .tools/localstack/.installed-$(shell sha256sum infra/localstack/requirements.txt | cut -c1-12)
PYTHON313 = $(shell for p in "$$(command -v python3.13)" $(HOME)/.pyenv/versions/3.13*/bin/python3.13 \
	/usr/local/bin/python3.13 /usr/bin/python3.13; do [ -x "$$p" ] && "$$p" -c 'import sys; \
	assert sys.version_info[:2] == (3, 13)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)

localstack: $(LOCALSTACK_STAMP)

$(LOCALSTACK_STAMP):
	@py="$(PYTHON313)"; if [ -z "$$py" ]; then \
		echo "make localstack: LocalStack needs Python 3.13; no working python3.13 on PATH or under" \
			"~/.pyenv/versions/3.13* (install one, e.g. 'pyenv install 3.13')" >&2; exit 1; fi; \
	set -e; rm -rf .tools/localstack; "$$py" -m venv .tools/localstack; \
	.tools/localstack/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
		-r infra/localstack/requirements.txt
	touch $@

# ---- AWS: validate, build and deploy the SAM stack (template.yaml; docs/deploy.md) ----
# aws-sam-cli lives in its own venv: its pins conflict with the app's. Installed once per version.
SAM_VERSION := 1.170.0
SAM := .tools/sam/bin/sam
SAM_STAMP := .tools/sam/.installed-$(SAM_VERSION)
SAM_ENV := SAM_CLI_TELEMETRY=0
# sam build for the python3.12 runtime needs a working python3.12 on PATH (pyenv keeps one outside its shims).
PYTHON312 = $(shell for p in "$$(command -v python3.12)" $(HOME)/.pyenv/versions/3.12*/bin/python3.12 \
	/usr/local/bin/python3.12 /usr/bin/python3.12; do [ -x "$$p" ] && "$$p" -c 'import sys; \
	assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
# Layer requirements come from uv.lock: the API layer leaves out pydantic-ai, the model SDKs and what only
# the workers use; the worker layer adds the X-Ray SDK that Powertools' Tracer needs. The server's dependencies are
# the project's `server` extra; the terminal client's own (its base dependencies) stay out of every layer.
# (One line: tests/unit/test_platform_mcp_template.py runs it as written.)
LAYER_EXPORT := $(UV) export --frozen --no-dev --extra server --no-emit-project --no-hashes --no-header --no-annotate --prune textual --prune keyring --prune rich
# Knowledge: the embedder (wordllama with numpy, tokenizers) and the parsers run in the ingest function (worker
# layer); the API asks it to embed a search query. pgvector's Python package (numpy) is not used: vectors go as text.
# uvicorn with the event loop and HTTP parser in C (uvloop, httptools) serves only the SSE relay: they go in its
# own small stream layer, beside the API layer. hiredis (redis-py's optional parser) is left to the workers.
API_LAYER_PRUNE := pydantic-ai-slim genai-prices mcp boto3 wordllama numpy tokenizers pgvector pypdf python-docx uvicorn uvloop httptools hiredis a2a-sdk openpyxl python-pptx rapidocr-onnxruntime
# A2A (a2a-sdk's JSON-RPC server, served by the stream function) and what it imports that the API layer lacks;
# google-api-core (with google-auth and requests) is its gRPC side's, never imported by the JSON-RPC server.
STREAM_LAYER_ONLY := uvicorn|click|uvloop|httptools|a2a-sdk|aiologic|culsans|googleapis-common-protos|json-rpc|packaging|protobuf|sniffio|sse-starlette|wrapt
# wordllama (the offline embedder) has no Linux arm64 wheel, and on AWS embeddings go through Bedrock or OpenAI;
# uvicorn and its C loop and parser serve only the relay.
WORKER_LAYER_PRUNE := wordllama uvicorn uvloop httptools a2a-sdk rapidocr-onnxruntime
WORKER_LAYER_EXTRA := aws-xray-sdk|wrapt
# run_python's sandbox function (CodeExecution=lambda): the scientific stack and its closure, nothing else.
SANDBOX_LAYER_ONLY := numpy|pandas|matplotlib|python-dateutil|pytz|tzdata|six|contourpy|cycler|fonttools|kiwisolver|packaging|pillow|pyparsing
DEPLOY_ARGS ?= --guided

$(SAM_STAMP):
	rm -rf .tools/sam
	$(PYTHON) -m venv .tools/sam
	.tools/sam/bin/pip install --quiet --disable-pip-version-check aws-sam-cli==$(SAM_VERSION)
	touch $@

validate: $(SAM_STAMP) $(VENV)/.installed
	$(SAM_ENV) $(SAM) validate --region us-east-1 --template template.yaml
	$(SAM_ENV) $(SAM) validate --region us-east-1 --lint --template template.yaml
	$(VENV)/bin/cfn-lint template.yaml
	@# Database=aurora too: sam validate takes no parameters, so the same template with aurora as the default.
	mkdir -p .aws-sam && sed '/^  Database:$$/,/Default:/s/Default: external/Default: aurora/' template.yaml \
		> .aws-sam/template-aurora.yaml
	grep -q 'Default: aurora' .aws-sam/template-aurora.yaml
	$(SAM_ENV) $(SAM) validate --region us-east-1 --lint --template .aws-sam/template-aurora.yaml
	$(VENV)/bin/cfn-lint .aws-sam/template-aurora.yaml
	@# And aurora with its RDS Proxy (AuroraProxy=true).
	sed '/^  AuroraProxy:$$/,/Default:/s/Default: "false"/Default: "true"/' .aws-sam/template-aurora.yaml \
		> .aws-sam/template-aurora-proxy.yaml
	grep -A2 '^  AuroraProxy:$$' .aws-sam/template-aurora-proxy.yaml | grep -q 'Default: "true"'
	$(SAM_ENV) $(SAM) validate --region us-east-1 --lint --template .aws-sam/template-aurora-proxy.yaml
	$(VENV)/bin/cfn-lint .aws-sam/template-aurora-proxy.yaml

build: $(SAM_STAMP) $(VENV)/.installed
	@py="$(PYTHON312)"; if [ -z "$$py" ]; then \
		echo "make build: the Lambda runtime is python3.12 and sam build needs it; no working python3.12 on PATH" \
			"or under ~/.pyenv/versions/3.12* (install one, e.g. 'pyenv install 3.12')" >&2; exit 1; fi; \
	set -euo pipefail; \
	$(LAYER_EXPORT) $(addprefix --prune ,$(API_LAYER_PRUNE)) > layers/api.requirements.txt; \
	$(LAYER_EXPORT) | grep -E '^($(STREAM_LAYER_ONLY))==' > layers/stream.requirements.txt; \
	{ $(LAYER_EXPORT) $(addprefix --prune ,$(WORKER_LAYER_PRUNE)); $(UV) export --frozen --all-groups --no-emit-project --no-hashes --no-header --no-annotate \
		| grep -E '^($(WORKER_LAYER_EXTRA))=='; } | awk -F'[=; ]' '!seen[$$1]++' \
		> layers/worker.requirements.txt; \
	$(UV) export --frozen --all-groups --no-emit-project --no-hashes --no-header --no-annotate \
		| grep -E '^($(SANDBOX_LAYER_ONLY))==' > layers/sandbox.requirements.txt; \
	echo "sam build with $$py"; \
	PATH="$$(dirname "$$py"):$$PATH" PYTHON312="$$py" REPO_ROOT="$(CURDIR)" UV="$(CURDIR)/$(UV)" \
		$(SAM_ENV) $(SAM) build --template template.yaml --parallel
	$(VENV)/bin/python bench/package_size.py

# First time: `make deploy` asks for every parameter (docs/deploy.md) and saves the answers to samconfig.toml;
# later `make deploy DEPLOY_ARGS=` reuses them. Then the built web chat is uploaded and CloudFront refreshed.
deploy: build frontend
	$(SAM_ENV) $(SAM) deploy $(DEPLOY_ARGS)
	$(VENV)/bin/python infra/publish_web.py

bench: bootstrap
	$(VENV)/bin/python bench/cold_start.py

clean:
	rm -rf .venv .tools .local .aws-sam frontend/dist frontend/node_modules
