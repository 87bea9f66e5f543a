// Exec credential plugins (client.authentication.k8s.io v1 and v1beta1), as client-go's
// plugin/pkg/client/auth/exec runs them: the kubeconfig's command with KUBERNETES_EXEC_INFO set,
// its stdout parsed as an ExecCredential, the credential cached until it expires, the server
// answers 401 or the transport finds its client certificate unusable. Thread-safe: one plugin run
// at a time, others wait for its result.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/client/kubeconfig.h"
#include "slicewright/client/token_source.h"

namespace slicewright::client {

inline constexpr std::string_view kExecApiV1 = "client.authentication.k8s.io/v1";
inline constexpr std::string_view kExecApiV1Beta1 = "client.authentication.k8s.io/v1beta1";

// What the plugin returned: a token, a client certificate and key (PEM, in memory only), or both.
struct ExecCredential {
  std::string token;
  std::string client_certificate_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiry;  // none: valid until a 401
  // Counts plugin runs; Invalidate(generation) ignores reports about older credentials.
  std::uint64_t generation = 0;
};

// spec.cluster of the ExecCredential, sent when the kubeconfig sets provideClusterInfo.
struct ExecClusterInfo {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string certificate_authority_pem;  // sent base64-encoded
  std::string proxy_url;
};

struct ExecProviderOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};  // the plugin is killed after it
  NowFunction now;                                              // null: the system clock
  // The environment the plugin inherits ("NAME=value"), before the kubeconfig's env entries and
  // KUBERNETES_EXEC_INFO are applied; nullopt: this process's environment.
  std::optional<std::vector<std::string>> base_env;
};

// Checks an exec section as client-go's validation does: command and apiVersion set, apiVersion
// v1 or v1beta1, v1 requires interactiveMode, env names non-empty. kInvalid naming the user.
Status ValidateExecConfig(const ExecConfig& config, std::string_view user_name);

class ExecCredentialProvider final {
 public:
  // `config` should have passed ValidateExecConfig; `cluster` is used only when
  // config.provide_cluster_info is set.
  ExecCredentialProvider(ExecConfig config, ExecClusterInfo cluster, ExecProviderOptions options);
  ExecCredentialProvider(const ExecCredentialProvider&) = delete;
  ExecCredentialProvider& operator=(const ExecCredentialProvider&) = delete;

  // The cached credential while it has not expired, else runs the plugin. Errors name the plugin
  // ("exec plugin \"/usr/bin/aws\": ...") and never hold the credential:
  //   kNotFound  the command does not exist (the installHint is appended)
  //   kUnauthorized  non-zero exit ("exit status 3; it wrote 27 bytes to stderr (not shown: it
  //              may hold secrets)"; the text is never included), or no token and
  //              no certificate in the status, or an interactiveMode of Always (we have no TTY)
  //   kTimeout   killed after options.timeout
  //   kBadRequest  stdout not JSON, wrong kind or apiVersion, missing status, a malformed
  //              expirationTimestamp, only one of clientCertificateData and clientKeyData
  Result<ExecCredential> Get();

  // The credential of `generation` cannot be used: the server answered 401 to it, or its client
  // certificate does not load or has passed its NotAfter (the transport checks both). Drops it so
  // the next Get() runs the plugin again. A report about an older credential is ignored: another
  // caller has already replaced it.
  void Invalidate(std::uint64_t generation);

  // The plugin's command as the kubeconfig names it, for error messages.
  const std::string& command() const { return config_.command; }

  // "exec plugin /path (client.authentication.k8s.io/v1, 2 args, 1 env vars)": args and env
  // values are left out (they may carry secrets), as client-go's ExecConfig.String() does.
  std::string Describe() const;

  // The KUBERNETES_EXEC_INFO value a run would set (for tests and debugging; holds no secrets
  // beyond the cluster's CA).
  std::string ExecInfoJson() const;

 private:
  Result<ExecCredential> Run();

  const ExecConfig config_;
  const ExecClusterInfo cluster_;
  const ExecProviderOptions options_;
  Mutex mu_;
  std::optional<ExecCredential> cached_ SW_GUARDED_BY(mu_);
  std::uint64_t runs_ SW_GUARDED_BY(mu_) = 0;
};

}  // namespace slicewright::client
