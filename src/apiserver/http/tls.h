// TLS for the embedded API server: EnsureCertificates keeps a self-signed CA and a serving
// certificate in a directory (created once, reused across restarts so kubeconfigs stay valid), and
// internal::ConfigureServerContext prepares an OpenSSL server context (TLS 1.2+, ALPN http/1.1).
// Functions are reentrant; two processes must not generate into the same directory at once.
#pragma once

#include <string>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

#include "apiserver/http/server.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX, kept out of this header

namespace slicewright::apiserver {

struct GeneratedTls {
  TlsMaterial server;               // server.crt and server.key, as read from the directory
  std::string ca_certificate_pem;   // ca.crt, for a kubeconfig's certificate-authority-data
  std::string ca_certificate_path;  // absolute path of ca.crt
  // client.crt and client.key: the kubeconfig user's certificate (CN slicewright-admin, O
  // system:masters, clientAuth). kubectl, like client-go's clientcmd, asks for a username on
  // HTTPS when a user has no credentials at all, as kind's and k3s's kubeconfigs never do.
  std::string client_certificate_pem;
  std::string client_key_pem;
};

// Makes sure `dir` (created with parents when missing) holds ca.crt, ca.key, server.crt,
// server.key, client.crt and client.key: an ECDSA P-256 CA, a serving certificate it signed, valid
// for one year for 127.0.0.1, ::1, localhost and `hosts` (IP literals become IP SANs, other names
// DNS SANs), and a client certificate it signed. Keys are written with mode 0600. Valid files are
// reused byte for byte when the serving certificate covers every host and each chains to the CA
// and expires in more than a day; a valid CA is kept when only a leaf needs renewal. Errors:
// kInvalid naming the path when the directory cannot be created or a file cannot be read or
// written, or for an empty host or one holding whitespace or a comma; kInternal when OpenSSL fails.
Result<GeneratedTls> EnsureCertificates(const std::string& dir,
                                        const std::vector<std::string>& hosts);

namespace internal {

// Loads `material` (certificate chain and private key, PEM) into `ctx` and restricts it to TLS 1.2
// and later with ALPN selecting "http/1.1" only (a client offering only h2 gets no ALPN and falls
// back to HTTP/1.1). kInvalid when the PEM does not parse or the key does not match.
Status ConfigureServerContext(ssl_ctx_st* ctx, const TlsMaterial& material);

}  // namespace internal

}  // namespace slicewright::apiserver
