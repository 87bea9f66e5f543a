#include "cli/apiserver_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>

#include <pthread.h>
#include <signal.h>

#include "apiserver/rest/serve.h"
#include "cli/command.h"

namespace slicewright::cli {

Status ApplyTransportFlags(bool insecure_http, apiserver::ServeOptions& serve) {
  if (!insecure_http) {
    if (serve.tls_cert_dir.empty()) {
      serve.tls_cert_dir = (std::filesystem::path(serve.data_dir) / "tls").string();
    }
    return Status::Ok();
  }
  if (!serve.tls_cert_dir.empty()) {
    return InvalidError("--insecure-http and --tls-cert-dir: choose one (plain HTTP or HTTPS)");
  }
  SW_ASSIGN_OR_RETURN(auto address, apiserver::ParseListenAddress(serve.listen));
  if (!apiserver::IsLoopbackAddress(address.first)) {
    // Plain HTTP off loopback would send the bearer token and every object in clear text.
    return InvalidError("--insecure-http: refusing plain HTTP on the non-loopback address " +
                        serve.listen + " (drop --insecure-http to serve HTTPS)");
  }
  return Status::Ok();
}

Result<std::vector<apiserver::CrdManifest>> ReadCrdDir(const std::string& dir) {
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    const std::filesystem::path& path = it->path();
    const std::string ext = path.extension().string();
    const std::string name = path.filename().string();
    if ((ext == ".yaml" || ext == ".yml" || ext == ".json") && name != "kustomization.yaml" &&
        name != "kustomization.yml" && it->is_regular_file(error)) {
      files.push_back(path);
    }
  }
  if (error) {
    return InvalidError("--crd-dir " + dir + ": " + error.message());
  }
  std::sort(files.begin(), files.end());
  std::vector<apiserver::CrdManifest> manifests;
  for (const std::filesystem::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      return InvalidError("--crd-dir: cannot read " + path.string());
    }
    manifests.push_back(apiserver::CrdManifest{path.string(), text.str()});
  }
  return manifests;
}

std::vector<std::string> SplitCidrList(std::string_view list) {
  std::vector<std::string> parts;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view part = list.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    parts.emplace_back(part);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return parts;
}

int RunApiServerCommand(const ApiServerCommandOptions& options, std::ostream& out,
                        std::ostream& err) {
  // Blocked before any thread starts, so every thread inherits the mask and only sigwait below
  // receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  apiserver::ServeOptions serve;
  serve.listen = options.listen;
  serve.data_dir = options.data_dir;
  serve.token = options.token;
  serve.tls_cert_dir = options.tls_cert_dir;
  serve.kubeconfig_path = options.write_kubeconfig;
  serve.history_events = options.history_events;
  serve.io_threads = options.io_threads;
  serve.api.service_cidrs = SplitCidrList(options.service_cluster_ip_range);
  if (options.mcs_crds) {
    serve.crds = apiserver::McsCrdManifests();
  }
  for (const std::string& dir : options.crd_dirs) {
    Result<std::vector<apiserver::CrdManifest>> manifests = ReadCrdDir(dir);
    if (!manifests.ok()) {
      err << "slicewright apiserver: " << manifests.status().ToString() << "\n";
      return 1;
    }
    serve.crds.insert(serve.crds.end(), manifests->begin(), manifests->end());
  }
  if (const Status transport = ApplyTransportFlags(options.insecure_http, serve); !transport.ok()) {
    err << "slicewright apiserver: " << transport.ToString() << "\n";
    return 1;
  }
  const std::string tls_cert_dir = serve.tls_cert_dir;
  Result<std::unique_ptr<apiserver::RunningApiServer>> server =
      apiserver::RunningApiServer::Start(std::move(serve));
  if (!server.ok()) {
    err << "slicewright apiserver: " << server.status().ToString() << "\n";
    return 1;
  }
  out << "slicewright apiserver: serving on " << (*server)->url() << "\n";
  if (!options.insecure_http) {
    out << "slicewright apiserver: CA certificate "
        << (std::filesystem::path(tls_cert_dir) / "ca.crt").string() << "\n";
  }
  if (!options.write_kubeconfig.empty()) {
    out << "slicewright apiserver: kubeconfig written to " << options.write_kubeconfig
        << "; try: kubectl --kubeconfig " << options.write_kubeconfig << " get namespaces\n";
  }
  out.flush();
  int received = 0;
  sigwait(&signals, &received);
  out << "slicewright apiserver: received signal " << received << ", shutting down\n";
  out.flush();
  (*server)->Stop();
  return 0;
}

namespace {

CommandSpec ApiServerCommand() {
  auto options = std::make_shared<ApiServerCommandOptions>();
  CommandSpec spec;
  spec.name = "apiserver";
  spec.description = "Run the embedded, SQLite-backed development API server (kubectl-compatible)";
  spec.flags = {
      {.names = "--listen", .help = "Address to serve on, HOST:PORT", .target = &options->listen},
      {.names = "--data-dir", .help = "Directory holding state.db", .target = &options->data_dir},
      {.names = "--token",
       .help = "Require this bearer token on every request (needed off loopback)",
       .target = &options->token,
       .show_default = false},
      {.names = "--tls-cert-dir",
       .help = "Keep the CA and serving certificate of HTTPS here (default: DATA_DIR/tls)",
       .target = &options->tls_cert_dir,
       .show_default = false},
      {.names = "--insecure-http",
       .help = "Serve plain HTTP instead of HTTPS (loopback addresses only)",
       .target = &options->insecure_http,
       .show_default = false},
      {.names = "--write-kubeconfig",
       .help = "Write a kubeconfig for this server to FILE",
       .target = &options->write_kubeconfig,
       .show_default = false},
      {.names = "--history-events",
       .help = "Watch history kept for resuming watches (events)",
       .target = &options->history_events},
      {.names = "--crd-dir",
       .help = "Install the CRD manifests (*.yaml, *.yml, *.json) of this directory at startup "
               "(repeatable)",
       .target = &options->crd_dirs,
       .show_default = false},
      {.names = "--mcs-crds",
       .help = "Install the Multi-Cluster Services CRDs built in (deploy/mcs/crds: ServiceExport, "
               "ServiceImport, ClusterProperty, ServiceExportRecord) at startup",
       .target = &options->mcs_crds,
       .show_default = false},
      {.names = "--service-cluster-ip-range",
       .help = "Service cluster IP ranges: one CIDR (single-stack) or one of each family, comma "
               "separated (dual-stack; the first is the primary family)",
       .target = &options->service_cluster_ip_range},
      {.names = "--io-threads",
       .help = "Threads serving connections (0: one per core, at least 2)",
       .target = &options->io_threads,
       .non_negative = true},
  };
  spec.run = [options](const CommandContext& io) {
    return RunApiServerCommand(*options, io.out, io.err);
  };
  return spec;
}
SW_REGISTER_COMMAND(ApiServerCommand);

}  // namespace

}  // namespace slicewright::cli
