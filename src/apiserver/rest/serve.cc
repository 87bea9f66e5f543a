#include "apiserver/rest/serve.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <utility>

#include <openssl/evp.h>
#include <sys/stat.h>

#include "slicewright/net/ip.h"

#include "apiserver/http/server.h"
#include "apiserver/http/tls.h"
#include "apiserver/rest/json_util.h"
#include "apiserver/rest/objects.h"
#include "apiserver/storage/sqlite_storage.h"

namespace slicewright::apiserver {
namespace {

std::string Base64(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(data.data()),
                                      static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(written > 0 ? written : 0));
  return out;
}

}  // namespace

Result<std::pair<std::string, std::uint16_t>> ParseListenAddress(std::string_view listen) {
  std::string_view host;
  std::string_view port_text;
  if (listen.starts_with('[')) {
    const std::size_t close = listen.find(']');
    if (close == std::string_view::npos || close + 1 >= listen.size() || listen[close + 1] != ':') {
      return InvalidError("--listen \"" + std::string(listen) +
                          "\": want HOST:PORT or [IPv6]:PORT");
    }
    host = listen.substr(1, close - 1);
    port_text = listen.substr(close + 2);
  } else {
    const std::size_t colon = listen.rfind(':');
    if (colon == std::string_view::npos || listen.find(':') != colon) {
      return InvalidError("--listen \"" + std::string(listen) +
                          "\": want HOST:PORT or [IPv6]:PORT");
    }
    host = listen.substr(0, colon);
    port_text = listen.substr(colon + 1);
  }
  unsigned port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return InvalidError("--listen \"" + std::string(listen) + "\": invalid port \"" +
                        std::string(port_text) + "\"");
  }
  std::string host_text(host);
  if (host_text == "localhost") {
    host_text = "127.0.0.1";
  }
  if (!net::ParseIpSloppy(host_text)) {
    return InvalidError("--listen \"" + std::string(listen) + "\": \"" + host_text +
                        "\" is not an IP address");
  }
  return std::make_pair(host_text, static_cast<std::uint16_t>(port));
}

bool IsLoopbackAddress(std::string_view host) {
  const auto ip = net::ParseIpSloppy(host);
  if (!ip) {
    return false;
  }
  if (ip->family == net::IpFamily::kIPv4) {
    return ip->bytes[0] == 127;
  }
  for (std::size_t i = 0; i < 15; ++i) {
    if (ip->bytes[i] != 0) {
      return false;
    }
  }
  return ip->bytes[15] == 1;
}

Status WriteKubeconfig(const std::string& path, std::string_view server_url,
                       std::string_view ca_pem, std::string_view token,
                       std::string_view client_cert_pem, std::string_view client_key_pem) {
  KubeconfigContext context;
  context.server_url = server_url;
  context.ca_pem = ca_pem;
  context.token = token;
  context.client_cert_pem = client_cert_pem;
  context.client_key_pem = client_key_pem;
  return WriteKubeconfig(path, {context}, context.name);
}

Status WriteKubeconfig(const std::string& path, const std::vector<KubeconfigContext>& contexts,
                       std::string_view current) {
  Json clusters = Json::array();
  Json users = Json::array();
  Json context_list = Json::array();
  for (const KubeconfigContext& entry : contexts) {
    Json cluster = {{"server", entry.server_url}};
    if (!entry.ca_pem.empty()) {
      cluster["certificate-authority-data"] = Base64(entry.ca_pem);
    }
    Json user = Json::object();
    if (!entry.token.empty()) {
      user["token"] = entry.token;
    }
    if (!entry.client_cert_pem.empty() && !entry.client_key_pem.empty()) {
      user["client-certificate-data"] = Base64(entry.client_cert_pem);
      user["client-key-data"] = Base64(entry.client_key_pem);
    }
    clusters.push_back({{"name", entry.name}, {"cluster", cluster}});
    users.push_back({{"name", entry.name}, {"user", user}});
    context_list.push_back(
        {{"name", entry.name},
         {"context",
          {{"cluster", entry.name}, {"user", entry.name}, {"namespace", entry.namespace_}}}});
  }
  const Json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", clusters},
      {"users", users},
      {"contexts", context_list},
      {"current-context", current},
      {"preferences", Json::object()},
  };
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) {
      return InvalidError("--write-kubeconfig " + path + ": " + ec.message());
    }
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) {
      return InvalidError("--write-kubeconfig " + path + ": cannot write " + temporary);
    }
    out << config.dump(2) << "\n";
    if (!out.flush()) {
      return InvalidError("--write-kubeconfig " + path + ": write failed");
    }
  }
  if (::chmod(temporary.c_str(), 0600) != 0) {
    return InvalidError("--write-kubeconfig " + path + ": chmod failed");
  }
  std::filesystem::rename(temporary, target, ec);
  if (ec) {
    return InvalidError("--write-kubeconfig " + path + ": " + ec.message());
  }
  return Status::Ok();
}

Result<std::unique_ptr<RunningApiServer>> RunningApiServer::Start(ServeOptions options) {
  SW_ASSIGN_OR_RETURN(auto address, ParseListenAddress(options.listen));
  if (!IsLoopbackAddress(address.first) && options.token.empty()) {
    return InvalidError("--listen " + options.listen +
                        ": refusing to serve a non-loopback address without --token");
  }
  if (options.data_dir.empty()) {
    return InvalidError("--data-dir is required");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) {
    return InvalidError("--data-dir " + options.data_dir + ": " + ec.message());
  }

  // Attributes of records loaded from disk: the built-in resources' selectable fields by key.
  auto builtins = std::make_shared<ResourceRegistry>();
  SqliteStorageOptions storage_options;
  storage_options.path = (std::filesystem::path(options.data_dir) / "state.db").string();
  storage_options.history_events = options.history_events;
  storage_options.attributes = [builtins](std::string_view key,
                                          std::string_view json) -> Result<ObjectAttributes> {
    SW_ASSIGN_OR_RETURN(Json object, ParseJson(json, "stored object"));
    ResourceInfo generic;
    for (const ResourcePtr& info : builtins->All()) {
      if (key.starts_with(info->KeyPrefix())) {
        return ComputeAttributes(*info, object);
      }
    }
    return ComputeAttributes(generic, object);
  };
  SW_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStorage> storage,
                      SqliteStorage::Open(std::move(storage_options)));

  auto running = std::unique_ptr<RunningApiServer>(new RunningApiServer());
  SW_ASSIGN_OR_RETURN(running->api_, ApiServer::Create(options.api, std::move(storage)));
  for (const CrdManifest& manifest : options.crds) {
    SW_ASSIGN_OR_RETURN(std::vector<std::string> documents, CrdDocuments(manifest));
    if (Status installed = running->api_->EnsureCrds(documents); !installed.ok()) {
      return installed.WithContext("installing the CRDs of " + manifest.name);
    }
  }

  HttpServerOptions http_options;
  http_options.address = address.first;
  http_options.port = address.second;
  http_options.io_threads =
      options.io_threads > 0 ? options.io_threads
                             : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  http_options.bearer_token = options.token;
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  if (!options.tls_cert_dir.empty()) {
    std::vector<std::string> hosts;
    if (!IsLoopbackAddress(address.first) && address.first != "0.0.0.0" && address.first != "::") {
      hosts.push_back(address.first);
    }
    Result<GeneratedTls> tls = EnsureCertificates(options.tls_cert_dir, hosts);
    if (!tls.ok()) {
      return tls.status().WithContext("--tls-cert-dir");
    }
    http_options.tls = tls->server;
    ca_pem = tls->ca_certificate_pem;
    client_cert_pem = std::move(tls->client_certificate_pem);
    client_key_pem = std::move(tls->client_key_pem);
  }
  ApiServer* api = running->api_.get();
  SW_ASSIGN_OR_RETURN(running->http_,
                      HttpServer::Create(std::move(http_options), [api](HttpRequest& request) {
                        return api->Handle(request);
                      }));
  const bool v6 = address.first.find(':') != std::string::npos;
  std::string host = v6 ? "[" + address.first + "]" : address.first;
  if (address.first == "0.0.0.0") {
    host = "127.0.0.1";
  }
  running->url_ = (options.tls_cert_dir.empty() ? "http://" : "https://") + host + ":" +
                  std::to_string(running->http_->port());
  if (!options.kubeconfig_path.empty()) {
    SW_RETURN_IF_ERROR(WriteKubeconfig(options.kubeconfig_path, running->url_, ca_pem,
                                       options.token, client_cert_pem, client_key_pem));
  }
  running->ca_pem_ = std::move(ca_pem);
  running->token_ = options.token;
  running->client_cert_pem_ = std::move(client_cert_pem);
  running->client_key_pem_ = std::move(client_key_pem);
  running->http_->Start();
  return running;
}

RunningApiServer::~RunningApiServer() { Stop(); }

KubeconfigContext RunningApiServer::kubeconfig_context(std::string name) const {
  KubeconfigContext context;
  context.name = std::move(name);
  context.server_url = url_;
  context.ca_pem = ca_pem_;
  context.token = token_;
  context.client_cert_pem = client_cert_pem_;
  context.client_key_pem = client_key_pem_;
  return context;
}

std::uint16_t RunningApiServer::port() const { return http_ ? http_->port() : 0; }

void RunningApiServer::Stop() {
  if (http_) {
    http_->Stop();
  }
  if (api_) {
    api_->Stop();
  }
}

}  // namespace slicewright::apiserver
