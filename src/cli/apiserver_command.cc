#include "cli/apiserver_command.h"

#include <ostream>

#include <pthread.h>
#include <signal.h>

#include "apiserver/rest/serve.h"

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

}  // namespace slicewright::cli
