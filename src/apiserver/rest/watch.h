// Watch streams of the embedded API server: one WatchStream per watch request turns storage events
// into Kubernetes watch events for one client (selector filtering with ADDED/DELETED transitions,
// bookmarks, the initial-events-end bookmark, timeouts, 410 as an ERROR event). WatchHub runs the
// one timer thread that drives bookmarks and timeouts for every stream, so streams need no thread.
// Both are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "slicewright/base/mutex.h"
#include "slicewright/labels/selector.h"

#include "apiserver/http/server.h"
#include "apiserver/storage/storage.h"

namespace slicewright::apiserver {

// One field selector term: metadata.name=x, spec.nodeName!=y.
struct FieldRequirement {
  std::string field;
  std::string value;
  bool equals = true;
};

// Label and field selectors of a list or watch.
struct ObjectFilter {
  labels::Selector label_selector;
  std::vector<FieldRequirement> fields;

  bool Empty() const { return label_selector.Empty() && fields.empty(); }
  bool Matches(const ObjectAttributes& attributes) const;
};

// Parses a fieldSelector ("metadata.name=a,spec.nodeName!=b"); `allowed` are the field names the
// resource supports. kBadRequest with kube-apiserver's text for a bad term or an unknown field
// ("field label not supported: foo").
Result<std::vector<FieldRequirement>> ParseFieldSelector(std::string_view text,
                                                         const std::vector<std::string>& allowed);

// Turns one object into the bytes of a watch event's "object" (the stored JSON as is, or a Table).
using WatchObjectEncoder = std::function<std::string(const std::string& object_json)>;

class WatchHub;

class WatchStream final : public ResponseStream,
                          public WatchSink,
                          public std::enable_shared_from_this<WatchStream> {
 public:
  struct Options {
    WatchOptions storage;
    ObjectFilter filter;
    bool allow_bookmarks = false;
    // sendInitialEvents=true: a bookmark annotated k8s.io/initial-events-end follows the
    // initial state.
    bool send_initial_events = false;
    std::chrono::steady_clock::time_point deadline;
    std::string api_version;  // of the bookmark objects
    std::string kind;
    // Unset: events carry the stored JSON.
    WatchObjectEncoder encoder;
  };

  WatchStream(Storage& storage, WatchHub& hub, Options options);
  ~WatchStream() override;

  void Start(std::shared_ptr<StreamSink> sink) override;
  void Stop() override;
  void OnEvent(const EventPtr& event) override;

  // Called by the hub about once a second: ends the stream past its deadline and sends a bookmark
  // when one is due.
  void Tick(std::chrono::steady_clock::time_point now, bool bookmark_due);

 private:
  void DeliverLocked(const EventPtr& event) SW_REQUIRES(mu_);
  void WriteLocked(std::shared_ptr<const std::string> line) SW_REQUIRES(mu_);
  void SendBookmarkLocked(std::int64_t revision, bool initial_events_end) SW_REQUIRES(mu_);
  // Ends the stream; the registration is released outside the lock by the caller.
  std::unique_ptr<WatchRegistration> FinishLocked() SW_REQUIRES(mu_);

  Storage& storage_;
  WatchHub& hub_;
  Options options_;

  Mutex mu_;
  std::shared_ptr<StreamSink> sink_ SW_GUARDED_BY(mu_);
  std::unique_ptr<WatchRegistration> registration_ SW_GUARDED_BY(mu_);
  bool starting_ SW_GUARDED_BY(mu_) = false;
  std::thread::id starting_thread_ SW_GUARDED_BY(mu_);
  std::deque<EventPtr> pending_ SW_GUARDED_BY(mu_);
  bool done_ SW_GUARDED_BY(mu_) = false;
  std::int64_t last_revision_ SW_GUARDED_BY(mu_) = 0;
};

class WatchHub final {
 public:
  explicit WatchHub(std::chrono::seconds bookmark_interval);
  ~WatchHub();  // Stop()s
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  void Add(const std::shared_ptr<WatchStream>& stream);
  // Stops the timer thread; open streams are stopped by the HTTP server.
  void Stop();
  std::size_t active() const;

 private:
  void Run();

  std::chrono::seconds bookmark_interval_;
  mutable Mutex mu_;
  CondVar wake_;
  std::vector<std::weak_ptr<WatchStream>> streams_ SW_GUARDED_BY(mu_);
  bool stopping_ SW_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace slicewright::apiserver
