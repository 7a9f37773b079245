# Fuzz targets: one libFuzzer entry point (LLVMFuzzerTestOneInput), built two ways.
#
#   nvmlx_fuzz_target(<name> SOURCES <entry point and the parser's .cc files>
#                     [LIBS <libraries>] [CORPUS <dir>])
#
# - With NVMLX_BUILD_TESTS (the ordinary g++ build, `make test`): <name>_fuzz_replay_test, the
#   entry point linked with test/fuzz/fuzz_replay_main.cc and registered with ctest to run every
#   file of the corpus (default testdata/fuzz/<name>/), crash reproducers included. A corpus
#   that stops parsing, or a reproducer that crashes again, fails `make test`.
# - With NVMLX_BUILD_FUZZ (clang++ only, `make fuzz`, `make fuzz-smoke`): the libFuzzer binary
#   <build>/fuzz/<name>_fuzz, instrumented with ASan and UBSan, in the `fuzzers` target.
#
# SOURCES name the parser's own translation units rather than its whole library, so that the
# clang build compiles a few files per target and not the gRPC, Beast or OpenSSL code the
# library also holds (scripts/fuzz.sh keeps the CI step to a few minutes that way). LIBS are
# linked as given; in the fuzz build every one of our libraries is instrumented too (below).
if(NVMLX_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NVMLX_BUILD_FUZZ needs clang++ (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(NVMLX_SANITIZE)
    message(FATAL_ERROR "NVMLX_BUILD_FUZZ brings its own sanitizers; leave NVMLX_SANITIZE empty")
  endif()
  # Every target of this build gets coverage and the sanitizers, so that a fault inside a
  # library the entry point calls is found as well; only the fuzz binaries link libFuzzer's main.
  # -O1, as OSS-Fuzz builds its targets: a quicker build for the few seconds each runs in CI.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -O1
                      -fno-sanitize-recover=all
                      -fsanitize-coverage-ignorelist=${PROJECT_SOURCE_DIR}/cmake/fuzz_coverage_ignore.txt)
  add_link_options(-fsanitize=address,undefined)
  add_custom_target(fuzzers)
endif()

# The replay tests of the test builds compile the entry point only (the first of SOURCES) and
# link REPLAY_LIBS instead of LIBS: the libraries that already hold the parser's translation
# units, with their dependencies. The same code is then compiled once per build rather than once
# more per fuzz target, in each of make test, make asan and make tsan. Without REPLAY_LIBS a
# replay test compiles SOURCES, as the fuzz build does.
if(NVMLX_BUILD_TESTS)
  add_library(nvmlx_fuzz_replay_main OBJECT ${PROJECT_SOURCE_DIR}/test/fuzz/fuzz_replay_main.cc)
endif()

function(nvmlx_fuzz_target name)
  cmake_parse_arguments(F "" "CORPUS" "SOURCES;LIBS;REPLAY_LIBS" ${ARGN})
  if(NOT F_SOURCES)
    message(FATAL_ERROR "nvmlx_fuzz_target(${name}): SOURCES is required")
  endif()
  if(NOT F_CORPUS)
    set(F_CORPUS ${PROJECT_SOURCE_DIR}/testdata/fuzz/${name})
  endif()
  if(NVMLX_BUILD_TESTS)
    set(t ${name}_fuzz_replay_test)
    if(F_REPLAY_LIBS)
      list(GET F_SOURCES 0 entry)
      add_executable(${t} ${entry} $<TARGET_OBJECTS:nvmlx_fuzz_replay_main>)
      target_link_libraries(${t} PRIVATE ${F_REPLAY_LIBS})
    else()
      add_executable(${t} ${F_SOURCES} $<TARGET_OBJECTS:nvmlx_fuzz_replay_main>)
      target_link_libraries(${t} PRIVATE ${F_LIBS})
    endif()
    target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    add_test(NAME ${t} COMMAND ${t} ${F_CORPUS})
    set_tests_properties(${t} PROPERTIES TIMEOUT 120 LABELS fuzz)
    nvmlx_test_env(${t})
  endif()
  if(NVMLX_BUILD_FUZZ)
    set(t ${name}_fuzz)
    add_executable(${t} ${F_SOURCES})
    target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${t} PRIVATE ${F_LIBS})
    target_link_options(${t} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
    add_dependencies(fuzzers ${t})
  endif()
endfunction()
