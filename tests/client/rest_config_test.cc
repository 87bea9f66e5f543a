#include "slicewright/client/rest_config.h"

#include <chrono>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "client/client_test_util.h"
#include "client/files.h"

namespace slicewright::client {
namespace {

using testing::FakeClock;
using testing::FakeEnv;
using testing::TempDir;

// Server URLs: scheme, host, port and path, IPv6 in brackets; bad ones say why.
TEST(ParseServerUrlTest, AcceptsAndRejects) {
  struct Good {
    std::string_view in;
    std::string_view out;
  };
  for (const Good& c : {Good{"https://10.0.0.1:6443", "https://10.0.0.1:6443"},
                        Good{"https://api.example.com", "https://api.example.com:443"},
                        Good{"http://localhost", "http://localhost:80"},
                        Good{"HTTPS://[fd00::1]:6443/", "https://[fd00::1]:6443"},
                        Good{"https://[::1]", "https://[::1]:443"},
                        Good{"rancher.example.com:8443/k8s/clusters/c-1",
                             "https://rancher.example.com:8443/k8s/clusters/c-1"}}) {
    SCOPED_TRACE(c.in);
    const Result<ServerUrl> url = ParseServerUrl(c.in);
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    EXPECT_EQ(url->ToString(), c.out);
  }
  const Result<ServerUrl> v6 = ParseServerUrl("https://[fd00::1]:6443");
  EXPECT_EQ(v6->host, "fd00::1");
  EXPECT_EQ(v6->port, 6443);

  struct Bad {
    std::string_view in;
    std::string_view message;
  };
  for (const Bad& c : {Bad{"ftp://a",
                           "server \"ftp://a\": scheme \"ftp\" is not supported (use "
                           "https or http)"},
                       Bad{"https://", "server \"https://\": no host"},
                       Bad{"https://a:0", "server \"https://a:0\": invalid port"},
                       Bad{"https://a:70000", "server \"https://a:70000\": invalid port"},
                       Bad{"https://a:", "server \"https://a:\": invalid port"},
                       Bad{"https://fd00::1",
                           "server \"https://fd00::1\": an IPv6 address must "
                           "be in brackets"},
                       Bad{"https://u:SECRET@a/p@q",
                           "server \"https://REDACTED@a/p@q\": user "
                           "info is not allowed"},
                       Bad{"https://a/?x=1",
                           "server \"https://a/?x=1\": a query or fragment is "
                           "not allowed"},
                       Bad{"https://a b", "server \"https://a b\": invalid character in host"},
                       Bad{"", "server is empty"}}) {
    SCOPED_TRACE(c.in);
    const Result<ServerUrl> url = ParseServerUrl(c.in);
    ASSERT_FALSE(url.ok());
    EXPECT_EQ(url.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(url.status().message(), c.message);
  }
}

constexpr std::string_view kTwoContexts = R"(
current-context: dev
clusters:
- name: dev
  cluster: {server: "https://dev:6443", insecure-skip-tls-verify: true}
- name: prod
  cluster:
    server: https://prod:6443
    tls-server-name: api.prod
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNB
users:
- name: dev
  user: {token: dev-token-SECRET}
- name: prod
  user:
    client-certificate-data: Q0VSVC1QRU0=
    client-key-data: S0VZLVBFTS1TRUNSRVQ=
contexts:
- name: dev
  context: {cluster: dev, user: dev}
- name: prod
  context: {cluster: prod, user: prod, namespace: payments}
)";

// current-context is used unless --context names another; inline certificates are decoded into
// memory; the namespace comes from the context or is "default".
TEST(RestConfigFromKubeconfigTest, CurrentContextAndOverride) {
  const Kubeconfig config = *ParseKubeconfig(kTwoContexts, "/k/config");
  Result<RestConfig> dev = RestConfigFromKubeconfig(config, {});
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  EXPECT_EQ(dev->context, "dev");
  EXPECT_EQ(dev->server.ToString(), "https://dev:6443");
  EXPECT_TRUE(dev->tls.insecure_skip_verify);
  EXPECT_EQ(dev->namespace_, "default");
  ASSERT_NE(dev->token_source, nullptr);
  EXPECT_EQ(*dev->token_source->Token(), "dev-token-SECRET");

  RestConfigOptions options;
  options.context_override = "prod";
  Result<RestConfig> prod = RestConfigFromKubeconfig(config, options);
  ASSERT_TRUE(prod.ok()) << prod.status().ToString();
  EXPECT_EQ(prod->context, "prod");
  EXPECT_EQ(prod->namespace_, "payments");
  EXPECT_EQ(prod->tls.server_name, "api.prod");
  EXPECT_EQ(prod->tls.ca_pem, "-----BEGIN CERTIFICATE-----\nCA");
  EXPECT_EQ(prod->tls.client_certificate_pem, "CERT-PEM");
  EXPECT_EQ(prod->tls.client_key_pem, "KEY-PEM-SECRET");
  EXPECT_EQ(prod->token_source, nullptr);
  EXPECT_EQ(prod->exec, nullptr);
}

// Files a kubeconfig names are read into memory, relative to the kubeconfig's directory; a
// tokenFile becomes a source re-read after 60 s.
TEST(RestConfigFromKubeconfigTest, ReadsNamedFilesAndRereadsTokenFile) {
  TempDir dir;
  dir.Write("kube/pki/ca.crt", "CA FILE");
  dir.Write("kube/pki/client.crt", "CERT FILE");
  dir.Write("kube/pki/client.key", "KEY FILE");
  dir.Write("kube/token", "token-one\n");
  const std::string path = dir.Write("kube/config", R"(
current-context: c
clusters:
- {name: c, cluster: {server: "https://c", certificate-authority: pki/ca.crt}}
users:
- name: u
  user: {client-certificate: pki/client.crt, client-key: pki/client.key, tokenFile: token}
contexts:
- {name: c, context: {cluster: c, user: u}}
)");
  const Result<std::string> text = internal::ReadSmallFile(path);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const Kubeconfig config = *ParseKubeconfig(*text, path);
  FakeClock clock;
  RestConfigOptions options;
  options.now = clock.now();
  Result<RestConfig> rest = RestConfigFromKubeconfig(config, options);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->tls.ca_pem, "CA FILE");
  EXPECT_EQ(rest->tls.client_certificate_pem, "CERT FILE");
  EXPECT_EQ(rest->tls.client_key_pem, "KEY FILE");
  EXPECT_EQ(*rest->token_source->Token(), "token-one");
  dir.Write("kube/token", "token-two\n");
  clock.Advance(std::chrono::seconds(30));
  EXPECT_EQ(*rest->token_source->Token(), "token-one");
  clock.Advance(std::chrono::seconds(31));
  EXPECT_EQ(*rest->token_source->Token(), "token-two");
}

// Each unusable configuration is an error naming the file and field (or the context).
TEST(RestConfigFromKubeconfigTest, UnusableConfigurations) {
  struct Case {
    std::string_view name;
    std::string_view kubeconfig;  // current-context is "c" unless the case says otherwise
    std::string_view expected;    // ToString()
    StatusCode code = StatusCode::kInvalid;
  };
  const Case cases[] = {
      {"unknown_current", "current-context: nope\n",
       "context \"nope\" (current-context) is not defined"},
      {"no_current", "contexts: [{name: a, context: {cluster: a}}]\n",
       "no current-context is set and no context was given (--context)"},
      {"missing_cluster",
       "current-context: c\ncontexts: [{name: c, context: {cluster: gone, user: u}}]\n",
       "/k/config: .contexts[c].context.cluster: cluster \"gone\" is not defined"},
      {"missing_user",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: gone}}]\n",
       "/k/config: .contexts[c].context.user: user \"gone\" is not defined"},
      {"no_server",
       "current-context: c\nclusters: [{name: k, cluster: {}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "/k/config: .clusters[k].cluster.server: server is not set"},
      {"bad_server",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'ftp://k'}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "/k/config: .clusters[k].cluster.server: server \"ftp://k\": scheme \"ftp\" is not "
       "supported (use https or http)"},
      {"ca_both",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k', "
       "certificate-authority: /x, certificate-authority-data: Q0E=}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "/k/config: .clusters[k].cluster: certificate-authority and certificate-authority-data "
       "are both set"},
      {"insecure_with_ca",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k', "
       "insecure-skip-tls-verify: true, certificate-authority-data: Q0E=}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "/k/config: .clusters[k].cluster: insecure-skip-tls-verify cannot be combined with a "
       "certificate authority"},
      {"unreadable_ca",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k', "
       "certificate-authority: /nonexistent/ca.crt}}]\n"
       "contexts: [{name: c, context: {cluster: k}}]\n",
       "/k/config: .clusters[k].cluster.certificate-authority: open /nonexistent/ca.crt: No such "
       "file or directory",
       StatusCode::kNotFound},
      {"unreadable_cert",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {client-certificate: /nonexistent/c.crt, client-key-data: "
       "S0VZ}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user.client-certificate: open /nonexistent/c.crt: No such file or "
       "directory",
       StatusCode::kNotFound},
      {"cert_without_key",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {client-certificate-data: Q0VSVA==}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user: client-certificate is set without client-key or "
       "client-key-data"},
      {"key_both",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {client-key: /x, client-key-data: S0VZ}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user: client-key and client-key-data are both set"},
      {"token_and_token_file",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {token: SECRET, tokenFile: /t}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user: token and tokenFile are both set"},
      {"missing_token_file",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {tokenFile: /nonexistent/token}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user.tokenFile: open /nonexistent/token: No such file or directory",
       StatusCode::kNotFound},
      {"token_and_basic",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {token: SECRET, username: a, password: SECRET}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user: more than one authentication method: token and basic auth"},
      {"basic_and_exec",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {username: a, password: SECRET, exec: {command: x, "
       "apiVersion: client.authentication.k8s.io/v1beta1}}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user: more than one authentication method: basic auth and exec"},
      {"auth_provider",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {auth-provider: {name: oidc}}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user: auth-provider is not supported; use an exec credential plugin"},
      {"exec_v1_without_mode",
       "current-context: c\nclusters: [{name: k, cluster: {server: 'https://k'}}]\n"
       "users: [{name: u, user: {exec: {command: x, apiVersion: "
       "client.authentication.k8s.io/v1}}}]\n"
       "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
       "/k/config: .users[u].user.exec: user \"u\": exec: interactiveMode must be set for "
       "client.authentication.k8s.io/v1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<Kubeconfig> config = ParseKubeconfig(c.kubeconfig, "/k/config");
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    const Result<RestConfig> rest = RestConfigFromKubeconfig(*config, {});
    ASSERT_FALSE(rest.ok());
    EXPECT_EQ(rest.status().code(), c.code) << rest.status().ToString();
    EXPECT_TRUE(rest.status().ToString().starts_with(c.expected)) << rest.status().ToString();
    EXPECT_EQ(rest.status().ToString().find("SECRET"), std::string::npos);
  }

  RestConfigOptions options;
  options.context_override = "other";
  const Result<RestConfig> overridden =
      RestConfigFromKubeconfig(*ParseKubeconfig(kTwoContexts, "/k/config"), options);
  ASSERT_FALSE(overridden.ok());
  EXPECT_EQ(overridden.status().ToString(), "context \"other\" (from --context) is not defined");
}

// An exec user gets a provider whose cluster info is the context's cluster.
TEST(RestConfigFromKubeconfigTest, ExecUserGetsProvider) {
  const Kubeconfig config = *ParseKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443", certificate-authority-data: Q0E=}}]
users:
- name: u
  user:
    exec: {command: get-token, apiVersion: client.authentication.k8s.io/v1,
           interactiveMode: Never, provideClusterInfo: true}
contexts: [{name: c, context: {cluster: k, user: u}}]
)",
                                             "/k/config");
  const Result<RestConfig> rest = RestConfigFromKubeconfig(config, {});
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  ASSERT_NE(rest->exec, nullptr);
  EXPECT_EQ(rest->exec->ExecInfoJson(),
            R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
            R"("spec":{"cluster":{"certificate-authority-data":"Q0E=","server":"https://k:6443"},)"
            R"("interactive":false}})");
}

// In-cluster: host and port from the environment (IPv6 bracketed), token, CA and namespace from
// the service-account directory, POD_NAMESPACE first.
TEST(InClusterConfigTest, ReadsServiceAccount) {
  TempDir root;
  root.Write("token", "sa-token\n");
  root.Write("ca.crt", "CLUSTER CA");
  root.Write("namespace", "kube-system\n");
  FakeClock clock;
  Result<RestConfig> rest = InClusterConfig(
      FakeEnv({{"KUBERNETES_SERVICE_HOST", "fd00:10:96::1"}, {"KUBERNETES_SERVICE_PORT", "443"}}),
      root.path(), clock.now());
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->server.ToString(), "https://[fd00:10:96::1]:443");
  EXPECT_EQ(rest->tls.ca_pem, "CLUSTER CA");
  EXPECT_EQ(rest->namespace_, "kube-system");
  EXPECT_EQ(rest->origin, "in-cluster");
  EXPECT_EQ(*rest->token_source->Token(), "sa-token");
  root.Write("token", "rotated");
  clock.Advance(std::chrono::seconds(61));
  EXPECT_EQ(*rest->token_source->Token(), "rotated");

  rest = InClusterConfig(FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                  {"KUBERNETES_SERVICE_PORT", "6443"},
                                  {"POD_NAMESPACE", "mine"}}),
                         root.path(), clock.now());
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->server.ToString(), "https://10.96.0.1:6443");
  EXPECT_EQ(rest->namespace_, "mine");
}

// No namespace file means "default"; no CA file means the system roots; no token is an error.
TEST(InClusterConfigTest, MissingFiles) {
  TempDir root;
  const EnvLookup env =
      FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  Result<RestConfig> rest = InClusterConfig(env, root.path(), nullptr);
  ASSERT_FALSE(rest.ok());
  EXPECT_EQ(rest.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(rest.status().message(), "in-cluster service account token: open " +
                                         root.Path("token") + ": No such file or directory");
  root.Write("token", "t");
  rest = InClusterConfig(env, root.path(), nullptr);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->namespace_, "default");
  EXPECT_EQ(rest->tls.ca_pem, "");

  rest = InClusterConfig(FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}), root.path(), nullptr);
  ASSERT_FALSE(rest.ok());
  EXPECT_EQ(rest.status().code(), StatusCode::kNotFound);
}

// LoadRestConfig prefers a kubeconfig, falls back to in-cluster, and says so when neither exists.
TEST(LoadRestConfigTest, KubeconfigThenInCluster) {
  TempDir dir;
  dir.Write("sa/token", "sa-token");
  const std::string kubeconfig = dir.Write("config", std::string(kTwoContexts));
  LoadOptions options;
  options.in_cluster_root = dir.Path("sa");
  options.env = FakeEnv({{"KUBECONFIG", kubeconfig},
                         {"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                         {"KUBERNETES_SERVICE_PORT", "443"}});
  options.context = "prod";
  Result<RestConfig> rest = LoadRestConfig(options);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->origin, "kubeconfig " + kubeconfig);
  EXPECT_EQ(rest->context, "prod");

  options.context.clear();
  options.env = FakeEnv({{"HOME", dir.Path("nohome")},
                         {"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                         {"KUBERNETES_SERVICE_PORT", "443"}});
  rest = LoadRestConfig(options);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->origin, "in-cluster");

  // --context with no kubeconfig is an error, not silently in-cluster.
  options.context = "prod";
  rest = LoadRestConfig(options);
  ASSERT_FALSE(rest.ok());
  EXPECT_EQ(rest.status().code(), StatusCode::kInvalid);

  options.context.clear();
  options.env = FakeEnv({{"HOME", dir.Path("nohome")}});
  rest = LoadRestConfig(options);
  ASSERT_FALSE(rest.ok());
  EXPECT_EQ(rest.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(rest.status().message().starts_with("no configuration: no kubeconfig found"));
}

// Across merged files each entry's relative paths resolve against its own file's directory.
TEST(LoadRestConfigTest, MergedFilesResolvePathsPerFile) {
  TempDir dir;
  dir.Write("one/token", "token-from-one");
  dir.Write("two/ca.crt", "CA FROM TWO");
  const std::string one = dir.Write("one/config", R"(
current-context: c
users: [{name: u, user: {tokenFile: token}}]
contexts: [{name: c, context: {cluster: k, user: u, namespace: ns1}}]
)");
  const std::string two = dir.Write("two/config", R"(
current-context: ignored
clusters: [{name: k, cluster: {server: "https://k:6443", certificate-authority: ca.crt}}]
contexts: [{name: c, context: {cluster: other}}]
)");
  LoadOptions options;
  options.env = FakeEnv({{"KUBECONFIG", one + ":" + two}});
  const Result<RestConfig> rest = LoadRestConfig(options);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->origin, "kubeconfig " + one + ":" + two);
  EXPECT_EQ(rest->context, "c");
  EXPECT_EQ(rest->namespace_, "ns1");
  EXPECT_EQ(rest->tls.ca_pem, "CA FROM TWO");
  EXPECT_EQ(*rest->token_source->Token(), "token-from-one");
}

// DebugString shows where everything comes from but no token, password, key or exec secret.
TEST(RestConfigTest, DebugStringRedactsSecrets) {
  TempDir dir;
  dir.Write("token", "FILE-TOKEN-SECRET");
  const std::string text = std::string(kTwoContexts) + R"(
- name: basic
  context: {cluster: prod, user: basic}
- name: file
  context: {cluster: dev, user: file}
- name: exec
  context: {cluster: dev, user: exec}
)";
  std::string users = R"(
- name: basic
  user: {username: alice, password: PASSWORD-SECRET}
- name: file
  user: {tokenFile: )" +
                      dir.Path("token") +
                      R"(}
- name: exec
  user:
    exec: {command: /bin/plugin, args: [--key=ARG-SECRET], env: [{name: K, value: ENV-SECRET}],
           apiVersion: client.authentication.k8s.io/v1beta1}
)";
  // Append the extra users after the existing ones.
  std::string config_text = text;
  const std::size_t at = config_text.find("contexts:");
  config_text.insert(at, users.substr(1));
  const Result<Kubeconfig> config = ParseKubeconfig(config_text, "/k/config");
  ASSERT_TRUE(config.ok()) << config.status().ToString();

  for (const std::string_view context : {"dev", "prod", "basic", "file", "exec"}) {
    SCOPED_TRACE(context);
    RestConfigOptions options;
    options.context_override = std::string(context);
    const Result<RestConfig> rest = RestConfigFromKubeconfig(*config, options);
    ASSERT_TRUE(rest.ok()) << rest.status().ToString();
    const std::string debug = rest->DebugString();
    EXPECT_EQ(debug.find("SECRET"), std::string::npos) << debug;
  }
  RestConfigOptions options;
  options.context_override = "prod";
  EXPECT_EQ(RestConfigFromKubeconfig(*config, options)->DebugString(),
            "server=https://prod:6443 origin=kubeconfig /k/config context=prod namespace=payments "
            "tls={ca=inline (30 bytes) server-name=api.prod client-certificate=inline (8 bytes) "
            "client-key=inline (redacted)} auth={client certificate}");
  options.context_override = "dev";
  EXPECT_EQ(RestConfigFromKubeconfig(*config, options)->DebugString(),
            "server=https://dev:6443 origin=kubeconfig /k/config context=dev namespace=default "
            "tls={ca=system roots insecure-skip-tls-verify} auth={bearer static token "
            "(redacted)}");
  options.context_override = "basic";
  EXPECT_NE(RestConfigFromKubeconfig(*config, options)
                ->DebugString()
                .find("auth={basic user=alice password=(redacted)}"),
            std::string::npos);
  options.context_override = "exec";
  EXPECT_NE(
      RestConfigFromKubeconfig(*config, options)
          ->DebugString()
          .find("auth={exec plugin /bin/plugin (client.authentication.k8s.io/v1beta1, 1 args, 1 "
                "env vars)}"),
      std::string::npos);
}

}  // namespace
}  // namespace slicewright::client
