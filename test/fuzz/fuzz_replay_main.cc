// Replays a fuzz corpus through a libFuzzer entry point in an ordinary (g++) build, so that CI
// runs every corpus file and every crash reproducer through the same code as the fuzzer
// (cmake/fuzz.cmake links it into each <name>_fuzz_replay_test).
// Usage: <binary> DIR_OR_FILE...; fails when no input was found (an empty corpus proves nothing).
// An input that trips an invariant (abort) or crashes is named on stderr before the process dies.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being replayed, for the signal handler (a plain pointer: no constructor runs).
const char* g_current = nullptr;

void NameInputAndDie(int sig) {
  static const char kHead[] = "fuzz replay: crashed on input ";
  if (g_current != nullptr) {
    (void)!write(STDERR_FILENO, kHead, sizeof(kHead) - 1);
    (void)!write(STDERR_FILENO, g_current, std::strlen(g_current));
    (void)!write(STDERR_FILENO, "\n", 1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (std::filesystem::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "fuzz replay: %s: no such file or directory\n", argv[i]);
      return 1;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "fuzz replay: no corpus files given\n");
    return 1;
  }
  std::sort(files.begin(), files.end());  // the same order on every run
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, NameInputAndDie);
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name = f.string();
    g_current = name.c_str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  g_current = nullptr;
  std::printf("fuzz replay: %zu inputs ok\n", files.size());
  return 0;
}
