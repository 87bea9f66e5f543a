#include "slicewright/client/kubeconfig.h"

#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"
#include "slicewright/codec/yaml.h"

#include "client/base64.h"
#include "client/files.h"
#include "client/json_util.h"

namespace slicewright::client {
namespace {

using internal::ReadBool;
using internal::ReadList;
using internal::ReadObject;
using internal::ReadString;
using internal::ReadStringList;

Status Prefixed(Status status, std::string_view prefix) {
  if (!status.ok()) status.WithFieldPrefix(prefix);
  return status;
}

// Reads a base64 []byte field into `out` as decoded bytes.
Status ReadBytes(const nlohmann::json& object, std::string_view key, std::string& out) {
  std::string encoded;
  SW_RETURN_IF_ERROR(ReadString(object, key, encoded));
  if (encoded.empty()) return Status();
  Result<std::string> decoded = internal::DecodeBase64(encoded);
  if (!decoded.ok()) return Prefixed(decoded.status(), "." + std::string(key));
  out = std::move(decoded).value();
  return Status();
}

// Reads a path field and resolves it against the kubeconfig's directory (client-go's
// ResolveLocalPaths, done per file because each entry keeps its LocationOfOrigin).
Status ReadPath(const nlohmann::json& object, std::string_view key, const std::string& dir,
                std::string& out) {
  SW_RETURN_IF_ERROR(ReadString(object, key, out));
  out = internal::ResolvePath(out, dir);
  return Status();
}

Status ParseCluster(const nlohmann::json& object, const std::string& dir, Cluster& out) {
  SW_RETURN_IF_ERROR(ReadString(object, "server", out.server));
  SW_RETURN_IF_ERROR(ReadString(object, "tls-server-name", out.tls_server_name));
  SW_RETURN_IF_ERROR(ReadBool(object, "insecure-skip-tls-verify", out.insecure_skip_tls_verify));
  SW_RETURN_IF_ERROR(ReadPath(object, "certificate-authority", dir, out.certificate_authority));
  SW_RETURN_IF_ERROR(
      ReadBytes(object, "certificate-authority-data", out.certificate_authority_data));
  SW_RETURN_IF_ERROR(ReadString(object, "proxy-url", out.proxy_url));
  return Status();
}

Result<ExecInteractiveMode> ParseInteractiveMode(std::string_view text) {
  if (text.empty()) return ExecInteractiveMode::kUnset;
  if (text == "Never") return ExecInteractiveMode::kNever;
  if (text == "IfAvailable") return ExecInteractiveMode::kIfAvailable;
  if (text == "Always") return ExecInteractiveMode::kAlways;
  Status status =
      BadRequestError("invalid interactiveMode: want one of Never, IfAvailable, Always");
  status.WithFieldPrefix(".interactiveMode");
  return status;
}

Status ParseExec(const nlohmann::json& object, const std::string& dir, ExecConfig& out) {
  SW_RETURN_IF_ERROR(ReadString(object, "command", out.command));
  // client-go resolves the command only when it names a path; a bare name is looked up on PATH.
  if (out.command.find('/') != std::string::npos) {
    out.command = internal::ResolvePath(out.command, dir);
  }
  SW_RETURN_IF_ERROR(ReadStringList(object, "args", out.args));
  const nlohmann::json* env = nullptr;
  SW_RETURN_IF_ERROR(ReadList(object, "env", env));
  if (env != nullptr) {
    for (std::size_t i = 0; i < env->size(); ++i) {
      const std::string prefix = ".env[" + std::to_string(i) + "]";
      const nlohmann::json& item = (*env)[i];
      if (!item.is_object()) return Prefixed(BadRequestError("expected object"), prefix);
      ExecEnvVar var;
      SW_RETURN_IF_ERROR(Prefixed(ReadString(item, "name", var.name), prefix));
      SW_RETURN_IF_ERROR(Prefixed(ReadString(item, "value", var.value), prefix));
      out.env.push_back(std::move(var));
    }
  }
  SW_RETURN_IF_ERROR(ReadString(object, "apiVersion", out.api_version));
  SW_RETURN_IF_ERROR(ReadString(object, "installHint", out.install_hint));
  SW_RETURN_IF_ERROR(ReadBool(object, "provideClusterInfo", out.provide_cluster_info));
  std::string mode;
  SW_RETURN_IF_ERROR(ReadString(object, "interactiveMode", mode));
  SW_ASSIGN_OR_RETURN(out.interactive_mode, ParseInteractiveMode(mode));
  return Status();
}

Status ParseAuthInfo(const nlohmann::json& object, const std::string& dir, AuthInfo& out) {
  SW_RETURN_IF_ERROR(ReadPath(object, "client-certificate", dir, out.client_certificate));
  SW_RETURN_IF_ERROR(ReadBytes(object, "client-certificate-data", out.client_certificate_data));
  SW_RETURN_IF_ERROR(ReadPath(object, "client-key", dir, out.client_key));
  SW_RETURN_IF_ERROR(ReadBytes(object, "client-key-data", out.client_key_data));
  SW_RETURN_IF_ERROR(ReadString(object, "token", out.token));
  SW_RETURN_IF_ERROR(ReadPath(object, "tokenFile", dir, out.token_file));
  SW_RETURN_IF_ERROR(ReadString(object, "username", out.username));
  SW_RETURN_IF_ERROR(ReadString(object, "password", out.password));
  const nlohmann::json* exec = nullptr;
  SW_RETURN_IF_ERROR(ReadObject(object, "exec", exec));
  if (exec != nullptr) {
    ExecConfig config;
    SW_RETURN_IF_ERROR(Prefixed(ParseExec(*exec, dir, config), ".exec"));
    out.exec = std::move(config);
  }
  const nlohmann::json* auth_provider = nullptr;
  SW_RETURN_IF_ERROR(ReadObject(object, "auth-provider", auth_provider));
  out.has_auth_provider = auth_provider != nullptr;
  return Status();
}

Status ParseContext(const nlohmann::json& object, const std::string& /*dir*/, Context& out) {
  SW_RETURN_IF_ERROR(ReadString(object, "cluster", out.cluster));
  SW_RETURN_IF_ERROR(ReadString(object, "user", out.user));
  SW_RETURN_IF_ERROR(ReadString(object, "namespace", out.namespace_));
  return Status();
}

// Reads a named list (`clusters: [{name: a, cluster: {...}}]`) into `out`. A name repeated
// within one file is an error, as in client-go's conversion to its internal maps.
template <typename Entry, typename ParseEntry>
Status ParseNamedList(const nlohmann::json& root, std::string_view list_key,
                      std::string_view entry_key, const std::string& path, const std::string& dir,
                      ParseEntry parse_entry, std::map<std::string, Entry>& out) {
  const nlohmann::json* list = nullptr;
  SW_RETURN_IF_ERROR(ReadList(root, list_key, list));
  if (list == nullptr) return Status();
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string prefix = "." + std::string(list_key) + "[" + std::to_string(i) + "]";
    const nlohmann::json& item = (*list)[i];
    if (!item.is_object()) return Prefixed(BadRequestError("expected object"), prefix);
    std::string name;
    SW_RETURN_IF_ERROR(Prefixed(ReadString(item, "name", name), prefix));
    const nlohmann::json* body = nullptr;
    SW_RETURN_IF_ERROR(Prefixed(ReadObject(item, entry_key, body), prefix));
    Entry entry;
    entry.location_of_origin = path;
    if (body != nullptr) {
      SW_RETURN_IF_ERROR(
          Prefixed(parse_entry(*body, dir, entry), prefix + "." + std::string(entry_key)));
    }
    if (!out.emplace(name, std::move(entry)).second) {
      return Prefixed(BadRequestError("duplicate name \"" + name + "\""), prefix + ".name");
    }
  }
  return Status();
}

Status ParseRoot(const nlohmann::json& root, const std::string& path, Kubeconfig& out) {
  if (!root.is_object()) return BadRequestError("expected a kubeconfig object (kind: Config)");
  const std::string dir = internal::DirectoryOf(path);
  SW_RETURN_IF_ERROR(ReadString(root, "current-context", out.current_context));
  const nlohmann::json* preferences = nullptr;
  SW_RETURN_IF_ERROR(ReadObject(root, "preferences", preferences));
  if (preferences != nullptr) {
    if (internal::Member(*preferences, "colors") != nullptr) {
      bool colors = false;
      SW_RETURN_IF_ERROR(Prefixed(ReadBool(*preferences, "colors", colors), ".preferences"));
      out.preferences.colors = colors;
    }
  }
  SW_RETURN_IF_ERROR(
      ParseNamedList(root, "clusters", "cluster", path, dir, ParseCluster, out.clusters));
  SW_RETURN_IF_ERROR(ParseNamedList(root, "users", "user", path, dir, ParseAuthInfo, out.users));
  SW_RETURN_IF_ERROR(
      ParseNamedList(root, "contexts", "context", path, dir, ParseContext, out.contexts));
  return Status();
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    // getenv is not thread-safe against setenv; slicewright never calls setenv.
    const char* value = std::getenv(std::string(name).c_str());  // NOLINT(concurrency-mt-unsafe)
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<Kubeconfig> ParseKubeconfig(std::string_view text, std::string_view path) {
  SW_ASSIGN_OR_RETURN(std::vector<std::string> documents, codec::YamlToJson(text, path));
  Kubeconfig config;
  if (documents.empty()) return config;
  // client-go reads the first document only.
  Result<nlohmann::json> root = internal::ParseJson(documents.front());
  Status status = root.ok() ? ParseRoot(*root, std::string(path), config) : root.status();
  if (!status.ok()) {
    status.WithObject(path);
    return status;
  }
  return config;
}

Kubeconfig MergeKubeconfigs(const std::vector<Kubeconfig>& files) {
  Kubeconfig merged;
  for (const Kubeconfig& file : files) {
    // emplace keeps an existing entry: the first file to define a name wins, whole.
    for (const auto& [name, cluster] : file.clusters) merged.clusters.emplace(name, cluster);
    for (const auto& [name, user] : file.users) merged.users.emplace(name, user);
    for (const auto& [name, context] : file.contexts) merged.contexts.emplace(name, context);
    if (merged.current_context.empty()) merged.current_context = file.current_context;
    if (!merged.preferences.colors.has_value()) {
      merged.preferences.colors = file.preferences.colors;
    }
  }
  return merged;
}

Result<LoadedKubeconfig> LoadKubeconfig(const KubeconfigLoadOptions& options) {
  const EnvLookup env = options.env ? options.env : ProcessEnvironment();
  std::vector<std::string> files;
  if (!options.explicit_path.empty()) {
    if (!internal::FileExists(options.explicit_path)) {
      return NotFoundError("stat " + options.explicit_path +
                           ": no such file or directory (from --kubeconfig)");
    }
    files.push_back(options.explicit_path);
  } else if (const std::optional<std::string> list = env("KUBECONFIG");
             list.has_value() && !list->empty()) {
    std::set<std::string> seen;
    std::string_view rest = *list;
    while (true) {
      const std::size_t colon = rest.find(':');
      const std::string entry(rest.substr(0, colon));
      if (!entry.empty() && seen.insert(entry).second && internal::FileExists(entry)) {
        files.push_back(entry);
      }
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  } else {
    std::string home = options.home;
    if (home.empty()) home = env("HOME").value_or("");
    if (!home.empty()) {
      std::string path = home + "/.kube/config";
      if (internal::FileExists(path)) files.push_back(std::move(path));
    }
  }

  std::vector<Kubeconfig> parsed;
  for (const std::string& file : files) {
    SW_ASSIGN_OR_RETURN(std::string text, internal::ReadSmallFile(file));
    SW_ASSIGN_OR_RETURN(Kubeconfig config, ParseKubeconfig(text, file));
    parsed.push_back(std::move(config));
  }
  return LoadedKubeconfig{MergeKubeconfigs(parsed), std::move(files)};
}

}  // namespace slicewright::client
