#include "slicewright/client/exec_credential.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/client_test_util.h"

namespace slicewright::client {
namespace {

using testing::FakeClock;
using testing::TempDir;

constexpr std::string_view kTokenV1 =
    R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",)"
    R"("status":{"token":"tok-$n","expirationTimestamp":"2027-01-15T09:00:00Z"}})";

// A plugin that counts its runs in `count`, records KUBERNETES_EXEC_INFO, its args and $EXTRA,
// and prints `output` ($n is the run number).
std::string CountingPlugin(const TempDir& dir, std::string_view output) {
  return dir.WriteScript(
      "plugin",
      "d=$(dirname \"$0\")\n"
      "n=$(cat \"$d/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/count\"\n"
      "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info\"\n"
      "printf '%s|%s' \"$*\" \"$EXTRA\" > \"$d/args\"\n"
      "cat <<EOF\n" +
          std::string(output) + "\nEOF\n");
}

ExecConfig V1Config(std::string command) {
  ExecConfig config;
  config.command = std::move(command);
  config.api_version = std::string(kExecApiV1);
  config.interactive_mode = ExecInteractiveMode::kNever;
  return config;
}

ExecProviderOptions Options(const FakeClock& clock) {
  ExecProviderOptions options;
  options.now = clock.now();
  options.base_env = std::vector<std::string>{"PATH=/usr/bin:/bin", "EXTRA=base"};
  options.timeout = std::chrono::seconds(20);
  return options;
}

std::string Read(const TempDir& dir, std::string_view name) {
  std::ifstream in(dir.Path(name));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A token credential: args and env reach the plugin, KUBERNETES_EXEC_INFO carries the cluster,
// and the expiry is parsed.
TEST(ExecCredentialProviderTest, RunsPluginWithArgsEnvAndClusterInfo) {
  TempDir dir;
  FakeClock clock;
  ExecConfig config = V1Config(CountingPlugin(dir, kTokenV1));
  config.args = {"get-token", "--cluster", "prod"};
  config.env = {{"EXTRA", "from-kubeconfig"}};
  config.provide_cluster_info = true;
  ExecClusterInfo cluster{"https://10.0.0.1:6443", "api.internal", false, "CA-PEM", ""};
  ExecCredentialProvider provider(config, cluster, Options(clock));

  const Result<ExecCredential> credential = provider.Get();
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_EQ(credential->token, "tok-1");
  ASSERT_TRUE(credential->expiry.has_value());
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*credential->expiry), 1'800'003'600);
  EXPECT_EQ(Read(dir, "args"), "get-token --cluster prod|from-kubeconfig");
  const nlohmann::json info = nlohmann::json::parse(Read(dir, "info"));
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://10.0.0.1:6443");
  EXPECT_EQ(info["spec"]["cluster"]["tls-server-name"], "api.internal");
  EXPECT_EQ(info["spec"]["cluster"]["certificate-authority-data"], "Q0EtUEVN");
  EXPECT_EQ(Read(dir, "info"), provider.ExecInfoJson());
}

// Without provideClusterInfo the spec has no cluster.
TEST(ExecCredentialProviderTest, NoClusterInfoUnlessAsked) {
  FakeClock clock;
  ExecCredentialProvider provider(
      V1Config("plugin"), ExecClusterInfo{"https://a:1", "", false, "", ""}, Options(clock));
  EXPECT_EQ(provider.ExecInfoJson(),
            R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
            R"("spec":{"interactive":false}})");
}

// The credential is cached until its expirationTimestamp, then the plugin runs again.
TEST(ExecCredentialProviderTest, CachesUntilExpiry) {
  TempDir dir;
  FakeClock clock;
  ExecCredentialProvider provider(V1Config(CountingPlugin(dir, kTokenV1)), {}, Options(clock));
  ASSERT_EQ(provider.Get()->token, "tok-1");
  clock.Advance(std::chrono::seconds(3599));
  EXPECT_EQ(provider.Get()->token, "tok-1");
  EXPECT_EQ(Read(dir, "count"), "1\n");
  clock.Advance(std::chrono::seconds(1));  // now == expiry: expired
  const Result<ExecCredential> renewed = provider.Get();
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(renewed->token, "tok-2");
  EXPECT_EQ(renewed->generation, 2U);
}

// A 401 for the current credential forces a re-run; a 401 for an older one does not.
TEST(ExecCredentialProviderTest, RerunsAfterUnauthorized) {
  TempDir dir;
  FakeClock clock;
  const std::string no_expiry =
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1",)"
      R"("status":{"token":"tok-$n"}})";
  ExecConfig config = V1Config(CountingPlugin(dir, no_expiry));
  config.api_version = std::string(kExecApiV1Beta1);
  ExecCredentialProvider provider(config, {}, Options(clock));
  const ExecCredential first = *provider.Get();
  EXPECT_EQ(first.token, "tok-1");
  EXPECT_FALSE(first.expiry.has_value());
  clock.Advance(std::chrono::hours(1000));
  EXPECT_EQ(provider.Get()->token, "tok-1");  // no expiry: cached until a 401
  provider.Invalidate(first.generation);
  const ExecCredential second = *provider.Get();
  EXPECT_EQ(second.token, "tok-2");
  provider.Invalidate(first.generation);  // stale 401: ignored
  EXPECT_EQ(provider.Get()->token, "tok-2");
  EXPECT_EQ(Read(dir, "count"), "2\n");
}

// A client certificate and key come back as PEM text.
TEST(ExecCredentialProviderTest, ReturnsClientCertificate) {
  TempDir dir;
  FakeClock clock;
  const std::string output =
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",)"
      R"("status":{"clientCertificateData":"CERT PEM","clientKeyData":"KEY PEM"}})";
  ExecCredentialProvider provider(V1Config(CountingPlugin(dir, output)), {}, Options(clock));
  const Result<ExecCredential> credential = provider.Get();
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_EQ(credential->token, "");
  EXPECT_EQ(credential->client_certificate_pem, "CERT PEM");
  EXPECT_EQ(credential->client_key_pem, "KEY PEM");
}

// Every way a plugin can fail is an error naming the plugin and the problem, with the code
// given, and never the credential text.
TEST(ExecCredentialProviderTest, FailureModes) {
  struct Case {
    std::string_view name;
    std::string_view body;  // script after the shebang
    StatusCode code;
    std::string_view expected;  // substring of ToString()
  };
  const Case cases[] = {
      {"exit", "echo 'token expired: SECRET-1' >&2\necho partial\nexit 3\n",
       StatusCode::kUnauthorized,
       "exit status 3; it wrote 24 bytes to stderr (not shown: it may hold secrets)"},
      {"malformed", "echo '{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"SECRET-2\"'\n",
       StatusCode::kBadRequest, "malformed JSON at byte"},
      {"wrong_version",
       "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
       "\"status\":{\"token\":\"SECRET-3\"}}'\n",
       StatusCode::kBadRequest,
       "output has apiVersion \"client.authentication.k8s.io/v1beta1\", but the kubeconfig asks "
       "for client.authentication.k8s.io/v1"},
      {"wrong_kind",
       "echo '{\"kind\":\"Secret\",\"apiVersion\":\"client.authentication.k8s.io/v1\"}'\n",
       StatusCode::kBadRequest, "output has kind \"Secret\", want ExecCredential"},
      {"no_status",
       "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\"}'\n",
       StatusCode::kBadRequest, "output has no status"},
      {"empty_status",
       "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
       "\"status\":{}}'\n",
       StatusCode::kUnauthorized, "neither a token nor a client certificate and key"},
      {"cert_only",
       "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
       "\"status\":{\"clientCertificateData\":\"C\"}}'\n",
       StatusCode::kBadRequest, "only one of clientCertificateData and clientKeyData"},
      {"bad_expiry",
       "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
       "\"status\":{\"token\":\"SECRET-4\",\"expirationTimestamp\":\"tomorrow\"}}'\n",
       StatusCode::kBadRequest, "status.expirationTimestamp \"tomorrow\" is not RFC 3339"},
      {"token_type",
       "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
       "\"status\":{\"token\":5}}'\n",
       StatusCode::kBadRequest, ": .status.token: expected string"},
      {"not_object", "echo '[]'\n", StatusCode::kBadRequest,
       "output is not an ExecCredential object"},
      {"killed", "kill -9 $$\n", StatusCode::kUnauthorized, "killed by signal 9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    FakeClock clock;
    const std::string script = dir.WriteScript(c.name, c.body);
    ExecCredentialProvider provider(V1Config(script), {}, Options(clock));
    const Result<ExecCredential> credential = provider.Get();
    ASSERT_FALSE(credential.ok());
    EXPECT_EQ(credential.status().code(), c.code) << credential.status().ToString();
    const std::string text = credential.status().ToString();
    EXPECT_NE(text.find("exec plugin \"" + script + "\""), std::string::npos) << text;
    EXPECT_NE(text.find(c.expected), std::string::npos) << text;
    // Not even the plugin's stderr, where the "exit" case echoes its secret.
    EXPECT_EQ(text.find("SECRET"), std::string::npos) << text;
  }
}

// A missing command is kNotFound and carries the install hint.
TEST(ExecCredentialProviderTest, MissingCommandShowsInstallHint) {
  FakeClock clock;
  ExecConfig config = V1Config("sw-no-such-credential-plugin");
  config.install_hint = "Install it with: apt install sw-plugin";
  ExecCredentialProvider provider(config, {}, Options(clock));
  const Result<ExecCredential> credential = provider.Get();
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(credential.status().message(),
            "exec plugin \"sw-no-such-credential-plugin\": exec: "
            "\"sw-no-such-credential-plugin\": executable file not found in $PATH\n\n"
            "Install it with: apt install sw-plugin");
}

// A plugin that hangs is killed after the timeout and reported as kTimeout.
TEST(ExecCredentialProviderTest, TimesOut) {
  TempDir dir;
  FakeClock clock;
  ExecProviderOptions options = Options(clock);
  options.timeout = std::chrono::milliseconds(200);
  ExecCredentialProvider provider(V1Config(dir.WriteScript("hang", "sleep 30\n")), {}, options);
  const Result<ExecCredential> credential = provider.Get();
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), StatusCode::kTimeout);
  EXPECT_NE(credential.status().message().find("killed after 200 ms"), std::string::npos);
}

// A failure is not cached: once the plugin works, the next Get() succeeds.
TEST(ExecCredentialProviderTest, FailureIsNotCached) {
  TempDir dir;
  FakeClock clock;
  const std::string script = dir.WriteScript("plugin", "exit 1\n");
  ExecCredentialProvider provider(V1Config(script), {}, Options(clock));
  ASSERT_FALSE(provider.Get().ok());
  CountingPlugin(dir, kTokenV1);  // rewrites "plugin"
  const Result<ExecCredential> credential = provider.Get();
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_EQ(credential->token, "tok-1");
}

// interactiveMode Always cannot be honoured without a terminal.
TEST(ExecCredentialProviderTest, AlwaysInteractiveIsRefused) {
  FakeClock clock;
  ExecConfig config = V1Config("/bin/true");
  config.interactive_mode = ExecInteractiveMode::kAlways;
  ExecCredentialProvider provider(config, {}, Options(clock));
  const Result<ExecCredential> credential = provider.Get();
  ASSERT_FALSE(credential.ok());
  EXPECT_EQ(credential.status().code(), StatusCode::kUnauthorized);
  EXPECT_NE(credential.status().message().find("interactiveMode is Always"), std::string::npos);
}

// Describe() leaves out args and env values.
TEST(ExecCredentialProviderTest, DescribeRedactsArgsAndEnv) {
  FakeClock clock;
  ExecConfig config = V1Config("/usr/bin/plugin");
  config.args = {"--password=hunter2"};
  config.env = {{"API_KEY", "k3y"}};
  ExecCredentialProvider provider(config, {}, Options(clock));
  EXPECT_EQ(provider.Describe(),
            "exec plugin /usr/bin/plugin (client.authentication.k8s.io/v1, 1 args, 1 env vars)");
}

// Validation as client-go's: command, a supported apiVersion, interactiveMode for v1, env names.
TEST(ValidateExecConfigTest, Rules) {
  ExecConfig good = V1Config("p");
  EXPECT_TRUE(ValidateExecConfig(good, "u").ok());
  ExecConfig no_command = good;
  no_command.command.clear();
  EXPECT_EQ(ValidateExecConfig(no_command, "u").message(), "user \"u\": exec: command must be set");
  ExecConfig old = good;
  old.api_version = "client.authentication.k8s.io/v1alpha1";
  EXPECT_EQ(ValidateExecConfig(old, "u").code(), StatusCode::kInvalid);
  ExecConfig no_mode = good;
  no_mode.interactive_mode = ExecInteractiveMode::kUnset;
  EXPECT_EQ(ValidateExecConfig(no_mode, "u").message(),
            "user \"u\": exec: interactiveMode must be set for client.authentication.k8s.io/v1");
  no_mode.api_version = std::string(kExecApiV1Beta1);
  EXPECT_TRUE(ValidateExecConfig(no_mode, "u").ok());
  ExecConfig bad_env = good;
  bad_env.env = {{"", "x"}};
  EXPECT_EQ(ValidateExecConfig(bad_env, "u").message(),
            "user \"u\": exec: env[0].name must be set");
}

// By default the plugin inherits this process's environment, with the kubeconfig's env on top.
TEST(ExecCredentialProviderTest, InheritsProcessEnvironmentByDefault) {
  TempDir dir;
  FakeClock clock;
  ExecConfig config = V1Config(CountingPlugin(dir, kTokenV1));
  config.env = {{"EXTRA", "layered"}};
  ExecProviderOptions options = Options(clock);
  options.base_env.reset();
  ExecCredentialProvider provider(config, {}, options);
  ASSERT_TRUE(provider.Get().ok());
  EXPECT_EQ(Read(dir, "args"), "|layered");
}

// Concurrent callers after an expiry share one plugin run.
TEST(ExecCredentialProviderTest, ConcurrentGetRunsPluginOnce) {
  TempDir dir;
  FakeClock clock;
  ExecCredentialProvider provider(V1Config(CountingPlugin(dir, kTokenV1)), {}, Options(clock));
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (provider.Get().ok()) ok.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(Read(dir, "count"), "1\n");
}

}  // namespace
}  // namespace slicewright::client
