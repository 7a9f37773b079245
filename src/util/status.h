// Status and Result<T>: the error types that cross module boundaries (no exceptions do).
//
// A Status is either OK or carries a code and a message. Result<T> holds a T or a non-OK Status.
// Both are plain values: a const instance may be read from several threads at once; mutation needs
// external synchronisation, like any value type.
#ifndef NVML_EXPORTER_UTIL_STATUS_H_
#define NVML_EXPORTER_UTIL_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace nvmlx {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input: a flag, a file, a line
  kNotFound,         // a file, a device, a symbol
  kNotSupported,     // the GPU or driver does not offer this (NVML_ERROR_NOT_SUPPORTED etc.)
  kNoPermission,     // NVML_ERROR_NO_PERMISSION, EACCES
  kGpuLost,          // NVML_ERROR_GPU_IS_LOST: the device fell off the bus
  kUnavailable,      // transient: library not loaded, timeout, connection refused
  kInternal,         // anything else
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NOT_SUPPORTED: nvmlDeviceGetFanSpeed: Not Supported" style; "OK" when ok.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string msg) {
  return Status(StatusCode::kInvalidArgument, std::move(msg));
}
inline Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
inline Status NotSupported(std::string msg) {
  return Status(StatusCode::kNotSupported, std::move(msg));
}
inline Status Unavailable(std::string msg) {
  return Status(StatusCode::kUnavailable, std::move(msg));
}
inline Status Internal(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }

// Holds either a value or the reason there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace nvmlx

#define NVMLX_RETURN_IF_ERROR(expr) \
  do {                              \
    ::nvmlx::Status _st = (expr);   \
    if (!_st.ok()) return _st;      \
  } while (0)

#endif  // NVML_EXPORTER_UTIL_STATUS_H_
