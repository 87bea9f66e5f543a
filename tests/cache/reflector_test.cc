#include "slicewright/cache/reflector.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "slicewright/base/log.h"
#include "slicewright/cache/informer.h"
#include "slicewright/client/exec_credential.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/token_source.h"
#include "slicewright/client/transport.h"

#include "apiserver/rest/serve.h"
#include "fakes/loopback.h"

// What the reflector writes to the log when requests fail: never a credential. Informers and
// plain requests authenticate with a token, basic auth and exec plugins to a server that wants
// another token, and every line logged meanwhile (at the highest verbosity) is checked.
namespace slicewright::cache {
namespace {

using test_support::Eventually;
using test_support::TempDir;

using namespace std::chrono_literals;

constexpr std::string_view kServerToken = "server-token-9f2c41";
constexpr std::string_view kClientToken = "client-token-SECRET-a81b";
constexpr std::string_view kPassword = "password-SECRET-c03d";
constexpr std::string_view kStderrSecret = "stderr-SECRET-e55f";
constexpr std::string_view kExecToken = "exec-token-SECRET-77aa";

// Captures every log line, at every verbosity, until destroyed.
class LogCapture final {
 public:
  LogCapture() : verbosity_(log::Verbosity()) {
    log::SetVerbosity(10);
    log::SetSinkForTesting([this](log::Severity, std::string_view message) {
      std::lock_guard lock(mu_);
      text_ += message;
      text_ += '\n';
    });
  }
  ~LogCapture() {
    log::SetSinkForTesting({});
    log::SetVerbosity(verbosity_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }

 private:
  const int verbosity_;
  mutable std::mutex mu_;
  std::string text_;
};

std::string WriteScript(const TempDir& dir, std::string_view name, std::string_view body) {
  const std::string path = dir.path() + "/" + std::string(name);
  {
    std::ofstream out(path, std::ios::trunc);
    out << "#!/bin/sh\n" << body;
  }
  ::chmod(path.c_str(), 0755);
  return path;
}

std::shared_ptr<client::ExecCredentialProvider> ExecPlugin(std::string command) {
  client::ExecConfig config;
  config.command = std::move(command);
  config.api_version = std::string(client::kExecApiV1);
  config.interactive_mode = client::ExecInteractiveMode::kNever;
  client::ExecProviderOptions options;
  options.base_env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  options.timeout = 20s;
  return std::make_shared<client::ExecCredentialProvider>(std::move(config),
                                                          client::ExecClusterInfo{}, options);
}

class ReflectorLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir_.path();
    options.token = std::string(kServerToken);
    options.io_threads = 2;
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(started).value();
  }

  // A RestClient for the server that authenticates as `configure` sets up.
  template <typename Configure>
  std::unique_ptr<client::RestClient> Client(Configure configure) {
    client::RestConfig config;
    config.server.scheme = "http";
    config.server.host = "127.0.0.1";
    config.server.port = server_->port();
    configure(config);
    auto transport = client::Transport::Create(config, {});
    EXPECT_TRUE(transport.ok()) << transport.status().ToString();
    if (!transport.ok()) return nullptr;
    client::RestClientOptions options;
    options.qps = 1000;
    options.burst = 1000;
    options.max_retries = 1;
    options.initial_backoff = 10ms;
    auto rest = client::RestClient::Create(
        std::shared_ptr<client::Transport>(std::move(transport).value()), options);
    EXPECT_TRUE(rest.ok()) << rest.status().ToString();
    return rest.ok() ? std::move(rest).value() : nullptr;
  }

  TempDir dir_;
  std::unique_ptr<apiserver::RunningApiServer> server_;
};

TEST_F(ReflectorLogTest, FailingCredentialsNeverReachTheLog) {
  const std::string failing_plugin = WriteScript(
      dir_, "failing-plugin",
      "echo \"refresh failed for token " + std::string(kStderrSecret) + "\" >&2\nexit 1\n");
  const std::string rejected_plugin = WriteScript(
      dir_, "rejected-plugin",
      "echo 'plugin debug: minted " + std::string(kExecToken) +
          "' >&2\n"
          "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
          "\"status\":{\"token\":\"" +
          std::string(kExecToken) + "\"}}'\n");

  std::vector<std::unique_ptr<client::RestClient>> clients;
  clients.push_back(Client([](client::RestConfig& config) {
    config.token_source = std::make_shared<client::StaticTokenSource>(std::string(kClientToken));
  }));
  clients.push_back(Client([](client::RestConfig& config) {
    config.basic_auth = client::BasicAuth{"admin", std::string(kPassword)};
  }));
  clients.push_back(
      Client([&](client::RestConfig& config) { config.exec = ExecPlugin(failing_plugin); }));
  clients.push_back(
      Client([&](client::RestConfig& config) { config.exec = ExecPlugin(rejected_plugin); }));
  for (const auto& client : clients) ASSERT_NE(client, nullptr);

  const std::vector<std::string_view> secrets = {kClientToken, kPassword, kStderrSecret,
                                                 kExecToken};
  auto expect_no_secret = [&](std::string_view text, std::string_view what) {
    for (const std::string_view secret : secrets) {
      EXPECT_EQ(text.find(secret), std::string_view::npos) << what << " holds " << secret;
    }
    // The redacted form of a token ("...SECRET-a81b" suffixes and the like) must not leak either.
    EXPECT_EQ(text.find("SECRET"), std::string_view::npos) << what << ":\n" << text;
  };

  LogCapture capture;
  std::vector<std::unique_ptr<Informer<model::Service>>> informers;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    ReflectorOptions options;
    options.name = "services-" + std::to_string(i);
    options.initial_backoff = 10ms;
    options.max_backoff = 50ms;
    options.use_watch_list = i % 2 == 1;  // the WatchList path logs its own failures
    informers.push_back(
        std::make_unique<Informer<model::Service>>(*clients[i], ServiceKind(), options));
    informers.back()->Start();
  }
  // Plain requests fail the same way; their Status texts are what callers log.
  for (const auto& client : clients) {
    Result<std::string> got = client->Get(client::ServicesResource(), "default", "web");
    ASSERT_FALSE(got.ok());
    expect_no_secret(got.status().ToString(), "a Get's Status");
    Result<std::string> created = client->Create(client::ServicesResource(), "default", "{}");
    ASSERT_FALSE(created.ok());
    expect_no_secret(created.status().ToString(), "a Create's Status");
  }
  for (const auto& informer : informers) {
    EXPECT_TRUE(Eventually([&] {
      const ReflectorStats stats = informer->Stats();
      return stats.list_failures + stats.watch_failures >= 3;
    }));
    EXPECT_FALSE(informer->HasSynced());
  }
  for (const auto& informer : informers) informer->Stop();

  const std::string logged = capture.text();
  // The failures were logged (so the check below has something to look at) ...
  for (std::size_t i = 0; i < informers.size(); ++i) {
    EXPECT_NE(logged.find("reflector services-" + std::to_string(i) + ":"), std::string::npos)
        << logged;
  }
  EXPECT_NE(logged.find("exit status 1"), std::string::npos) << logged;
  // ... and none of them holds a credential, nor the failing plugin's stderr.
  expect_no_secret(logged, "the log");
}

}  // namespace
}  // namespace slicewright::cache
