#include "cli/apiserver_command.h"

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/client/rest_client.h"
#include "slicewright/client/rest_config.h"
#include "slicewright/client/transport.h"

#include "apiserver/rest/serve.h"
#include "fakes/loopback.h"

namespace slicewright::cli {
namespace {

apiserver::ServeOptions Serve(std::string listen, std::string data_dir) {
  apiserver::ServeOptions serve;
  serve.listen = std::move(listen);
  serve.data_dir = std::move(data_dir);
  return serve;
}

// A certificate that does not verify fails at once, not after the retries' backoff.
client::RestClientOptions NoRetries() {
  client::RestClientOptions options;
  options.max_retries = 0;
  return options;
}

// HTTPS by default, with the certificates under the data directory unless --tls-cert-dir says.
TEST(ApplyTransportFlagsTest, HttpsByDefault) {
  apiserver::ServeOptions serve = Serve("127.0.0.1:0", "/var/sw");
  ASSERT_TRUE(ApplyTransportFlags(false, serve).ok());
  EXPECT_EQ(serve.tls_cert_dir, "/var/sw/tls");

  serve = Serve("0.0.0.0:6443", "/var/sw");
  serve.tls_cert_dir = "/etc/sw-pki";
  ASSERT_TRUE(ApplyTransportFlags(false, serve).ok());
  EXPECT_EQ(serve.tls_cert_dir, "/etc/sw-pki");
}

// Plain HTTP only when asked for, and only on loopback.
TEST(ApplyTransportFlagsTest, InsecureHttpOnLoopbackOnly) {
  for (const char* listen : {"127.0.0.1:0", "127.0.0.2:6443", "[::1]:0", "localhost:0"}) {
    apiserver::ServeOptions serve = Serve(listen, "/var/sw");
    EXPECT_TRUE(ApplyTransportFlags(true, serve).ok()) << listen;
    EXPECT_EQ(serve.tls_cert_dir, "") << listen;
  }
  for (const char* listen : {"0.0.0.0:0", "[::]:6443", "10.1.2.3:6443"}) {
    apiserver::ServeOptions serve = Serve(listen, "/var/sw");
    serve.token = "a-token";  // a token does not make plain HTTP acceptable off loopback
    const Status status = ApplyTransportFlags(true, serve);
    EXPECT_EQ(status.code(), StatusCode::kInvalid) << listen;
    EXPECT_EQ(status.message(), std::string("--insecure-http: refusing plain HTTP on the ") +
                                    "non-loopback address " + listen +
                                    " (drop --insecure-http to serve HTTPS)");
  }
  apiserver::ServeOptions both = Serve("127.0.0.1:0", "/var/sw");
  both.tls_cert_dir = "/etc/sw-pki";
  EXPECT_EQ(ApplyTransportFlags(true, both).message(),
            "--insecure-http and --tls-cert-dir: choose one (plain HTTP or HTTPS)");
  apiserver::ServeOptions malformed = Serve("nowhere", "/var/sw");
  EXPECT_EQ(ApplyTransportFlags(true, malformed).code(), StatusCode::kInvalid);
}

// The kubeconfig a client loaded before a restart still verifies the restarted server: the CA is
// kept in DATA_DIR/tls, so the rewritten kubeconfig carries the same one.
TEST(ApiServerCommandTest, RestartKeepsTheKubeconfigsCa) {
  test_support::TempDir dir("sw_apiserver_command");
  const std::string kubeconfig = dir.path() + "/kubeconfig";
  const auto start = [&]() {
    apiserver::ServeOptions serve = Serve("127.0.0.1:0", dir.path() + "/data");
    serve.kubeconfig_path = kubeconfig;
    EXPECT_TRUE(ApplyTransportFlags(false, serve).ok());
    auto server = apiserver::RunningApiServer::Start(std::move(serve));
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    return server.ok() ? std::move(server).value() : nullptr;
  };
  const auto load = [&]() {
    client::LoadOptions options;
    options.kubeconfig = kubeconfig;
    return client::LoadRestConfig(options);
  };
  const auto list_namespaces = [](const client::RestConfig& config) -> Status {
    SW_ASSIGN_OR_RETURN(std::unique_ptr<client::Transport> transport,
                        client::Transport::Create(config, {}));
    SW_ASSIGN_OR_RETURN(std::unique_ptr<client::RestClient> rest,
                        client::RestClient::Create(std::move(transport), NoRetries()));
    return rest->List({"", "v1", "namespaces", false}, "", {}).status();
  };

  std::unique_ptr<apiserver::RunningApiServer> first = start();
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->url().starts_with("https://127.0.0.1:")) << first->url();
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/data/tls/ca.crt"));
  Result<client::RestConfig> before = load();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(before->server.scheme, "https");
  EXPECT_FALSE(before->tls.insecure_skip_verify);
  EXPECT_EQ(before->tls.ca_pem, first->ca_certificate_pem());
  EXPECT_FALSE(before->tls.client_certificate_pem.empty());
  EXPECT_TRUE(list_namespaces(*before).ok()) << list_namespaces(*before).ToString();
  first->Stop();
  first.reset();

  std::unique_ptr<apiserver::RunningApiServer> second = start();
  ASSERT_NE(second, nullptr);
  Result<client::RestConfig> after = load();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->tls.ca_pem, before->tls.ca_pem);
  EXPECT_EQ(after->tls.client_certificate_pem, before->tls.client_certificate_pem);
  // The old configuration, pointed at the new port, verifies the restarted server.
  client::RestConfig old_config = *before;
  old_config.server.port = second->port();
  EXPECT_TRUE(list_namespaces(old_config).ok()) << list_namespaces(old_config).ToString();

  // A client that trusts another CA cannot verify it.
  test_support::TempDir other("sw_apiserver_command_other");
  apiserver::ServeOptions other_serve = Serve("127.0.0.1:0", other.path());
  ASSERT_TRUE(ApplyTransportFlags(false, other_serve).ok());
  auto stranger = apiserver::RunningApiServer::Start(std::move(other_serve));
  ASSERT_TRUE(stranger.ok()) << stranger.status().ToString();
  EXPECT_NE((*stranger)->ca_certificate_pem(), before->tls.ca_pem);
  client::RestConfig wrong_ca = *before;
  wrong_ca.server.port = (*stranger)->port();
  EXPECT_FALSE(list_namespaces(wrong_ca).ok());
}

// --crd-dir reads a directory's manifests in name order, leaving kustomize's own file out, so
// `--crd-dir deploy/mcs/crds` installs the four CRDs; a missing directory is an error naming it.
TEST(ReadCrdDirTest, ReadsManifestsButNotTheKustomization) {
  Result<std::vector<apiserver::CrdManifest>> manifests =
      ReadCrdDir(std::string(SW_SOURCE_DIR) + "/deploy/mcs/crds");
  ASSERT_TRUE(manifests.ok()) << manifests.status().ToString();
  std::vector<std::string> names;
  for (const apiserver::CrdManifest& manifest : *manifests) {
    names.push_back(std::filesystem::path(manifest.name).filename().string());
    EXPECT_FALSE(manifest.text.empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"about.k8s.io_clusterproperties.yaml",
                                             "mcs.slicewright.io_serviceexportrecords.yaml",
                                             "multicluster.x-k8s.io_serviceexports.yaml",
                                             "multicluster.x-k8s.io_serviceimports.yaml"}));
  Result<std::vector<apiserver::CrdManifest>> missing = ReadCrdDir("/nonexistent/crds");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalid);
  EXPECT_NE(missing.status().ToString().find("--crd-dir /nonexistent/crds"), std::string::npos);
}

}  // namespace
}  // namespace slicewright::cli
