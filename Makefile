# nvml-exporter — the two commands of the README:
#   make run    build, then serve /metrics on :9400 (real GPUs when present, else simulated ones)
#   make test   build, then run every unit and integration test under ctest
#   make demo   the exporter (simulated GPUs and pods unless a GPU is here) and a real Prometheus
#               scraping it every second with deploy/prometheus/rules.yml; Ctrl-C stops both
# Extra daemon flags: make run ARGS="-c 5000 --debug"
# Checks (docs/development.md "Sanitizers and checks"; .ci/run runs them all):
#   make asan           g++ ASan+UBSan build in build-asan, then every ctest test under it
#   make thread-safety  clang++ -Wthread-safety -Werror over every C++ file of build-tsan: what
#                       make tsan runs is compiled, the rest only parsed (scripts/thread_safety.py)
#   make tsan           the tests labelled concurrency, built in build-tsan (TSan), under ctest
#   make layering       scripts/check_layering.py: src/'s includes against the folder order;
#                       scripts/check_json_access.py: no JSON read of src/ can throw
#   make fuzz           clang++ libFuzzer build in build-fuzz, each fuzzer FUZZ_SECONDS (60) s
#   make fuzz-smoke     the same build, each fuzzer 20 s (CI)
# make screenshots: the live page's browser test, then its PNGs copied to docs/live-page/
# make flags-doc: docs/flags.md's tables regenerated from the flag tables of src/config
# make dcgm-fields-doc: docs/dcgm-fields.md's served/skipped counts regenerated from the catalog
# Each target installs only the Debian packages it needs (scripts/install-deps.sh GROUP): make run
# the toolchain and the daemon's libraries (group run); make test, build, bench, bundle the test
# group; make demo and make image the build group plus their own; the checks the ci group
# (test plus clang). make deps: every group.
BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS ?= $(shell nproc)
# ctest runs twice as many tests as there are cores: most tests wait (for a daemon they started,
# a timer, a peer) rather than compute; on 2 cores the plain suite kept them 30 % busy at -j 2.
# The few that compute or assert latencies say so with PROCESSORS in their CMakeLists (ctest
# counts them as that many). make tsan keeps JOBS: its tests are the heavy ones.
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
ARGS ?=
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
# The sanitizer builds skip the benchmarks: nothing runs them there.
SAN_CMAKE_FLAGS ?= $(CMAKE_FLAGS) -DNVMLX_BUILD_BENCH=OFF
# The thread-safety analysis is clang's, and so is the better TSan runtime: one clang++ build
# folder serves both, instead of two builds in CI. ASan+UBSan stays on g++, the compiler that
# builds what ships.
TSAN_CXX ?= clang++

DEPS_GROUPS := run build demo image test ci

.PHONY: all deps $(addprefix deps-,$(DEPS_GROUPS)) build test run demo bundle image bench clean \
  format tidy asan tsan thread-safety layering fuzz fuzz-smoke screenshots flags-doc \
  dcgm-fields-doc

all: build

deps: deps-ci

$(addprefix deps-,$(DEPS_GROUPS)):
	@bash scripts/install-deps.sh $(@:deps-%=%)

# One build folder for all: scripts/configure.sh configures $(BUILD) when it has no build.ninja
# yet, or when it lacks a setting the target needs. make run makes it without the tests and
# benchmarks (their libraries are the test group's); make test turns them on. The kubelet
# plugin (gRPC) is built when gRPC is installed (NVMLX_BUILD_KUBELET_PLUGIN=AUTO): make demo and
# make image need it (ON).
CONFIGURE = bash scripts/configure.sh $(BUILD)
# A folder made for the daemon alone also leaves out debug information (NVMLX_DEBUG_INFO=OFF;
# other folders get line tables only, LINES); cmake -DNVMLX_DEBUG_INFO=ON build gives full -g.
# It is a unity build (CMAKE_UNITY_BUILD: each target's files compiled a few at a time as one,
# so the headers of Boost.Asio, gRPC and nlohmann are parsed and their templates instantiated
# once per batch, not per file): 48 steps instead of 141, 91-96 s instead of 154 on two cores
# (docs/benchmarks.md "Performance round"). scripts/check_unity_names.py (make layering, CI)
# keeps two files of one target from defining the same file-local name, which would break it;
# should it break anyway, make run says so and builds file by file. make test turns it off again,
# so the tests and their diagnostics are built one file at a time as before.
RUN_SETTINGS = -DNVMLX_BUILD_TESTS=OFF -DNVMLX_BUILD_BENCH=OFF -DNVMLX_DEBUG_INFO=OFF \
  -DCMAKE_UNITY_BUILD=ON
CONFIGURE_RUN = $(CONFIGURE) --fresh $(RUN_SETTINGS) -- $(CMAKE_FLAGS)
CONFIGURE_ALL = $(CONFIGURE) --need -DNVMLX_BUILD_TESTS=ON -DNVMLX_BUILD_BENCH=ON \
  -DCMAKE_UNITY_BUILD=OFF -- $(CMAKE_FLAGS)
CONFIGURE_PLUGIN = $(CONFIGURE) --fresh $(RUN_SETTINGS) --need -DNVMLX_BUILD_KUBELET_PLUGIN=ON \
  -- $(CMAKE_FLAGS)

build: deps-test
	@$(CONFIGURE_ALL)
	cmake --build $(BUILD) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(TEST_JOBS) --timeout 300

# Real GPUs when the driver's NVML is present and a GPU device node exists; otherwise the
# simulated GPUs of tools/simgpu. Collects every second (dcgm-exporter's default is 30 s).
# Builds only the daemon and the simulated NVML (and the kubelet plugin when gRPC is installed),
# not the tests and benchmarks.
run: deps-run
	@$(CONFIGURE_RUN)
	cmake --build $(BUILD) -j $(JOBS) --target nvml-exporter simgpu || { \
	  echo "make run: the unity build failed (see above); building file by file" >&2; \
	  cmake -S . -B $(BUILD) -DCMAKE_UNITY_BUILD=OFF >/dev/null && \
	  cmake --build $(BUILD) -j $(JOBS) --target nvml-exporter simgpu; }
	@bash scripts/run.sh $(BUILD) $(ARGS)

# scripts/demo.sh: prints the URLs; Ctrl-C stops everything it started.
demo: deps-demo
	@$(CONFIGURE_PLUGIN)
	cmake --build $(BUILD) -j $(JOBS) --target nvml-exporter simgpu kubelet_fixture
	@bash scripts/demo.sh $(BUILD)

# The ASan build's libraries are a unity build, as make run's daemon (docs/development.md "Unity
# builds"; test-only code stays file by file): the plain build of make test already compiles
# every file on its own, so this one is only the sanitizers' run.
$(BUILD_ASAN)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD_ASAN) -G Ninja $(SAN_CMAKE_FLAGS) -DNVMLX_SANITIZE=address,undefined \
	  -DCMAKE_UNITY_BUILD=ON

$(BUILD_TSAN)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD_TSAN) -G Ninja $(SAN_CMAKE_FLAGS) -DCMAKE_CXX_COMPILER=$(TSAN_CXX) \
	  -DNVMLX_SANITIZE=thread

# Every test, the daemons of the integration tests included, under ASan+UBSan (and LSan at
# exit); a report anywhere fails sanitizer_logs_check, which prints it.
asan: deps-ci $(BUILD_ASAN)/build.ninja
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	ctest --test-dir $(BUILD_ASAN) --output-on-failure -j $(TEST_JOBS) --timeout 600

# clang reports -Wthread-safety while parsing, so a file needs no object to be checked. The
# binaries make tsan runs (concurrency_tests) are compiled, which checks their files; every other
# file of compile_commands.json (the rest of the tests, the tools) gets clang -fsyntax-only with
# its own flags, about half the cost of compiling and linking it. Any warning fails, file:line.
thread-safety: deps-ci $(BUILD_TSAN)/build.ninja
	python3 scripts/thread_safety.py $(BUILD_TSAN) --build concurrency_tests -j $(JOBS)

# The tests whose threads meet (LABELS concurrency in the CMakeLists), under TSan. Builds only
# them and what they start (concurrency_tests in the top CMakeLists); after make thread-safety
# that is already done. Not a prerequisite: the syntax pass would run again for nothing.
tsan: deps-ci $(BUILD_TSAN)/build.ninja
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target concurrency_tests
	ctest --test-dir $(BUILD_TSAN) --output-on-failure -j $(JOBS) --timeout 600 -L concurrency

layering:
	python3 scripts/check_layering.py
	python3 scripts/check_json_access.py
	python3 scripts/check_unity_names.py

# libFuzzer (clang++) over every entry point of cmake/fuzz.cmake, from the seeds in testdata/fuzz/;
# new inputs go to build-fuzz/corpus/, crashes to build-fuzz/artifacts/ (scripts/fuzz.sh). The
# seeds themselves are replayed by `make test` (the *_fuzz_replay_test tests).
fuzz: deps-ci
	@bash scripts/fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

fuzz-smoke: deps-ci
	@bash scripts/fuzz.sh $(BUILD_FUZZ) 20

bundle: build
	@bash scripts/make-bundle.sh $(BUILD) bundle

# The container image without a container engine (deploy/image/build.sh): $(BUILD)/image/
# nvml-exporter.oci.tar, its unpacked bundle, rootfs.tar.gz and sizes.txt. `docker build .`
# makes the same image from the Dockerfile. The image carries the kubelet plugin: gRPC needed.
image: deps-image
	@$(CONFIGURE_PLUGIN)
	cmake --build $(BUILD) -j $(JOBS) --target nvml-exporter simgpu
	@bash deploy/image/build.sh $(BUILD)

bench: build
	@bash bench/run.sh $(BUILD)

# The live page's screenshots in docs/live-page/, refreshed by its browser test (which itself
# writes only into the build folder).
screenshots: build
	ctest --test-dir $(BUILD) -R '^browser_live_page$$' --output-on-failure
	mkdir -p docs/live-page
	cp $(BUILD)/browser-test/screenshots/*.png docs/live-page/

# docs/flags.md's tables, from the flag tables of src/config (src/config/flags_doc.cc); the ctest
# test flags_doc_check fails when the page was not regenerated after a flag changed.
flags-doc: deps-run
	@$(CONFIGURE_RUN)
	cmake --build $(BUILD) -j $(JOBS) --target flags_doc
	@bash scripts/flags_doc.sh $(BUILD)/src/config/flags_doc docs/flags.md

# docs/dcgm-fields.md's generated parts (the served and skipped counts, the served ids by how they
# are read), from the catalog (src/fields/dcgm_fields_doc.cc); the ctest test dcgm_fields_doc_check
# fails when the page was not regenerated after a catalog row came or went.
dcgm-fields-doc: deps-run
	@$(CONFIGURE_RUN)
	cmake --build $(BUILD) -j $(JOBS) --target dcgm_fields_doc
	@python3 scripts/dcgm_fields_doc.py $(BUILD)/src/fields/dcgm_fields_doc docs/dcgm-fields.md

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

tidy: deps-ci build
	run-clang-tidy -quiet -p $(BUILD) -extra-arg=-Wno-unknown-warning-option '$(CURDIR)/src/.*\.cc$$'

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ) bundle
