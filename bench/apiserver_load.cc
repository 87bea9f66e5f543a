// apiserver_load: load driver for the embedded API server, `slicewright apiserver` (issue #3;
// results and method in docs/performance.md). It is not a Google Benchmark binary: it measures a
// separate server process, started here as a child with a fresh data directory for each scenario
// and stopped (SIGTERM, then SIGKILL) when the scenario ends, also on failure.
//
// Scenarios (--scenario writes|fanout|list|all), one result line each on stdout:
//   writes  W keep-alive clients (threads) create then update ConfigMaps (~1.2 KB) for D seconds
//           while 100 watchers (async, one thread) watch them: acknowledged writes/s, client-side
//           latency, and whether every watcher got every event exactly once, in order.
//   fanout  1,000 watchers; one writer paces creates/updates at --rate per second, each object
//           carrying its send time (steady clock, same machine); per delivery: receive - send.
//   list    N pods (~1.3 KB with status) loaded by W clients, then GET /api/v1/pods in full and
//           paginated (limit=500), with the server's peak RSS (VmHWM) after each step.
// Progress goes to stderr. Exit status 1 when a scenario fails (lost, duplicated or reordered
// events, failed writes, a wrong item count), not when a performance target is missed.
//
// Usage: apiserver_load [--scenario S] [--duration SEC] [--watchers N] [--clients N] [--pods N]
//                       [--rate N] [--kind configmap|pod] [--watch-threads N] [--server PATH]
//                       [--smoke]
// APISERVER_LOAD_KEEP_DATA=1 keeps each scenario's data directory (its path goes to stderr).

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

namespace {

using slicewright::bench::ProcessCpuSeconds;
using slicewright::bench::ProcessStatusKb;
using slicewright::bench::ReadFile;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kNamespace = "apiserver-load";
constexpr std::string_view kSentAnnotation = "apiserver-load/sent-ns";
constexpr std::string_view kSentPrefix = R"(apiserver-load/sent-ns":")";

struct Options {
  std::string scenario = "all";
  double duration_seconds = 10;
  std::optional<int> watchers;  // default: 100 for writes, 1,000 for fanout
  int clients = 8;
  int pods = 150000;
  int rate = 200;  // fanout writes per second
  std::string kind = "configmap";
  int watch_threads = 1;
  std::string server = "build/release/src/cli/slicewright";
  bool smoke = false;
};

[[noreturn]] void Usage(const std::string& problem) {
  throw std::invalid_argument(
      problem +
      "\nusage: apiserver_load [--scenario writes|fanout|list|all] [--duration SEC] "
      "[--watchers N] [--clients N] [--pods N] [--rate N] [--kind configmap|pod] "
      "[--watch-threads N] [--server PATH] [--smoke]");
}

int ParseInt(std::string_view flag, std::string_view text, int min) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min) {
    Usage(std::string(flag) + ": want an integer >= " + std::to_string(min) + ", got \"" +
          std::string(text) + "\"");
  }
  return value;
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--smoke") {
      options.smoke = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      Usage("apiserver_load: load driver for `slicewright apiserver`");
    }
    if (i + 1 >= argc) {
      Usage("missing value or unknown flag: " + std::string(arg));
    }
    const std::string_view value = argv[++i];
    if (arg == "--scenario") {
      if (value != "writes" && value != "fanout" && value != "list" && value != "all") {
        Usage("--scenario: want writes, fanout, list or all");
      }
      options.scenario = value;
    } else if (arg == "--duration") {
      options.duration_seconds = ParseInt(arg, value, 1);
    } else if (arg == "--watchers") {
      options.watchers = ParseInt(arg, value, 0);
    } else if (arg == "--clients") {
      options.clients = ParseInt(arg, value, 1);
    } else if (arg == "--pods") {
      options.pods = ParseInt(arg, value, 1);
    } else if (arg == "--rate") {
      options.rate = ParseInt(arg, value, 1);
    } else if (arg == "--kind") {
      if (value != "configmap" && value != "pod") {
        Usage("--kind: want configmap or pod");
      }
      options.kind = value;
    } else if (arg == "--watch-threads") {
      options.watch_threads = ParseInt(arg, value, 1);
    } else if (arg == "--server") {
      options.server = value;
    } else {
      Usage("unknown flag: " + std::string(arg));
    }
  }
  return options;
}

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Beast (Boost 1.74) takes boost::string_view.
beast::string_view Sv(std::string_view text) { return {text.data(), text.size()}; }

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Nearest-rank percentile of `samples` (sorted here), in milliseconds.
double PercentileMs(std::vector<std::int64_t>& samples, double p) {
  if (samples.empty()) {
    return 0;
  }
  if (!std::is_sorted(samples.begin(), samples.end())) {
    std::sort(samples.begin(), samples.end());
  }
  const auto rank = static_cast<std::size_t>(p * static_cast<double>(samples.size()));
  const std::size_t index = std::min(samples.size() - 1, rank == 0 ? 0 : rank - 1);
  return static_cast<double>(samples[index]) / 1e6;
}

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

// The digits of the first `"field":"123"` in `text`, or -1. glibc's memmem (two-way, vectorized)
// rather than string_view::find, whose memchr-then-memcmp loop stops at every '"' of a 1.4 KB event
// line: it was a quarter of the driver's CPU in the writes scenario.
std::int64_t QuotedNumberAfter(std::string_view text, std::string_view field_prefix) {
  const void* found = memmem(text.data(), text.size(), field_prefix.data(), field_prefix.size());
  if (found == nullptr) {
    return -1;
  }
  const char* begin = static_cast<const char*>(found) + field_prefix.size();
  std::int64_t value = -1;
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
  if (error != std::errc() || end == begin) {
    return -1;
  }
  return value;
}

std::int64_t ResourceVersionOf(std::string_view json) {
  return QuotedNumberAfter(json, R"("resourceVersion":")");
}

// ---------------------------------------------------------------------------------------------
// The server child process.

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/apiserver_load.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  ~TempDir() {
    // For profiling a restart by hand on the data the scenario left behind.
    const char* keep = std::getenv("APISERVER_LOAD_KEEP_DATA");
    if (keep != nullptr && std::string_view(keep) == "1") {
      std::fprintf(stderr, "kept data directory %s\n", path_.c_str());
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ProcStats {
  std::int64_t hwm_kb = 0;  // VmHWM: peak resident set
  std::int64_t rss_kb = 0;  // VmRSS
};

class ServerProcess {
 public:
  ServerProcess(const std::string& binary, const std::string& root) {
    data_dir_ = root + "/data";
    log_path_ = root + "/server.log";
    if (::access(binary.c_str(), X_OK) != 0) {
      throw std::runtime_error("--server " + binary + ": not an executable (" +
                               std::strerror(errno) + "); build it first");
    }
    // Plain HTTP: the load is compared with an nginx proxy speaking HTTP, and TLS would add its
    // own cost to every figure.
    std::vector<std::string> args = {binary,       "apiserver", "--listen",       "127.0.0.1:0",
                                     "--data-dir", data_dir_,   "--insecure-http"};
    std::vector<char*> argv;
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    }
    const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) {
      throw std::runtime_error("open " + log_path_ + ": " + std::strerror(errno));
    }
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid_ == 0) {
      // Child: only async-signal-safe calls until exec. The server dies with this driver.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) {
        ::_exit(127);
      }
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(log);
    out_fd_ = out[0];
    // glibc 2.36's <sys/pidfd.h> lacks extern "C", hence the raw system call.
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    try {
      WaitForUrl();
    } catch (...) {
      Stop();
      throw;
    }
    // The server's later output (its shutdown message) is read and dropped, so it never blocks.
    drain_ = std::thread([fd = out_fd_] {
      char buffer[4096];
      while (::read(fd, buffer, sizeof buffer) > 0) {
      }
    });
  }

  ~ServerProcess() { Stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  const tcp::endpoint& endpoint() const { return endpoint_; }

  ProcStats Memory() const {
    return {.hwm_kb = ProcessStatusKb(pid_, "VmHWM"), .rss_kb = ProcessStatusKb(pid_, "VmRSS")};
  }

  // Resets VmHWM to the current RSS (Linux >= 4.0), so the next peak belongs to the next step.
  void ResetPeakMemory() const {
    std::ofstream out("/proc/" + std::to_string(pid_) + "/clear_refs");
    out << "5\n";
  }

  // utime + stime of the whole process, in seconds.
  double CpuSeconds() const { return ProcessCpuSeconds(pid_); }

  // SIGTERM, up to 20 s for a clean exit, then SIGKILL. Idempotent.
  void Stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      pollfd exited = {pidfd_, POLLIN, 0};
      if (pidfd_ < 0 || ::poll(&exited, 1, 20000) != 1) {
        std::cerr << "apiserver_load: server " << pid_ << " did not exit on SIGTERM: killed\n";
        ::kill(pid_, SIGKILL);
      }
      int status = 0;
      ::waitpid(pid_, &status, 0);
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        std::cerr << "apiserver_load: server exited with status " << status << "\n" << LogTail();
      }
      pid_ = -1;
    }
    if (pidfd_ >= 0) {
      ::close(pidfd_);
      pidfd_ = -1;
    }
    if (drain_.joinable()) {
      drain_.join();
    }
    if (out_fd_ >= 0) {
      ::close(out_fd_);
      out_fd_ = -1;
    }
  }

  std::string LogTail() const {
    std::string text = ReadFile(log_path_);
    if (text.size() > 4000) {
      text = "..." + text.substr(text.size() - 4000);
    }
    return text.empty() ? "" : "server log (" + log_path_ + "):\n" + text;
  }

 private:
  void WaitForUrl() {
    constexpr std::string_view kPrefix = "serving on http://";
    std::string output;
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (true) {
      const std::size_t at = output.find(kPrefix);
      const std::size_t end = at == std::string::npos ? at : output.find('\n', at);
      if (end != std::string::npos) {
        const std::string address = output.substr(at + kPrefix.size(), end - at - kPrefix.size());
        const std::size_t colon = address.rfind(':');
        endpoint_ = tcp::endpoint(asio::ip::make_address(address.substr(0, colon)),
                                  static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
        return;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd readable = {out_fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) != 1) {
        throw std::runtime_error("the server printed no URL within 60 s\n" + LogTail());
      }
      char buffer[4096];
      const ssize_t n = ::read(out_fd_, buffer, sizeof buffer);
      if (n <= 0) {
        throw std::runtime_error("the server exited before serving (output: " + output + ")\n" +
                                 LogTail());
      }
      output.append(buffer, static_cast<std::size_t>(n));
    }
  }

  std::string data_dir_;
  std::string log_path_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int out_fd_ = -1;
  std::thread drain_;
  tcp::endpoint endpoint_;
};

// A scenario's server: a fresh data directory, removed afterwards.
struct ScenarioServer {
  explicit ScenarioServer(const Options& options) : process(options.server, root.path()) {}
  TempDir root;
  ServerProcess process;
};

// ---------------------------------------------------------------------------------------------
// Synchronous keep-alive client (one per thread).

struct Reply {
  unsigned status = 0;
  std::string body;
  bool ok() const { return status >= 200 && status < 300; }
};

class HttpClient {
 public:
  explicit HttpClient(tcp::endpoint endpoint)
      : endpoint_(std::move(endpoint)),
        host_(endpoint_.address().to_string() + ":" + std::to_string(endpoint_.port())),
        socket_(ioc_) {}

  Reply Send(http::verb verb, std::string_view target, std::string body = {}) {
    Connect();
    http::request<http::string_body> request{verb, Sv(target), 11};
    SetHeaders(request);
    if (!body.empty()) {
      request.set(http::field::content_type, "application/json");
      request.body() = std::move(body);
    }
    request.prepare_payload();
    http::write(socket_, request);
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    http::read(socket_, buffer_, parser);
    Reply reply;
    reply.status = parser.get().result_int();
    if (!parser.get().keep_alive()) {
      Close();
    }
    reply.body = std::move(parser.get().body());
    return reply;
  }

  // GET streamed into `on_data` (decoded body bytes), for bodies too large to keep.
  struct Streamed {
    unsigned status = 0;
    std::uint64_t bytes = 0;
    double first_byte_seconds = 0;
    double seconds = 0;
  };
  Streamed StreamGet(std::string_view target,
                     const std::function<void(std::string_view)>& on_data) {
    Connect();
    http::request<http::empty_body> request{http::verb::get, Sv(target), 11};
    SetHeaders(request);
    const auto start = Clock::now();
    http::write(socket_, request);
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    http::read_header(socket_, buffer_, parser);
    Streamed result;
    result.first_byte_seconds = Seconds(Clock::now() - start);
    result.status = parser.get().result_int();
    std::vector<char> chunk(1 << 20);
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      beast::error_code ec;
      http::read_some(socket_, buffer_, parser, ec);
      if (ec && ec != http::error::need_buffer) {
        throw beast::system_error(ec);
      }
      const std::size_t used = chunk.size() - parser.get().body().size;
      result.bytes += used;
      on_data(std::string_view(chunk.data(), used));
    }
    result.seconds = Seconds(Clock::now() - start);
    if (!parser.get().keep_alive()) {
      Close();
    }
    return result;
  }

 private:
  template <class Body>
  void SetHeaders(http::request<Body>& request) const {
    request.set(http::field::host, host_);
    request.set(http::field::user_agent, "apiserver_load");
    request.set(http::field::accept, "application/json");
    request.keep_alive(true);
  }

  void Connect() {
    if (socket_.is_open()) {
      return;
    }
    socket_.connect(endpoint_);
    socket_.set_option(tcp::no_delay(true));
    buffer_.clear();
  }

  void Close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  tcp::endpoint endpoint_;
  std::string host_;
  asio::io_context ioc_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

// ---------------------------------------------------------------------------------------------
// Objects.

struct Resource {
  std::string kind;        // "ConfigMap"
  std::string collection;  // "/api/v1/namespaces/NS/configmaps"
};

Resource ResourceFor(std::string_view kind) {
  const std::string base = "/api/v1/namespaces/" + std::string(kNamespace);
  if (kind == "pod") {
    return {"Pod", base + "/pods"};
  }
  return {"ConfigMap", base + "/configmaps"};
}

// ~1.2 KB as stored: labels, two annotations (one the send time), five data keys.
std::string ConfigMapJson(const std::string& name, std::int64_t version, std::int64_t sent_ns,
                          std::int64_t resource_version) {
  std::string json;
  json.reserve(1400);
  json += R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")";
  json += name;
  json += R"(","namespace":")";
  json += kNamespace;
  json += '"';
  if (resource_version > 0) {
    json += R"(,"resourceVersion":")" + std::to_string(resource_version) + '"';
  }
  json += R"(,"labels":{"app.kubernetes.io/name":"checkout","app.kubernetes.io/part-of":"shop",)"
          R"("app.kubernetes.io/managed-by":"apiserver-load","tier":"backend"},"annotations":{)"
          R"("config.example.com/revision":")";
  json += std::to_string(version);
  json += R"(",")";
  json += kSentAnnotation;
  json += R"(":")";
  json += std::to_string(sent_ns);
  json += R"("}},"data":{"LOG_LEVEL":"info","REVISION":")";
  json += std::to_string(version);
  json +=
      R"(","application.properties":"server.port=8080\nserver.shutdown=graceful\n)"
      R"(spring.datasource.url=jdbc:postgresql://db.shop.svc.cluster.local:5432/checkout\n)"
      R"(spring.datasource.hikari.maximum-pool-size=20\nmanagement.endpoints.web.exposure.)"
      R"(include=health,info,prometheus\nfeature.new-cart=true\nfeature.express-checkout=false\n",)"
      R"("nginx.conf":"worker_processes auto;\nevents { worker_connections 1024; }\nhttp {\n  )"
      R"(upstream app { server 127.0.0.1:8080; keepalive 32; }\n  server {\n    listen 80;\n    )"
      R"(location / { proxy_pass http://app; proxy_http_version 1.1; }\n    location /healthz )"
      R"({ return 200; }\n  }\n}\n","ALLOWED_ORIGINS":"https://shop.example.com,https://www.)"
      R"(shop.example.com,https://admin.shop.example.com"}})";
  return json;
}

// ~1.3 KB as stored with its status: four labels, one container, podIP/hostIP, conditions.
std::string PodJson(const std::string& name, std::int64_t index, std::int64_t version,
                    std::int64_t sent_ns, std::int64_t resource_version, bool with_status) {
  const std::string node = "node-" + std::to_string(index % 500);
  const std::string ip = "10." + std::to_string(index >> 16 & 255) + "." +
                         std::to_string(index >> 8 & 255) + "." + std::to_string(index & 255);
  std::string json;
  json.reserve(1400);
  json += R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")";
  json += name;
  json += R"(","namespace":")";
  json += kNamespace;
  json += '"';
  if (resource_version > 0) {
    json += R"(,"resourceVersion":")" + std::to_string(resource_version) + '"';
  }
  json += R"(,"labels":{"app":"web-)" + std::to_string(index % 100) +
          R"(","pod-template-hash":"5d4f8c7b9","tier":"frontend","version":"v1.4.2"})";
  if (sent_ns > 0) {  // writes and fanout; the list scenario's pods have no annotations
    json += R"(,"annotations":{"config.example.com/revision":")" + std::to_string(version) +
            R"(",")" + std::string(kSentAnnotation) + R"(":")" + std::to_string(sent_ns) + R"("})";
  }
  json += R"(},"spec":{"nodeName":")" + node +
          R"(","containers":[{"name":"web","image":"registry.example.com/shop/web:1.4.2",)"
          R"("ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"resources":)"
          R"({"requests":{"cpu":"100m","memory":"128Mi"}}}],"restartPolicy":"Always",)"
          R"("serviceAccountName":"default","terminationGracePeriodSeconds":30})";
  if (with_status) {
    json += R"(,"status":{"phase":"Running","podIP":")" + ip + R"(","hostIP":"192.168.)" +
            std::to_string(index % 500 / 250) + "." + std::to_string(index % 250) +
            R"(","startTime":"2026-12-02T10:00:00Z","conditions":[)"
            R"({"type":"Ready","status":"True","lastTransitionTime":"2026-12-02T10:00:04Z"},)"
            R"({"type":"PodScheduled","status":"True","lastTransitionTime":)"
            R"("2026-12-02T10:00:00Z"}],"containerStatuses":[{"name":"web","ready":true,)"
            R"("restartCount":0,"state":{"running":{"startedAt":"2026-12-02T10:00:02Z"}}}]})";
  }
  json += '}';
  return json;
}

std::string ObjectJson(std::string_view kind, const std::string& name, std::int64_t index,
                       std::int64_t version, std::int64_t resource_version) {
  if (kind == "pod") {
    return PodJson(name, index, version, NowNs(), resource_version, /*with_status=*/false);
  }
  return ConfigMapJson(name, version, NowNs(), resource_version);
}

// Creates the scenario's namespace; returns its resourceVersion (watches start there).
std::int64_t CreateNamespace(HttpClient& client) {
  const Reply reply = client.Send(http::verb::post, "/api/v1/namespaces",
                                  R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" +
                                      std::string(kNamespace) + R"("}})");
  if (!reply.ok()) {
    throw std::runtime_error("creating namespace: HTTP " + std::to_string(reply.status) + ": " +
                             reply.body);
  }
  return ResourceVersionOf(reply.body);
}

// ---------------------------------------------------------------------------------------------
// Watchers: async, each on one of a few single-threaded io_contexts.

class WatchGroup;

class Watcher : public std::enable_shared_from_this<Watcher> {
 public:
  Watcher(asio::io_context& ioc, WatchGroup& group) : ioc_(ioc), group_(group), socket_(ioc) {
    // Beast sizes each recv by the buffer's free capacity (at least 512 bytes): without this the
    // driver reads a batch of events in ~1 KB pieces, one syscall each.
    buffer_.reserve(kWatchReadBytes);
  }

  void Start();
  // Settles the current phase if this watcher is done with it (runs on its io_context).
  void Check();
  asio::io_context& context() { return ioc_; }

  // Read after the io_context stopped.
  std::uint64_t events = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t errors = 0;  // ERROR events and malformed lines
  bool ended = false;        // the stream ended or failed
  std::string end_reason;
  std::vector<std::int64_t> latencies_ns;

 private:
  void ReadMore();
  void OnRead(beast::error_code ec, std::size_t bytes);
  // Decodes the chunked framing of `size` body bytes and feeds the chunks' data to Feed. False
  // for malformed framing; sets body_done_ at the last chunk.
  bool Dechunk(const char* data, std::size_t size, std::int64_t now_ns);
  void Feed(const char* data, std::size_t size, std::int64_t now_ns);
  void Line(std::string_view line, std::int64_t now_ns);
  void End(const std::string& reason);

  asio::io_context& ioc_;
  WatchGroup& group_;
  tcp::socket socket_;
  http::request<http::empty_body> request_;
  beast::flat_buffer buffer_;
  // Beast parses the response header only; the chunked body is decoded here (Dechunk), one recv
  // of up to 64 KB at a time, without Beast's per-chunk parser steps and completion posts.
  http::response_parser<http::empty_body> parser_;
  static constexpr std::size_t kWatchReadBytes = 64 * 1024;
  std::vector<char> chunk_ = std::vector<char>(kWatchReadBytes);
  // Chunked framing state: reading a size line, chunk data, or the CRLF after the data.
  enum class Framing { kSize, kData, kDataEnd };
  Framing framing_ = Framing::kSize;
  std::string size_line_;          // the size line so far (hex digits, extensions)
  std::uint64_t data_left_ = 0;    // of the current chunk
  std::size_t data_end_left_ = 2;  // bytes of the CRLF after a chunk's data still to skip
  bool body_done_ = false;         // the last chunk arrived
  std::string carry_;              // an incomplete line
  std::int64_t last_revision_ = 0;
  std::uint64_t settled_phase_ = 0;
  bool headers_ = false;
};

// Coordinates watchers with the driver: "all streams open", then phases "every watcher has at
// least T events (or ended)". No sleeps: each watcher settles a phase itself.
class WatchGroup {
 public:
  WatchGroup(tcp::endpoint endpoint, std::string target, int count, int threads,
             bool record_latency)
      : endpoint_(std::move(endpoint)),
        target_(std::move(target)),
        record_latency_(record_latency) {
    for (int i = 0; i < threads; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
    }
    for (int i = 0; i < count; ++i) {
      watchers_.push_back(std::make_shared<Watcher>(
          *contexts_[static_cast<std::size_t>(i) % contexts_.size()], *this));
    }
  }

  ~WatchGroup() { StopThreads(); }
  WatchGroup(const WatchGroup&) = delete;
  WatchGroup& operator=(const WatchGroup&) = delete;

  const tcp::endpoint& endpoint() const { return endpoint_; }
  const std::string& target() const { return target_; }
  bool record_latency() const { return record_latency_; }
  std::vector<std::shared_ptr<Watcher>>& watchers() { return watchers_; }

  // Connects every watcher and waits until each has its response headers (or failed).
  bool Open(std::chrono::seconds timeout) {
    for (auto& watcher : watchers_) {
      asio::post(watcher->context(), [watcher] { watcher->Start(); });
    }
    for (auto& context : contexts_) {
      threads_.emplace_back([&context] {
        auto guard = asio::make_work_guard(*context);
        context->run();
      });
    }
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return opened_ == watchers_.size(); });
  }

  // Waits until every watcher has at least `events` events or has ended.
  bool WaitForEvents(std::uint64_t events, std::chrono::seconds timeout) {
    {
      std::lock_guard lock(mu_);
      ++phase_;
      phase_target_ = events;
      settled_ = 0;
    }
    for (auto& watcher : watchers_) {
      asio::post(watcher->context(), [watcher] { watcher->Check(); });
    }
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return settled_ == watchers_.size(); });
  }

  // Stops the threads; the watchers' counters are then safe to read.
  // The sockets close when the group is destroyed.
  void StopThreads() {
    for (auto& context : contexts_) {
      context->stop();
    }
    for (auto& thread : threads_) {
      thread.join();
    }
    threads_.clear();
  }

  // Called by watchers on their threads.
  void Opened() {
    std::lock_guard lock(mu_);
    ++opened_;
    cv_.notify_all();
  }
  std::pair<std::uint64_t, std::uint64_t> Phase() {
    std::lock_guard lock(mu_);
    return {phase_, phase_target_};
  }
  void Settle(std::uint64_t phase) {
    std::lock_guard lock(mu_);
    if (phase == phase_) {
      ++settled_;
      cv_.notify_all();
    }
  }

 private:
  tcp::endpoint endpoint_;
  std::string target_;
  bool record_latency_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<std::shared_ptr<Watcher>> watchers_;
  std::vector<std::thread> threads_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t opened_ = 0;          // guarded by mu_
  std::uint64_t phase_ = 0;         // guarded by mu_
  std::uint64_t phase_target_ = 0;  // guarded by mu_
  std::size_t settled_ = 0;         // guarded by mu_
};

void Watcher::Start() {
  socket_.async_connect(group_.endpoint(), [self = shared_from_this()](beast::error_code ec) {
    if (ec) {
      self->End("connect: " + ec.message());
      return;
    }
    self->socket_.set_option(tcp::no_delay(true), ec);
    self->request_ = http::request<http::empty_body>{http::verb::get, self->group_.target(), 11};
    self->request_.set(http::field::host, self->group_.endpoint().address().to_string());
    self->request_.set(http::field::user_agent, "apiserver_load");
    self->request_.set(http::field::accept, "application/json");
    http::async_write(
        self->socket_, self->request_, [self](beast::error_code write_ec, std::size_t /*bytes*/) {
          if (write_ec) {
            self->End("write: " + write_ec.message());
            return;
          }
          self->parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
          http::async_read_header(self->socket_, self->buffer_, self->parser_,
                                  [self](beast::error_code read_ec, std::size_t /*bytes*/) {
                                    if (read_ec) {
                                      self->End("read header: " + read_ec.message());
                                      return;
                                    }
                                    if (self->parser_.get().result_int() != 200) {
                                      self->End("watch answered HTTP " +
                                                std::to_string(self->parser_.get().result_int()));
                                      return;
                                    }
                                    self->headers_ = true;
                                    self->group_.Opened();
                                    if (!self->parser_.chunked()) {
                                      self->End("the watch response is not chunked");
                                      return;
                                    }
                                    // Body bytes that came with the header.
                                    const auto early = self->buffer_.data();
                                    const bool framed = self->Dechunk(
                                        static_cast<const char*>(early.data()), early.size(),
                                        self->group_.record_latency() ? NowNs() : 0);
                                    self->buffer_.consume(early.size());
                                    self->Check();
                                    if (!framed) {
                                      self->End("malformed chunked body");
                                      return;
                                    }
                                    if (self->body_done_) {
                                      self->End("the server ended the stream");
                                      return;
                                    }
                                    self->ReadMore();
                                  });
        });
  });
}

void Watcher::ReadMore() {
  socket_.async_read_some(asio::buffer(chunk_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t bytes) {
                            self->OnRead(ec, bytes);
                          });
}

void Watcher::OnRead(beast::error_code ec, std::size_t bytes) {
  if (ec) {
    End("read: " + ec.message());
    return;
  }
  const bool framed = Dechunk(chunk_.data(), bytes, group_.record_latency() ? NowNs() : 0);
  Check();
  if (!framed) {
    End("malformed chunked body");
    return;
  }
  if (body_done_) {
    End("the server ended the stream");
    return;
  }
  ReadMore();
}

bool Watcher::Dechunk(const char* data, std::size_t size, std::int64_t now_ns) {
  const char* end = data + size;
  while (data < end && !body_done_) {
    switch (framing_) {
      case Framing::kSize: {
        const void* newline = std::memchr(data, '\n', static_cast<std::size_t>(end - data));
        const char* stop = newline == nullptr ? end : static_cast<const char*>(newline);
        size_line_.append(data, stop);
        if (size_line_.size() > 1024) {
          return false;
        }
        if (newline == nullptr) {
          return true;
        }
        data = stop + 1;
        // "1a2b[;extension]\r": the hex size ends at the first non-hex character.
        std::uint64_t chunk_size = 0;
        const char* first = size_line_.data();
        const char* last = first + size_line_.size();
        const auto [digits_end, error] = std::from_chars(first, last, chunk_size, 16);
        if (error != std::errc() || digits_end == first) {
          return false;
        }
        size_line_.clear();
        if (chunk_size == 0) {
          body_done_ = true;  // the last chunk; trailers are not read
          return true;
        }
        data_left_ = chunk_size;
        framing_ = Framing::kData;
        break;
      }
      case Framing::kData: {
        const std::size_t take =
            static_cast<std::size_t>(std::min<std::uint64_t>(data_left_, end - data));
        Feed(data, take, now_ns);
        data += take;
        data_left_ -= take;
        if (data_left_ == 0) {
          framing_ = Framing::kDataEnd;
          data_end_left_ = 2;
        }
        break;
      }
      case Framing::kDataEnd:
        if (*data != (data_end_left_ == 2 ? '\r' : '\n')) {
          return false;
        }
        ++data;
        if (--data_end_left_ == 0) {
          framing_ = Framing::kSize;
        }
        break;
    }
  }
  return true;
}

void Watcher::Feed(const char* data, std::size_t size, std::int64_t now_ns) {
  const char* end = data + size;
  if (!carry_.empty()) {
    const void* newline = std::memchr(data, '\n', size);
    if (newline == nullptr) {
      carry_.append(data, size);
      return;
    }
    const char* line_end = static_cast<const char*>(newline);
    carry_.append(data, line_end);
    Line(carry_, now_ns);
    carry_.clear();
    data = line_end + 1;
  }
  while (data < end) {
    const void* newline = std::memchr(data, '\n', static_cast<std::size_t>(end - data));
    if (newline == nullptr) {
      carry_.assign(data, end);
      return;
    }
    const char* line_end = static_cast<const char*>(newline);
    Line(std::string_view(data, static_cast<std::size_t>(line_end - data)), now_ns);
    data = line_end + 1;
  }
}

void Watcher::Line(std::string_view line, std::int64_t now_ns) {
  constexpr std::string_view kType = R"({"type":")";
  if (!line.starts_with(kType)) {
    ++errors;
    return;
  }
  const std::string_view type =
      line.substr(kType.size(), line.find('"', kType.size()) - kType.size());
  if (type == "BOOKMARK") {
    return;
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") {
    ++errors;
    return;
  }
  ++events;
  const std::int64_t revision = ResourceVersionOf(line);
  if (revision <= last_revision_) {
    ++out_of_order;
  }
  last_revision_ = std::max(last_revision_, revision);
  // The first event is the marker (see OpenAndSync), written before the measured run.
  if (group_.record_latency() && events > 1) {
    const std::int64_t sent = QuotedNumberAfter(line, kSentPrefix);
    if (sent > 0) {
      latencies_ns.push_back(now_ns - sent);
    }
  }
}

void Watcher::Check() {
  const auto [phase, target] = group_.Phase();
  if (phase == settled_phase_ || phase == 0) {
    return;
  }
  if (ended || events >= target) {
    settled_phase_ = phase;
    group_.Settle(phase);
  }
}

void Watcher::End(const std::string& reason) {
  if (ended) {
    return;
  }
  ended = true;
  end_reason = reason;
  if (!headers_) {
    headers_ = true;
    group_.Opened();  // counts as opened so Open() does not wait for it; reported as failed
  }
  Check();
}

struct WatchSummary {
  std::uint64_t expected_each = 0;
  std::uint64_t delivered = 0;
  std::uint64_t lost = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t errors = 0;
  std::uint64_t ended = 0;
  std::string first_end_reason;
  std::vector<std::int64_t> latencies_ns;

  bool ok() const {
    return lost == 0 && duplicated == 0 && out_of_order == 0 && errors == 0 && ended == 0;
  }
};

WatchSummary Summarize(WatchGroup& group, std::uint64_t expected_each) {
  WatchSummary summary;
  summary.expected_each = expected_each;
  for (const auto& watcher : group.watchers()) {
    summary.delivered += watcher->events;
    if (watcher->events < expected_each) {
      summary.lost += expected_each - watcher->events;
    } else {
      summary.duplicated += watcher->events - expected_each;
    }
    summary.out_of_order += watcher->out_of_order;
    summary.errors += watcher->errors;
    if (watcher->ended) {
      ++summary.ended;
      if (summary.first_end_reason.empty()) {
        summary.first_end_reason = watcher->end_reason;
      }
    }
    summary.latencies_ns.insert(summary.latencies_ns.end(), watcher->latencies_ns.begin(),
                                watcher->latencies_ns.end());
  }
  return summary;
}

std::string WatchFields(const WatchSummary& summary, std::size_t watchers) {
  std::string text = " events_expected=" + std::to_string(summary.expected_each * watchers) +
                     " events_received=" + std::to_string(summary.delivered) +
                     " lost=" + std::to_string(summary.lost) +
                     " duplicated=" + std::to_string(summary.duplicated) +
                     " out_of_order=" + std::to_string(summary.out_of_order);
  if (summary.errors > 0) {
    text += " error_events=" + std::to_string(summary.errors);
  }
  if (summary.ended > 0) {
    text += " streams_ended=" + std::to_string(summary.ended) + " (\"" + summary.first_end_reason +
            "\")";
  }
  return text;
}

// Opens the watch group and proves every stream is registered: one marker write must reach all.
// Returns false (with a message) when that does not happen.
bool OpenAndSync(WatchGroup& group, HttpClient& client, const Resource& resource,
                 std::string_view kind) {
  if (!group.Open(std::chrono::seconds(60))) {
    std::cerr << "apiserver_load: watchers did not all open within 60 s\n";
    return false;
  }
  const Reply marker =
      client.Send(http::verb::post, resource.collection, ObjectJson(kind, "load-sync", 0, 0, 0));
  if (!marker.ok()) {
    throw std::runtime_error("marker write: HTTP " + std::to_string(marker.status) + ": " +
                             marker.body);
  }
  if (!group.WaitForEvents(1, std::chrono::seconds(60))) {
    std::cerr << "apiserver_load: the marker did not reach every watcher within 60 s\n";
    return false;
  }
  return true;
}

std::string WatchTarget(const Resource& resource, std::int64_t from_revision) {
  return resource.collection + "?watch=true&resourceVersion=" + std::to_string(from_revision);
}

int WatcherCount(const Options& options, int normal) {
  if (options.watchers) {
    return *options.watchers;
  }
  return options.smoke ? 10 : normal;
}

double OwnCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// ---------------------------------------------------------------------------------------------
// Scenario: writes.

struct WriterResult {
  std::uint64_t ok = 0;
  std::uint64_t failed = 0;
  std::string first_error;
  std::vector<std::int64_t> latencies_ns;
  Clock::time_point finished;
};

// Creates load-T-I, then updates it (with the resourceVersion the create returned), until the
// deadline. Every acknowledged write is one watch event.
void RunWriterLoop(const tcp::endpoint& endpoint, const Resource& resource, std::string_view kind,
                   int thread, Clock::time_point deadline, WriterResult& result) {
  HttpClient client(endpoint);
  result.latencies_ns.reserve(100000);
  auto record = [&](const Reply& reply, Clock::time_point start) {
    result.latencies_ns.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    if (reply.ok()) {
      ++result.ok;
      return true;
    }
    ++result.failed;
    if (result.first_error.empty()) {
      result.first_error =
          "HTTP " + std::to_string(reply.status) + ": " + reply.body.substr(0, 300);
    }
    return false;
  };
  for (std::int64_t i = 0; Clock::now() < deadline; ++i) {
    const std::string name = "load-" + std::to_string(thread) + "-" + std::to_string(i);
    auto start = Clock::now();
    const Reply created =
        client.Send(http::verb::post, resource.collection, ObjectJson(kind, name, i, 1, 0));
    if (!record(created, start) || Clock::now() >= deadline) {
      continue;
    }
    start = Clock::now();
    const Reply updated =
        client.Send(http::verb::put, resource.collection + "/" + name,
                    ObjectJson(kind, name, i, 2, ResourceVersionOf(created.body)));
    record(updated, start);
  }
}

void RunWriter(const tcp::endpoint& endpoint, const Resource& resource, std::string_view kind,
               int thread, Clock::time_point deadline, WriterResult& result) {
  try {
    RunWriterLoop(endpoint, resource, kind, thread, deadline, result);
  } catch (const std::exception& error) {
    ++result.failed;
    result.first_error = std::string("I/O error: ") + error.what();
  }
  result.finished = Clock::now();
}

bool RunWrites(const Options& options) {
  const int watchers = WatcherCount(options, 100);
  const double duration = options.smoke ? 1 : options.duration_seconds;
  ScenarioServer server(options);
  const tcp::endpoint endpoint = server.process.endpoint();
  HttpClient setup(endpoint);
  const std::int64_t from = CreateNamespace(setup);
  const Resource resource = ResourceFor(options.kind);
  WatchGroup group(endpoint, WatchTarget(resource, from), watchers, options.watch_threads,
                   /*record_latency=*/false);
  if (!OpenAndSync(group, setup, resource, options.kind)) {
    return false;
  }
  std::cerr << "writes: " << watchers << " watchers open; " << options.clients << " clients for "
            << duration << " s\n";

  const double server_cpu_start = server.process.CpuSeconds();
  const double client_cpu_start = OwnCpuSeconds();
  std::vector<WriterResult> results(static_cast<std::size_t>(options.clients));
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < options.clients; ++t) {
      threads.emplace_back(RunWriter, std::cref(endpoint), std::cref(resource),
                           std::string_view(options.kind), t, deadline,
                           std::ref(results[static_cast<std::size_t>(t)]));
    }
    for (auto& thread : threads) {
      thread.join();
    }
  }
  auto finished = start;
  std::uint64_t acked = 0;
  std::uint64_t failed = 0;
  std::string first_error;
  std::vector<std::int64_t> latencies;
  for (const WriterResult& result : results) {
    finished = std::max(finished, result.finished);
    acked += result.ok;
    failed += result.failed;
    if (first_error.empty()) {
      first_error = result.first_error;
    }
    latencies.insert(latencies.end(), result.latencies_ns.begin(), result.latencies_ns.end());
  }
  const double elapsed = Seconds(finished - start);
  const double server_cpu = server.process.CpuSeconds() - server_cpu_start;
  const double client_cpu = OwnCpuSeconds() - client_cpu_start;

  // Every watcher must now get the marker plus every acknowledged write.
  const auto drain_start = Clock::now();
  const bool drained = group.WaitForEvents(1 + acked, std::chrono::seconds(120));
  const double drain_seconds = Seconds(Clock::now() - drain_start);
  // Per write, the server's CPU includes the fan-out still under way when the writers stopped.
  const double server_cpu_drained = server.process.CpuSeconds() - server_cpu_start;
  group.StopThreads();
  const WatchSummary summary = Summarize(group, 1 + acked);
  const ProcStats memory = server.process.Memory();

  const bool ok = summary.ok() && failed == 0 && drained && acked > 0;
  std::cout << "writes: kind=" << options.kind << " clients=" << options.clients
            << " watchers=" << watchers << " seconds=" << Fixed(elapsed, 2)
            << " writes_acked=" << acked << " writes_failed=" << failed
            << " writes_per_s=" << Fixed(static_cast<double>(acked) / elapsed, 0)
            << " latency_p50_ms=" << Fixed(PercentileMs(latencies, 0.50), 2)
            << " latency_p99_ms=" << Fixed(PercentileMs(latencies, 0.99), 2)
            << " latency_max_ms=" << Fixed(PercentileMs(latencies, 1.0), 2)
            << WatchFields(summary, static_cast<std::size_t>(watchers))
            << " watch_drain_s=" << Fixed(drain_seconds, 2)
            << " server_cpu_cores=" << Fixed(server_cpu / elapsed, 2) << " server_cpu_us_per_write="
            << Fixed(acked > 0 ? server_cpu_drained * 1e6 / static_cast<double>(acked) : 0, 0)
            << " driver_cpu_cores=" << Fixed(client_cpu / elapsed, 2)
            << " server_peak_rss_mb=" << memory.hwm_kb / 1024 << (ok ? " ok" : " FAILED")
            << std::endl;
  if (!first_error.empty()) {
    std::cerr << "writes: first failed write: " << first_error << "\n";
  }
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Scenario: fanout.

bool RunFanout(const Options& options) {
  const int watchers = WatcherCount(options, 1000);
  const double duration = options.smoke ? 1 : options.duration_seconds;
  ScenarioServer server(options);
  const tcp::endpoint endpoint = server.process.endpoint();
  HttpClient client(endpoint);
  const std::int64_t from = CreateNamespace(client);
  const Resource resource = ResourceFor(options.kind);
  WatchGroup group(endpoint, WatchTarget(resource, from), watchers, options.watch_threads,
                   /*record_latency=*/true);
  if (!OpenAndSync(group, client, resource, options.kind)) {
    return false;
  }
  std::cerr << "fanout: " << watchers << " watchers open; " << options.rate << " writes/s for "
            << duration << " s\n";

  // One writer, paced: write k is due at start + k / rate (sleeping until then paces the load;
  // it synchronises nothing). Creates and updates alternate; each object carries its send time.
  const double server_cpu_start = server.process.CpuSeconds();
  const double client_cpu_start = OwnCpuSeconds();
  const auto start = Clock::now();
  const auto total = static_cast<std::int64_t>(duration * options.rate);
  std::uint64_t acked = 0;
  std::uint64_t failed = 0;
  std::string first_error;
  std::vector<std::int64_t> write_latencies;
  std::int64_t last_revision = 0;
  std::string name;
  for (std::int64_t k = 0; k < total; ++k) {
    std::this_thread::sleep_until(start +
                                  std::chrono::nanoseconds(k * 1'000'000'000 / options.rate));
    const bool create = k % 2 == 0;
    if (create) {
      name = "load-" + std::to_string(k / 2);
    }
    const auto sent = Clock::now();
    const Reply reply = create
                            ? client.Send(http::verb::post, resource.collection,
                                          ObjectJson(options.kind, name, k / 2, 1, 0))
                            : client.Send(http::verb::put, resource.collection + "/" + name,
                                          ObjectJson(options.kind, name, k / 2, 2, last_revision));
    write_latencies.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sent).count());
    if (reply.ok()) {
      ++acked;
      last_revision = ResourceVersionOf(reply.body);
    } else {
      ++failed;
      if (first_error.empty()) {
        first_error = "HTTP " + std::to_string(reply.status) + ": " + reply.body.substr(0, 300);
      }
      if (create) {
        ++k;  // no object to update
      }
    }
  }
  const double elapsed = Seconds(Clock::now() - start);
  const bool drained = group.WaitForEvents(1 + acked, std::chrono::seconds(120));
  // CPU from the first timed write until every watcher had every event, per delivery.
  const double server_cpu = server.process.CpuSeconds() - server_cpu_start;
  const double client_cpu = OwnCpuSeconds() - client_cpu_start;
  const double deliveries = std::max(1.0, static_cast<double>(acked) * watchers);
  group.StopThreads();
  WatchSummary summary = Summarize(group, 1 + acked);
  const ProcStats memory = server.process.Memory();

  const bool ok = summary.ok() && failed == 0 && drained && acked > 0;
  std::cout << "fanout: kind=" << options.kind << " watchers=" << watchers
            << " watch_threads=" << options.watch_threads << " seconds=" << Fixed(elapsed, 2)
            << " writes_acked=" << acked
            << " writes_per_s=" << Fixed(static_cast<double>(acked) / elapsed, 0)
            << " deliveries=" << summary.latencies_ns.size()
            << " deliveries_expected=" << acked * static_cast<std::uint64_t>(watchers)
            << " fanout_p50_ms=" << Fixed(PercentileMs(summary.latencies_ns, 0.50), 2)
            << " fanout_p99_ms=" << Fixed(PercentileMs(summary.latencies_ns, 0.99), 2)
            << " fanout_max_ms=" << Fixed(PercentileMs(summary.latencies_ns, 1.0), 2)
            << " write_p50_ms=" << Fixed(PercentileMs(write_latencies, 0.50), 2)
            << " write_p99_ms=" << Fixed(PercentileMs(write_latencies, 0.99), 2)
            << WatchFields(summary, static_cast<std::size_t>(watchers))
            << " server_cpu_us_per_delivery=" << Fixed(server_cpu * 1e6 / deliveries, 1)
            << " driver_cpu_us_per_delivery=" << Fixed(client_cpu * 1e6 / deliveries, 1)
            << " server_peak_rss_mb=" << memory.hwm_kb / 1024 << (ok ? " ok" : " FAILED")
            << std::endl;
  if (!first_error.empty()) {
    std::cerr << "fanout: first failed write: " << first_error << "\n";
  }
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Scenario: list.

// Counts occurrences of `pattern` in a byte stream fed in arbitrary pieces.
class StreamCounter {
 public:
  explicit StreamCounter(std::string pattern) : pattern_(std::move(pattern)) {}
  void Feed(std::string_view data) {
    // Matches that start in the previous piece's last pattern.size() - 1 bytes (tail_).
    if (!tail_.empty()) {
      std::string joined = tail_;
      joined.append(data.substr(0, std::min(data.size(), pattern_.size() - 1)));
      for (std::size_t at = joined.find(pattern_); at != std::string::npos && at < tail_.size();
           at = joined.find(pattern_, at + 1)) {
        ++count_;
      }
    }
    for (std::size_t at = data.find(pattern_); at != std::string_view::npos;
         at = data.find(pattern_, at + 1)) {
      ++count_;
    }
    tail_.append(data);
    if (tail_.size() >= pattern_.size()) {
      tail_.erase(0, tail_.size() - (pattern_.size() - 1));
    }
  }
  std::uint64_t count() const { return count_; }

 private:
  std::string pattern_;
  std::string tail_;
  std::uint64_t count_ = 0;
};

// Pods i = next++ until `pods`: each is created, then gets its status (podIP, conditions) through
// the status subresource, as a kubelet would: two writes per pod.
void LoadPods(const tcp::endpoint& endpoint, const Resource& resource, int pods,
              std::atomic<int>& next, std::atomic<std::uint64_t>& failed, std::mutex& error_mu,
              std::string& first_error) {
  HttpClient loader(endpoint);
  auto fail = [&](const Reply& reply) {
    ++failed;
    std::lock_guard lock(error_mu);
    if (first_error.empty()) {
      first_error = "HTTP " + std::to_string(reply.status) + ": " + reply.body.substr(0, 300);
    }
  };
  for (int i = next++; i < pods; i = next++) {
    char name[32];
    std::snprintf(name, sizeof name, "pod-%06d", i);
    const Reply created =
        loader.Send(http::verb::post, resource.collection, PodJson(name, i, 1, 0, 0, false));
    if (!created.ok()) {
      fail(created);
      continue;
    }
    const Reply status = loader.Send(http::verb::put, resource.collection + "/" + name + "/status",
                                     PodJson(name, i, 1, 0, ResourceVersionOf(created.body), true));
    if (!status.ok()) {
      fail(status);
    }
  }
}

bool RunList(const Options& options) {
  const int pods = options.smoke ? 1000 : options.pods;
  ScenarioServer server(options);
  const tcp::endpoint endpoint = server.process.endpoint();
  HttpClient client(endpoint);
  CreateNamespace(client);
  const Resource resource = ResourceFor("pod");

  // Load with --clients connections (see LoadPods).
  std::atomic<int> next{0};
  std::atomic<std::uint64_t> failed{0};
  std::mutex error_mu;
  std::string first_error;
  const auto load_start = Clock::now();
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < options.clients; ++t) {
      threads.emplace_back([&] {
        try {
          LoadPods(endpoint, resource, pods, next, failed, error_mu, first_error);
        } catch (const std::exception& error) {
          ++failed;
          std::lock_guard lock(error_mu);
          first_error = std::string("I/O error: ") + error.what();
        }
      });
    }
    for (auto& thread : threads) {
      thread.join();
    }
  }
  const double load_seconds = Seconds(Clock::now() - load_start);
  const ProcStats after_load = server.process.Memory();
  std::cerr << "list: " << pods << " pods loaded in " << Fixed(load_seconds, 1) << " s\n";

  // Full list, streamed and counted (each pod has exactly one spec.nodeName). A new connection:
  // the server closes connections idle for 120 s, as the first one was during a long load.
  HttpClient lister(endpoint);
  server.process.ResetPeakMemory();
  const ProcStats before_full = server.process.Memory();
  StreamCounter full_items(R"("nodeName":")");
  const HttpClient::Streamed full =
      lister.StreamGet("/api/v1/pods", [&](std::string_view data) { full_items.Feed(data); });
  const ProcStats after_full = server.process.Memory();

  // Paginated: limit=500, following metadata.continue until it is absent.
  server.process.ResetPeakMemory();
  std::uint64_t paged_bytes = 0;
  std::uint64_t paged_items = 0;
  int pages = 0;
  std::string continue_token;
  const auto paged_start = Clock::now();
  while (true) {
    std::string target = "/api/v1/pods?limit=500";
    if (!continue_token.empty()) {
      target += "&continue=" + continue_token;  // base64url: needs no escaping
    }
    const Reply page = lister.Send(http::verb::get, target);
    if (!page.ok()) {
      throw std::runtime_error("paginated list: HTTP " + std::to_string(page.status) + ": " +
                               page.body.substr(0, 300));
    }
    ++pages;
    paged_bytes += page.body.size();
    StreamCounter items(R"("nodeName":")");
    items.Feed(page.body);
    paged_items += items.count();
    constexpr std::string_view kContinue = R"("continue":")";
    const std::size_t at = page.body.rfind(kContinue);
    if (at == std::string::npos) {
      break;
    }
    const std::size_t value = at + kContinue.size();
    continue_token = page.body.substr(value, page.body.find('"', value) - value);
    if (continue_token.empty()) {
      break;
    }
  }
  const double paged_seconds = Seconds(Clock::now() - paged_start);
  const ProcStats after_paged = server.process.Memory();

  // Restart on the same data directory: time until the new server prints its URL (it listens
  // only once the store is loaded), then the time to its first answered list, and the list count.
  server.process.Stop();
  const auto restart_start = Clock::now();
  ServerProcess restarted(options.server, server.root.path());
  const double restart_seconds = Seconds(Clock::now() - restart_start);
  HttpClient after_restart(restarted.endpoint());
  const Reply first = after_restart.Send(http::verb::get, "/api/v1/pods?limit=1");
  const double restart_first_list_seconds = Seconds(Clock::now() - restart_start);
  const ProcStats restarted_memory = restarted.Memory();
  StreamCounter restarted_items(R"("nodeName":")");
  const HttpClient::Streamed restarted_full = after_restart.StreamGet(
      "/api/v1/pods", [&](std::string_view data) { restarted_items.Feed(data); });

  const auto expected = static_cast<std::uint64_t>(pods);
  const bool ok = failed == 0 && full.status == 200 && full_items.count() == expected &&
                  paged_items == expected && first.ok() && restarted_full.status == 200 &&
                  restarted_items.count() == expected;
  std::cout << "list: pods=" << pods << " load_seconds=" << Fixed(load_seconds, 1)
            << " load_pods_per_s=" << Fixed(pods / load_seconds, 0)
            << " load_writes_per_s=" << Fixed(2 * pods / load_seconds, 0)
            << " load_failed=" << failed << " rss_after_load_mb=" << after_load.rss_kb / 1024
            << " peak_rss_load_mb=" << after_load.hwm_kb / 1024
            << " full_list_s=" << Fixed(full.seconds, 2)
            << " full_first_byte_s=" << Fixed(full.first_byte_seconds, 2)
            << " full_list_mb=" << Fixed(static_cast<double>(full.bytes) / 1e6, 1)
            << " full_items=" << full_items.count()
            << " bytes_per_pod=" << (pods > 0 ? full.bytes / expected : 0)
            << " peak_rss_full_list_mb=" << after_full.hwm_kb / 1024 << " (+"
            << (after_full.hwm_kb - before_full.rss_kb) / 1024 << ")"
            << " paged_list_s=" << Fixed(paged_seconds, 2) << " pages=" << pages
            << " paged_mb=" << Fixed(static_cast<double>(paged_bytes) / 1e6, 1)
            << " paged_items=" << paged_items
            << " peak_rss_paged_list_mb=" << after_paged.hwm_kb / 1024
            << " restart_s=" << Fixed(restart_seconds, 2)
            << " restart_first_list_s=" << Fixed(restart_first_list_seconds, 2)
            << " rss_after_restart_mb=" << restarted_memory.rss_kb / 1024
            << " restarted_items=" << restarted_items.count() << (ok ? " ok" : " FAILED")
            << std::endl;
  if (!first_error.empty()) {
    std::cerr << "list: first failed write: " << first_error << "\n";
  }
  return ok;
}

void RaiseFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);  // the server, our child, inherits it
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = ParseOptions(argc, argv);
    RaiseFileLimit();
    ::signal(SIGPIPE, SIG_IGN);
    bool ok = true;
    const bool all = options.scenario == "all";
    if (all || options.scenario == "writes") {
      ok = RunWrites(options) && ok;
    }
    if (all || options.scenario == "fanout") {
      ok = RunFanout(options) && ok;
    }
    if (all || options.scenario == "list") {
      ok = RunList(options) && ok;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "apiserver_load: " << error.what() << "\n";
    return 1;
  }
}
