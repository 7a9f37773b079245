// The process exit codes of nvml-exporter: the one table, and how a Status maps onto it.
//
//   0  kOk           a clean stop (SIGINT/SIGTERM), --help, --version, --once
//   1  kUnavailable  something the daemon needs cannot be used: the NVML library, a GPU named by
//                    --devices, the listen address
//   2  kUsage        bad flags, environment variables or files: the collectors CSV, the EMF
//                    rules and outputs, the Kubernetes API server configuration
//
// Every failure reaches the caller as a Status; ExitCodeFor() maps it: INVALID_ARGUMENT is a
// usage error, any other code kUnavailable. A step whose own error codes do not say which of the
// two it is (a missing collectors file is NOT_FOUND, yet a usage error; a malformed --address is
// INVALID_ARGUMENT from the server, yet exit 1 as an unusable listen address) re-codes its Status
// where it fails (app/daemon.cc).
//
// Thread-safety: pure functions.
#ifndef NVML_EXPORTER_CONFIG_EXIT_CODE_H_
#define NVML_EXPORTER_CONFIG_EXIT_CODE_H_

#include "util/status.h"

namespace nvmlx::config {

enum class ExitCode : int {
  kOk = 0,
  kUnavailable = 1,
  kUsage = 2,
};

constexpr int ToInt(ExitCode code) { return static_cast<int>(code); }

// kOk for OK, kUsage for INVALID_ARGUMENT, kUnavailable for anything else.
inline ExitCode ExitCodeFor(const Status& status) {
  if (status.ok()) return ExitCode::kOk;
  return status.code() == StatusCode::kInvalidArgument ? ExitCode::kUsage : ExitCode::kUnavailable;
}

}  // namespace nvmlx::config

#endif  // NVML_EXPORTER_CONFIG_EXIT_CODE_H_
