# nvml-exporter — the two commands of the README:
#   make run    build, then serve /metrics on :9400 (real GPUs when present, else simulated ones)
#   make test   build, then run every unit and integration test under ctest
# Extra daemon flags: make run ARGS="-c 5000 --debug"
BUILD ?= build
JOBS ?= $(shell nproc)
ARGS ?=
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build test run bundle bench clean format tidy

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 300

# Real GPUs when the driver's NVML is present and a GPU device node exists; otherwise the
# simulated GPUs of tools/simgpu. Collects every second (dcgm-exporter's default is 30 s).
run: build
	@bash scripts/run.sh $(BUILD) $(ARGS)

bundle: build
	@bash scripts/make-bundle.sh $(BUILD) bundle

bench: build
	@bash bench/run.sh $(BUILD)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

tidy: build
	run-clang-tidy -quiet -p $(BUILD) -extra-arg=-Wno-unknown-warning-option '$(CURDIR)/src/.*\.cc$$'

clean:
	rm -rf $(BUILD) bundle
