// `slicewright apiserver`: the embedded development API server, kubectl-compatible and backed by
// SQLite, until SIGTERM or SIGINT. Call from the main thread.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

#include "apiserver/api/embedded_crds.h"
#include "apiserver/rest/serve.h"

namespace slicewright::cli {

struct ApiServerCommandOptions {
  std::string listen = "127.0.0.1:6443";
  std::string data_dir = "./.slicewright";
  std::string token;
  std::string tls_cert_dir;  // "": DATA_DIR/tls
  bool insecure_http = false;
  std::string write_kubeconfig;
  std::int64_t history_events = 100000;
  int io_threads = 0;  // 0: one per core
  // Directories whose *.yaml, *.yml and *.json CRD manifests are installed at startup.
  std::vector<std::string> crd_dirs;
  // Install the Multi-Cluster Services CRDs compiled into the binary (deploy/mcs/crds).
  bool mcs_crds = false;
  // kube-apiserver's --service-cluster-ip-range: "CIDR" or "CIDR,CIDR" (one per family).
  std::string service_cluster_ip_range = "10.96.0.0/12,fd00:10:96::/112";
};

// The CRD manifests of `dir`: its *.yaml, *.yml and *.json files in name order, except
// kustomize's own kustomization.yaml (so `--crd-dir deploy/mcs/crds` works). kInvalid naming the
// directory or file when one cannot be read.
Result<std::vector<apiserver::CrdManifest>> ReadCrdDir(const std::string& dir);

// The transport of `slicewright apiserver` and `slicewright dev`, as on a real cluster: HTTPS,
// with a CA and serving certificate kept in `serve.tls_cert_dir` (default DATA_DIR/tls, reused
// across restarts so a written kubeconfig stays valid). `insecure_http` serves plain HTTP instead,
// and only on a loopback address. kInvalid naming the flags: --insecure-http with a non-loopback
// --listen or with --tls-cert-dir; a malformed --listen.
Status ApplyTransportFlags(bool insecure_http, apiserver::ServeOptions& serve);

// "10.96.0.0/12,fd00:10:96::/112" as its CIDRs (spaces around each trimmed; "" gives none).
std::vector<std::string> SplitCidrList(std::string_view list);

// Blocks SIGTERM and SIGINT, serves until one arrives, then shuts down cleanly. Returns the exit
// code: 0 after a clean shutdown, 1 when the server could not start (the error on `err`).
int RunApiServerCommand(const ApiServerCommandOptions& options, std::ostream& out,
                        std::ostream& err);

}  // namespace slicewright::cli
