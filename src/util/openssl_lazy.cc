#include "util/openssl_lazy.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string>

#ifndef NVMLX_OPENSSL_LINKED

namespace {

constexpr const char* kNames[] = {
#define NVMLX_OPENSSL_FN(name) #name,
#include "util/openssl_lazy_symbols.inc"
#undef NVMLX_OPENSSL_FN
};

constexpr char kLibrary[] = "libssl.so.3";

// Written once by the call_once below; read after it (call_once synchronises).
void* g_ssl = nullptr;
const char* g_error = nullptr;
std::once_flag g_once;  // constexpr constructor: no static-initialisation order

void* Handle() {
  std::call_once(g_once, [] {
    // RTLD_LOCAL: nothing else resolves against it through us; libssl pulls libcrypto.
    g_ssl = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (g_ssl == nullptr) g_error = dlerror();
  });
  return g_ssl;
}

}  // namespace

extern "C" {

// The stubs' jump table, by position in openssl_lazy_symbols.inc; null until resolved. The
// assembly reads it with plain loads (x86-64 loads are acquire).
void* nvmlx_openssl_fns[std::size(kNames)] = {};

// Called by a stub's slow path with its index; returns the function to jump to.
void* nvmlx_openssl_resolve(unsigned index) {
  void* fn = nullptr;
  if (index < std::size(kNames) && Handle() != nullptr) fn = dlsym(g_ssl, kNames[index]);
  if (fn == nullptr) {
    std::fprintf(
        stderr, "nvml-exporter: OpenSSL function %s: %s\n",
        index < std::size(kNames) ? kNames[index] : "?",
        g_ssl == nullptr ? (g_error != nullptr ? g_error : kLibrary) : "not in libssl.so.3");
    std::abort();
  }
  __atomic_store_n(&nvmlx_openssl_fns[index], fn, __ATOMIC_RELEASE);
  return fn;
}

}  // extern "C"

namespace nvmlx::util {

Status LoadOpenSsl() {
  if (Handle() != nullptr) return Status::Ok();
  return InvalidArgument(std::string("TLS needs OpenSSL (") + kLibrary +
                         "), which cannot be loaded: " + (g_error != nullptr ? g_error : "?"));
}

#else  // NVMLX_OPENSSL_LINKED: no stubs on this architecture; OpenSSL is linked.

namespace {
constexpr char kLibrary[] = "libssl.so.3";
}  // namespace

namespace nvmlx::util {

Status LoadOpenSsl() { return Status::Ok(); }

#endif  // NVMLX_OPENSSL_LINKED

bool OpenSslLoaded() {
  // RTLD_NOLOAD: only asks whether it is loaded (by us, or by the kubelet plugin's gRPC).
  void* h = dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return false;
  dlclose(h);  // drops the reference RTLD_NOLOAD took
  return true;
}

}  // namespace nvmlx::util
