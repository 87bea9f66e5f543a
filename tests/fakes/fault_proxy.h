// FaultProxy: an HTTP/1.1-aware TCP proxy on 127.0.0.1 in front of an upstream server (the
// embedded API server), for tests of the client, and later of informers, under failures. Tests
// script faults as rules: the first rule that matches a request, and still has uses left, acts on
// it; a request no rule matches passes through untouched. Thread-safe; its own threads.
//
// Usage:
//   auto proxy = FaultProxy::Start("127.0.0.1", api_server->port()).value();
//   RestConfig config;  // scheme "http", host "127.0.0.1", port proxy->port()
//   config.server.port = proxy->port(); ...
//   const RuleId throttled = proxy->Add(Match::Get("/services").Times(2),
//                                       Fault::Respond(429).RetryAfter("1"));
//   ... client->Get(...) ...
//   EXPECT_EQ(proxy->Hits(throttled), 2);
//
//   // An informer's watch: deliver three events, then cut the connection once.
//   proxy->Add(Match::Watch("/pods"), Fault::CutStreamAfter(3));
//
// Model. Each client connection gets its own thread and its own upstream connection (opened on
// the first forwarded request, kept alive with it, reopened when the upstream closes it), so a
// stalled request holds only its own connection. Requests are read whole (bodies up to 8 MiB) and
// forwarded as they are. A response framed by Content-Length (or by the connection's end) is read
// whole before a fault is applied to it; a chunked response (a watch stream) is forwarded piece
// by piece, re-chunked, and its stream faults count events as newline-terminated lines of the
// body. HEAD responses carry no body.
//
// Stop() (and the destructor) closes every connection, ends every stall and delay, and joins the
// threads; a client blocked on the proxy then sees its connection closed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"

namespace slicewright::fakes {

// Which requests a rule applies to. Every set field must match.
struct Match {
  std::string method;         // "GET", "POST", ...; "" any
  std::string path_contains;  // a substring of the request target (path and query); "" any
  // kOnly: the query has watch=true (or watch=1); kNever: it has not.
  enum class WatchFilter { kAny, kOnly, kNever };
  WatchFilter watch = WatchFilter::kAny;
  // How many matching requests the rule acts on; kForever: every one.
  static constexpr int kForever = std::numeric_limits<int>::max();
  int times = 1;

  static Match Any() { return {}; }
  static Match Method(std::string method, std::string path_contains = {});
  // GET of a non-watch request (get or list).
  static Match Get(std::string path_contains = {});
  static Match Post(std::string path_contains = {}) {
    return Method("POST", std::move(path_contains));
  }
  // A watch request (GET ...?watch=true).
  static Match Watch(std::string path_contains = {});

  Match& Times(int n) {
    times = n;
    return *this;
  }
  Match& Forever() { return Times(kForever); }
};

// What a rule does to a request it matches.
struct Fault {
  enum class Kind {
    kRespond,       // answer `status` with `body` (and Retry-After) without asking upstream
    kDrop,          // read the request, then close the connection without answering
    kStall,         // read the request, never answer (until the client leaves or Stop())
    kRaw,           // read the request, write `body` as the whole response bytes, then close
    kDelay,         // forward; hold the upstream's response for `delay` before sending it
    kTruncateBody,  // forward; send the headers and the first `bytes` of the body, then close
    kReplaceBody,   // forward; send the upstream's status and headers with `body` instead
    kCutStream,     // forward; after `events` lines of a chunked body, close the connection
    kStallStream,   // forward; after `events` lines, send nothing more (connection stays open)
    kInjectLine,    // forward; after `events` lines, insert `body` + "\n" as a line, go on
  };
  Kind kind = Kind::kRespond;
  int status = 500;
  std::string retry_after;  // kRespond: the Retry-After header value ("" none)
  std::string body;         // kRespond, kRaw, kReplaceBody, kInjectLine
  std::chrono::milliseconds delay{0};
  std::size_t bytes = 0;
  int events = 0;

  // Answers `status`; with an empty `body`, a metav1.Status naming the injected fault.
  static Fault Respond(int status, std::string body = {});
  static Fault Drop() { return Of(Kind::kDrop); }
  static Fault Stall() { return Of(Kind::kStall); }
  static Fault Raw(std::string bytes);
  static Fault Delay(std::chrono::milliseconds delay);
  static Fault TruncateBody(std::size_t bytes);
  static Fault ReplaceBody(std::string body);
  static Fault CutStreamAfter(int events);
  static Fault StallStreamAfter(int events);
  static Fault InjectLine(int after_events, std::string line);

  static Fault Of(Kind kind) {
    Fault fault;
    fault.kind = kind;
    return fault;
  }

  Fault& RetryAfter(std::string value) {
    retry_after = std::move(value);
    return *this;
  }
};

using RuleId = int;

// One request the proxy read, in arrival order.
struct SeenRequest {
  std::string method;
  std::string target;
  RuleId rule = 0;  // the rule that acted on it; 0: passed through
};

class FaultProxy final {
 public:
  // Listens on 127.0.0.1 (a free port) and forwards to upstream_host:upstream_port.
  static Result<std::unique_ptr<FaultProxy>> Start(std::string upstream_host,
                                                   std::uint16_t upstream_port);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  std::uint16_t port() const;

  // Appends a rule (rules are tried in the order added) and returns its id (> 0).
  RuleId Add(Match match, Fault fault);
  // Removes every rule; requests pass through. Hit counts of removed rules stay readable.
  void ClearRules();

  // How many requests rule `id` acted on.
  int Hits(RuleId id) const;
  // Waits until rule `id` acted on at least `count` requests; false after `timeout`.
  bool WaitForHits(RuleId id, int count, std::chrono::milliseconds timeout) const;
  // Every request read so far, and how many.
  std::vector<SeenRequest> Seen() const;
  int RequestCount() const;
  // Client connections accepted so far.
  int ConnectionCount() const;

  // Closes everything and joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit FaultProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slicewright::fakes
