# SPDX-License-Identifier: Apache-2.0
# dpzo: the two set-up commands are `make demo` and `make test`.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# `make fuzz` (docs/fuzzing.md): clang + libFuzzer, every target FUZZ_SECONDS seconds.
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= $(shell command -v clang-14 2>/dev/null || command -v clang 2>/dev/null || echo clang)
FUZZ_SECONDS ?= 300
# The Python suite runs in a virtual environment that `make test` creates (python/requirements-test.txt),
# against the build's libdpzo.so and CLI (docs/python.md).
PYTHON ?= python3
PYVENV ?= $(BUILD)/venv
PYTEST_ENV = DPZO_LIBRARY=$(abspath $(BUILD))/lib/libdpzo.so DPZO_CLI=$(abspath $(BUILD))/bin/dpzo \
             PYTHONPATH=$(CURDIR)/python

.PHONY: all deps configure build install demo test test-c test-python pyenv test-asan asan-build fuzz-build \
        fuzz bench clean wheel test-wheel check-layers

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# `make install PREFIX=/opt/dpzo` (docs/install.md): headers, libdpzo.so, dpzo.pc, the CMake
# package and the CLI.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

demo: build
	BUILD=$(BUILD) bash scripts/demo.sh

test: test-c test-python test-wheel

# pyenv first: the docs check runs docs/python.md's examples with the environment's Python.
test-c: build pyenv
	DPZO_PYTHON=$(abspath $(PYVENV))/bin/python \
	    ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

$(PYVENV)/.requirements: python/requirements-test.txt
	$(PYTHON) -m venv $(PYVENV)
	$(PYVENV)/bin/python -m pip install -q --upgrade pip
	$(PYVENV)/bin/python -m pip install -q -r python/requirements-test.txt
	cp python/requirements-test.txt $@

pyenv: $(PYVENV)/.requirements

test-python: build pyenv
	$(PYTEST_ENV) $(PYVENV)/bin/python -m pytest -q python/tests

# `make check-layers` (README.md, "Layout"): no include or call circle between files, no arrow
# back up between folders, no Python import circle (scripts/check_layers.py; the call check
# reads the build's objects with nm). `make test` runs it too (ctest `layers`).
check-layers: build
	$(PYTHON) scripts/check_layers.py --build $(BUILD)

# `make wheel` (docs/install.md): dist/dpzo-<version>.tar.gz and the manylinux wheel built from
# it, with the libraries it needs inside (scripts/build-wheel.sh; build tools in
# $(BUILD)/wheel-venv, the persistent CMake folder in $(BUILD)/wheel).
wheel: deps
	PYTHON=$(PYTHON) WHEEL_VENV=$(BUILD)/wheel-venv WHEEL_WORK=$(BUILD)/wheel bash scripts/build-wheel.sh

# That wheel in a fresh venv, with the system's copies of its libraries hidden
# (tests/wheel/run.sh).
test-wheel: deps
	PYTHON=$(PYTHON) WHEEL_VENV=$(BUILD)/wheel-venv WHEEL_WORK=$(BUILD)/wheel \
	    WHEEL_TEST_DIR=$(BUILD)/wheel-test bash tests/wheel/run.sh

# -O1, as the fuzz build and the sanitizers' own documentation have it: at -O0 the C suite
# took 1760 s under ASan on the 2-core Intel Xeon, at -O1 (same machine, docs check aside)
# its tests' times summed 7% lower and test_model's fell from 37 to 9 s.
asan-build: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DDPZO_SANITIZE=ON -DDPZO_BUILD_BENCH=OFF \
	    "-DCMAKE_C_FLAGS_DEBUG=-g -O1"
	cmake --build $(ASAN_BUILD) -j $(JOBS)

test-asan: asan-build
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

fuzz-build: deps
	CC=$(FUZZ_CC) cmake -S . -B $(FUZZ_BUILD) -DDPZO_FUZZ=ON -DDPZO_BUILD_TESTS=OFF \
	    -DDPZO_BUILD_BENCH=OFF -DDPZO_CUDA=OFF -DDPZO_WERROR=OFF -DCMAKE_BUILD_TYPE=Debug \
	    "-DCMAKE_C_FLAGS_DEBUG=-g -O1"
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_JOBS=$(JOBS) bash fuzz/run.sh $(FUZZ_SECONDS)

bench: build
	bash bench/run.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
