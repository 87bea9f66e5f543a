#include "apiserver/rest/watch.h"

#include <algorithm>
#include <string>
#include <utility>

#include "slicewright/base/thread_name.h"

#include "apiserver/rest/json_util.h"

namespace slicewright::apiserver {
namespace {

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "ERROR";
}

std::string EventLine(std::string_view type, std::string_view object_json) {
  std::string line;
  line.reserve(object_json.size() + 32);
  line += R"({"type":")";
  line += type;
  line += R"(","object":)";
  line += object_json;
  line += "}\n";
  return line;
}

// Every watcher of a resource without selectors or encoder gets the same bytes for an event: they
// are built once per event and type on the writing thread (events fan out there one after the
// other), not once per watcher.
std::shared_ptr<const std::string> SharedEventLine(const EventPtr& event, EventType type) {
  // The memo holds the event itself: a raw pointer could match a later event allocated at the
  // same address once this one is freed, and send that event the wrong object.
  thread_local EventPtr memo_event;
  thread_local EventType memo_type = EventType::kAdded;
  thread_local std::shared_ptr<const std::string> memo_line;
  if (memo_event != event || memo_type != type || memo_line == nullptr) {
    memo_line =
        std::make_shared<const std::string>(EventLine(EventTypeName(type), event->record->json));
    memo_event = event;
    memo_type = type;
  }
  return memo_line;
}

// The previous version of an object, re-stamped with the revision of the event that made it stop
// matching (what kube-apiserver's cacher sends as DELETED in that case).
std::string WithResourceVersion(const std::string& json, std::int64_t revision) {
  Result<Json> parsed = ParseJson(json, "stored object");
  if (!parsed.ok()) {
    return json;
  }
  if (Json* metadata = Metadata(*parsed)) {
    (*metadata)["resourceVersion"] = std::to_string(revision);
  }
  return DumpJson(*parsed);
}

}  // namespace

bool ObjectFilter::Matches(const ObjectAttributes& attributes) const {
  if (!label_selector.MatchesLookup(
          [&attributes](std::string_view key) { return attributes.Label(key); })) {
    return false;
  }
  for (const FieldRequirement& requirement : fields) {
    const std::string_view value = attributes.Field(requirement.field).value_or("");
    if ((value == requirement.value) != requirement.equals) {
      return false;
    }
  }
  return true;
}

Result<std::vector<FieldRequirement>> ParseFieldSelector(std::string_view text,
                                                         const std::vector<std::string>& allowed) {
  std::vector<FieldRequirement> requirements;
  std::vector<std::string> terms(1);
  // Terms split on unescaped ','; a backslash escapes the next character.
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      terms.back() += text[++i];
    } else if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back() += c;
    }
  }
  for (const std::string& term : terms) {
    if (term.empty()) {
      continue;
    }
    FieldRequirement requirement;
    std::size_t op = term.find("!=");
    std::size_t value_at = 0;
    if (op != std::string::npos) {
      requirement.equals = false;
      value_at = op + 2;
    } else if ((op = term.find("==")) != std::string::npos) {
      value_at = op + 2;
    } else if ((op = term.find('=')) != std::string::npos) {
      value_at = op + 1;
    } else {
      return BadRequestError("invalid selector: '" + std::string(text) + "'; can't understand '" +
                             term + "'");
    }
    requirement.field = term.substr(0, op);
    requirement.value = term.substr(value_at);
    const bool known =
        requirement.field == "metadata.name" || requirement.field == "metadata.namespace" ||
        std::find(allowed.begin(), allowed.end(), requirement.field) != allowed.end();
    if (!known) {
      return BadRequestError("field label not supported: " + requirement.field);
    }
    requirements.push_back(std::move(requirement));
  }
  return requirements;
}

WatchStream::WatchStream(Storage& storage, WatchHub& hub, Options options)
    : storage_(storage), hub_(hub), options_(std::move(options)) {}

WatchStream::~WatchStream() = default;

void WatchStream::Start(std::shared_ptr<StreamSink> sink) {
  {
    MutexLock lock(mu_);
    sink_ = std::move(sink);
    starting_ = true;
    starting_thread_ = std::this_thread::get_id();
    last_revision_ = options_.storage.after_revision;
  }
  // Backlog and initial events arrive through OnEvent on this thread, during this call.
  Result<std::unique_ptr<WatchRegistration>> registration =
      storage_.Watch(options_.storage, shared_from_this());
  std::unique_ptr<WatchRegistration> released;
  {
    MutexLock lock(mu_);
    starting_ = false;
    if (!registration.ok()) {
      WriteLocked(std::make_shared<const std::string>(
          EventLine("ERROR", DumpJson(FailureStatus(registration.status())))));
      released = FinishLocked();
    } else if (done_) {
      released = std::move(registration).value();
    } else {
      registration_ = std::move(registration).value();
      last_revision_ = std::max(last_revision_, registration_->start_revision());
      if (options_.send_initial_events) {
        SendBookmarkLocked(registration_->start_revision(), /*initial_events_end=*/true);
      }
      while (!pending_.empty() && !done_) {
        DeliverLocked(pending_.front());
        pending_.pop_front();
      }
      pending_.clear();
    }
  }
  released.reset();
  hub_.Add(shared_from_this());
}

void WatchStream::Stop() {
  std::unique_ptr<WatchRegistration> released;
  {
    MutexLock lock(mu_);
    done_ = true;
    released = std::move(registration_);
    sink_.reset();
    pending_.clear();
  }
  // Unregistering takes the store's lock, which a writer may hold while it waits for mu_ in
  // OnEvent: so it happens outside mu_.
  released.reset();
}

void WatchStream::OnEvent(const EventPtr& event) {
  MutexLock lock(mu_);
  if (done_) {
    return;
  }
  if (starting_ && std::this_thread::get_id() != starting_thread_) {
    pending_.push_back(event);
    return;
  }
  DeliverLocked(event);
}

void WatchStream::DeliverLocked(const EventPtr& event) {
  last_revision_ = std::max(last_revision_, event->revision);
  const bool current_passes =
      event->type != EventType::kDeleted && options_.filter.Matches(event->record->attributes);
  bool previous_passes = false;
  if (event->type == EventType::kDeleted) {
    previous_passes = options_.filter.Matches(event->record->attributes);
  } else if (event->prev != nullptr) {
    previous_passes = options_.filter.Matches(event->prev->attributes);
  }
  if (!current_passes && !previous_passes) {
    return;
  }
  EventType type = EventType::kModified;
  const std::string* object = &event->record->json;
  std::string restamped;
  if (event->type == EventType::kDeleted) {
    type = EventType::kDeleted;
  } else if (current_passes && !previous_passes) {
    type = EventType::kAdded;
  } else if (!current_passes) {
    type = EventType::kDeleted;
    restamped = WithResourceVersion(event->prev->json, event->revision);
    object = &restamped;
  }
  if (options_.encoder) {
    WriteLocked(std::make_shared<const std::string>(
        EventLine(EventTypeName(type), options_.encoder(*object))));
  } else if (object == &event->record->json) {
    WriteLocked(SharedEventLine(event, type));
  } else {
    WriteLocked(std::make_shared<const std::string>(EventLine(EventTypeName(type), *object)));
  }
}

void WatchStream::WriteLocked(std::shared_ptr<const std::string> line) {
  if (sink_ == nullptr || done_) {
    return;
  }
  if (!sink_->Write(std::move(line))) {
    // The client is gone or cannot keep up; the server closes the connection and calls Stop.
    done_ = true;
  }
}

void WatchStream::SendBookmarkLocked(std::int64_t revision, bool initial_events_end) {
  Json metadata = {{"resourceVersion", std::to_string(revision)}, {"creationTimestamp", nullptr}};
  if (initial_events_end) {
    metadata["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  }
  Json object = {{"kind", options_.kind},
                 {"apiVersion", options_.api_version},
                 {"metadata", std::move(metadata)}};
  WriteLocked(std::make_shared<const std::string>(EventLine("BOOKMARK", DumpJson(object))));
}

std::unique_ptr<WatchRegistration> WatchStream::FinishLocked() {
  done_ = true;
  if (sink_ != nullptr) {
    sink_->Finish();
    sink_.reset();
  }
  pending_.clear();
  return std::move(registration_);
}

void WatchStream::Tick(std::chrono::steady_clock::time_point now, bool bookmark_due) {
  std::unique_ptr<WatchRegistration> released;
  {
    MutexLock lock(mu_);
    if (done_ || starting_) {
      return;
    }
    if (now >= options_.deadline) {
      released = FinishLocked();
    } else if (bookmark_due && options_.allow_bookmarks) {
      // The store's delivered revision, as kube-apiserver's bookmarks carry its watch cache's:
      // every event of ours up to it has been written above, so a client resuming from it misses
      // nothing, and a watch of a resource nobody writes keeps a revision inside the history.
      last_revision_ = std::max(last_revision_, storage_.DeliveredRevision());
      SendBookmarkLocked(last_revision_, false);
    }
  }
  released.reset();
}

WatchHub::WatchHub(std::chrono::seconds bookmark_interval)
    : bookmark_interval_(bookmark_interval), thread_([this, name = ThreadName("api-watch")] {
        name.Apply();
        Run();
      }) {}

WatchHub::~WatchHub() { Stop(); }

void WatchHub::Add(const std::shared_ptr<WatchStream>& stream) {
  MutexLock lock(mu_);
  streams_.push_back(stream);
}

std::size_t WatchHub::active() const {
  MutexLock lock(mu_);
  std::size_t count = 0;
  for (const auto& stream : streams_) {
    count += stream.expired() ? 0 : 1;
  }
  return count;
}

void WatchHub::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_) {
      return;
    }
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void WatchHub::Run() {
  auto next_bookmark = std::chrono::steady_clock::now() + bookmark_interval_;
  MutexLock lock(mu_);
  while (!stopping_) {
    wake_.WaitUntil(mu_, std::chrono::steady_clock::now() + std::chrono::seconds(1));
    if (stopping_) {
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    const bool bookmark_due = now >= next_bookmark;
    if (bookmark_due) {
      next_bookmark = now + bookmark_interval_;
    }
    std::vector<std::shared_ptr<WatchStream>> live;
    std::erase_if(streams_, [&](const std::weak_ptr<WatchStream>& weak) {
      std::shared_ptr<WatchStream> stream = weak.lock();
      if (stream == nullptr) {
        return true;
      }
      live.push_back(std::move(stream));
      return false;
    });
    lock.Unlock();
    for (const auto& stream : live) {
      stream->Tick(now, bookmark_due);
    }
    live.clear();
    lock.Lock();
  }
}

}  // namespace slicewright::apiserver
