# Two entry points (README): `make run` serves the gateway, `make test` runs every test.
# Both create .venv and install everything the project needs from the package registry;
# torch is pinned first so pip takes the CPU build (see README "Set-up").
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test bench-proxy

$(BIN)/.memgate-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

install: $(BIN)/.memgate-installed

run: install
	$(BIN)/memgate serve --config gateway.yaml

test: install
	$(BIN)/pytest -q

bench-proxy: install
	$(BIN)/python -m bench proxy
