# The two commands (README): `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= $(shell PYENV_VERSION=3.12.1 pyenv which python3.12 2>/dev/null || command -v python3.12)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install

# rules/_compact.c is compiled by the install: a change to it needs one.
$(STAMP): pyproject.toml rules/_compact.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/warden demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check proxy rules models audit tests bench
	$(BIN)/mypy
