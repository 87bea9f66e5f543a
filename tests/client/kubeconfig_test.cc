#include "slicewright/client/kubeconfig.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/client_test_util.h"

namespace slicewright::client {
namespace {

using testing::FakeEnv;
using testing::TempDir;

Kubeconfig MustParse(std::string_view text, std::string_view path = "/etc/kube/config") {
  Result<Kubeconfig> config = ParseKubeconfig(text, path);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? std::move(config).value() : Kubeconfig{};
}

// Every field we model is read; *-data fields are base64-decoded; entries remember their file.
TEST(ParseKubeconfigTest, ReadsAllFields) {
  const Kubeconfig config = MustParse(R"(apiVersion: v1
kind: Config
current-context: dev
preferences: {colors: true}
clusters:
- name: prod
  cluster:
    server: https://10.0.0.1:6443
    tls-server-name: api.prod
    insecure-skip-tls-verify: false
    certificate-authority-data: Q0EtUEVN
    proxy-url: http://proxy:3128
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
    username: alice
    password: pw
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws
      args: [eks, get-token]
      env: [{name: AWS_PROFILE, value: prod}]
      installHint: install aws
      provideClusterInfo: true
      interactiveMode: IfAvailable
contexts:
- name: dev
  context: {cluster: prod, user: admin, namespace: web}
)");
  EXPECT_EQ(config.current_context, "dev");
  EXPECT_EQ(config.preferences.colors, true);
  const Cluster& prod = config.clusters.at("prod");
  EXPECT_EQ(prod.server, "https://10.0.0.1:6443");
  EXPECT_EQ(prod.tls_server_name, "api.prod");
  EXPECT_FALSE(prod.insecure_skip_tls_verify);
  EXPECT_EQ(prod.certificate_authority_data, "CA-PEM");
  EXPECT_EQ(prod.proxy_url, "http://proxy:3128");
  EXPECT_EQ(prod.location_of_origin, "/etc/kube/config");
  const AuthInfo& admin = config.users.at("admin");
  EXPECT_EQ(admin.client_certificate_data, "CERT");
  EXPECT_EQ(admin.client_key_data, "KEY");
  EXPECT_EQ(admin.username, "alice");
  EXPECT_EQ(admin.password, "pw");
  const ExecConfig& exec = config.users.at("plugin").exec.value();
  EXPECT_EQ(exec.command, "aws");  // no '/': looked up on PATH, not resolved
  EXPECT_EQ(exec.args, (std::vector<std::string>{"eks", "get-token"}));
  ASSERT_EQ(exec.env.size(), 1U);
  EXPECT_EQ(exec.env[0].name, "AWS_PROFILE");
  EXPECT_EQ(exec.env[0].value, "prod");
  EXPECT_EQ(exec.install_hint, "install aws");
  EXPECT_TRUE(exec.provide_cluster_info);
  EXPECT_EQ(exec.interactive_mode, ExecInteractiveMode::kIfAvailable);
  const Context& dev = config.contexts.at("dev");
  EXPECT_EQ(dev.cluster, "prod");
  EXPECT_EQ(dev.user, "admin");
  EXPECT_EQ(dev.namespace_, "web");
}

// Relative paths resolve against the kubeconfig's directory; absolute ones and a bare exec
// command are kept.
TEST(ParseKubeconfigTest, ResolvesRelativePaths) {
  const Kubeconfig config = MustParse(R"(
clusters:
- name: c
  cluster: {server: "https://a", certificate-authority: certs/ca.crt}
users:
- name: u
  user:
    client-certificate: ../pki/client.crt
    client-key: /abs/client.key
    tokenFile: token
    exec: {command: ./bin/plugin, apiVersion: client.authentication.k8s.io/v1beta1}
- name: v
  user:
    exec: {command: kubelogin, apiVersion: client.authentication.k8s.io/v1beta1}
)",
                                      "/home/u/.kube/config");
  EXPECT_EQ(config.clusters.at("c").certificate_authority, "/home/u/.kube/certs/ca.crt");
  const AuthInfo& u = config.users.at("u");
  EXPECT_EQ(u.client_certificate, "/home/u/pki/client.crt");
  EXPECT_EQ(u.client_key, "/abs/client.key");
  EXPECT_EQ(u.token_file, "/home/u/.kube/token");
  EXPECT_EQ(u.exec->command, "/home/u/.kube/bin/plugin");
  EXPECT_EQ(config.users.at("v").exec->command, "kubelogin");
}

// Empty text and a null document are an empty config.
TEST(ParseKubeconfigTest, EmptyFileIsEmptyConfig) {
  EXPECT_TRUE(MustParse("").empty());
  EXPECT_TRUE(MustParse("# nothing\n").empty());
  EXPECT_TRUE(MustParse("~\n").empty());
}

// Bad input names the file and the field, and never quotes secret data.
TEST(ParseKubeconfigTest, ErrorsNameFileAndField) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::string_view expected;  // ToString()
  };
  const Case cases[] = {
      {"malformed", "clusters: [\n  - name: a\n    cluster: {server: x\n",
       "/k/config: document 1, line 2, column 3: malformed YAML: "},
      {"bad_base64", "users:\n- name: u\n  user: {client-key-data: 'c2VjcmV0!!'}\n",
       "/k/config: .users[0].user.client-key-data: illegal base64 data at input byte 8"},
      {"duplicate", "contexts:\n- name: a\n- name: a\n",
       "/k/config: .contexts[1].name: duplicate name \"a\""},
      {"wrong_type", "clusters:\n- name: a\n  cluster: {insecure-skip-tls-verify: maybe}\n",
       "/k/config: .clusters[0].cluster.insecure-skip-tls-verify: expected boolean"},
      {"not_list", "users: {a: b}\n", "/k/config: .users: expected list"},
      {"not_map", "- a\n- b\n", "/k/config: expected a kubeconfig object (kind: Config)"},
      {"bad_mode", "users:\n- name: u\n  user: {exec: {command: x, interactiveMode: Sometimes}}\n",
       "/k/config: .users[0].user.exec.interactiveMode: invalid interactiveMode: want one of "
       "Never, IfAvailable, Always"},
      {"bad_env", "users:\n- name: u\n  user: {exec: {command: x, env: [{name: 5}]}}\n",
       "/k/config: .users[0].user.exec.env[0].name: expected string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<Kubeconfig> config = ParseKubeconfig(c.text, "/k/config");
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), StatusCode::kBadRequest);
    EXPECT_TRUE(config.status().ToString().starts_with(c.expected)) << config.status().ToString();
    EXPECT_EQ(config.status().ToString().find("c2VjcmV0"), std::string::npos);
  }
}

// Merging follows client-go: the first file to define a name wins the whole entry (no field
// merge), and current-context and preferences come from the first file that sets them.
TEST(MergeKubeconfigsTest, FirstFileWins) {
  const Kubeconfig first = MustParse(R"(
clusters:
- name: shared
  cluster: {server: "https://first"}
users:
- name: only-first
  user: {token: a}
preferences: {}
)",
                                     "/a/config");
  const Kubeconfig second = MustParse(R"(
current-context: from-second
clusters:
- name: shared
  cluster: {server: "https://second", certificate-authority-data: Q0E=}
- name: second-only
  cluster: {server: "https://second-only"}
contexts:
- name: from-second
  context: {cluster: shared}
preferences: {colors: false}
)",
                                      "/b/config");
  const Kubeconfig third = MustParse(R"(
current-context: from-third
contexts:
- name: from-second
  context: {cluster: second-only}
- name: from-third
  context: {cluster: shared}
preferences: {colors: true}
)",
                                     "/c/config");
  const Kubeconfig merged = MergeKubeconfigs({first, second, third});
  EXPECT_EQ(merged.current_context, "from-second");
  EXPECT_EQ(merged.preferences.colors, false);
  const Cluster& shared = merged.clusters.at("shared");
  EXPECT_EQ(shared.server, "https://first");
  EXPECT_EQ(shared.certificate_authority_data, "");  // not merged in from the second file
  EXPECT_EQ(shared.location_of_origin, "/a/config");
  EXPECT_EQ(merged.clusters.at("second-only").location_of_origin, "/b/config");
  EXPECT_EQ(merged.contexts.at("from-second").cluster, "shared");
  EXPECT_EQ(merged.contexts.at("from-third").location_of_origin, "/c/config");
  EXPECT_EQ(merged.users.size(), 1U);
}

// $KUBECONFIG: empty entries, repeats and missing files are skipped; order is precedence.
TEST(LoadKubeconfigTest, KubeconfigListSkipsEmptyMissingAndRepeated) {
  TempDir dir;
  const std::string a = dir.Write("a", "current-context: from-a\n");
  const std::string b = dir.Write("b", "current-context: from-b\n");
  KubeconfigLoadOptions options;
  options.env = FakeEnv({{"KUBECONFIG", ":" + dir.Path("missing") + ":" + b + "::" + a + ":" + b},
                         {"HOME", dir.path()}});
  const Result<LoadedKubeconfig> loaded = LoadKubeconfig(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->files, (std::vector<std::string>{b, a}));
  EXPECT_EQ(loaded->config.current_context, "from-b");
}

// --kubeconfig wins over $KUBECONFIG and must exist.
TEST(LoadKubeconfigTest, ExplicitPathMustExist) {
  TempDir dir;
  const std::string a = dir.Write("a", "current-context: from-a\n");
  const std::string b = dir.Write("b", "current-context: from-b\n");
  KubeconfigLoadOptions options;
  options.env = FakeEnv({{"KUBECONFIG", a}});
  options.explicit_path = b;
  const Result<LoadedKubeconfig> loaded = LoadKubeconfig(options);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->config.current_context, "from-b");

  options.explicit_path = dir.Path("nope");
  const Result<LoadedKubeconfig> missing = LoadKubeconfig(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "stat " + dir.Path("nope") + ": no such file or directory (from --kubeconfig)");
}

// Without $KUBECONFIG, ~/.kube/config is read; a set $KUBECONFIG whose files are all missing
// gives an empty config rather than falling back to the home file (client-go's precedence).
TEST(LoadKubeconfigTest, HomeFallback) {
  TempDir dir;
  dir.Write(".kube/config", "current-context: from-home\n");
  KubeconfigLoadOptions options;
  options.env = FakeEnv({{"HOME", dir.path()}});
  Result<LoadedKubeconfig> loaded = LoadKubeconfig(options);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->config.current_context, "from-home");

  options.env = FakeEnv({{"HOME", "/nonexistent"}});
  options.home = dir.path();  // an explicit home wins over $HOME
  loaded = LoadKubeconfig(options);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->config.current_context, "from-home");

  options.env = FakeEnv({{"HOME", dir.path()}, {"KUBECONFIG", dir.Path("missing")}});
  options.home.clear();
  loaded = LoadKubeconfig(options);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->config.empty());
  EXPECT_TRUE(loaded->files.empty());
}

// A listed file that is malformed fails the load, naming it.
TEST(LoadKubeconfigTest, MalformedListedFileFails) {
  TempDir dir;
  const std::string good = dir.Write("good", "current-context: a\n");
  const std::string bad = dir.Write("bad", "clusters: [\n");
  KubeconfigLoadOptions options;
  options.env = FakeEnv({{"KUBECONFIG", good + ":" + bad}});
  const Result<LoadedKubeconfig> loaded = LoadKubeconfig(options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kBadRequest);
  EXPECT_TRUE(loaded.status().object().starts_with(bad + ": document 1"))
      << loaded.status().ToString();
}

}  // namespace
}  // namespace slicewright::client
