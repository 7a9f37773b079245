// OpenSSL, loaded on first use: the daemon does not link libssl and libcrypto; every OpenSSL
// function it calls (openssl_lazy_symbols.inc) is a small x86-64 stub (openssl_lazy_x86_64.S)
// that jumps through a table, and the first call of each resolves its entry with dlsym, after
// libssl.so.3 is loaded with dlopen, once.
//
// Why: linked, the two libraries cost ~1.7 MiB of resident memory in every process (relocations
// and the pages around them), while only TLS (--web-config-file with tls_server_config), basic
// auth and the Kubernetes API-server client use them (docs/benchmarks.md, "Resident memory").
//
// The code paths that use OpenSSL call LoadOpenSsl() first, where a missing library is an error
// Status; a stub reached without it (a path that forgot) and no library ends the process with a
// message naming the library, since a stub cannot return an error.
//
// Thread-safety: everything here may be called from any thread (dlopen once, under a once-flag;
// table entries are written with atomic stores of the value every thread would resolve).
#ifndef NVML_EXPORTER_UTIL_OPENSSL_LAZY_H_
#define NVML_EXPORTER_UTIL_OPENSSL_LAZY_H_

#include "util/status.h"

namespace nvmlx::util {

// Loads libssl.so.3 (and with it libcrypto.so.3) if not done yet. INVALID_ARGUMENT (a
// configuration that needs TLS on a machine without OpenSSL: exit code 2) when it cannot.
Status LoadOpenSsl();

// Whether OpenSSL is loaded in this process (for tests and benchmarks).
bool OpenSslLoaded();

}  // namespace nvmlx::util

#endif  // NVML_EXPORTER_UTIL_OPENSSL_LAZY_H_
