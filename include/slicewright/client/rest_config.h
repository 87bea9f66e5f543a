// The resolved client configuration (client-go's rest.Config): where the API server is, how to
// trust it and how to authenticate, built from a kubeconfig context or from the in-cluster
// service account. Values plus shared, thread-safe credential sources. Certificates and keys are
// held in memory only, never written to files.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/client/exec_credential.h"
#include "slicewright/client/kubeconfig.h"
#include "slicewright/client/token_source.h"

namespace slicewright::client {

inline constexpr std::string_view kServiceAccountRoot =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// A validated API server URL.
struct ServerUrl {
  std::string scheme;  // "https" or "http"
  std::string host;    // a name, an IPv4 address, or an IPv6 address without brackets
  std::uint16_t port = 0;
  std::string path;  // "" or a prefix starting with '/', without a trailing '/'

  // "https://host:port/path" with an IPv6 host bracketed.
  std::string ToString() const;
};

// Parses "https://host[:port][/path]" as client-go accepts a kubeconfig `server`: the scheme must
// be https or http (a bare "host:port" gets https), the port defaults to 443 / 80, an IPv6
// address must be bracketed. User info, a query or a fragment are refused. kInvalid "server
// \"...\": <why>".
Result<ServerUrl> ParseServerUrl(std::string_view text);

struct TlsConfig {
  bool insecure_skip_verify = false;
  std::string server_name;  // SNI and verification name override (tls-server-name)
  std::string ca_pem;       // empty: the system roots
  std::string ca_source;    // file path or "inline" (for DebugString)
  std::string client_certificate_pem;
  std::string client_certificate_source;
  std::string client_key_pem;  // secret
  std::string client_key_source;
};

struct BasicAuth {
  std::string username;
  std::string password;  // secret
};

struct RestConfig {
  ServerUrl server;
  TlsConfig tls;
  std::optional<BasicAuth> basic_auth;
  std::shared_ptr<TokenSource> token_source;     // null: no bearer token
  std::shared_ptr<ExecCredentialProvider> exec;  // null: no exec plugin
  std::string namespace_ = "default";  // the context's, the service account's, or "default"
  std::string context;                 // the kubeconfig context used; "" in-cluster
  std::string origin;                  // "kubeconfig /a:/b" or "in-cluster"

  // A one-line description for logs with every secret left out: token, password, key data and
  // exec args/env values never appear; certificates appear as source and size only.
  std::string DebugString() const;
};

// Builds the configuration of one context: `context_override` (--context) if set, else
// current-context. Checks as client-go's ConfirmUsable does, each a kInvalid (kNotFound for a
// missing file) naming the context, cluster or user and the file it came from:
// unknown context, context naming a missing cluster or user, no server, both a CA file and data,
// a CA with insecure-skip-tls-verify, both client-certificate and -data (or key), a certificate
// without a key, both token and tokenFile, token and basic auth together, basic auth with exec,
// an auth-provider, an invalid exec section. Files named (CA, certificate, key, token file) are
// read now; an unreadable one is an error naming the file and the field.
struct RestConfigOptions {
  std::string context_override;
  NowFunction now;                                 // null: the system clock
  std::chrono::milliseconds exec_timeout{60'000};  // kill an exec plugin after this
};
Result<RestConfig> RestConfigFromKubeconfig(const Kubeconfig& config,
                                            const RestConfigOptions& options);

// The in-cluster configuration (client-go's rest.InClusterConfig): server from
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, a FileTokenSource on `root`/token (which
// must be readable now), the CA from `root`/ca.crt (skipped when unreadable, as client-go does),
// the namespace from $POD_NAMESPACE, else `root`/namespace, else "default". kNotFound "not
// running in a cluster" when either variable is unset or empty.
Result<RestConfig> InClusterConfig(const EnvLookup& env, std::string_view root,
                                   const NowFunction& now);

struct LoadOptions {
  std::string kubeconfig;  // --kubeconfig
  std::string context;     // --context
  std::string home;        // "" = $HOME
  EnvLookup env;           // null = ProcessEnvironment()
  std::string in_cluster_root = std::string(kServiceAccountRoot);
  NowFunction now;  // null: the system clock
  std::chrono::milliseconds exec_timeout{60'000};
};

// Everything kubectl does to find its configuration: LoadKubeconfig, then the chosen context;
// when no kubeconfig configures anything (and --kubeconfig is not given), the in-cluster
// configuration. With neither: kNotFound "no configuration: no kubeconfig found
// ($KUBECONFIG, ~/.kube/config) and not running in a cluster".
Result<RestConfig> LoadRestConfig(const LoadOptions& options);

}  // namespace slicewright::client
