// Reading a file whole, bounded: the one door through which the daemon reads every file an
// operator or a peer controls (our configuration files through config/text_file.h, the Kubernetes
// token, the TLS files, the HPC job files, the energy state file). Hardening round three found the
// class of bug this closes: a path that holds a FIFO blocked the start for ever, a symlink to
// /dev/zero was read until memory ran out, a huge file was parsed for seconds. Here a FIFO or a
// device is refused without blocking, and nothing past `max_bytes` is read.
//
// Thread-safety: free functions with no shared state.
#ifndef NVML_EXPORTER_UTIL_FILE_H_
#define NVML_EXPORTER_UTIL_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "util/status.h"

namespace nvmlx::util {

// The contents of `path`, byte for byte, read through one non-blocking open of a regular file
// (symbolic links are followed: a Kubernetes projected volume is made of them). `what` names the
// file in errors ("collectors file", "service account token"). Errors, each starting "<path>: ":
//  - NOT_FOUND "cannot open the <what>" when it does not exist; NO_PERMISSION or INVALID_ARGUMENT
//    with the system's reason when it cannot be opened;
//  - INVALID_ARGUMENT when it is a directory, or no regular file (a FIFO would otherwise block
//    the open or the read until a writer comes, a device could be endless);
//  - INVALID_ARGUMENT "the <what> is larger than the <max_bytes> limit" when it holds more
//    (checked on its size first, and again while reading, as it may grow).
Result<std::string> ReadBoundedFile(const std::string& path, std::string_view what,
                                    size_t max_bytes);

// A size as messages name a cap: "1 MiB", "512 KiB", "100 bytes".
std::string SizeText(size_t bytes);

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_FILE_H_
