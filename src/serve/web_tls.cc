#include "serve/web_tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <optional>
#include <vector>

#include "util/file.h"
#include "util/openssl_lazy.h"

namespace nvmlx::serve {
namespace {

namespace ssl = boost::asio::ssl;

// A certificate chain or CA bundle is KBs (a full system bundle ~200 KB); the cap only keeps a
// wrong path (a FIFO, /dev/zero, a log) from blocking or filling memory (util/file.h).
constexpr size_t kMaxTlsFileBytes = size_t{4} << 20;

std::optional<std::string> Slurp(const std::string& path) {
  Result<std::string> text = util::ReadBoundedFile(path, "TLS file", kMaxTlsFileBytes);
  if (!text.ok()) return std::nullopt;
  return std::move(*text);
}

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

int ProtoVersion(int v) {
  switch (v) {
    case 10:
      return TLS1_VERSION;
    case 11:
      return TLS1_1_VERSION;
    case 12:
      return TLS1_2_VERSION;
    default:
      return TLS1_3_VERSION;
  }
}

// Reads a PEM from `file` (or the inline text when `file` is empty).
Result<std::string> Pem(const std::string& file, const std::string& inline_text,
                        const std::string& key, const std::string& config_path) {
  if (file.empty()) return inline_text;
  std::optional<std::string> text = Slurp(file);
  if (!text) {
    return InvalidArgument(config_path + ": tls_server_config." + key + " " + file +
                           ": cannot read it");
  }
  return *text;
}

// Go's RequestClientCert and RequireAnyClientCert: take any certificate, verify nothing.
int AcceptAny(int /*preverify*/, X509_STORE_CTX* /*ctx*/) { return 1; }

}  // namespace

std::string WebFingerprint(const std::string& path) {
  std::string all;
  auto add = [&](const std::string& p) {
    std::optional<std::string> t = Slurp(p);
    all += p;
    all.push_back('\0');
    all += t ? std::to_string(t->size()) + ":" + *t : std::string("<missing>");
    all.push_back('\0');
  };
  add(path);
  Result<config::WebConfig> c = config::LoadWebConfig(path);
  if (c.ok()) {
    for (const std::string* f : {&c->tls.cert_file, &c->tls.key_file, &c->tls.client_ca_file}) {
      if (!f->empty()) add(*f);
    }
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(all.data(), all.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), n);
}

Result<std::shared_ptr<const WebState>> LoadWebState(const std::string& path) {
  // OpenSSL is loaded on first use (util/openssl_lazy.h); a web config is where the server
  // starts using it (the fingerprint's SHA-256, TLS, basic auth's cache keys), so a machine
  // without it fails here, as a configuration error, and the reloader never runs without it.
  NVMLX_RETURN_IF_ERROR(util::LoadOpenSsl());
  auto state = std::make_shared<WebState>();
  // The fingerprint first: a file that changes while we load it is loaded again next poll.
  state->fingerprint = WebFingerprint(path);
  Result<config::WebConfig> c = config::LoadWebConfig(path);
  if (!c.ok()) return c.status();
  state->config = std::move(*c);
  const config::WebConfig::Tls& t = state->config.tls;
  if (!t.enabled) return std::shared_ptr<const WebState>(std::move(state));

  Result<std::string> cert = Pem(t.cert_file, t.cert, "cert_file", path);
  if (!cert.ok()) return cert.status();
  Result<std::string> key = Pem(t.key_file, t.key, "key_file", path);
  if (!key.ok()) return key.status();
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  auto fail = [&](const std::string& what) {
    return InvalidArgument(path + ": tls_server_config: " + what + ": " + OpenSslError());
  };
  ERR_clear_error();
  SSL_CTX_set_options(native,
                      SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                          (t.prefer_server_cipher_suites ? SSL_OP_CIPHER_SERVER_PREFERENCE : 0));
  if (SSL_CTX_set_min_proto_version(native, ProtoVersion(t.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(native, ProtoVersion(t.max_version)) != 1) {
    return fail("min_version/max_version");
  }
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(*cert), ec);
  if (ec) {
    return InvalidArgument(path + ": tls_server_config: cert_file " + t.cert_file +
                           ": not a PEM certificate: " + ec.message());
  }
  ctx->use_private_key(boost::asio::buffer(*key), ssl::context::pem, ec);
  if (ec) {
    return InvalidArgument(
        path + ": tls_server_config: key_file " + t.key_file +
        ": cannot use it as the private key of cert_file (a PEM key matching the certificate): " +
        ec.message());
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return fail("key_file does not match cert_file");
  }
  if (!t.cipher_suites.empty()) {
    std::string list;
    for (const auto& c2 : t.cipher_suites) list += (list.empty() ? "" : ":") + c2;
    if (SSL_CTX_set_cipher_list(native, list.c_str()) != 1) return fail("cipher_suites");
  }
  if (!t.curves.empty()) {
    std::string list;
    for (const auto& c2 : t.curves) list += (list.empty() ? "" : ":") + c2;
    if (SSL_CTX_set1_groups_list(native, list.c_str()) != 1) return fail("curve_preferences");
  }
  if (!t.client_ca_file.empty() || !t.client_ca.empty()) {
    Result<std::string> ca = Pem(t.client_ca_file, t.client_ca, "client_ca_file", path);
    if (!ca.ok()) return ca.status();
    ctx->add_certificate_authority(boost::asio::buffer(*ca), ec);
    if (ec) {
      return InvalidArgument(path + ": tls_server_config: client_ca_file " + t.client_ca_file +
                             ": not a PEM certificate: " + ec.message());
    }
    // The CA names sent in the CertificateRequest, so clients pick the right certificate.
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    BIO* bio = BIO_new_mem_buf(ca->data(), static_cast<int>(ca->size()));
    while (X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(x)));
      X509_free(x);
    }
    BIO_free(bio);
    ERR_clear_error();
    SSL_CTX_set_client_CA_list(native, names);
  }
  switch (t.client_auth) {
    case config::ClientAuth::kNoClientCert:
      SSL_CTX_set_verify(native, SSL_VERIFY_NONE, nullptr);
      break;
    case config::ClientAuth::kRequestClientCert:
      SSL_CTX_set_verify(native, SSL_VERIFY_PEER, AcceptAny);
      break;
    case config::ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, AcceptAny);
      break;
    case config::ClientAuth::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
      break;
    case config::ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  // No session resumption across contexts: a rotated certificate is served to every new
  // connection at once.
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_options(native, SSL_OP_NO_TICKET);
  state->tls = std::move(ctx);
  return std::shared_ptr<const WebState>(std::move(state));
}

bool PeerHasAllowedSan(void* ssl_ptr, const std::vector<std::string>& allowed) {
  SSL* s = static_cast<SSL*>(ssl_ptr);
  X509* cert = SSL_get1_peer_certificate(s);
  if (cert == nullptr) return false;
  bool found = false;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names) && !found; ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
    std::string value;
    if (g->type == GEN_DNS || g->type == GEN_EMAIL || g->type == GEN_URI) {
      const ASN1_IA5STRING* s5 = g->d.ia5;
      value.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s5)),
                   ASN1_STRING_length(s5));
    } else if (g->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = g->d.iPAddress;
      char buf[INET6_ADDRSTRLEN] = {};
      const int len = ASN1_STRING_length(ip);
      if (len == 4 || len == 16) {
        inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(ip), buf, sizeof(buf));
        value = buf;
      }
    }
    for (const auto& a : allowed) found = found || (!value.empty() && a == value);
  }
  GENERAL_NAMES_free(names);
  X509_free(cert);
  return found;
}

}  // namespace nvmlx::serve
