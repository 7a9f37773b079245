// The application: wires config -> nvml -> collect -> render -> serve, and runs until SIGINT or
// SIGTERM. main.cc only forwards argv and the environment here.
//
// Thread-safety: Run() is called once, from main, before any other thread exists (it blocks the
// termination signals so that only its own sigwait() receives them).
#ifndef NVML_EXPORTER_APP_APP_H_
#define NVML_EXPORTER_APP_APP_H_

namespace nvmlx::app {

// Returns the process exit code: 0 on a clean stop, 1 when NVML cannot be used, 2 for bad
// flags or files.
int Run(int argc, char** argv);

}  // namespace nvmlx::app

#endif  // NVML_EXPORTER_APP_APP_H_
