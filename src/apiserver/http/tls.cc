#include "apiserver/http/tls.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

namespace slicewright::apiserver {
namespace {

// X509_gmtime_adj takes a C long.
constexpr long kValiditySeconds = 365L * 24 * 60 * 60;  // NOLINT(google-runtime-int)
constexpr long kBackdateSeconds = 60L * 60;             // NOLINT(google-runtime-int): clock skew
constexpr std::time_t kMinRemainingSeconds = std::time_t{24} * 60 * 60;  // renew within a day
constexpr const char* kCaCommonName = "slicewright-ca";
constexpr const char* kServerCommonName = "slicewright-apiserver";
// The kubeconfig user's identity, named as kubeadm names its admin (the group kube-apiserver maps
// to cluster-admin).
constexpr const char* kClientCommonName = "slicewright-admin";
constexpr const char* kClientOrganization = "system:masters";

// What a certificate is for: the CA is self-signed, the others are signed by it.
enum class CertKind { kCa, kServer, kClient };

struct OpenSslFree {
  void operator()(X509* p) const { X509_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
  void operator()(GENERAL_NAME* p) const { GENERAL_NAME_free(p); }
};
using X509Ptr = std::unique_ptr<X509, OpenSslFree>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree>;
using BioPtr = std::unique_ptr<BIO, OpenSslFree>;

// The oldest queued OpenSSL error as text (the queue is cleared), or "unknown error".
std::string OpenSslError() {
  unsigned long code = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  ERR_clear_error();
  if (code == 0) return "unknown error";
  std::array<char, 256> buffer{};
  ERR_error_string_n(code, buffer.data(), buffer.size());
  return buffer.data();
}

Status OpenSslFailure(std::string_view what) {
  return InternalError(std::string(what) + ": " + OpenSslError());
}

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

BioPtr ReadBio(std::string_view pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

X509Ptr ParseCertificate(std::string_view pem) {
  BioPtr bio = ReadBio(pem);
  if (!bio) return nullptr;
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return cert;
}

KeyPtr ParseKey(std::string_view pem) {
  BioPtr bio = ReadBio(pem);
  if (!bio) return nullptr;
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return key;
}

// Drains a memory BIO into a string.
std::string BioContents(BIO* bio) {
  std::string out(BIO_ctrl_pending(bio), '\0');
  int n = out.empty() ? 0 : BIO_read(bio, out.data(), static_cast<int>(out.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

Result<std::string> CertificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1)
    return OpenSslFailure("encoding certificate");
  return BioContents(bio.get());
}

Result<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslFailure("encoding private key");
  }
  return BioContents(bio.get());
}

// Reads a whole file; nullopt when it does not exist.
Result<std::optional<std::string>> ReadIfExists(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return InvalidError("reading " + path + ": " + ErrnoText(errno));
  }
  std::string data;
  std::array<char, 4096> buffer{};
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      return InvalidError("reading " + path + ": " + ErrnoText(error));
    }
    if (n == 0) break;
    data.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return std::optional<std::string>(std::move(data));
}

// Writes `data` to `path` with `mode` through a temporary file and a rename, so a reader never
// sees half a key and a crash leaves the old file in place.
Status WriteFileAtomically(const std::string& path, std::string_view data, mode_t mode) {
  const std::string temp = path + ".tmp";
  ::unlink(temp.c_str());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return InvalidError("writing " + path + ": " + ErrnoText(errno));
  auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temp.c_str());
    return InvalidError("writing " + path + ": " + ErrnoText(error));
  };
  if (::fchmod(fd, mode) != 0) return fail(errno);  // the umask may have narrowed 0644
  std::size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno);
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return fail(errno);
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    return InvalidError("writing " + path + ": " + ErrnoText(error));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    return InvalidError("writing " + path + ": " + ErrnoText(error));
  }
  return Status::Ok();
}

bool IsIpLiteral(const std::string& host) {
  ASN1_OCTET_STRING* ip = a2i_IPADDRESS(host.c_str());
  ERR_clear_error();
  if (ip == nullptr) return false;
  ASN1_OCTET_STRING_free(ip);
  return true;
}

// True when `cert` expires more than a day from now.
bool NotExpiringSoon(X509* cert) {
  std::time_t limit = std::time(nullptr) + kMinRemainingSeconds;
  return X509_cmp_time(X509_get0_notAfter(cert), &limit) > 0;
}

bool CoversHost(X509* cert, const std::string& host) {
  int matched = IsIpLiteral(host) ? X509_check_ip_asc(cert, host.c_str(), 0)
                                  : X509_check_host(cert, host.data(), host.size(),
                                                    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, nullptr);
  ERR_clear_error();
  return matched == 1;
}

struct KeyPair {
  X509Ptr cert;
  KeyPtr key;
};

// A parsed certificate whose key matches; nullopt for anything unusable.
std::optional<KeyPair> ParsePair(const std::optional<std::string>& cert_pem,
                                 const std::optional<std::string>& key_pem) {
  if (!cert_pem || !key_pem) return std::nullopt;
  KeyPair pair{ParseCertificate(*cert_pem), ParseKey(*key_pem)};
  if (!pair.cert || !pair.key) return std::nullopt;
  bool matches = X509_check_private_key(pair.cert.get(), pair.key.get()) == 1;
  ERR_clear_error();
  if (!matches) return std::nullopt;
  return pair;
}

bool UsableCa(const KeyPair& ca) {
  return X509_check_ca(ca.cert.get()) >= 1 && NotExpiringSoon(ca.cert.get());
}

// Issued and signed by `ca`, and not about to expire.
bool SignedBy(const KeyPair& leaf, const KeyPair& ca) {
  if (X509_check_issued(ca.cert.get(), leaf.cert.get()) != X509_V_OK) return false;
  bool signed_by_ca = X509_verify(leaf.cert.get(), ca.key.get()) == 1;
  ERR_clear_error();
  return signed_by_ca && NotExpiringSoon(leaf.cert.get());
}

bool UsableServer(const KeyPair& server, const KeyPair& ca, const std::vector<std::string>& hosts) {
  if (!SignedBy(server, ca)) return false;
  return std::all_of(hosts.begin(), hosts.end(),
                     [&](const std::string& host) { return CoversHost(server.cert.get(), host); });
}

Result<KeyPtr> GenerateKey() {
  std::unique_ptr<EVP_PKEY_CTX, OpenSslFree> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_group_name(ctx.get(), "P-256") != 1 ||
      EVP_PKEY_generate(ctx.get(), &raw) != 1) {
    return OpenSslFailure("generating an ECDSA P-256 key");
  }
  return KeyPtr(raw);
}

Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  std::unique_ptr<X509_EXTENSION, OpenSslFree> ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslFailure(std::string("adding certificate extension ") + OBJ_nid2sn(nid));
  }
  return Status::Ok();
}

Status AddSubjectAltNames(X509* cert, const std::vector<std::string>& hosts) {
  std::unique_ptr<GENERAL_NAMES, OpenSslFree> names(sk_GENERAL_NAME_new_null());
  if (!names) return OpenSslFailure("allocating subjectAltName");
  for (const std::string& host : hosts) {
    std::unique_ptr<GENERAL_NAME, OpenSslFree> name(GENERAL_NAME_new());
    if (!name) return OpenSslFailure("allocating subjectAltName");
    if (ASN1_OCTET_STRING* ip = a2i_IPADDRESS(host.c_str()); ip != nullptr) {
      GENERAL_NAME_set0_value(name.get(), GEN_IPADD, ip);
    } else {
      ERR_clear_error();
      ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
      if (dns == nullptr || ASN1_STRING_set(dns, host.data(), static_cast<int>(host.size())) != 1) {
        ASN1_IA5STRING_free(dns);
        return OpenSslFailure("encoding subjectAltName " + host);
      }
      GENERAL_NAME_set0_value(name.get(), GEN_DNS, dns);
    }
    if (sk_GENERAL_NAME_push(names.get(), name.get()) <= 0) {
      return OpenSslFailure("encoding subjectAltName");
    }
    static_cast<void>(name.release());  // owned by `names` now
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return OpenSslFailure("adding subjectAltName");
  }
  return Status::Ok();
}

// Issues a certificate of `kind` for `key` named `common_name`; self-signed when `issuer` is null
// (kCa).
Result<X509Ptr> IssueCertificate(CertKind kind, EVP_PKEY* key, const char* common_name,
                                 const KeyPair* issuer, const std::vector<std::string>& hosts) {
  X509Ptr cert(X509_new());
  std::unique_ptr<BIGNUM, OpenSslFree> serial(BN_new());
  if (!cert || !serial || X509_set_version(cert.get(), 2) != 1 ||
      BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -kBackdateSeconds) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValiditySeconds) == nullptr ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslFailure("building certificate");
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(common_name), -1, -1,
                                 0) != 1) {
    return OpenSslFailure("building certificate subject");
  }
  if (kind == CertKind::kClient &&
      X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(kClientOrganization), -1,
                                 -1, 0) != 1) {
    return OpenSslFailure("building certificate subject");
  }
  X509* issuer_cert = issuer != nullptr ? issuer->cert.get() : cert.get();
  EVP_PKEY* signing_key = issuer != nullptr ? issuer->key.get() : key;
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer_cert)) != 1) {
    return OpenSslFailure("building certificate issuer");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer_cert, cert.get(), nullptr, nullptr, 0);
  if (kind == CertKind::kCa) {
    SW_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE"));
    SW_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_key_usage,
                                    "critical,digitalSignature,keyCertSign,cRLSign"));
    SW_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  } else {
    SW_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE"));
    SW_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_key_usage, "critical,digitalSignature"));
    SW_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_ext_key_usage,
                                    kind == CertKind::kServer ? "serverAuth" : "clientAuth"));
    SW_RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
    SW_RETURN_IF_ERROR(
        AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always"));
    if (kind == CertKind::kServer) SW_RETURN_IF_ERROR(AddSubjectAltNames(cert.get(), hosts));
  }
  if (X509_sign(cert.get(), signing_key, EVP_sha256()) <= 0) {
    return OpenSslFailure("signing certificate");
  }
  return cert;
}

struct PemPair {
  std::string cert;
  std::string key;
};

// Generates a key and certificate and writes them (key first, 0600) to the given paths.
Result<PemPair> GenerateAndWrite(CertKind kind, const char* common_name, const KeyPair* issuer,
                                 const std::vector<std::string>& hosts,
                                 const std::string& cert_path, const std::string& key_path,
                                 KeyPair* generated) {
  SW_ASSIGN_OR_RETURN(KeyPtr key, GenerateKey());
  SW_ASSIGN_OR_RETURN(X509Ptr cert, IssueCertificate(kind, key.get(), common_name, issuer, hosts));
  PemPair pem;
  SW_ASSIGN_OR_RETURN(pem.key, KeyPem(key.get()));
  SW_ASSIGN_OR_RETURN(pem.cert, CertificatePem(cert.get()));
  SW_RETURN_IF_ERROR(WriteFileAtomically(key_path, pem.key, 0600));
  SW_RETURN_IF_ERROR(WriteFileAtomically(cert_path, pem.cert, 0644));
  if (generated != nullptr) *generated = KeyPair{std::move(cert), std::move(key)};
  return pem;
}

// The hosts every serving certificate covers, then the caller's, without duplicates.
Result<std::vector<std::string>> AllHosts(const std::vector<std::string>& extra) {
  std::vector<std::string> hosts = {"127.0.0.1", "::1", "localhost"};
  for (std::string host : extra) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (host.empty() || host.find_first_of(", \t\r\n") != std::string::npos) {
      return InvalidError("invalid certificate host \"" + host + "\"");
    }
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return hosts;
}

int SelectAlpn(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length,
               const unsigned char* in, unsigned int in_length, void* /*arg*/) {
  static constexpr std::string_view kHttp11 = "http/1.1";
  // `in` is the client's list of length-prefixed protocol names.
  for (unsigned int i = 0; i < in_length;) {
    unsigned int length = in[i];
    if (i + 1 + length > in_length) break;
    if (length == kHttp11.size() && std::memcmp(in + i + 1, kHttp11.data(), length) == 0) {
      *out = in + i + 1;
      *out_length = static_cast<unsigned char>(length);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + length;
  }
  return SSL_TLSEXT_ERR_NOACK;  // no ALPN: the client speaks HTTP/1.1
}

}  // namespace

Result<GeneratedTls> EnsureCertificates(const std::string& dir,
                                        const std::vector<std::string>& hosts) {
  SW_ASSIGN_OR_RETURN(std::vector<std::string> all_hosts, AllHosts(hosts));
  if (dir.empty()) return InvalidError("the certificate directory is empty");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidError("creating certificate directory " + dir + ": " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) {
    return InvalidError("creating certificate directory " + dir + ": not a directory");
  }
  std::filesystem::path base = std::filesystem::absolute(dir, ec);
  if (ec) return InvalidError("resolving certificate directory " + dir + ": " + ec.message());
  const std::string ca_crt_path = (base / "ca.crt").string();
  const std::string ca_key_path = (base / "ca.key").string();
  const std::string server_crt_path = (base / "server.crt").string();
  const std::string server_key_path = (base / "server.key").string();
  const std::string client_crt_path = (base / "client.crt").string();
  const std::string client_key_path = (base / "client.key").string();

  SW_ASSIGN_OR_RETURN(std::optional<std::string> ca_crt, ReadIfExists(ca_crt_path));
  SW_ASSIGN_OR_RETURN(std::optional<std::string> ca_key, ReadIfExists(ca_key_path));
  SW_ASSIGN_OR_RETURN(std::optional<std::string> server_crt, ReadIfExists(server_crt_path));
  SW_ASSIGN_OR_RETURN(std::optional<std::string> server_key, ReadIfExists(server_key_path));
  SW_ASSIGN_OR_RETURN(std::optional<std::string> client_crt, ReadIfExists(client_crt_path));
  SW_ASSIGN_OR_RETURN(std::optional<std::string> client_key, ReadIfExists(client_key_path));

  std::optional<KeyPair> ca = ParsePair(ca_crt, ca_key);
  if (ca && !UsableCa(*ca)) ca.reset();
  bool reuse_server = false;
  bool reuse_client = false;
  if (ca) {
    std::optional<KeyPair> server = ParsePair(server_crt, server_key);
    reuse_server = server && UsableServer(*server, *ca, all_hosts);
    std::optional<KeyPair> client = ParsePair(client_crt, client_key);
    reuse_client = client && SignedBy(*client, *ca);
  } else {
    KeyPair generated;
    SW_ASSIGN_OR_RETURN(PemPair ca_pem, GenerateAndWrite(CertKind::kCa, kCaCommonName, nullptr, {},
                                                         ca_crt_path, ca_key_path, &generated));
    ca = std::move(generated);
    ca_crt = std::move(ca_pem.cert);
  }
  GeneratedTls tls;
  if (reuse_server) {
    tls.server = TlsMaterial{std::move(*server_crt), std::move(*server_key)};
  } else {
    SW_ASSIGN_OR_RETURN(PemPair server_pem,
                        GenerateAndWrite(CertKind::kServer, kServerCommonName, &*ca, all_hosts,
                                         server_crt_path, server_key_path, nullptr));
    tls.server = TlsMaterial{std::move(server_pem.cert), std::move(server_pem.key)};
  }
  if (reuse_client) {
    tls.client_certificate_pem = std::move(*client_crt);
    tls.client_key_pem = std::move(*client_key);
  } else {
    SW_ASSIGN_OR_RETURN(PemPair client_pem,
                        GenerateAndWrite(CertKind::kClient, kClientCommonName, &*ca, {},
                                         client_crt_path, client_key_path, nullptr));
    tls.client_certificate_pem = std::move(client_pem.cert);
    tls.client_key_pem = std::move(client_pem.key);
  }
  tls.ca_certificate_pem = std::move(*ca_crt);
  tls.ca_certificate_path = ca_crt_path;
  return tls;
}

namespace internal {

Status ConfigureServerContext(ssl_ctx_st* ctx, const TlsMaterial& material) {
  ERR_clear_error();
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    return InvalidError("TLS: setting the minimum protocol version: " + OpenSslError());
  }
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Idle connections (open watches) give their read and write buffers back.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);

  BioPtr chain = ReadBio(material.certificate_chain_pem);
  if (!chain) return InvalidError("TLS certificate: " + OpenSslError());
  X509Ptr leaf(PEM_read_bio_X509(chain.get(), nullptr, nullptr, nullptr));
  if (!leaf) return InvalidError("TLS certificate: no PEM certificate: " + OpenSslError());
  if (SSL_CTX_use_certificate(ctx, leaf.get()) != 1) {
    return InvalidError("TLS certificate: " + OpenSslError());
  }
  for (;;) {
    X509Ptr intermediate(PEM_read_bio_X509(chain.get(), nullptr, nullptr, nullptr));
    if (!intermediate) break;
    if (SSL_CTX_ctrl(ctx, SSL_CTRL_CHAIN_CERT, 0, intermediate.get()) != 1) {
      return InvalidError("TLS certificate chain: " + OpenSslError());
    }
    static_cast<void>(intermediate.release());  // owned by the context now
  }
  ERR_clear_error();  // the loop ends on "no start line"

  KeyPtr key = ParseKey(material.private_key_pem);
  if (!key) return InvalidError("TLS private key: no PEM private key");
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    return InvalidError("TLS private key: " + OpenSslError());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return InvalidError("TLS private key does not match the certificate: " + OpenSslError());
  }
  SSL_CTX_set_alpn_select_cb(ctx, SelectAlpn, nullptr);
  return Status::Ok();
}

}  // namespace internal

}  // namespace slicewright::apiserver
