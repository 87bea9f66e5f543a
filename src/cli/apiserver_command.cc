#include "cli/apiserver_command.h"

#include <memory>
#include <ostream>

#include <pthread.h>
#include <signal.h>

#include "apiserver/rest/serve.h"
#include "cli/command.h"

namespace slicewright::cli {

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
  Result<std::unique_ptr<apiserver::RunningApiServer>> server =
      apiserver::RunningApiServer::Start(std::move(serve));
  if (!server.ok()) {
    err << "slicewright apiserver: " << server.status().ToString() << "\n";
    return 1;
  }
  out << "slicewright apiserver: serving on " << (*server)->url() << "\n";
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
       .help = "Serve HTTPS with a CA and serving certificate kept in this directory",
       .target = &options->tls_cert_dir,
       .show_default = false},
      {.names = "--write-kubeconfig",
       .help = "Write a kubeconfig for this server to FILE",
       .target = &options->write_kubeconfig,
       .show_default = false},
      {.names = "--history-events",
       .help = "Watch history kept for resuming watches (events)",
       .target = &options->history_events},
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
