#include "slicewright/client/exec_credential.h"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "slicewright/base/status.h"
#include "slicewright/model/time.h"

#include "client/base64.h"
#include "client/json_util.h"
#include "client/process.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace slicewright::client {
namespace {

// Sets NAME=value in `env`, replacing an earlier entry of the same name (getenv would see the
// first one, so appending is not enough).
void SetEnv(std::vector<std::string>& env, std::string_view name, std::string_view value) {
  std::string entry(name);
  entry += '=';
  for (std::string& existing : env) {
    if (existing.starts_with(entry)) {
      existing = entry + std::string(value);
      return;
    }
  }
  entry += value;
  env.push_back(std::move(entry));
}

std::vector<std::string> ProcessEnviron() {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    env.emplace_back(*entry);
  }
  return env;
}

std::chrono::system_clock::time_point ToTimePoint(model::Time time) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(time.unix_nanos)));
}

Status WithField(Status status, std::string_view field) {
  if (!status.ok()) status.WithFieldPrefix(field);
  return status;
}

// Parses the plugin's stdout. Messages never quote the output (it holds the credential).
Result<ExecCredential> ParseExecCredential(std::string_view out, std::string_view api_version) {
  SW_ASSIGN_OR_RETURN(nlohmann::json root, internal::ParseJson(out));
  if (!root.is_object()) return BadRequestError("output is not an ExecCredential object");
  std::string kind;
  std::string version;
  SW_RETURN_IF_ERROR(internal::ReadString(root, "kind", kind));
  SW_RETURN_IF_ERROR(internal::ReadString(root, "apiVersion", version));
  if (kind != "ExecCredential") {
    return BadRequestError("output has kind \"" + kind + "\", want ExecCredential");
  }
  if (version != api_version) {
    return BadRequestError("output has apiVersion \"" + version +
                           "\", but the kubeconfig asks for " + std::string(api_version));
  }
  const nlohmann::json* status = nullptr;
  SW_RETURN_IF_ERROR(internal::ReadObject(root, "status", status));
  if (status == nullptr) return BadRequestError("output has no status");
  ExecCredential credential;
  SW_RETURN_IF_ERROR(
      WithField(internal::ReadString(*status, "token", credential.token), ".status"));
  SW_RETURN_IF_ERROR(WithField(
      internal::ReadString(*status, "clientCertificateData", credential.client_certificate_pem),
      ".status"));
  SW_RETURN_IF_ERROR(WithField(
      internal::ReadString(*status, "clientKeyData", credential.client_key_pem), ".status"));
  std::string expiry;
  SW_RETURN_IF_ERROR(
      WithField(internal::ReadString(*status, "expirationTimestamp", expiry), ".status"));
  if (!expiry.empty()) {
    const std::optional<model::Time> parsed = model::ParseRfc3339(expiry);
    if (!parsed.has_value()) {
      return BadRequestError("status.expirationTimestamp \"" + expiry + "\" is not RFC 3339");
    }
    credential.expiry = ToTimePoint(*parsed);
  }
  if (credential.client_certificate_pem.empty() != credential.client_key_pem.empty()) {
    return BadRequestError(
        "status has only one of clientCertificateData and clientKeyData; both are needed");
  }
  if (credential.token.empty() && credential.client_certificate_pem.empty()) {
    return Status(StatusCode::kUnauthorized,
                  "status has neither a token nor a client certificate and key");
  }
  return credential;
}

}  // namespace

Status ValidateExecConfig(const ExecConfig& config, std::string_view user_name) {
  const std::string who = "user \"" + std::string(user_name) + "\": exec: ";
  if (config.command.empty()) return InvalidError(who + "command must be set");
  if (config.api_version.empty()) return InvalidError(who + "apiVersion must be set");
  if (config.api_version != kExecApiV1 && config.api_version != kExecApiV1Beta1) {
    return InvalidError(who + "apiVersion \"" + config.api_version + "\" is not supported (use " +
                        std::string(kExecApiV1) + " or " + std::string(kExecApiV1Beta1) + ")");
  }
  if (config.api_version == kExecApiV1 && config.interactive_mode == ExecInteractiveMode::kUnset) {
    return InvalidError(who + "interactiveMode must be set for " + std::string(kExecApiV1));
  }
  for (std::size_t i = 0; i < config.env.size(); ++i) {
    if (config.env[i].name.empty()) {
      return InvalidError(who + "env[" + std::to_string(i) + "].name must be set");
    }
  }
  return Status();
}

ExecCredentialProvider::ExecCredentialProvider(ExecConfig config, ExecClusterInfo cluster,
                                               ExecProviderOptions options)
    : config_(std::move(config)), cluster_(std::move(cluster)), options_(std::move(options)) {}

std::string ExecCredentialProvider::ExecInfoJson() const {
  nlohmann::json spec = nlohmann::json::object();
  spec["interactive"] = false;  // slicewright never hands the plugin a terminal
  if (config_.provide_cluster_info) {
    nlohmann::json cluster = nlohmann::json::object();
    cluster["server"] = cluster_.server;
    if (!cluster_.tls_server_name.empty()) cluster["tls-server-name"] = cluster_.tls_server_name;
    if (cluster_.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
    if (!cluster_.certificate_authority_pem.empty()) {
      cluster["certificate-authority-data"] =
          internal::EncodeBase64(cluster_.certificate_authority_pem);
    }
    if (!cluster_.proxy_url.empty()) cluster["proxy-url"] = cluster_.proxy_url;
    spec["cluster"] = std::move(cluster);
  }
  nlohmann::json info = nlohmann::json::object();
  info["kind"] = "ExecCredential";
  info["apiVersion"] = config_.api_version;
  info["spec"] = std::move(spec);
  return internal::DumpJson(info);
}

std::string ExecCredentialProvider::Describe() const {
  return "exec plugin " + config_.command + " (" + config_.api_version + ", " +
         std::to_string(config_.args.size()) + " args, " + std::to_string(config_.env.size()) +
         " env vars)";
}

Result<ExecCredential> ExecCredentialProvider::Run() {
  const std::string who = "exec plugin \"" + config_.command + "\": ";
  if (config_.interactive_mode == ExecInteractiveMode::kAlways) {
    return Status(StatusCode::kUnauthorized,
                  who + "interactiveMode is Always but there is no terminal to interact with");
  }
  std::vector<std::string> env =
      options_.base_env.has_value() ? *options_.base_env : ProcessEnviron();
  for (const ExecEnvVar& var : config_.env) SetEnv(env, var.name, var.value);
  SetEnv(env, "KUBERNETES_EXEC_INFO", ExecInfoJson());
  std::vector<std::string> argv;
  argv.reserve(config_.args.size() + 1);
  argv.push_back(config_.command);
  argv.insert(argv.end(), config_.args.begin(), config_.args.end());

  Result<internal::ProcessResult> ran = internal::RunProcess(argv, env, options_.timeout);
  if (!ran.ok()) {
    std::string message = who + std::string(ran.status().message());
    if (ran.status().code() == StatusCode::kNotFound && !config_.install_hint.empty()) {
      message += "\n\n" + config_.install_hint;
    }
    return Status(ran.status().code(), std::move(message));
  }
  const internal::ProcessResult& result = *ran;
  if (result.timed_out) {
    return Status(
        StatusCode::kTimeout,
        who + "killed after " + std::to_string(options_.timeout.count()) + " ms without finishing");
  }
  if (result.exit_code != 0) {
    std::string message = who;
    message += result.signal != 0 ? "killed by signal " + std::to_string(result.signal)
                                  : "exit status " + std::to_string(result.exit_code);
    // Only the size of what the plugin wrote to stderr: plugins echo tokens, refresh tokens and
    // cloud secrets there, and this Status reaches the logs (the reflector logs its failures).
    if (!result.err.empty()) {
      message += "; it wrote " + std::to_string(result.err.size()) +
                 " bytes to stderr (not shown: it may hold secrets)";
    }
    return Status(StatusCode::kUnauthorized, std::move(message));
  }
  Result<ExecCredential> parsed = ParseExecCredential(result.out, config_.api_version);
  if (!parsed.ok()) {
    Status status = parsed.status();
    status.WithObject(who.substr(0, who.size() - 2));
    return status;
  }
  return parsed;
}

Result<ExecCredential> ExecCredentialProvider::Get() {
  // The plugin runs under the lock on purpose: concurrent callers after an expiry must share one
  // run rather than start one each (client-go holds its Authenticator mutex the same way).
  const MutexLock lock(mu_);
  const auto now = options_.now ? options_.now() : std::chrono::system_clock::now();
  if (cached_.has_value() && (!cached_->expiry.has_value() || now < *cached_->expiry)) {
    return *cached_;
  }
  cached_.reset();
  SW_ASSIGN_OR_RETURN(ExecCredential credential, Run());
  credential.generation = ++runs_;
  cached_ = credential;
  return credential;
}

void ExecCredentialProvider::Invalidate(std::uint64_t generation) {
  const MutexLock lock(mu_);
  if (cached_.has_value() && cached_->generation == generation) cached_.reset();
}

}  // namespace slicewright::client
