// The application: parses the flags, builds the Daemon (app/daemon.h) that owns every part, and
// runs it until SIGINT or SIGTERM (or, with --once, prints one page). main.cc only forwards argv
// here.
//
// Thread-safety: Run() is called once, from main, before any other thread exists (it blocks the
// termination signals so that only its own sigwait() receives them).
#ifndef NVML_EXPORTER_APP_APP_H_
#define NVML_EXPORTER_APP_APP_H_

namespace nvmlx::app {

// Returns the process exit code (config/exit_code.h): 0 on a clean stop, 1 when NVML, a GPU or
// the listen address cannot be used, 2 for bad flags or files.
int Run(int argc, char** argv);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_APP_H_
