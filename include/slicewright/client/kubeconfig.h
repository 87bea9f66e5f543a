// The kubeconfig file model (clientcmd/api v1 Config) and loading it as kubectl and client-go do:
// `--kubeconfig FILE`, else the `$KUBECONFIG` list merged (the first file to set a value wins),
// else ~/.kube/config. Values and pure functions; loading reads files only. Reentrant.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"

namespace slicewright::client {

// Reads one environment variable (nullopt when unset). The loaders take one so tests never touch
// the process environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// The real process environment (getenv).
EnvLookup ProcessEnvironment();

// A kubeconfig `clusters[].cluster`. *_data fields hold decoded bytes (the file carries base64).
// Relative paths are already resolved against the directory of `location_of_origin`.
struct Cluster {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string certificate_authority;       // path
  std::string certificate_authority_data;  // PEM bytes
  std::string proxy_url;                   // kept for the transport; not used yet
  std::string location_of_origin;          // the file this entry came from
};

// Client-side interactivity of an exec plugin (clientcmd api ExecInteractiveMode).
enum class ExecInteractiveMode { kUnset, kNever, kIfAvailable, kAlways };

struct ExecEnvVar {
  std::string name;
  std::string value;
};

// `users[].user.exec`: a credential plugin (client.authentication.k8s.io v1 or v1beta1).
struct ExecConfig {
  std::string command;  // resolved against the kubeconfig's directory when it holds a '/'
  std::vector<std::string> args;
  std::vector<ExecEnvVar> env;
  std::string api_version;
  std::string install_hint;
  bool provide_cluster_info = false;
  ExecInteractiveMode interactive_mode = ExecInteractiveMode::kUnset;
};

// `users[].user`. Secrets (token, password, client_key_data) are never printed by this library.
struct AuthInfo {
  std::string client_certificate;       // path
  std::string client_certificate_data;  // PEM bytes
  std::string client_key;               // path
  std::string client_key_data;          // PEM bytes
  std::string token;
  std::string token_file;  // path
  std::string username;
  std::string password;
  std::optional<ExecConfig> exec;
  bool has_auth_provider = false;  // `auth-provider` is set (not supported: use exec)
  std::string location_of_origin;
};

// `contexts[].context`.
struct Context {
  std::string cluster;
  std::string user;
  std::string namespace_;
  std::string location_of_origin;
};

struct Preferences {
  std::optional<bool> colors;
};

// A parsed (or merged) kubeconfig. Entries are keyed by name.
struct Kubeconfig {
  std::map<std::string, Cluster> clusters;
  std::map<std::string, AuthInfo> users;
  std::map<std::string, Context> contexts;
  std::string current_context;
  Preferences preferences;

  // True when nothing at all is configured (client-go's empty config: in-cluster may be used).
  bool empty() const {
    return clusters.empty() && users.empty() && contexts.empty() && current_context.empty();
  }
};

// Parses one kubeconfig file's text. `path` names the file in errors and is the base for relative
// paths (certificate-authority, client-certificate, client-key, tokenFile, and an exec command
// holding a '/'). base64 *-data fields are decoded. Empty text is an empty config. Errors are
// kBadRequest with object() = path and field() the location, e.g.
//   "/home/u/.kube/config: .users[0].user.client-key-data: illegal base64 data at input byte 3"
//   "/home/u/.kube/config: .clusters[1].name: duplicate name \"prod\""
Result<Kubeconfig> ParseKubeconfig(std::string_view text, std::string_view path);

// Merges parsed files in precedence order with client-go's rule: the first file to set a value
// wins. A named cluster, user or context is taken whole from the first file that defines it (no
// field-level merge); current-context and each preference come from the first file setting them.
Kubeconfig MergeKubeconfigs(const std::vector<Kubeconfig>& files);

// Where to look. Empty fields take their defaults.
struct KubeconfigLoadOptions {
  std::string explicit_path;  // --kubeconfig: must exist
  std::string home;           // "" = $HOME from `env`
  EnvLookup env;              // null = ProcessEnvironment()
};

struct LoadedKubeconfig {
  Kubeconfig config;
  std::vector<std::string> files;  // the files read, in precedence order
};

// Loads as client-go's ClientConfigLoadingRules: `explicit_path` alone when set (kNotFound if it
// does not exist); else each entry of $KUBECONFIG (':'-separated; empty entries, repeats and
// missing files skipped); else $HOME/.kube/config when it exists; else nothing (an empty
// config). Any file that exists but cannot be read or parsed is an error naming it.
Result<LoadedKubeconfig> LoadKubeconfig(const KubeconfigLoadOptions& options);

}  // namespace slicewright::client
