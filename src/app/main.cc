// nvml-exporter: dcgm-exporter-compatible GPU metrics straight from NVML.
#include <pthread.h>
#include <signal.h>

#include <initializer_list>

#include "app/app.h"

namespace {

// The signals app::Run's main thread waits for (stop, reload, profiling pause) are blocked before
// anything else of ours runs, static initialisers included: one that came in the first
// milliseconds after exec would otherwise take its default action and end the process (a SIGHUP
// sent as the daemon starts). Blocked, it stays pending until the main thread takes it. Only the
// binary does this, not the libraries that tests link.
__attribute__((constructor(101))) void BlockMainSignalsAtExec() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

int main(int argc, char** argv) { return nvmlx::app::Run(argc, argv); }
