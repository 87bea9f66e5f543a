#include "slicewright/client/rest_config.h"

#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

#include "client/files.h"

namespace slicewright::client {
namespace {

bool IsHostNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

bool IsIpv6Char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' ||
         c == '.';
}

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// `text` with any user info ("user:password@") of a URL replaced, for error messages.
std::string RedactUserInfo(std::string_view text) {
  const std::size_t scheme_end = text.find("://");
  const std::size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const std::size_t authority_end = text.find_first_of("/?#", start);
  const std::size_t at = text.substr(0, authority_end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(text);
  return std::string(text.substr(0, start)) + "REDACTED" + std::string(text.substr(at));
}

// An error about one kubeconfig entry: object() is the file, field() the entry's field, e.g.
// "/home/u/.kube/config: .users[admin].user.tokenFile: open /x: No such file or directory".
Status EntryError(StatusCode code, std::string message, std::string_view file,
                  std::string_view field) {
  Status status(code, std::move(message));
  if (!field.empty()) status.WithFieldPrefix(field);
  if (!file.empty()) status.WithObject(file);
  return status;
}

// Reads a file a kubeconfig names, reporting errors against the naming field.
Result<std::string> ReadNamedFile(const std::string& path, std::string_view file,
                                  std::string_view field) {
  Result<std::string> text = internal::ReadSmallFile(path);
  if (!text.ok()) {
    return EntryError(text.status().code(), std::string(text.status().message()), file, field);
  }
  return text;
}

std::string SizeText(std::string_view bytes) { return std::to_string(bytes.size()) + " bytes"; }

Status BuildTls(const Cluster& cluster, std::string_view field, TlsConfig& tls) {
  const std::string& file = cluster.location_of_origin;
  tls.insecure_skip_verify = cluster.insecure_skip_tls_verify;
  tls.server_name = cluster.tls_server_name;
  if (!cluster.certificate_authority.empty() && !cluster.certificate_authority_data.empty()) {
    return EntryError(StatusCode::kInvalid,
                      "certificate-authority and certificate-authority-data are both set", file,
                      field);
  }
  if (cluster.insecure_skip_tls_verify &&
      (!cluster.certificate_authority.empty() || !cluster.certificate_authority_data.empty())) {
    return EntryError(StatusCode::kInvalid,
                      "insecure-skip-tls-verify cannot be combined with a certificate authority",
                      file, field);
  }
  if (!cluster.certificate_authority.empty()) {
    SW_ASSIGN_OR_RETURN(tls.ca_pem, ReadNamedFile(cluster.certificate_authority, file,
                                                  std::string(field) + ".certificate-authority"));
    tls.ca_source = "file " + cluster.certificate_authority;
  } else if (!cluster.certificate_authority_data.empty()) {
    tls.ca_pem = cluster.certificate_authority_data;
    tls.ca_source = "inline";
  }
  return Status();
}

// Loads one of the client certificate or key from its file or inline data.
Status LoadPem(const std::string& path, const std::string& data, std::string_view name,
               std::string_view file, const std::string& field, std::string& pem,
               std::string& source) {
  if (!path.empty() && !data.empty()) {
    return EntryError(StatusCode::kInvalid,
                      std::string(name) + " and " + std::string(name) + "-data are both set", file,
                      field);
  }
  if (!path.empty()) {
    SW_ASSIGN_OR_RETURN(pem, ReadNamedFile(path, file, field + "." + std::string(name)));
    source = "file " + path;
  } else if (!data.empty()) {
    pem = data;
    source = "inline";
  }
  return Status();
}

Status BuildAuth(const AuthInfo& user, std::string_view user_name, const Cluster& cluster,
                 const RestConfigOptions& options, RestConfig& out) {
  const std::string& file = user.location_of_origin;
  const std::string field = ".users[" + std::string(user_name) + "].user";
  SW_RETURN_IF_ERROR(LoadPem(user.client_certificate, user.client_certificate_data,
                             "client-certificate", file, field, out.tls.client_certificate_pem,
                             out.tls.client_certificate_source));
  SW_RETURN_IF_ERROR(LoadPem(user.client_key, user.client_key_data, "client-key", file, field,
                             out.tls.client_key_pem, out.tls.client_key_source));
  if (out.tls.client_certificate_pem.empty() != out.tls.client_key_pem.empty()) {
    return EntryError(StatusCode::kInvalid,
                      out.tls.client_key_pem.empty()
                          ? "client-certificate is set without client-key or client-key-data"
                          : "client-key is set without client-certificate or "
                            "client-certificate-data",
                      file, field);
  }
  if (user.has_auth_provider) {
    return EntryError(StatusCode::kInvalid,
                      "auth-provider is not supported; use an exec credential plugin", file, field);
  }
  const bool has_token = !user.token.empty() || !user.token_file.empty();
  const bool has_basic = !user.username.empty() || !user.password.empty();
  if (!user.token.empty() && !user.token_file.empty()) {
    return EntryError(StatusCode::kInvalid, "token and tokenFile are both set", file, field);
  }
  if (has_token && has_basic) {
    return EntryError(StatusCode::kInvalid,
                      "more than one authentication method: token and basic auth (username/"
                      "password); only one is allowed",
                      file, field);
  }
  if (has_basic && user.exec.has_value()) {
    return EntryError(StatusCode::kInvalid,
                      "more than one authentication method: basic auth and exec; only one is "
                      "allowed",
                      file, field);
  }
  if (has_basic) out.basic_auth = BasicAuth{user.username, user.password};
  if (!user.token.empty()) {
    out.token_source = std::make_shared<StaticTokenSource>(user.token);
  } else if (!user.token_file.empty()) {
    // Read once now so a missing file fails at startup; the source re-reads it every minute.
    Result<std::string> token = ReadTokenFile(user.token_file);
    if (!token.ok()) {
      return EntryError(token.status().code(), std::string(token.status().message()), file,
                        field + ".tokenFile");
    }
    out.token_source = std::make_shared<FileTokenSource>(user.token_file, options.now);
  }
  if (user.exec.has_value()) {
    Status valid = ValidateExecConfig(*user.exec, user_name);
    if (!valid.ok()) {
      return EntryError(valid.code(), std::string(valid.message()), file, field + ".exec");
    }
    ExecClusterInfo info{out.server.ToString(), cluster.tls_server_name,
                         cluster.insecure_skip_tls_verify, out.tls.ca_pem, cluster.proxy_url};
    ExecProviderOptions exec_options;
    exec_options.timeout = options.exec_timeout;
    exec_options.now = options.now;
    out.exec = std::make_shared<ExecCredentialProvider>(*user.exec, std::move(info),
                                                        std::move(exec_options));
  }
  return Status();
}

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const std::size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace

std::string ServerUrl::ToString() const {
  std::string out = scheme + "://";
  if (host.find(':') != std::string::npos) {
    out += "[" + host + "]";
  } else {
    out += host;
  }
  out += ":" + std::to_string(port) + path;
  return out;
}

Result<ServerUrl> ParseServerUrl(std::string_view text) {
  const auto fail = [&](std::string_view why) {
    // The URL is quoted without user info: "https://user:password@host" carries a secret.
    return InvalidError("server " + Quoted(RedactUserInfo(text)) + ": " + std::string(why));
  };
  if (text.empty()) return InvalidError("server is empty");
  ServerUrl url;
  std::string_view rest = text;
  if (const std::size_t sep = rest.find("://"); sep != std::string_view::npos) {
    std::string scheme(rest.substr(0, sep));
    for (char& c : scheme) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (scheme != "https" && scheme != "http") {
      return fail("scheme \"" + scheme + "\" is not supported (use https or http)");
    }
    url.scheme = std::move(scheme);
    rest.remove_prefix(sep + 3);
  } else {
    url.scheme = "https";
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return fail("a query or fragment is not allowed");
  }
  const std::size_t path_start = rest.find('/');
  std::string_view authority = rest.substr(0, path_start);
  std::string_view path = path_start == std::string_view::npos ? "" : rest.substr(path_start);
  if (authority.find('@') != std::string_view::npos) return fail("user info is not allowed");
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail("unterminated '[' in host");
    const std::string_view host = authority.substr(1, close - 1);
    if (host.empty() || host.find(':') == std::string_view::npos) {
      return fail("brackets must hold an IPv6 address");
    }
    for (char c : host) {
      if (!IsIpv6Char(c)) return fail("invalid IPv6 address");
    }
    url.host = std::string(host);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("unexpected text after ']'");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    const std::size_t colon = authority.find(':');
    if (colon != std::string_view::npos &&
        authority.find(':', colon + 1) != std::string_view::npos) {
      return fail("an IPv6 address must be in brackets");
    }
    const std::string_view host = authority.substr(0, colon);
    for (char c : host) {
      if (!IsHostNameChar(c)) return fail("invalid character in host");
    }
    url.host = std::string(host);
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
  }
  if (url.host.empty()) return fail("no host");
  if (has_port) {
    unsigned int port = 0;
    const auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || error != std::errc() || end != port_text.data() + port_text.size() ||
        port == 0 || port > 65535) {
      return fail("invalid port");
    }
    url.port = static_cast<std::uint16_t>(port);
  } else {
    url.port = url.scheme == "https" ? 443 : 80;
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  url.path = std::string(path);
  return url;
}

std::string RestConfig::DebugString() const {
  std::string out = "server=" + server.ToString();
  out += " origin=" + (origin.empty() ? std::string("?") : origin);
  if (!context.empty()) out += " context=" + context;
  out += " namespace=" + namespace_;
  out += " tls={ca=";
  out += tls.ca_pem.empty() ? std::string("system roots")
                            : tls.ca_source + " (" + SizeText(tls.ca_pem) + ")";
  if (!tls.server_name.empty()) out += " server-name=" + tls.server_name;
  if (tls.insecure_skip_verify) out += " insecure-skip-tls-verify";
  if (!tls.client_certificate_pem.empty()) {
    out += " client-certificate=" + tls.client_certificate_source + " (" +
           SizeText(tls.client_certificate_pem) + ")";
  }
  if (!tls.client_key_pem.empty()) out += " client-key=" + tls.client_key_source + " (redacted)";
  out += "} auth={";
  std::string auth;
  if (token_source != nullptr) auth += "bearer " + token_source->Describe() + " (redacted)";
  if (basic_auth.has_value()) {
    if (!auth.empty()) auth += ' ';
    auth += "basic user=" + basic_auth->username + " password=(redacted)";
  }
  if (exec != nullptr) {
    if (!auth.empty()) auth += ' ';
    auth += exec->Describe();
  }
  if (!tls.client_certificate_pem.empty()) {
    if (!auth.empty()) auth += ' ';
    auth += "client certificate";
  }
  out += auth.empty() ? std::string("anonymous") : auth;
  out += "}";
  return out;
}

Result<RestConfig> RestConfigFromKubeconfig(const Kubeconfig& config,
                                            const RestConfigOptions& options) {
  const bool overridden = !options.context_override.empty();
  const std::string& name = overridden ? options.context_override : config.current_context;
  if (name.empty()) {
    if (config.empty()) return NotFoundError("no configuration has been provided");
    return InvalidError("no current-context is set and no context was given (--context)");
  }
  const auto context_it = config.contexts.find(name);
  if (context_it == config.contexts.end()) {
    return InvalidError("context " + Quoted(name) +
                        (overridden ? " (from --context)" : " (current-context)") +
                        " is not defined");
  }
  const Context& context = context_it->second;
  const std::string context_field = ".contexts[" + name + "].context";
  const std::string& context_file = context.location_of_origin;
  if (context.cluster.empty()) {
    return EntryError(StatusCode::kInvalid, "context " + Quoted(name) + " names no cluster",
                      context_file, context_field + ".cluster");
  }
  const auto cluster_it = config.clusters.find(context.cluster);
  if (cluster_it == config.clusters.end()) {
    return EntryError(StatusCode::kInvalid,
                      "cluster " + Quoted(context.cluster) + " is not defined", context_file,
                      context_field + ".cluster");
  }
  const Cluster& cluster = cluster_it->second;
  const AuthInfo* user = nullptr;
  if (!context.user.empty()) {
    const auto user_it = config.users.find(context.user);
    if (user_it == config.users.end()) {
      return EntryError(StatusCode::kInvalid, "user " + Quoted(context.user) + " is not defined",
                        context_file, context_field + ".user");
    }
    user = &user_it->second;
  }

  RestConfig out;
  out.context = name;
  out.origin = "kubeconfig " + context_file;
  const std::string cluster_field = ".clusters[" + context.cluster + "].cluster";
  if (cluster.server.empty()) {
    return EntryError(StatusCode::kInvalid, "server is not set", cluster.location_of_origin,
                      cluster_field + ".server");
  }
  Result<ServerUrl> server = ParseServerUrl(cluster.server);
  if (!server.ok()) {
    return EntryError(server.status().code(), std::string(server.status().message()),
                      cluster.location_of_origin, cluster_field + ".server");
  }
  out.server = std::move(server).value();
  SW_RETURN_IF_ERROR(BuildTls(cluster, cluster_field, out.tls));
  if (user != nullptr) {
    SW_RETURN_IF_ERROR(BuildAuth(*user, context.user, cluster, options, out));
  }
  out.namespace_ = context.namespace_.empty() ? "default" : context.namespace_;
  return out;
}

Result<RestConfig> InClusterConfig(const EnvLookup& env, std::string_view root,
                                   const NowFunction& now) {
  const std::string host = env("KUBERNETES_SERVICE_HOST").value_or("");
  const std::string port = env("KUBERNETES_SERVICE_PORT").value_or("");
  if (host.empty() || port.empty()) {
    return NotFoundError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
        "set");
  }
  const bool ipv6 = host.find(':') != std::string::npos;
  SW_ASSIGN_OR_RETURN(ServerUrl server,
                      ParseServerUrl("https://" + (ipv6 ? "[" + host + "]" : host) + ":" + port));
  const std::string dir(root);
  const std::string token_path = dir + "/token";
  Result<std::string> token = ReadTokenFile(token_path);
  if (!token.ok()) {
    Status status = token.status();
    status.WithContext("in-cluster service account token");
    return status;
  }
  RestConfig out;
  out.origin = "in-cluster";
  out.server = std::move(server);
  out.token_source = std::make_shared<FileTokenSource>(token_path, now);
  // client-go logs and continues without the CA when ca.crt is unreadable; so do we.
  const std::string ca_path = dir + "/ca.crt";
  if (Result<std::string> ca = internal::ReadSmallFile(ca_path); ca.ok() && !ca->empty()) {
    out.tls.ca_pem = std::move(ca).value();
    out.tls.ca_source = "file " + ca_path;
  }
  if (const std::optional<std::string> ns = env("POD_NAMESPACE"); ns.has_value() && !ns->empty()) {
    out.namespace_ = *ns;
  } else if (Result<std::string> text = internal::ReadSmallFile(dir + "/namespace"); text.ok()) {
    const std::string_view trimmed = TrimSpace(*text);
    if (!trimmed.empty()) out.namespace_ = std::string(trimmed);
  }
  return out;
}

Result<RestConfig> LoadRestConfig(const LoadOptions& options) {
  const EnvLookup env = options.env ? options.env : ProcessEnvironment();
  KubeconfigLoadOptions load;
  load.explicit_path = options.kubeconfig;
  load.home = options.home;
  load.env = env;
  SW_ASSIGN_OR_RETURN(LoadedKubeconfig loaded, LoadKubeconfig(load));
  if (loaded.config.empty() && options.kubeconfig.empty() && options.context.empty()) {
    Result<RestConfig> in_cluster = InClusterConfig(env, options.in_cluster_root, options.now);
    if (in_cluster.ok() || in_cluster.status().code() != StatusCode::kNotFound ||
        !in_cluster.status().message().starts_with("not running in a cluster")) {
      return in_cluster;
    }
    return NotFoundError(
        "no configuration: no kubeconfig found (--kubeconfig, $KUBECONFIG, ~/.kube/config) and "
        "not running in a cluster (KUBERNETES_SERVICE_HOST unset)");
  }
  RestConfigOptions rest;
  rest.context_override = options.context;
  rest.now = options.now;
  rest.exec_timeout = options.exec_timeout;
  SW_ASSIGN_OR_RETURN(RestConfig config, RestConfigFromKubeconfig(loaded.config, rest));
  std::string files;
  for (const std::string& file : loaded.files) {
    if (!files.empty()) files += ':';
    files += file;
  }
  config.origin = "kubeconfig " + files;
  return config;
}

}  // namespace slicewright::client
