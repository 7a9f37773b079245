// OpenSSL loaded on first use (openssl_lazy.h): not loaded before, a first call through a stub
// loads it and returns the real function's result, LoadOpenSsl() after that is a no-op.
#include "util/openssl_lazy.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <string>

namespace nvmlx::util {
namespace {

std::string Hex(const unsigned char* p, unsigned n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 15]);
  }
  return out;
}

// Runs first (gtest keeps declaration order): nothing in this binary has used OpenSSL yet.
TEST(OpenSslLazyTest, FirstCallLoadsOpenSslAndReturnsTheRealResult) {
#ifndef NVMLX_OPENSSL_LINKED
  EXPECT_FALSE(OpenSslLoaded()) << "libssl.so.3 mapped before any OpenSSL call";
#endif
  // Six arguments: every integer argument register goes through the stub's first-call path.
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  ASSERT_EQ(EVP_Digest("abc", 3, md, &n, EVP_sha256(), nullptr), 1);
  EXPECT_EQ(Hex(md, n), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(OpenSslLoaded());
  EXPECT_TRUE(LoadOpenSsl().ok());
  // Resolved entries are used from now on: the same result again.
  ASSERT_EQ(EVP_Digest("abc", 3, md, &n, EVP_sha256(), nullptr), 1);
  EXPECT_EQ(Hex(md, n), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace nvmlx::util
