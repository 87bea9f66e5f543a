#include "apiserver/rest/api_server.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <openssl/evp.h>

#include "slicewright/base/mutex.h"
#include "slicewright/model/time.h"

#include "apiserver/api/crd.h"
#include "apiserver/api/discovery.h"
#include "apiserver/api/event_conversion.h"
#include "apiserver/api/openapi.h"
#include "apiserver/api/patch.h"
#include "apiserver/api/protobuf.h"
#include "apiserver/api/schema_validation.h"
#include "apiserver/api/strict_json.h"
#include "apiserver/api/table.h"
#include "apiserver/rest/allocators.h"
#include "apiserver/rest/background.h"
#include "apiserver/rest/delete_options.h"
#include "apiserver/rest/json_util.h"
#include "apiserver/rest/objects.h"
#include "apiserver/rest/request_info.h"
#include "apiserver/rest/service_ips.h"
#include "apiserver/rest/watch.h"

namespace slicewright::apiserver {
namespace {

constexpr int kMaxUpdateAttempts = 16;
constexpr int kMaxGenerateNameAttempts = 8;
constexpr std::string_view kFinalizerOrphan = "orphan";
constexpr std::string_view kFinalizerForeground = "foregroundDeletion";
constexpr std::string_view kNamespaceFinalizer = "kubernetes";
constexpr std::string_view kRegistryPrefix = "/registry/";

// --- responses -------------------------------------------------------------------------------

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse TextResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::move(body);
  return response;
}

// What a Status is about, for the "details" of the Kubernetes Status object.
struct StatusDetails {
  std::string name;
  std::string group;
  std::string resource;  // what most errors name as their "kind" ("pods")
  std::string kind;      // what an error with field causes names (errors.NewInvalid: "Pod")
};

HttpResponse StatusResponse(const Status& status, const StatusDetails& details = {}) {
  Json body = FailureStatus(status);
  // Field errors are errors.NewInvalid's, which names the kind; anything else the resource (a
  // Forbidden with causes too: NamespaceLifecycle's refusal is errors.NewForbidden's).
  const std::string& kind =
      !status.causes().empty() && status.code() != StatusCode::kForbidden && !details.kind.empty()
          ? details.kind
          : details.resource;
  if (!details.name.empty() || !kind.empty() || !status.causes().empty()) {
    Json detail = Json::object();
    if (!details.name.empty()) {
      detail["name"] = details.name;
    }
    if (!details.group.empty()) {
      detail["group"] = details.group;
    }
    if (!kind.empty()) {
      detail["kind"] = kind;
    }
    // kubectl lists these under "The Kind "name" is invalid:"; without them it prints that line
    // alone and the field errors are lost.
    if (!status.causes().empty()) {
      Json causes = Json::array();
      for (const StatusCause& cause : status.causes()) {
        causes.push_back(
            Json{{"reason", cause.reason}, {"message", cause.message}, {"field", cause.field}});
      }
      detail["causes"] = std::move(causes);
    }
    body["details"] = std::move(detail);
  }
  return JsonResponse(StatusCodeHttp(status.code()), DumpJson(body));
}

// "pods" or "endpointslices.discovery.k8s.io", as kube-apiserver names a resource in messages.
std::string QualifiedResource(const ResourceInfo& info) {
  return info.group.empty() ? info.resource : info.resource + "." + info.group;
}

// kube's errors.NewInvalid names schema.GroupKind: "Deployment.apps", "Service".
std::string QualifiedKind(const ResourceInfo& info) {
  return info.group.empty() ? info.kind : info.kind + "." + info.group;
}

Status NotFound(const ResourceInfo& info, std::string_view name) {
  return NotFoundError(QualifiedResource(info) + " \"" + std::string(name) + "\" not found");
}

Status AlreadyExists(const ResourceInfo& info, std::string_view name) {
  return AlreadyExistsError(QualifiedResource(info) + " \"" + std::string(name) +
                            "\" already exists");
}

Status ConflictModified(const ResourceInfo& info, std::string_view name) {
  return ConflictError("Operation cannot be fulfilled on " + QualifiedResource(info) + " \"" +
                       std::string(name) +
                       "\": the object has been modified; please apply your changes to the "
                       "latest version and try again");
}

std::optional<std::int64_t> ParseRevision(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

std::string Base64Encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(data.data()),
                                      static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(std::max(written, 0)));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0 || text.size() > 64 * 1024) {
    return std::nullopt;
  }
  std::string out(3 * text.size() / 4 + 1, '\0');
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (written < 0) {
    return std::nullopt;
  }
  std::size_t size = static_cast<std::size_t>(written);
  // EVP_DecodeBlock counts the padding as zero bytes.
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) {
    --size;
  }
  out.resize(size);
  return out;
}

bool HasFinalizer(const Json& object, std::string_view finalizer) {
  const Json* metadata = Metadata(object);
  const Json* finalizers = metadata ? ArrayField(*metadata, "finalizers") : nullptr;
  if (finalizers == nullptr) {
    return false;
  }
  return std::any_of(finalizers->begin(), finalizers->end(), [&](const Json& f) {
    return f.is_string() && f.get<std::string>() == finalizer;
  });
}

void AddFinalizer(Json& object, std::string_view finalizer) {
  if (HasFinalizer(object, finalizer)) {
    return;
  }
  Json& metadata = object["metadata"];
  if (!metadata.contains("finalizers") || !metadata["finalizers"].is_array()) {
    metadata["finalizers"] = Json::array();
  }
  metadata["finalizers"].push_back(std::string(finalizer));
}

void RemoveFinalizer(Json& object, std::string_view finalizer) {
  Json* metadata = Metadata(object);
  Json* finalizers = metadata ? ArrayField(*metadata, "finalizers") : nullptr;
  if (finalizers == nullptr) {
    return;
  }
  Json kept = Json::array();
  for (const Json& f : *finalizers) {
    if (!(f.is_string() && f.get<std::string>() == finalizer)) {
      kept.push_back(f);
    }
  }
  if (kept.empty()) {
    metadata->erase("finalizers");
  } else {
    *finalizers = std::move(kept);
  }
}

bool HasAnyFinalizer(const Json& object) {
  const Json* metadata = Metadata(object);
  const Json* finalizers = metadata ? ArrayField(*metadata, "finalizers") : nullptr;
  return finalizers != nullptr && !finalizers->empty();
}

bool IsTerminating(const Json& object) {
  const Json* metadata = Metadata(object);
  return metadata != nullptr && StringField(*metadata, "deletionTimestamp") != nullptr;
}

// Whether a stored Namespace is terminating. Every namespaced write asks, and parsing the
// namespace each time was 2% of the server's CPU under write load; a stored record never changes,
// so the answer for the last record seen on this thread is kept. The weak_ptr compares by owner:
// while it lives, no other record can share its control block, so equal owners mean this record.
bool NamespaceTerminating(const RecordPtr& record) {
  thread_local std::weak_ptr<const ObjectRecord> memo_record;
  thread_local bool memo_terminating = false;
  if (!memo_record.owner_before(record) && !record.owner_before(memo_record) &&
      !memo_record.expired()) {
    return memo_terminating;
  }
  Result<Json> parsed = ParseJson(record->json, "namespace");
  memo_terminating = parsed.ok() && IsTerminating(*parsed);
  memo_record = record;
  return memo_terminating;
}

bool IsCoreResource(const ResourceInfo& info, std::string_view resource) {
  return info.group.empty() && info.resource == resource;
}

// Whether an update completes a deletion (upstream's ShouldDeleteDuringUpdate): the new object has
// no finalizers left and the stored one was deleted with no grace period, or none recorded. A
// gracefully deleted pod (grace > 0) is updated normally; its node, or the grace period's end,
// removes it with grace 0. A namespace also waits for its spec.finalizers
// (ShouldDeleteNamespaceDuringUpdate).
bool ShouldDeleteDuringUpdate(const ResourceInfo& info, const Json& old, const Json& updated) {
  if (HasAnyFinalizer(updated) || !IsTerminating(old)) {
    return false;
  }
  if (IsCoreResource(info, "namespaces")) {
    const Json* spec = ObjectField(updated, "spec");
    const Json* spec_finalizers = spec ? ArrayField(*spec, "finalizers") : nullptr;
    if (spec_finalizers != nullptr && !spec_finalizers->empty()) {
      return false;
    }
  }
  const Json* metadata = Metadata(old);
  const auto grace = metadata ? IntField(*metadata, "deletionGracePeriodSeconds") : std::nullopt;
  return !grace || *grace == 0;
}

bool IsCrdResource(const ResourceInfo& info) {
  return info.group == "apiextensions.k8s.io" && info.resource == "customresourcedefinitions";
}

}  // namespace

// --- Impl ------------------------------------------------------------------------------------

// What one create or update of a Service took from the address and port allocators (given back
// when the write fails) and what it gives up (given back once the write succeeded).
struct ServiceAllocation {
  std::vector<std::string> allocated_ips;
  std::vector<int> allocated_ports;
  std::vector<std::string> released_ips;
  std::vector<int> released_ports;
};

// Finishes a ServiceAllocation when it goes out of scope: a failure unless `success` was set.
struct ServiceAllocationGuard {
  ServiceAllocationGuard(ApiServer::Impl& owner, ServiceAllocation& allocation)
      : impl(owner), txn(allocation) {}
  ~ServiceAllocationGuard();
  ServiceAllocationGuard(const ServiceAllocationGuard&) = delete;
  ServiceAllocationGuard& operator=(const ServiceAllocationGuard&) = delete;
  ApiServer::Impl& impl;
  ServiceAllocation& txn;
  bool success = false;
};

struct ApiServer::Impl {
  // Keeps the garbage collector's view: which uid lives at which key, and who owns whom. Fed by a
  // storage watch on every key.
  class OwnerIndex final : public WatchSink {
   public:
    explicit OwnerIndex(Impl& impl) : impl_(impl) {}
    void OnEvent(const EventPtr& event) override;
    // Start-up feeds every stored object through here: no event is made for any of them.
    void OnInitialObject(std::string_view key, const StoredObject& object) override;
    std::vector<std::string> Dependents(std::string_view owner_uid) const;
    bool Exists(std::string_view uid) const;
    std::vector<std::string> DanglingOwners() const;
    // The index reflects every write up to `revision` (the watch started there).
    void MarkSeen(std::int64_t revision);
    // Blocks until the index reflects every write up to `revision`, so a deletion's decision
    // (orphan the dependents or not) sees every dependent created before it even if a store
    // acknowledged writes before its watchers saw them (Storage allows that). The bound only
    // guards against a bug.
    void WaitForRevision(std::int64_t revision) const;

   private:
    void Unlink(const std::string& key, const ObjectAttributes& attributes) SW_REQUIRES(mu_);
    // Records the object at `key`; owners not (yet) known go to `missing_owners`.
    void Link(std::string_view key, const ObjectAttributes& attributes,
              std::vector<std::string>& missing_owners) SW_REQUIRES(mu_);
    // Schedules the collector's checks after an event, outside mu_.
    void ScheduleChecks(const std::string& gone_uid,
                        const std::vector<std::string>& missing_owners);
    Impl& impl_;
    mutable Mutex mu_;
    mutable CondVar seen_cv_;
    // Which key holds a uid, by the key's hash: uids are unique, the key only guards an unlink
    // against a stale event of another object, and a hash costs no allocation per object.
    static std::size_t KeyHash(std::string_view key) { return std::hash<std::string_view>{}(key); }
    // Hashes views as well, so lookups by a uid read from attributes allocate nothing.
    struct UidHash {
      using is_transparent = void;
      std::size_t operator()(std::string_view uid) const {
        return std::hash<std::string_view>{}(uid);
      }
    };
    template <typename Value>
    using ByUid = std::unordered_map<std::string, Value, UidHash, std::equal_to<>>;
    ByUid<std::size_t> key_by_uid_ SW_GUARDED_BY(mu_);
    ByUid<std::set<std::string>> dependents_ SW_GUARDED_BY(mu_);
    std::int64_t seen_revision_ SW_GUARDED_BY(mu_) = 0;
  };

  // The owner index, caught up with every committed write.
  OwnerIndex& SyncedOwnerIndex() {
    owner_index->WaitForRevision(storage->CurrentRevision());
    return *owner_index;
  }

  ApiServerOptions config;
  std::unique_ptr<Storage> storage;
  ResourceRegistry registry;
  WatchHub hub;
  // One per served family, the primary (--service-cluster-ip-range's first) first.
  std::vector<IpAllocator> service_ip_allocators;
  PortAllocator node_ports;
  Mutex rng_mu;
  std::mt19937_64 rng SW_GUARDED_BY(rng_mu);
  std::shared_ptr<OwnerIndex> owner_index;
  std::unique_ptr<WatchRegistration> owner_index_registration;
  Background background;

  Impl(ApiServerOptions opts, std::unique_ptr<Storage> store)
      : config(std::move(opts)),
        storage(std::move(store)),
        hub(config.bookmark_interval),
        node_ports(config.node_port_min, config.node_port_max) {}

  // --- helpers ---
  std::chrono::system_clock::time_point NowTimePoint() const {
    return config.now ? config.now() : std::chrono::system_clock::now();
  }
  model::Time Now() const {
    const auto now = NowTimePoint();
    return model::Time{
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()};
  }
  std::string NowText() const { return model::FormatRfc3339(Now()); }
  std::string NewUid();
  std::string RandomSuffix();
  ResourcePtr ResourceForKey(std::string_view key, std::string* namespace_,
                             std::string* name) const;

  // --- object operations (used by HTTP handlers and background tasks) ---
  Status CheckNamespace(const ResourceInfo& info, std::string_view namespace_) const;
  Result<StoredObject> CreateObject(const ResourceInfo& info, const std::string& namespace_,
                                    Json object, bool dry_run);
  using Mutation = std::function<Result<Json>(const Json& current)>;
  Result<StoredObject> UpdateObject(const ResourceInfo& info, const std::string& namespace_,
                                    const std::string& name, bool status_subresource, bool dry_run,
                                    const Mutation& mutate);
  Result<StoredObject> DeleteObject(const ResourceInfo& info, const std::string& namespace_,
                                    const std::string& name, const DeleteOptions& delete_options);
  // `txn`: a Service's allocation, for the caller to finish (FinishServiceAllocation).
  Status PrepareForCreate(const ResourceInfo& info, Json& object, ServiceAllocation& txn);
  Status PrepareForUpdate(const ResourceInfo& info, const Json& old, Json& updated,
                          ServiceAllocation& txn, bool status_subresource);
  // One allocator per --service-cluster-ip-range CIDR; kInvalid for a malformed list.
  Status InitServiceIpAllocators();
  // The allocator of `family` ("IPv4", "IPv6"), or null when the cluster does not serve it.
  IpAllocator* ServiceIpAllocator(std::string_view family);
  // kube-apiserver's beginCreate / beginUpdate of a Service (service_ips.h, then the addresses
  // and ports): what it takes and releases goes to `txn`, to be finished once the write succeeded
  // or failed (FinishServiceAllocation). On error the allocation is already undone.
  Status AllocateServiceAddresses(Json& service, const Json* old, ServiceAllocation& txn);
  ServiceIpFamilies ServedIpFamilies() const;
  Status AllocateServiceIp(const Json& service, std::string_view family, std::string& ip,
                           ServiceAllocation& txn);
  Status AllocateClusterIps(Json& service, ServiceAllocation& txn);
  Status UpdateClusterIps(Json& service, const Json& old, ServiceAllocation& txn);
  Status AllocateNodePort(const Json& service, std::size_t index, std::int64_t wanted,
                          ServiceAllocation& txn, std::int64_t* got);
  Status AllocateNodePorts(Json& service, const Json* old, ServiceAllocation& txn);
  // Success: what the update released goes back; failure: what it took goes back.
  void FinishServiceAllocation(ServiceAllocation& txn, bool success);
  void ReleaseServiceAddresses(const Json& service);
  // Removes the stored object as `current`, recording `final_state` (default: as stored) as its
  // last state in the delete event and the answer.
  Result<StoredObject> RemoveNow(const ResourceInfo& info, const std::string& key,
                                 const StoredObject& current, const Json* final_state = nullptr);
  Storage::Render Renderer(const ResourceInfo& info, Json object) const;
  // The resource whose store and strategy hold `info`'s objects: core Events for the
  // events.k8s.io/v1 view, `info` itself otherwise. Built-ins live as long as the registry.
  const ResourceInfo& StoredAs(const ResourceInfo& info) const;
  // Moves Events that older data dirs kept under events.k8s.io into the shared core store.
  Status MigrateLegacyEventsV1();

  // --- background ---
  void ScheduleOwnerGone(const std::string& uid, std::chrono::milliseconds delay);
  void ProcessOwnerGone(const std::string& uid);
  void ProcessDeletingOwner(const std::string& key, std::string_view policy_finalizer);
  void ProcessNamespace(const std::string& name);
  void ProcessPodDeadline(const std::string& key, const std::string& uid);
  void ScheduleStartupWork();
  // Picks up deletions a previous run left unfinished: terminating namespaces, pods waiting out
  // their grace period, foreground and orphan deletions.
  void ResumeUnfinishedDeletions();
  void SchedulePodDeadline(const std::string& key, const Json& pod);

  // --- HTTP ---
  HttpResponse Handle(HttpRequest& request);
  HttpResponse HandleDiscovery(HttpRequest& request, const RequestInfo& info);
  HttpResponse HandleResource(HttpRequest& request, const RequestInfo& info);
  HttpResponse HandleGet(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  HttpResponse HandleList(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  HttpResponse HandleWatch(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  HttpResponse HandleCreate(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  HttpResponse HandleUpdate(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  Status EnsureCrds(const std::vector<std::string>& crds);
  // The rest of a create or update once the body is decoded (and, for a custom resource, pruned
  // and defaulted).
  HttpResponse CreateDecoded(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri,
                             bool dry_run, Json object);
  HttpResponse UpdateDecoded(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri,
                             bool dry_run, Json object);
  HttpResponse HandlePatch(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  HttpResponse HandleDelete(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  HttpResponse HandleDeleteCollection(HttpRequest& request, const ResourceInfo& info,
                                      const RequestInfo& ri);
  // GET, PUT and PATCH of the autoscaling/v1 Scale subresource (`kubectl scale`).
  HttpResponse HandleScale(HttpRequest& request, const ResourceInfo& info, const RequestInfo& ri);
  Result<ObjectFilter> FilterFromRequest(const HttpRequest& request, const ResourceInfo& info);
  HttpResponse ObjectResponse(const HttpRequest& request, const ResourceInfo& info, int status,
                              const std::string& json);
};

// --- OwnerIndex ------------------------------------------------------------------------------

void ApiServer::Impl::OwnerIndex::Unlink(const std::string& key,
                                         const ObjectAttributes& attributes) {
  auto it = key_by_uid_.find(attributes.uid());
  if (it != key_by_uid_.end() && it->second == KeyHash(key)) {
    key_by_uid_.erase(it);
  }
  for (std::string_view owner : attributes.OwnerUids()) {
    auto deps = dependents_.find(owner);
    if (deps != dependents_.end()) {
      deps->second.erase(key);
      if (deps->second.empty()) {
        dependents_.erase(deps);
      }
    }
  }
}

void ApiServer::Impl::OwnerIndex::MarkSeen(std::int64_t revision) {
  {
    MutexLock lock(mu_);
    seen_revision_ = std::max(seen_revision_, revision);
  }
  seen_cv_.NotifyAll();
}

void ApiServer::Impl::OwnerIndex::WaitForRevision(std::int64_t revision) const {
  MutexLock lock(mu_);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (seen_revision_ < revision && std::chrono::steady_clock::now() < give_up) {
    seen_cv_.WaitUntil(mu_, give_up);
  }
}

void ApiServer::Impl::OwnerIndex::Link(std::string_view key, const ObjectAttributes& attributes,
                                       std::vector<std::string>& missing_owners) {
  if (!attributes.uid().empty()) {
    key_by_uid_.insert_or_assign(std::string(attributes.uid()), KeyHash(key));
  }
  for (std::string_view owner : attributes.OwnerUids()) {
    auto deps = dependents_.find(owner);
    if (deps == dependents_.end()) {
      deps = dependents_.try_emplace(std::string(owner)).first;
    }
    deps->second.emplace(key);
    if (!key_by_uid_.contains(owner)) {
      missing_owners.emplace_back(owner);
    }
  }
}

void ApiServer::Impl::OwnerIndex::OnEvent(const EventPtr& event) {
  std::vector<std::string> missing_owners;
  std::string gone_uid;
  {
    MutexLock lock(mu_);
    seen_revision_ = std::max(seen_revision_, event->revision);
    if (event->prev != nullptr) {
      Unlink(event->key, event->prev->attributes);
    }
    const ObjectAttributes& attributes = event->record->attributes;
    if (event->type == EventType::kDeleted) {
      Unlink(event->key, attributes);
      gone_uid = attributes.uid();
    } else {
      Link(event->key, attributes, missing_owners);
    }
  }
  seen_cv_.NotifyAll();
  ScheduleChecks(gone_uid, missing_owners);
}

void ApiServer::Impl::OwnerIndex::OnInitialObject(std::string_view key,
                                                  const StoredObject& object) {
  std::vector<std::string> missing_owners;
  {
    MutexLock lock(mu_);
    seen_revision_ = std::max(seen_revision_, object.mod_revision);
    Link(key, object.record->attributes, missing_owners);
  }
  seen_cv_.NotifyAll();
  ScheduleChecks("", missing_owners);
}

void ApiServer::Impl::OwnerIndex::ScheduleChecks(const std::string& gone_uid,
                                                 const std::vector<std::string>& missing_owners) {
  // Never block the writer: the work itself runs on the background thread.
  if (!gone_uid.empty()) {
    impl_.ScheduleOwnerGone(gone_uid, std::chrono::milliseconds(0));
  }
  for (const std::string& owner : missing_owners) {
    // An owner that does not exist (yet): check again shortly, as the collector verifies with a
    // live lookup before it deletes.
    impl_.ScheduleOwnerGone(owner, std::chrono::milliseconds(500));
  }
}

std::vector<std::string> ApiServer::Impl::OwnerIndex::Dependents(std::string_view owner_uid) const {
  MutexLock lock(mu_);
  auto it = dependents_.find(owner_uid);
  if (it == dependents_.end()) {
    return {};
  }
  return {it->second.begin(), it->second.end()};
}

bool ApiServer::Impl::OwnerIndex::Exists(std::string_view uid) const {
  MutexLock lock(mu_);
  return key_by_uid_.contains(uid);
}

std::vector<std::string> ApiServer::Impl::OwnerIndex::DanglingOwners() const {
  MutexLock lock(mu_);
  std::vector<std::string> dangling;
  for (const auto& [owner, deps] : dependents_) {
    if (!key_by_uid_.contains(owner)) {
      dangling.push_back(owner);
    }
  }
  return dangling;
}

// --- helpers ---------------------------------------------------------------------------------

std::string ApiServer::Impl::NewUid() {
  std::array<std::uint8_t, 16> bytes{};
  {
    MutexLock lock(rng_mu);
    for (std::size_t i = 0; i < bytes.size(); i += 8) {
      std::uint64_t word = rng();
      for (std::size_t j = 0; j < 8; ++j) {
        bytes[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
      }
    }
  }
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string uid;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      uid += '-';
    }
    uid += kHex[bytes[i] >> 4];
    uid += kHex[bytes[i] & 0x0f];
  }
  return uid;
}

std::string ApiServer::Impl::RandomSuffix() {
  // apimachinery's utilrand.String alphabet: no vowels, no easily confused characters.
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string suffix;
  MutexLock lock(rng_mu);
  for (int i = 0; i < 5; ++i) {
    suffix += kAlphabet[rng() % kAlphabet.size()];
  }
  return suffix;
}

ResourcePtr ApiServer::Impl::ResourceForKey(std::string_view key, std::string* namespace_,
                                            std::string* name) const {
  if (!key.starts_with(kRegistryPrefix)) {
    return nullptr;
  }
  std::string_view rest = key.substr(kRegistryPrefix.size());
  const std::size_t group_end = rest.find('/');
  if (group_end == std::string_view::npos) {
    return nullptr;
  }
  std::string_view group = rest.substr(0, group_end);
  rest.remove_prefix(group_end + 1);
  const std::size_t resource_end = rest.find('/');
  if (resource_end == std::string_view::npos) {
    return nullptr;
  }
  const std::string_view resource = rest.substr(0, resource_end);
  rest.remove_prefix(resource_end + 1);
  if (group == "core") {
    group = "";
  }
  for (const ResourcePtr& info : registry.All()) {
    if (info->group == group && info->resource == resource) {
      if (info->namespaced) {
        const std::size_t slash = rest.find('/');
        if (slash == std::string_view::npos) {
          return nullptr;
        }
        *namespace_ = std::string(rest.substr(0, slash));
        *name = std::string(rest.substr(slash + 1));
      } else {
        namespace_->clear();
        *name = std::string(rest);
      }
      return info;
    }
  }
  return nullptr;
}

Storage::Render ApiServer::Impl::Renderer(const ResourceInfo& info, Json object) const {
  return [&info, object = std::move(object)](std::int64_t revision) mutable -> Result<RecordPtr> {
    object["metadata"]["resourceVersion"] = std::to_string(revision);
    auto record = std::make_shared<ObjectRecord>();
    record->json = DumpJson(object);
    record->attributes = ComputeAttributes(info, object);
    return RecordPtr(std::move(record));
  };
}

Status ApiServer::Impl::CheckNamespace(const ResourceInfo& info,
                                       std::string_view namespace_) const {
  if (!info.namespaced) {
    return Status::Ok();
  }
  ResourcePtr namespaces = registry.Find("", "v1", "namespaces");
  Result<StoredObject> ns = storage->Get(namespaces->Key("", namespace_));
  if (!ns.ok()) {
    return NotFoundError("namespaces \"" + std::string(namespace_) + "\" not found");
  }
  if (NamespaceTerminating(ns->record)) {
    // kube-apiserver's NamespaceLifecycle answer, its cause included: clients recognise the
    // refusal by it (upstream's controllers drop such a create).
    Status refused(StatusCode::kForbidden, "unable to create new content in namespace " +
                                               std::string(namespace_) +
                                               " because it is being terminated");
    refused.WithCauses({StatusCause{"NamespaceTerminating",
                                    "namespace " + std::string(namespace_) + " is being terminated",
                                    "metadata.namespace"}});
    return refused;
  }
  return Status::Ok();
}

Status ApiServer::Impl::InitServiceIpAllocators() {
  const std::vector<std::string>& cidrs = config.service_cidrs;
  if (cidrs.empty() || cidrs.size() > 2) {
    return InvalidError("--service-cluster-ip-range: give one CIDR, or two (one per IP family)");
  }
  service_ip_allocators.reserve(cidrs.size());
  for (const std::string& cidr : cidrs) {
    Result<IpAllocator> allocator = IpAllocator::Create(cidr);
    if (!allocator.ok()) {
      return allocator.status().WithContext("--service-cluster-ip-range");
    }
    service_ip_allocators.push_back(*allocator);
  }
  if (cidrs.size() == 2 && service_ip_allocators[0].family() == service_ip_allocators[1].family()) {
    return InvalidError("--service-cluster-ip-range: " + cidrs[0] + "," + cidrs[1] +
                        ": a dual-stack range needs one CIDR of each IP family");
  }
  return Status::Ok();
}

IpAllocator* ApiServer::Impl::ServiceIpAllocator(std::string_view family) {
  for (IpAllocator& allocator : service_ip_allocators) {
    if ((allocator.family() == net::IpFamily::kIPv6) == (family == "IPv6") &&
        (family == "IPv4" || family == "IPv6")) {
      return &allocator;
    }
  }
  return nullptr;
}

ServiceAllocationGuard::~ServiceAllocationGuard() { impl.FinishServiceAllocation(txn, success); }

ServiceIpFamilies ApiServer::Impl::ServedIpFamilies() const {
  ServiceIpFamilies served;
  served.primary = service_ip_allocators.front().family() == net::IpFamily::kIPv6 ? "IPv6" : "IPv4";
  served.dual_stack = service_ip_allocators.size() > 1;
  return served;
}

Status ApiServer::Impl::AllocateServiceIp(const Json& service, std::string_view family,
                                          std::string& ip, ServiceAllocation& txn) {
  IpAllocator* allocator = ServiceIpAllocator(family);
  if (allocator == nullptr) {  // InitIpFamilyFields let through only served families
    return InternalError("failed to allocate a serviceIP: " + std::string(family) +
                         " is not configured on this cluster");
  }
  if (ip.empty()) {
    Result<std::string> next = allocator->Allocate();
    if (!next.ok()) {
      return InternalError("failed to allocate a serviceIP: " +
                           std::string(next.status().message()));
    }
    ip = *next;
  } else if (Status status = allocator->AllocateSpecific(ip); !status.ok()) {
    FieldErrors errors;
    errors.Invalid("spec.clusterIPs", service["spec"]["clusterIPs"], status.message());
    return errors.ToStatus("Service", StringOr(service["metadata"], "name"));
  }
  txn.allocated_ips.push_back(ip);
  return Status::Ok();
}

Status ApiServer::Impl::AllocateClusterIps(Json& service, ServiceAllocation& txn) {
  Json& spec = service["spec"];
  if (StringOr(spec, "type", "ClusterIP") == "ExternalName") {
    return Status::Ok();
  }
  Json ips = ArrayField(spec, "clusterIPs") != nullptr ? spec["clusterIPs"] : Json::array();
  if (!ips.empty() && ips[0] == "None") {
    return Status::Ok();
  }
  const Json* families = ArrayField(spec, "ipFamilies");
  for (std::size_t i = 0; families != nullptr && i < families->size(); ++i) {
    if (i >= ips.size()) {
      ips.push_back("");
    }
    std::string ip = ips[i].is_string() ? ips[i].get<std::string>() : "";
    const std::string family = (*families)[i].is_string() ? (*families)[i].get<std::string>() : "";
    SW_RETURN_IF_ERROR(AllocateServiceIp(service, family, ip, txn));
    ips[i] = ip;
  }
  spec["clusterIPs"] = ips;
  if (!ips.empty()) {
    spec["clusterIP"] = ips[0];
  }
  return Status::Ok();
}

Status ApiServer::Impl::AllocateNodePort(const Json& service, std::size_t index,
                                         std::int64_t wanted, ServiceAllocation& txn,
                                         std::int64_t* got) {
  if (wanted == 0) {
    Result<int> next = node_ports.Allocate();
    if (!next.ok()) {
      return InternalError("failed to allocate a nodePort: range is full");
    }
    *got = *next;
  } else if (Status status = node_ports.AllocateSpecific(static_cast<int>(wanted)); !status.ok()) {
    FieldErrors errors;
    errors.Invalid("spec.ports[" + std::to_string(index) + "].nodePort", Json(wanted),
                   status.message());
    return errors.ToStatus("Service", StringOr(service["metadata"], "name"));
  } else {
    *got = wanted;
  }
  txn.allocated_ports.push_back(static_cast<int>(*got));
  return Status::Ok();
}

Status ApiServer::Impl::AllocateNodePorts(Json& service, const Json* old, ServiceAllocation& txn) {
  Json& spec = service["spec"];
  const std::string type = StringOr(spec, "type", "ClusterIP");
  const bool wants_ports = type == "NodePort" || type == "LoadBalancer";
  // allocateLoadBalancerNodePorts defaults to true; validation has refused a non-boolean value.
  const auto allocate_lb_ports = spec.find("allocateLoadBalancerNodePorts");
  const bool allocates =
      type == "NodePort" || (type == "LoadBalancer" &&
                             (allocate_lb_ports == spec.end() || !allocate_lb_ports->is_boolean() ||
                              allocate_lb_ports->get<bool>()));
  std::set<std::int64_t> old_ports;
  if (old != nullptr) {
    if (const Json* ports = ArrayField((*old)["spec"], "ports")) {
      for (const Json& port : *ports) {
        if (const auto node_port = IntField(port, "nodePort"); node_port && *node_port != 0) {
          old_ports.insert(*node_port);
        }
      }
    }
  }
  std::set<std::int64_t> kept;
  Json* ports = ArrayField(spec, "ports");
  if (wants_ports && ports != nullptr) {
    // One node port per service port number (a port served over TCP and UDP shares it).
    std::map<std::int64_t, std::int64_t> by_port;
    for (std::size_t i = 0; i < ports->size(); ++i) {
      Json& port = (*ports)[i];
      if (!port.is_object()) {
        continue;
      }
      std::int64_t node_port = IntField(port, "nodePort").value_or(0);
      if (node_port == 0 && !allocates) {
        continue;
      }
      if (old != nullptr) {
        if (node_port != 0) {
          if (old_ports.count(node_port) == 0 && kept.count(node_port) == 0) {
            std::int64_t got = 0;
            SW_RETURN_IF_ERROR(AllocateNodePort(service, i, node_port, txn, &got));
          }
        } else {
          SW_RETURN_IF_ERROR(AllocateNodePort(service, i, 0, txn, &node_port));
          port["nodePort"] = node_port;
        }
        kept.insert(node_port);
        continue;
      }
      const std::int64_t number = IntField(port, "port").value_or(0);
      const auto shared = by_port.find(number);
      if (shared == by_port.end()) {
        std::int64_t wanted = node_port;
        for (const Json& other : *ports) {  // a later entry of the same port may name it
          if (wanted == 0 && IntField(other, "port").value_or(-1) == number) {
            wanted = IntField(other, "nodePort").value_or(0);
          }
        }
        std::int64_t got = 0;
        SW_RETURN_IF_ERROR(AllocateNodePort(service, i, wanted, txn, &got));
        port["nodePort"] = got;
        by_port[number] = got;
      } else if (node_port != shared->second) {
        if (node_port == 0) {
          port["nodePort"] = shared->second;
        } else {
          std::int64_t got = 0;
          SW_RETURN_IF_ERROR(AllocateNodePort(service, i, node_port, txn, &got));
        }
      }
    }
  }
  if (old != nullptr) {
    for (std::int64_t port : old_ports) {
      if (kept.count(port) == 0) {
        txn.released_ports.push_back(static_cast<int>(port));
      }
    }
  }
  // The health check port of a LoadBalancer with externalTrafficPolicy Local.
  const auto needs_health_check = [](const Json& s) {
    return StringOr(s, "type", "ClusterIP") == "LoadBalancer" &&
           StringOr(s, "externalTrafficPolicy") == "Local";
  };
  const bool needed = old != nullptr && needs_health_check((*old)["spec"]);
  if (needs_health_check(spec) && !needed) {
    const std::int64_t wanted = IntField(spec, "healthCheckNodePort").value_or(0);
    if (wanted != 0) {
      if (Status status = node_ports.AllocateSpecific(static_cast<int>(wanted)); !status.ok()) {
        return InternalError("failed to allocate requested HealthCheck NodePort " +
                             std::to_string(wanted) + ": " + std::string(status.message()));
      }
      txn.allocated_ports.push_back(static_cast<int>(wanted));
    } else {
      Result<int> next = node_ports.Allocate();
      if (!next.ok()) {
        return InternalError("failed to allocate a HealthCheck NodePort 0: range is full");
      }
      txn.allocated_ports.push_back(*next);
      spec["healthCheckNodePort"] = *next;
    }
  } else if (needed && !needs_health_check(spec)) {
    if (const auto port = IntField((*old)["spec"], "healthCheckNodePort")) {
      txn.released_ports.push_back(static_cast<int>(*port));
    }
  }
  return Status::Ok();
}

Status ApiServer::Impl::AllocateServiceAddresses(Json& service, const Json* old,
                                                 ServiceAllocation& txn) {
  if (!service["spec"].is_object()) {
    return Status::Ok();  // validation says why
  }
  // kube-apiserver's beginCreate / beginUpdate: these run before the strategy's validation, and
  // their errors are answered alone.
  if (old != nullptr) {
    PatchAllocatedValues(service, *old);
  }
  NormalizeClusterIps(service, old);
  SW_RETURN_IF_ERROR(InitIpFamilyFields(ServedIpFamilies(), service, old));
  Status status =
      old == nullptr ? AllocateClusterIps(service, txn) : UpdateClusterIps(service, *old, txn);
  if (status.ok()) {
    status = AllocateNodePorts(service, old, txn);
  }
  if (!status.ok()) {
    FinishServiceAllocation(txn, /*success=*/false);
  }
  return status;
}

Status ApiServer::Impl::UpdateClusterIps(Json& service, const Json& old, ServiceAllocation& txn) {
  Json& spec = service["spec"];
  const Json& old_spec = old["spec"];
  if (IsUnchangedPreferDualStack(service, old)) {
    return Status::Ok();
  }
  const bool was_external = StringOr(old_spec, "type", "ClusterIP") == "ExternalName";
  const bool is_external = StringOr(spec, "type", "ClusterIP") == "ExternalName";
  if (was_external && !is_external) {
    return AllocateClusterIps(service, txn);
  }
  const Json* old_ips = ArrayField(old_spec, "clusterIPs");
  if (old_ips != nullptr && !old_ips->empty() && (*old_ips)[0] == "None") {
    return Status::Ok();
  }
  if (is_external && !was_external) {
    if (old_ips != nullptr) {
      for (const Json& ip : *old_ips) {
        if (ip.is_string()) txn.released_ips.push_back(ip.get<std::string>());
      }
    }
    return Status::Ok();
  }
  const Json* old_families = ArrayField(old_spec, "ipFamilies");
  const Json* families = ArrayField(spec, "ipFamilies");
  const std::size_t before = old_families != nullptr ? old_families->size() : 0;
  const std::size_t after = families != nullptr ? families->size() : 0;
  if (before == 1 && after == 2) {
    Json& ips = spec["clusterIPs"];
    if (!ips.is_array()) ips = Json::array();
    while (ips.size() < 2) ips.push_back("");
    std::string ip = ips[1].is_string() ? ips[1].get<std::string>() : "";
    SW_RETURN_IF_ERROR(AllocateServiceIp(service, (*families)[1].get<std::string>(), ip, txn));
    ips[1] = ip;
  } else if (before == 2 && after == 1 && old_ips != nullptr && old_ips->size() > 1 &&
             (*old_ips)[1].is_string()) {
    txn.released_ips.push_back((*old_ips)[1].get<std::string>());
  }
  return Status::Ok();
}

void ApiServer::Impl::FinishServiceAllocation(ServiceAllocation& txn, bool success) {
  for (const std::string& ip : success ? txn.released_ips : txn.allocated_ips) {
    for (IpAllocator& allocator : service_ip_allocators) {
      allocator.Release(ip);
    }
  }
  for (int port : success ? txn.released_ports : txn.allocated_ports) {
    node_ports.Release(port);
  }
  txn = ServiceAllocation();
}

void ApiServer::Impl::ReleaseServiceAddresses(const Json& service) {
  const Json* spec = ObjectField(service, "spec");
  if (spec == nullptr) {
    return;
  }
  if (const Json* ips = ArrayField(*spec, "clusterIPs")) {
    for (const Json& ip : *ips) {
      if (ip.is_string()) {
        for (IpAllocator& allocator : service_ip_allocators) {
          allocator.Release(ip.get<std::string>());
        }
      }
    }
  }
  if (const Json* ports = ArrayField(*spec, "ports")) {
    for (const Json& port : *ports) {
      if (const auto node_port = IntField(port, "nodePort")) {
        node_ports.Release(static_cast<int>(*node_port));
      }
    }
  }
  if (const auto health_check = IntField(*spec, "healthCheckNodePort")) {
    node_ports.Release(static_cast<int>(*health_check));
  }
}

// Common checks of a request body against the endpoint it was sent to.
Status CheckTypeMeta(const ResourceInfo& info, Json& object) {
  if (!object.is_object()) {
    return BadRequestError("the body of the request must be a JSON object");
  }
  const std::string expected_api_version = info.GroupVersion();
  if (const std::string* api_version = StringField(object, "apiVersion");
      api_version != nullptr && !api_version->empty() && *api_version != expected_api_version) {
    return BadRequestError("the API version in the data (" + *api_version +
                           ") does not match the expected API version (" + expected_api_version +
                           ")");
  }
  if (const std::string* kind = StringField(object, "kind");
      kind != nullptr && !kind->empty() && *kind != info.kind) {
    return BadRequestError("the kind in the data (" + *kind +
                           ") does not match the expected kind (" + info.kind + ")");
  }
  object["apiVersion"] = expected_api_version;
  object["kind"] = info.kind;
  if (object.contains("metadata") && !object["metadata"].is_object() &&
      !object["metadata"].is_null()) {
    return BadRequestError("metadata: must be an object");
  }
  if (!object.contains("metadata") || object["metadata"].is_null()) {
    object["metadata"] = Json::object();
  }
  return Status::Ok();
}

// The bytes `served` answers with for a stored object: the stored JSON itself, or for the
// events.k8s.io/v1 view the stored core Event converted into `scratch`.
const std::string& Served(const ResourceInfo& served, const std::string& stored,
                          std::string& scratch) {
  if (!served.builtin && !served.crd_name.empty() &&
      !std::string_view(stored).starts_with("{\"apiVersion\":\"" + served.GroupVersion() + "\"")) {
    // A custom resource written through another version: conversion strategy None changes only
    // apiVersion. (Stored JSON has its keys sorted, so apiVersion normally comes first.)
    Result<Json> parsed = ParseJson(stored, "stored object");
    if (!parsed.ok() || !parsed->is_object() ||
        StringOr(*parsed, "apiVersion") == served.GroupVersion()) {
      return stored;
    }
    (*parsed)["apiVersion"] = served.GroupVersion();
    scratch = DumpJson(*parsed);
    return scratch;
  }
  if (!IsEventsV1(served)) {
    return stored;
  }
  Result<Json> parsed = ParseJson(stored, "stored Event");
  if (!parsed.ok()) {
    return stored;
  }
  scratch = DumpJson(CoreEventToV1(*parsed));
  return scratch;
}

// Errors from the shared Event store name the stored resource (`events "a" not found`);
// kube-apiserver names the one the request addressed (`events.events.k8s.io "a" not found`).
Status AsServed(const ResourceInfo& served, const Status& status) {
  if (status.ok() || !IsEventsV1(served)) {
    return status;
  }
  std::string message(status.message());
  const std::string stored = served.resource + " \"";
  if (const std::size_t at = message.find(stored); at != std::string::npos) {
    message.replace(at, stored.size(), QualifiedResource(served) + " \"");
  }
  Status out(status.code(), std::move(message));
  out.WithObject(status.object()).WithCauses(status.causes());
  return out;
}

// A request body for `served` in the shape its store keeps: an events.k8s.io/v1 Event, after the
// type checks its own endpoint makes, becomes a core Event. Other bodies are left as they are.
Status ToStored(const ResourceInfo& served, Json& object) {
  if (!IsEventsV1(served)) {
    return Status::Ok();
  }
  SW_RETURN_IF_ERROR(CheckTypeMeta(served, object));
  object = V1EventToCore(object);
  return Status::Ok();
}

const ResourceInfo& ApiServer::Impl::StoredAs(const ResourceInfo& info) const {
  if (IsEventsV1(info)) {
    if (ResourcePtr core = registry.Find("", "v1", "events")) {
      return *core;
    }
  }
  return info;
}

Status ApiServer::Impl::MigrateLegacyEventsV1() {
  const ResourceInfo& core = StoredAs(*registry.Find("events.k8s.io", "v1", "events"));
  ListOptions legacy;
  legacy.prefix = std::string(kLegacyEventsV1Prefix);
  SW_ASSIGN_OR_RETURN(ListResult rows, storage->List(legacy));
  for (const StoredObject& row : rows.items) {
    Result<Json> parsed = ParseJson(row.record->json, "stored events.k8s.io Event");
    const Json* old_metadata = parsed.ok() && parsed->is_object() ? Metadata(*parsed) : nullptr;
    if (old_metadata == nullptr || StringOr(*old_metadata, "name").empty()) {
      // Not ours to interpret: leave the row where it is rather than lose it.
      continue;
    }
    Json moved = V1EventToCore(*parsed);
    const Json& metadata = moved["metadata"];
    const std::string key = core.Key(StringOr(metadata, "namespace"), StringOr(metadata, "name"));
    const std::string old_key = std::string(kLegacyEventsV1Prefix) +
                                StringOr(metadata, "namespace") + "/" + StringOr(metadata, "name");
    // A core Event of the same name (written since by a newer server) wins.
    Result<std::int64_t> created = storage->Create(key, Renderer(core, std::move(moved)));
    if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
      return created.status().WithContext("moving " + old_key);
    }
    Json final_state = std::move(parsed).value();
    Result<std::int64_t> removed =
        storage->Delete(old_key, row.mod_revision, Renderer(core, std::move(final_state)));
    if (!removed.ok() && removed.status().code() != StatusCode::kNotFound) {
      return removed.status().WithContext("moving " + old_key);
    }
  }
  return Status::Ok();
}

Status ApiServer::Impl::PrepareForCreate(const ResourceInfo& info, Json& object,
                                         ServiceAllocation& txn) {
  Json& metadata = object["metadata"];
  for (const char* dropped : {"uid", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink",
                              "managedFields", "generation"}) {
    metadata.erase(dropped);
  }
  metadata["uid"] = NewUid();
  metadata["creationTimestamp"] = NowText();
  if (TracksGeneration(info)) {
    metadata["generation"] = 1;
  }
  if (info.has_status && !IsCoreResource(info, "nodes")) {
    // Status is the controllers' to write, through the status subresource.
    object.erase("status");
  }
  ApplyDefaults(info, object);
  if (IsCoreResource(info, "services")) {
    // As kube-apiserver's beginCreate, before validation: its own errors come alone.
    SW_RETURN_IF_ERROR(AllocateServiceAddresses(object, nullptr, txn));
  }
  FieldErrors errors;
  ValidateObjectMeta(info, object, /*is_create=*/true, errors);
  ValidateKind(info, object, nullptr, errors);
  if (info.structural != nullptr) {
    errors.Add(ValidateCustomResource(*info.structural, object, nullptr, false));
  }
  const std::string shown_name = StringOr(metadata, "name", StringOr(metadata, "generateName"));
  if (IsCrdResource(info)) {
    DefaultCrd(object);
    Result<std::vector<ResourceInfo>> resources = ResourcesFromCrd(object);
    if (!resources.ok() && resources.status().causes().empty()) {
      return resources.status();
    }
    if (!resources.ok()) {
      errors.Add(resources.status().causes());  // answered as kube's: the kind named, causes
    } else {
      object["status"] = CrdEstablishedStatus(object, NowTimePoint());
    }
  }
  return errors.ToStatus(QualifiedKind(info), shown_name);
}

Status ApiServer::Impl::PrepareForUpdate(const ResourceInfo& info, const Json& old, Json& updated,
                                         ServiceAllocation& txn, bool status_subresource) {
  const Json& old_metadata = old["metadata"];
  const std::string name = StringOr(old_metadata, "name");
  Json& metadata = updated["metadata"];
  if (const std::string* new_name = StringField(metadata, "name");
      new_name != nullptr && !new_name->empty() && *new_name != name) {
    return BadRequestError("the name of the object (" + *new_name +
                           ") does not match the name on the URL (" + name + ")");
  }
  // As on create (EnsureObjectNamespaceMatchesRequestNamespace): an update or patch that names
  // another namespace is refused, not silently moved back.
  if (const std::string* new_namespace = StringField(metadata, "namespace");
      info.namespaced && new_namespace != nullptr && !new_namespace->empty() &&
      *new_namespace != StringOr(old_metadata, "namespace")) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  ApplyStatusSplit(info, status_subresource, old, updated);
  Json& meta = updated["metadata"];
  // Fields the client cannot change.
  for (const char* kept : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                           "deletionGracePeriodSeconds", "generation", "generateName"}) {
    if (old_metadata.contains(kept)) {
      meta[kept] = old_metadata[kept];
    } else {
      meta.erase(kept);
    }
  }
  meta.erase("managedFields");
  meta.erase("selfLink");
  if (status_subresource) {
    // A status update changes status only (ResetObjectMetaForStatus).
    for (const char* kept : {"labels", "annotations", "finalizers", "ownerReferences"}) {
      if (old_metadata.contains(kept)) {
        meta[kept] = old_metadata[kept];
      } else {
        meta.erase(kept);
      }
    }
  }
  ApplyDefaults(info, updated);
  if (IsCoreResource(info, "services") && !status_subresource) {
    // kube-apiserver's beginUpdate, then the strategy's PrepareForUpdate.
    SW_RETURN_IF_ERROR(AllocateServiceAddresses(updated, &old, txn));
    DropTypeDependentFields(updated, old);
  }
  FieldErrors errors;
  ValidateObjectMeta(info, updated, /*is_create=*/false, errors);
  ValidateKind(info, updated, &old, errors);
  if (info.structural != nullptr) {
    errors.Add(ValidateCustomResource(*info.structural, updated, &old, status_subresource));
  }
  if (IsTerminating(old)) {
    // No new finalizers once deletion has started.
    const Json* old_finalizers = ArrayField(old_metadata, "finalizers");
    if (const Json* finalizers = ArrayField(meta, "finalizers")) {
      for (const Json& finalizer : *finalizers) {
        const bool existed = old_finalizers != nullptr &&
                             std::find(old_finalizers->begin(), old_finalizers->end(), finalizer) !=
                                 old_finalizers->end();
        if (!existed) {
          errors.Forbidden("metadata.finalizers",
                           "no new finalizers can be added if the object is being deleted, found "
                           "new finalizers []string{" +
                               GoValue(finalizer) + "}");
        }
      }
    }
  }
  if (IsCrdResource(info)) {
    DefaultCrd(updated);
    Result<std::vector<ResourceInfo>> resources = ResourcesFromCrd(updated, &old);
    if (!resources.ok() && resources.status().causes().empty()) {
      return resources.status();
    }
    if (!resources.ok()) {
      errors.Add(resources.status().causes());
    }
  }
  SW_RETURN_IF_ERROR(errors.ToStatus(QualifiedKind(info), name));
  if (IsCrdResource(info)) {
    if (!status_subresource) {
      updated["status"] = CrdEstablishedStatus(updated, NowTimePoint());
    }
  }
  if (TracksGeneration(info)) {
    std::int64_t generation = IntField(old_metadata, "generation").value_or(1);
    if (GenerationChanged(info, old, updated)) {
      ++generation;
    }
    meta["generation"] = generation;
  }
  return Status::Ok();
}

Result<StoredObject> ApiServer::Impl::CreateObject(const ResourceInfo& info,
                                                   const std::string& namespace_, Json object,
                                                   bool dry_run) {
  SW_RETURN_IF_ERROR(CheckTypeMeta(info, object));
  Json& metadata = object["metadata"];
  if (info.namespaced) {
    if (const std::string* ns = StringField(metadata, "namespace");
        ns != nullptr && !ns->empty() && *ns != namespace_) {
      return BadRequestError(
          "the namespace of the provided object does not match the namespace sent on the "
          "request");
    }
    metadata["namespace"] = namespace_;
  } else {
    metadata.erase("namespace");
  }
  if (const std::string* rv = StringField(metadata, "resourceVersion"); rv && !rv->empty()) {
    return BadRequestError("resourceVersion should not be set on objects to be created");
  }
  metadata.erase("resourceVersion");
  SW_RETURN_IF_ERROR(CheckNamespace(info, namespace_));
  ServiceAllocation txn;
  ServiceAllocationGuard finish(*this, txn);  // given back unless stored (a dry run too)
  SW_RETURN_IF_ERROR(PrepareForCreate(info, object, txn));
  const bool generated = StringOr(object["metadata"], "name").empty();
  const std::string generate_name = StringOr(object["metadata"], "generateName");
  for (int attempt = 0;; ++attempt) {
    if (generated) {
      object["metadata"]["name"] = generate_name + RandomSuffix();
      if (IsCoreResource(info, "namespaces")) {
        // The namespace strategy's Canonicalize labels the name it ends up with.
        object["metadata"]["labels"]["kubernetes.io/metadata.name"] = object["metadata"]["name"];
      }
    }
    const std::string name = object["metadata"]["name"].get<std::string>();
    const std::string key = info.Key(namespace_, name);
    if (dry_run) {
      if (storage->Get(key).ok()) {
        return AlreadyExists(info, name);
      }
      auto record = std::make_shared<ObjectRecord>();
      record->json = DumpJson(object);
      record->attributes = ComputeAttributes(info, object);
      return StoredObject{std::move(record), 0, 0};
    }
    Result<std::int64_t> revision = storage->Create(key, Renderer(info, object));
    if (revision.ok()) {
      finish.success = true;
      Result<StoredObject> stored = storage->Get(key);
      if (stored.ok() && IsCrdResource(info)) {
        Result<std::vector<ResourceInfo>> resources = ResourcesFromCrd(object, &object);
        if (resources.ok()) {
          registry.SetCustom(name, std::move(resources).value());
        }
      }
      return stored;
    }
    if (revision.status().code() == StatusCode::kAlreadyExists) {
      if (generated && attempt + 1 < kMaxGenerateNameAttempts) {
        continue;
      }
      return AlreadyExists(info, name);
    }
    return revision.status();
  }
}

Result<StoredObject> ApiServer::Impl::UpdateObject(const ResourceInfo& info,
                                                   const std::string& namespace_,
                                                   const std::string& name, bool status_subresource,
                                                   bool dry_run, const Mutation& mutate) {
  const std::string key = info.Key(namespace_, name);
  for (int attempt = 0; attempt < kMaxUpdateAttempts; ++attempt) {
    Result<StoredObject> current = storage->Get(key);
    if (!current.ok()) {
      if (current.status().code() == StatusCode::kNotFound) {
        return NotFound(info, name);
      }
      return current.status();
    }
    SW_ASSIGN_OR_RETURN(Json old, ParseJson(current->record->json, "stored object"));
    SW_ASSIGN_OR_RETURN(Json updated, mutate(old));
    SW_RETURN_IF_ERROR(CheckTypeMeta(info, updated));
    const std::string current_rv = std::to_string(current->mod_revision);
    const std::string client_rv = StringOr(updated["metadata"], "resourceVersion");
    if (!client_rv.empty() && client_rv != current_rv) {
      if (!ParseRevision(client_rv)) {
        return BadRequestError("invalid resourceVersion \"" + client_rv + "\"");
      }
      return ConflictModified(info, name);
    }
    ServiceAllocation txn;
    ServiceAllocationGuard finish(*this, txn);  // given back unless stored (a dry run too)
    SW_RETURN_IF_ERROR(PrepareForUpdate(info, old, updated, txn, status_subresource));
    updated["metadata"]["resourceVersion"] = current_rv;
    if (updated == old) {
      return *current;  // nothing changed: no write, no new resourceVersion
    }
    if (dry_run) {
      auto record = std::make_shared<ObjectRecord>();
      record->json = DumpJson(updated);
      record->attributes = ComputeAttributes(info, updated);
      return StoredObject{std::move(record), current->create_revision, current->mod_revision};
    }
    if (ShouldDeleteDuringUpdate(info, old, updated)) {
      // The last finalizer is gone after a deletion without grace: the deletion completes.
      Result<std::int64_t> removed =
          storage->Delete(key, current->mod_revision, Renderer(info, updated));
      if (!removed.ok() && removed.status().code() == StatusCode::kConflict && client_rv.empty()) {
        continue;
      }
      if (!removed.ok()) {
        return removed.status();
      }
      finish.success = true;
      if (IsCoreResource(info, "services")) {
        ReleaseServiceAddresses(updated);
      }
      auto record = std::make_shared<ObjectRecord>();
      updated["metadata"]["resourceVersion"] = std::to_string(*removed);
      record->json = DumpJson(updated);
      record->attributes = ComputeAttributes(info, updated);
      return StoredObject{std::move(record), current->create_revision, *removed};
    }
    Result<std::int64_t> revision =
        storage->Update(key, current->mod_revision, Renderer(info, updated));
    if (revision.ok()) {
      finish.success = true;
      if (IsCrdResource(info)) {
        Result<std::vector<ResourceInfo>> resources = ResourcesFromCrd(updated, &updated);
        if (resources.ok()) {
          registry.SetCustom(name, std::move(resources).value());
        }
      }
      Result<StoredObject> stored = storage->Get(key);
      if (stored.ok() && stored->mod_revision == *revision) {
        return stored;
      }
      auto record = std::make_shared<ObjectRecord>();
      updated["metadata"]["resourceVersion"] = std::to_string(*revision);
      record->json = DumpJson(updated);
      record->attributes = ComputeAttributes(info, updated);
      return StoredObject{std::move(record), current->create_revision, *revision};
    }
    if (revision.status().code() == StatusCode::kConflict && client_rv.empty()) {
      continue;  // someone else wrote first: apply the change again on the new version
    }
    if (revision.status().code() == StatusCode::kConflict) {
      return ConflictModified(info, name);
    }
    if (revision.status().code() == StatusCode::kNotFound) {
      return NotFound(info, name);
    }
    return revision.status();
  }
  return ConflictModified(info, name);
}

Result<StoredObject> ApiServer::Impl::RemoveNow(const ResourceInfo& info, const std::string& key,
                                                const StoredObject& current,
                                                const Json* final_state) {
  Json object;
  if (final_state != nullptr) {
    object = *final_state;
  } else {
    SW_ASSIGN_OR_RETURN(object, ParseJson(current.record->json, "stored object"));
  }
  Result<std::int64_t> removed = storage->Delete(key, current.mod_revision, Renderer(info, object));
  if (!removed.ok()) {
    return removed.status();
  }
  if (IsCoreResource(info, "services")) {
    ReleaseServiceAddresses(object);
  }
  object["metadata"]["resourceVersion"] = std::to_string(*removed);
  auto record = std::make_shared<ObjectRecord>();
  record->json = DumpJson(object);
  record->attributes = ComputeAttributes(info, object);
  return StoredObject{std::move(record), current.create_revision, *removed};
}

Result<StoredObject> ApiServer::Impl::DeleteObject(const ResourceInfo& info,
                                                   const std::string& namespace_,
                                                   const std::string& name,
                                                   const DeleteOptions& delete_options) {
  const std::string key = info.Key(namespace_, name);
  for (int attempt = 0; attempt < kMaxUpdateAttempts; ++attempt) {
    Result<StoredObject> current = storage->Get(key);
    if (!current.ok()) {
      return current.status().code() == StatusCode::kNotFound ? NotFound(info, name)
                                                              : current.status();
    }
    SW_ASSIGN_OR_RETURN(Json object, ParseJson(current->record->json, "stored object"));
    const Json& metadata = object["metadata"];
    const std::string uid = StringOr(metadata, "uid");
    if (!delete_options.precondition_uid.empty() && delete_options.precondition_uid != uid) {
      return ConflictError("Precondition failed: UID in precondition: " +
                           delete_options.precondition_uid + ", UID in object meta: " + uid);
    }
    if (!delete_options.precondition_resource_version.empty() &&
        delete_options.precondition_resource_version != std::to_string(current->mod_revision)) {
      return ConflictError("Precondition failed: ResourceVersion in precondition: " +
                           delete_options.precondition_resource_version +
                           ", ResourceVersion in meta: " + std::to_string(current->mod_revision));
    }
    if (delete_options.dry_run) {
      return *current;
    }

    Json updated = object;
    bool needs_update = false;
    std::string policy_finalizer;
    const bool namespace_object = IsCoreResource(info, "namespaces");
    if (namespace_object) {
      if (!IsTerminating(updated)) {
        updated["metadata"]["deletionTimestamp"] = NowText();
        updated["metadata"]["deletionGracePeriodSeconds"] = 0;
        updated["status"]["phase"] = "Terminating";
        needs_update = true;
      }
    } else {
      std::string policy = delete_options.propagation_policy;
      if (policy == "Orphan") {
        policy_finalizer = kFinalizerOrphan;
      } else if (policy == "Foreground") {
        policy_finalizer = kFinalizerForeground;
      }
      if (!policy_finalizer.empty() && !IsTerminating(updated) &&
          !SyncedOwnerIndex().Dependents(uid).empty()) {
        AddFinalizer(updated, policy_finalizer);
        needs_update = true;
      } else {
        policy_finalizer.clear();
      }
      if (IsCoreResource(info, "pods")) {
        const Json* spec = ObjectField(object, "spec");
        const std::string phase = StringOr(object.value("status", Json::object()), "phase");
        const bool scheduled = spec != nullptr && !StringOr(*spec, "nodeName").empty();
        std::int64_t grace = delete_options.grace_period_seconds.value_or(
            spec ? IntField(*spec, "terminationGracePeriodSeconds").value_or(30) : 30);
        if (grace < 0) {
          grace = 0;
        }
        if (!scheduled || phase == "Succeeded" || phase == "Failed") {
          grace = 0;
        }
        const auto old_grace = IntField(metadata, "deletionGracePeriodSeconds");
        if (grace > 0 && (!old_grace || grace < *old_grace)) {
          // Rounded up to a whole second: deletionTimestamp is stored at second precision, and
          // truncating it would end the grace period up to a second early.
          constexpr std::int64_t kSecond = 1'000'000'000;
          const std::int64_t end = Now().unix_nanos + grace * kSecond;
          const model::Time deadline{(end + kSecond - 1) / kSecond * kSecond};
          updated["metadata"]["deletionTimestamp"] = model::FormatRfc3339(deadline);
          updated["metadata"]["deletionGracePeriodSeconds"] = grace;
          needs_update = true;
        } else if (grace == 0 && old_grace && *old_grace > 0) {
          // What the node does once the containers stopped: no grace left. With finalizers the
          // pod waits for them (their removal now completes the deletion); without, it goes now,
          // and its last state says so (the answer is then 200, not 202).
          updated["metadata"]["deletionTimestamp"] = NowText();
          updated["metadata"]["deletionGracePeriodSeconds"] = 0;
          needs_update = HasAnyFinalizer(updated);
        }
        if (grace > 0 || (old_grace && *old_grace > 0 && grace != 0)) {
          // Terminating gracefully: stored with its deadline; the grace period's end removes it.
          if (!needs_update) {
            return *current;
          }
          Result<std::int64_t> revision =
              storage->Update(key, current->mod_revision, Renderer(info, updated));
          if (!revision.ok() && revision.status().code() == StatusCode::kConflict) {
            continue;
          }
          if (!revision.ok()) {
            return revision.status();
          }
          SchedulePodDeadline(key, updated);
          return storage->Get(key);
        }
      }
      if (HasAnyFinalizer(updated) && !IsTerminating(updated)) {
        updated["metadata"]["deletionTimestamp"] = NowText();
        updated["metadata"]["deletionGracePeriodSeconds"] = 0;
        needs_update = true;
      }
    }

    if (needs_update) {
      Result<std::int64_t> revision =
          storage->Update(key, current->mod_revision, Renderer(info, updated));
      if (!revision.ok() && revision.status().code() == StatusCode::kConflict) {
        continue;
      }
      if (!revision.ok()) {
        return revision.status();
      }
      // Read back before the background work starts: it may finish the deletion at once (an
      // owner with few dependents, an empty namespace), and the answer is then the object as
      // this request wrote it, not a 404.
      Result<StoredObject> stored = storage->Get(key);
      if (namespace_object) {
        background.Schedule([this, name] { ProcessNamespace(name); });
      } else if (!policy_finalizer.empty()) {
        background.Schedule(
            [this, key, policy_finalizer] { ProcessDeletingOwner(key, policy_finalizer); });
      }
      if (stored.ok() && stored->mod_revision == *revision) {
        return stored;
      }
      auto record = std::make_shared<ObjectRecord>();
      updated["metadata"]["resourceVersion"] = std::to_string(*revision);
      record->json = DumpJson(updated);
      record->attributes = ComputeAttributes(info, updated);
      return StoredObject{std::move(record), current->create_revision, *revision};
    }
    if (HasAnyFinalizer(updated)) {
      return *current;  // already terminating: waits for its finalizers
    }
    if (IsCrdResource(info)) {
      // The CRD's objects go with it.
      Result<std::vector<ResourceInfo>> resources = ResourcesFromCrd(object, &object);
      if (resources.ok()) {
        std::set<std::string> prefixes;
        for (const ResourceInfo& custom : *resources) {
          prefixes.insert(custom.KeyPrefix());
        }
        for (const std::string& prefix : prefixes) {
          ListOptions list_options;
          list_options.prefix = prefix;
          Result<ListResult> items = storage->List(list_options);
          if (!items.ok()) {
            continue;
          }
          ResourcePtr custom_info = registry.Find(
              resources->front().group, resources->front().version, resources->front().resource);
          for (const StoredObject& item : items->items) {
            Result<Json> parsed = ParseJson(item.record->json, "custom resource");
            if (custom_info != nullptr && parsed.ok()) {
              (void)storage->Delete(custom_info->Key(StringOr((*parsed)["metadata"], "namespace"),
                                                     StringOr((*parsed)["metadata"], "name")),
                                    item.mod_revision, Renderer(*custom_info, *parsed));
            }
          }
        }
      }
      registry.RemoveCustom(name);
    }
    Result<StoredObject> removed = RemoveNow(info, key, *current, &updated);
    if (!removed.ok() && removed.status().code() == StatusCode::kConflict) {
      continue;
    }
    return removed;
  }
  return ConflictModified(info, name);
}

// --- background work -------------------------------------------------------------------------

void ApiServer::Impl::ScheduleOwnerGone(const std::string& uid, std::chrono::milliseconds delay) {
  background.Schedule([this, uid] { ProcessOwnerGone(uid); }, delay);
}

void ApiServer::Impl::ProcessOwnerGone(const std::string& uid) {
  if (SyncedOwnerIndex().Exists(uid)) {
    return;
  }
  for (const std::string& key : owner_index->Dependents(uid)) {
    std::string namespace_;
    std::string name;
    ResourcePtr info = ResourceForKey(key, &namespace_, &name);
    if (info == nullptr) {
      continue;
    }
    Result<StoredObject> current = storage->Get(key);
    if (!current.ok()) {
      continue;
    }
    bool any_owner_left = false;
    for (std::string_view owner : current->record->attributes.OwnerUids()) {
      any_owner_left = any_owner_left || owner_index->Exists(owner);
    }
    if (!any_owner_left) {
      DeleteOptions options;
      options.propagation_policy = "Background";
      options.precondition_uid = current->record->attributes.uid();
      (void)DeleteObject(*info, namespace_, name, options);
      continue;
    }
    // Other owners remain: only the dangling reference goes.
    (void)UpdateObject(*info, namespace_, name, false, false,
                       [&uid](const Json& object) -> Result<Json> {
                         Json updated = object;
                         Json* owners = ArrayField(updated["metadata"], "ownerReferences");
                         if (owners != nullptr) {
                           Json kept = Json::array();
                           for (const Json& owner : *owners) {
                             if (StringOr(owner, "uid") != uid) {
                               kept.push_back(owner);
                             }
                           }
                           *owners = std::move(kept);
                         }
                         return updated;
                       });
  }
}

void ApiServer::Impl::ProcessDeletingOwner(const std::string& key,
                                           std::string_view policy_finalizer) {
  std::string namespace_;
  std::string name;
  ResourcePtr info = ResourceForKey(key, &namespace_, &name);
  if (info == nullptr) {
    return;
  }
  Result<StoredObject> current = storage->Get(key);
  if (!current.ok()) {
    return;
  }
  const std::string uid(current->record->attributes.uid());
  const std::vector<std::string> dependents = SyncedOwnerIndex().Dependents(uid);
  if (policy_finalizer == kFinalizerForeground && !dependents.empty()) {
    for (const std::string& dependent_key : dependents) {
      std::string dep_ns;
      std::string dep_name;
      ResourcePtr dep_info = ResourceForKey(dependent_key, &dep_ns, &dep_name);
      if (dep_info != nullptr) {
        DeleteOptions options;
        options.propagation_policy = "Foreground";
        (void)DeleteObject(*dep_info, dep_ns, dep_name, options);
      }
    }
    // Wait for the dependents to go before the owner does.
    const std::string finalizer(policy_finalizer);
    background.Schedule([this, key, finalizer] { ProcessDeletingOwner(key, finalizer); },
                        std::chrono::milliseconds(200));
    return;
  }
  if (policy_finalizer == kFinalizerOrphan) {
    for (const std::string& dependent_key : dependents) {
      std::string dep_ns;
      std::string dep_name;
      ResourcePtr dep_info = ResourceForKey(dependent_key, &dep_ns, &dep_name);
      if (dep_info == nullptr) {
        continue;
      }
      (void)UpdateObject(*dep_info, dep_ns, dep_name, false, false,
                         [&uid](const Json& object) -> Result<Json> {
                           Json updated = object;
                           Json* owners = ArrayField(updated["metadata"], "ownerReferences");
                           if (owners != nullptr) {
                             Json kept = Json::array();
                             for (const Json& owner : *owners) {
                               if (StringOr(owner, "uid") != uid) {
                                 kept.push_back(owner);
                               }
                             }
                             if (kept.empty()) {
                               updated["metadata"].erase("ownerReferences");
                             } else {
                               *owners = std::move(kept);
                             }
                           }
                           return updated;
                         });
    }
  }
  const std::string finalizer(policy_finalizer);
  (void)UpdateObject(*info, namespace_, name, false, false,
                     [&finalizer](const Json& object) -> Result<Json> {
                       Json updated = object;
                       RemoveFinalizer(updated, finalizer);
                       return updated;
                     });
}

void ApiServer::Impl::ProcessNamespace(const std::string& name) {
  ResourcePtr namespaces = registry.Find("", "v1", "namespaces");
  Result<StoredObject> current = storage->Get(namespaces->Key("", name));
  if (!current.ok()) {
    return;
  }
  Result<Json> ns = ParseJson(current->record->json, "namespace");
  if (!ns.ok() || !IsTerminating(*ns)) {
    return;
  }
  bool remaining = false;
  std::set<std::string> seen_prefixes;
  for (const ResourcePtr& info : registry.All()) {
    if (!info->namespaced || !seen_prefixes.insert(info->KeyPrefix()).second) {
      continue;
    }
    ListOptions options;
    options.prefix = info->KeyPrefix() + name + "/";
    Result<ListResult> items = storage->List(options);
    if (!items.ok()) {
      remaining = true;
      continue;
    }
    for (const StoredObject& item : items->items) {
      remaining = true;
      Result<Json> parsed = ParseJson(item.record->json, "object");
      if (!parsed.ok()) {
        continue;
      }
      DeleteOptions delete_options;
      delete_options.grace_period_seconds = 0;
      delete_options.propagation_policy = "Background";
      (void)DeleteObject(*info, name, StringOr((*parsed)["metadata"], "name"), delete_options);
    }
  }
  if (remaining) {
    // Objects with finalizers may take a while; look again.
    background.Schedule([this, name] { ProcessNamespace(name); }, std::chrono::milliseconds(500));
    return;
  }
  Result<StoredObject> finalized =
      UpdateObject(*namespaces, "", name, false, false, [](const Json& object) -> Result<Json> {
        Json updated = object;
        if (Json* spec = ObjectField(updated, "spec")) {
          if (Json* finalizers = ArrayField(*spec, "finalizers")) {
            Json kept = Json::array();
            for (const Json& f : *finalizers) {
              if (!(f.is_string() && f.get<std::string>() == kNamespaceFinalizer)) {
                kept.push_back(f);
              }
            }
            *finalizers = std::move(kept);
          }
        }
        return updated;
      });
  if (!finalized.ok()) {
    background.Schedule([this, name] { ProcessNamespace(name); }, std::chrono::seconds(1));
    return;
  }
  Result<Json> finalized_json = ParseJson(finalized->record->json, "namespace");
  const Json* spec = finalized_json.ok() ? ObjectField(*finalized_json, "spec") : nullptr;
  const Json* spec_finalizers = spec ? ArrayField(*spec, "finalizers") : nullptr;
  if ((spec_finalizers == nullptr || spec_finalizers->empty()) && finalized_json.ok() &&
      !HasAnyFinalizer(*finalized_json)) {
    Result<StoredObject> latest = storage->Get(namespaces->Key("", name));
    if (latest.ok()) {
      (void)RemoveNow(*namespaces, namespaces->Key("", name), *latest);
    }
  }
}

void ApiServer::Impl::SchedulePodDeadline(const std::string& key, const Json& pod) {
  const Json* metadata = Metadata(pod);
  const std::string* deadline_text =
      metadata ? StringField(*metadata, "deletionTimestamp") : nullptr;
  if (deadline_text == nullptr) {
    return;
  }
  const auto deadline = model::ParseRfc3339(*deadline_text);
  const std::int64_t now = Now().unix_nanos;
  std::int64_t wait_nanos = deadline ? deadline->unix_nanos - now : 0;
  if (wait_nanos < 0) {
    wait_nanos = 0;
  }
  const std::string uid = StringOr(*metadata, "uid");
  background.Schedule([this, key, uid] { ProcessPodDeadline(key, uid); },
                      std::chrono::nanoseconds(wait_nanos));
}

void ApiServer::Impl::ProcessPodDeadline(const std::string& key, const std::string& uid) {
  std::string namespace_;
  std::string name;
  ResourcePtr info = ResourceForKey(key, &namespace_, &name);
  if (info == nullptr) {
    return;
  }
  Result<StoredObject> current = storage->Get(key);
  if (!current.ok() || current->record->attributes.uid() != uid) {
    return;
  }
  Result<Json> pod = ParseJson(current->record->json, "pod");
  if (!pod.ok() || !IsTerminating(*pod)) {
    return;
  }
  const auto deadline = model::ParseRfc3339(StringOr((*pod)["metadata"], "deletionTimestamp"));
  if (deadline && deadline->unix_nanos > Now().unix_nanos) {
    SchedulePodDeadline(key, *pod);  // the deadline moved later: wait for it
    return;
  }
  // What the kubelet does once the containers stopped: delete with no grace left. A pod with
  // finalizers keeps waiting for them, now with deletionGracePeriodSeconds 0, so that removing
  // the last one completes the deletion (ShouldDeleteDuringUpdate).
  DeleteOptions options;
  options.grace_period_seconds = 0;
  options.precondition_uid = uid;
  (void)DeleteObject(*info, namespace_, name, options);
}

void ApiServer::Impl::ScheduleStartupWork() {
  for (const std::string& uid : owner_index->DanglingOwners()) {
    ScheduleOwnerGone(uid, std::chrono::milliseconds(0));
  }
  // The scan reads every stored object, so it runs on the background thread and the server
  // serves meanwhile, as kube-apiserver does while its controllers catch up.
  background.Schedule([this] { ResumeUnfinishedDeletions(); });
}

void ApiServer::Impl::ResumeUnfinishedDeletions() {
  std::set<std::string> seen_prefixes;
  for (const ResourcePtr& info : registry.All()) {
    if (!seen_prefixes.insert(info->KeyPrefix()).second) {
      continue;
    }
    ListOptions options;
    options.prefix = info->KeyPrefix();
    Result<ListResult> items = storage->List(options);
    if (!items.ok()) {
      continue;
    }
    for (const StoredObject& item : items->items) {
      // memmem, not std::string::find: find stops at every '"' of the JSON (memchr on the first
      // byte), and this scan reads every stored object at start-up.
      constexpr std::string_view kMarker = "\"deletionTimestamp\"";
      const std::string& json = item.record->json;
      if (::memmem(json.data(), json.size(), kMarker.data(), kMarker.size()) == nullptr) {
        continue;
      }
      Result<Json> parsed = ParseJson(item.record->json, "object");
      if (!parsed.ok() || !IsTerminating(*parsed)) {
        continue;
      }
      const std::string name = StringOr((*parsed)["metadata"], "name");
      const std::string key = info->Key(StringOr((*parsed)["metadata"], "namespace"), name);
      if (IsCoreResource(*info, "namespaces")) {
        background.Schedule([this, name] { ProcessNamespace(name); });
      } else if (IsCoreResource(*info, "pods")) {
        SchedulePodDeadline(key, *parsed);
      }
      for (std::string_view finalizer : {kFinalizerForeground, kFinalizerOrphan}) {
        if (HasFinalizer(*parsed, finalizer)) {
          const std::string f(finalizer);
          background.Schedule([this, key, f] { ProcessDeletingOwner(key, f); });
        }
      }
    }
  }
}

}  // namespace slicewright::apiserver

namespace slicewright::apiserver {
namespace {

bool WantsTable(const HttpRequest& request) { return AcceptsTable(request.Header("accept")); }

Result<bool> DryRun(const HttpRequest& request) {
  bool dry_run = false;
  for (const auto& [name, value] : request.query) {
    if (name != "dryRun") {
      continue;
    }
    if (value != "All") {
      return BadRequestError("Invalid dry run value \"" + value + "\": only \"All\" is supported");
    }
    dry_run = true;
  }
  return dry_run;
}

// metav1's fieldValidation option of a write: what to do with unknown fields.
enum class FieldValidation { kIgnore, kWarn, kStrict };

// The request's fieldValidation ("" is kube's default, Warn). kInvalid as kube names the options
// kind ("CreateOptions", "UpdateOptions", "PatchOptions") for any other value.
Result<FieldValidation> FieldValidationOf(const HttpRequest& request,
                                          std::string_view options_kind) {
  const std::string_view value = request.Query("fieldValidation");
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  const std::string body = "Unsupported value: \"" + std::string(value) +
                           "\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"";
  Status status = InvalidError(std::string(options_kind) +
                               ".meta.k8s.io \"\" is invalid: " + "fieldValidation: " + body);
  status.WithCauses({StatusCause{"FieldValueNotSupported", body, "fieldValidation"}});
  return status;
}

// A custom resource body as kube-apiserver's decoder leaves it: unknown fields pruned and
// defaults applied by the version's schema. Returns the pruned fields' paths (for
// fieldValidation); nothing for built-in kinds and non-object bodies.
std::vector<std::string> DecodeCustomResource(const ResourceInfo& info, Json& object) {
  if (info.structural == nullptr || !object.is_object()) {
    return {};
  }
  std::vector<std::string> unknown = info.structural->Prune(object);
  info.structural->ApplyDefaults(object);
  return unknown;
}

// runtime.StrictDecodingError's text for the pruned fields.
std::string StrictDecodingError(const std::vector<std::string>& unknown) {
  std::string message = "strict decoding error: ";
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    message += (i > 0 ? ", " : "") + std::string("unknown field \"") + unknown[i] + "\"";
  }
  return message;
}

// fieldValidation=Strict on create and update: 400 as the decoder's error reads
// (`ServiceImport in version "v1beta1" cannot be handled as a ServiceImport: strict decoding
// error: unknown field "spec.foo"`).
Status StrictBodyError(const ResourceInfo& info, const std::vector<std::string>& unknown) {
  return BadRequestError(info.kind + " in version \"" + info.version +
                         "\" cannot be handled as a " + info.kind + ": " +
                         StrictDecodingError(unknown));
}

// fieldValidation=Warn: one `Warning: 299 - "unknown field \"spec.foo\""` header per field, which
// kubectl prints as `Warning: unknown field "spec.foo"`.
void AddUnknownFieldWarnings(HttpResponse& response, const std::vector<std::string>& unknown) {
  for (const std::string& field : unknown) {
    std::string text = "unknown field \"" + field + "\"";
    std::string quoted = "\"";
    for (char c : text) {
      if (c == '"' || c == '\\') {
        quoted += '\\';
      }
      quoted += c;
    }
    response.headers.emplace_back("Warning", "299 - " + quoted + "\"");
  }
}

std::string ListPrefix(const ResourceInfo& info, const std::string& namespace_) {
  return namespace_.empty() ? info.KeyPrefix() : info.KeyPrefix() + namespace_ + "/";
}

// The storage key of a stored object, from its attributes (name first, then namespace).
std::string KeyOf(const ResourceInfo& info, const ObjectAttributes& attributes) {
  return info.Key(attributes.Field("metadata.namespace").value_or(""),
                  attributes.Field("metadata.name").value_or(""));
}

std::string EncodeContinue(std::int64_t revision, const std::string& key) {
  Json token = {{"v", "meta.k8s.io/v1"}, {"rv", revision}, {"start", key}};
  return Base64Encode(DumpJson(token));
}

constexpr std::string_view kContinueTooOld =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.";

}  // namespace

Result<ObjectFilter> ApiServer::Impl::FilterFromRequest(const HttpRequest& request,
                                                        const ResourceInfo& info) {
  ObjectFilter filter;
  if (request.HasQuery("labelSelector")) {
    Result<labels::Selector> selector = labels::Selector::Parse(request.Query("labelSelector"));
    if (!selector.ok()) {
      return BadRequestError(std::string(selector.status().message()));
    }
    filter.label_selector = std::move(selector).value();
  }
  if (request.HasQuery("fieldSelector")) {
    SW_ASSIGN_OR_RETURN(filter.fields,
                        ParseFieldSelector(request.Query("fieldSelector"), info.selectable_fields));
    if (IsEventsV1(info)) {
      // The shared store's attributes carry the core Event's field names.
      for (FieldRequirement& requirement : filter.fields) {
        requirement.field = V1EventFieldToCore(requirement.field);
      }
    }
  }
  return filter;
}

HttpResponse ApiServer::Impl::ObjectResponse(const HttpRequest& request, const ResourceInfo& info,
                                             int status, const std::string& json) {
  if (WantsTable(request)) {
    Result<Json> parsed = ParseJson(json, "object");
    Result<IncludeObject> include = ParseIncludeObject(request.Query("includeObject"));
    if (parsed.ok() && include.ok()) {
      std::vector<const Json*> objects = {&*parsed};
      const std::string rv = StringOr((*parsed)["metadata"], "resourceVersion");
      HttpResponse response =
          JsonResponse(status, DumpJson(ToTable(info, objects, rv, "", *include, NowTimePoint())));
      response.content_type = std::string(TableContentType());
      return response;
    }
  }
  return JsonResponse(status, json);
}

HttpResponse ApiServer::Impl::Handle(HttpRequest& request) {
  const std::string& path = request.path;
  if (path == "/healthz" || path == "/livez" || path == "/readyz" ||
      path.starts_with("/healthz/") || path.starts_with("/livez/") ||
      path.starts_with("/readyz/")) {
    return TextResponse(200, "ok");
  }
  if (path == "/version" || path == "/version/") {
    return JsonResponse(200, DumpJson(VersionDocument()));
  }
  if (path == "/openapi/v3" || path == "/openapi/v3/") {
    HttpResponse response = JsonResponse(200, DumpJson(OpenApiV3Index(registry)));
    response.headers.emplace_back("Cache-Control", "no-cache, private");
    return response;
  }
  if (path.starts_with("/openapi/v3/")) {
    Result<Json> document = OpenApiV3Document(registry, path.substr(12));
    if (!document.ok()) {
      return StatusResponse(NotFoundError("the server could not find the requested resource"));
    }
    const std::string hash = OpenApiV3Hash(*document);
    if (request.HasQuery("hash") && request.Query("hash") != hash) {
      HttpResponse moved = JsonResponse(301, "");
      moved.headers.emplace_back("Location", path + "?hash=" + hash);
      return moved;
    }
    HttpResponse response = JsonResponse(200, DumpJson(*document));
    response.headers.emplace_back(
        "Cache-Control", request.HasQuery("hash") ? "public, immutable" : "no-cache, private");
    response.headers.emplace_back("Etag", "\"" + hash + "\"");
    return response;
  }
  if (path == "/openapi/v2" || path == "/openapi/v2/") {
    // kubectl validates a v1 List on the client against OpenAPI v2, which it reads only as gnostic
    // protobuf. An empty document (swagger "2.0", no paths, no definitions) tells it no type has
    // a schema, which its validator takes as "assume valid"; every other object is validated by
    // this server (fieldValidation, advertised in OpenAPI v3).
    static constexpr char kEmptySwagger[] = {0x0a, 0x03, '2', '.', '0', 0x42, 0x00};
    HttpResponse response = JsonResponse(200, std::string(kEmptySwagger, sizeof(kEmptySwagger)));
    response.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    return response;
  }
  const RequestInfo info = ParseRequestInfo(request.method, path, request.Query("watch"));
  if (!info.is_resource_request) {
    if (info.discovery_depth >= 0 && (request.method == "GET" || request.method == "HEAD")) {
      return HandleDiscovery(request, info);
    }
    if (info.discovery_depth >= 0) {
      // Discovery documents exist but are read-only.
      return StatusResponse(
          Status(StatusCode::kMethodNotAllowed,
                 "the server does not allow this method on the requested resource"));
    }
    return StatusResponse(NotFoundError("the server could not find the requested resource"));
  }
  return HandleResource(request, info);
}

HttpResponse ApiServer::Impl::HandleDiscovery(HttpRequest& request, const RequestInfo& info) {
  const std::string_view accept = request.Header("accept");
  const Status not_found = NotFoundError("the server could not find the requested resource");
  if (info.discovery_depth == 0) {
    const DiscoveryFormat format = NegotiateDiscovery(accept);
    const bool core = info.api_prefix == "api";
    HttpResponse response;
    if (format == DiscoveryFormat::kLegacy) {
      response = JsonResponse(200, DumpJson(core ? CoreApiVersions() : ApiGroupList(registry)));
    } else {
      response = JsonResponse(200, DumpJson(AggregatedDiscovery(registry, core, format)));
      response.content_type = std::string(DiscoveryContentType(format));
    }
    return response;
  }
  if (info.api_prefix == "apis" && info.discovery_depth == 1) {
    Result<Json> group = ApiGroupDocument(registry, info.group);
    return group.ok() ? JsonResponse(200, DumpJson(*group)) : StatusResponse(not_found);
  }
  Result<Json> resources = ApiResourceList(registry, info.group, info.version);
  return resources.ok() ? JsonResponse(200, DumpJson(*resources)) : StatusResponse(not_found);
}

HttpResponse ApiServer::Impl::HandleResource(HttpRequest& request, const RequestInfo& ri) {
  ResourcePtr info = registry.Find(ri.group, ri.version, ri.resource);
  const Status not_found = NotFoundError("the server could not find the requested resource");
  if (info == nullptr || (!info->namespaced && !ri.namespace_.empty())) {
    return StatusResponse(not_found);
  }
  if (ri.subresource == "scale" && info->has_scale && !ri.name.empty() &&
      (ri.verb == "get" || ri.verb == "update" || ri.verb == "patch")) {
    return HandleScale(request, *info, ri);
  }
  const bool namespace_finalize =
      IsCoreResource(*info, "namespaces") && ri.subresource == "finalize";
  if (!ri.subresource.empty() && !(ri.subresource == "status" && info->has_status) &&
      !namespace_finalize) {
    return StatusResponse(not_found);
  }
  const bool needs_namespace =
      info->namespaced && (ri.verb == "get" || ri.verb == "create" || ri.verb == "update" ||
                           ri.verb == "patch" || ri.verb == "delete");
  // kube-apiserver serves POST only on collections and PUT/PATCH only on objects: POST to
  // .../configmaps/NAME or PUT to .../configmaps is 405, not a create or a 404.
  const bool wrong_target = (ri.verb == "create" && !ri.name.empty()) ||
                            ((ri.verb == "update" || ri.verb == "patch") && ri.name.empty());
  if ((needs_namespace && ri.namespace_.empty()) || wrong_target) {
    return StatusResponse(
        Status(StatusCode::kMethodNotAllowed,
               "the server does not allow this method on the requested resource"));
  }
  if (!ri.subresource.empty() && ri.verb != "get" && ri.verb != "update" && ri.verb != "patch") {
    return StatusResponse(
        Status(StatusCode::kMethodNotAllowed,
               "the server does not allow this method on the requested resource"));
  }
  if (ri.verb == "get") {
    return HandleGet(request, *info, ri);
  }
  if (ri.verb == "list") {
    return HandleList(request, *info, ri);
  }
  if (ri.verb == "watch") {
    return HandleWatch(request, *info, ri);
  }
  if (ri.verb == "create") {
    return HandleCreate(request, *info, ri);
  }
  if (ri.verb == "update") {
    return HandleUpdate(request, *info, ri);
  }
  if (ri.verb == "patch") {
    return HandlePatch(request, *info, ri);
  }
  if (ri.verb == "delete") {
    return HandleDelete(request, *info, ri);
  }
  if (ri.verb == "deletecollection") {
    return HandleDeleteCollection(request, *info, ri);
  }
  return StatusResponse(Status(StatusCode::kMethodNotAllowed,
                               "the server does not allow this method on the requested resource"));
}

namespace {

// The autoscaling/v1 Scale of a workload object, as kube's scale REST storage builds it.
Json ScaleOf(const Json& object) {
  const Json& metadata = object["metadata"];
  Json scale_meta = Json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (metadata.contains(key)) {
      scale_meta[key] = metadata[key];
    }
  }
  const Json* spec = ObjectField(object, "spec");
  const Json* status = ObjectField(object, "status");
  const Json* selector = spec == nullptr ? nullptr : ObjectField(*spec, "selector");
  return Json{{"kind", "Scale"},
              {"apiVersion", "autoscaling/v1"},
              {"metadata", std::move(scale_meta)},
              {"spec", {{"replicas", spec ? IntField(*spec, "replicas").value_or(1) : 1}}},
              {"status",
               {{"replicas", status ? IntField(*status, "replicas").value_or(0) : 0},
                {"selector", selector ? LabelSelectorText(*selector) : ""}}}};
}

}  // namespace

HttpResponse ApiServer::Impl::HandleScale(HttpRequest& request, const ResourceInfo& info,
                                          const RequestInfo& ri) {
  const StatusDetails details{ri.name, info.group, info.resource, info.kind};
  if (ri.verb == "get") {
    Result<StoredObject> stored = storage->Get(info.Key(ri.namespace_, ri.name));
    if (!stored.ok()) {
      return StatusResponse(stored.status().code() == StatusCode::kNotFound
                                ? NotFound(info, ri.name)
                                : stored.status(),
                            details);
    }
    Result<Json> object = ParseJson(stored->record->json, "stored object");
    if (!object.ok()) {
      return StatusResponse(object.status(), details);
    }
    return JsonResponse(200, DumpJson(ScaleOf(*object)));
  }
  Result<bool> dry_run = DryRun(request);
  if (!dry_run.ok()) {
    return StatusResponse(dry_run.status());
  }
  std::optional<PatchType> patch_type;
  Json put_body;
  if (ri.verb == "patch") {
    Result<PatchType> type = PatchTypeFromContentType(request.Header("content-type"));
    if (!type.ok() || *type == PatchType::kApplyPatch) {
      return StatusResponse(Status(StatusCode::kUnsupportedMediaType,
                                   "the body of the request was in an unknown format - accepted "
                                   "media types include: application/json-patch+json, "
                                   "application/merge-patch+json, "
                                   "application/strategic-merge-patch+json"));
    }
    patch_type = *type;
  } else {
    Result<Json> body = ParseJson(request.body, "request body");
    if (!body.ok()) {
      return StatusResponse(body.status());
    }
    put_body = std::move(body).value();
  }
  Result<StoredObject> updated = UpdateObject(
      info, ri.namespace_, ri.name, /*status_subresource=*/false, *dry_run,
      [&](const Json& current) -> Result<Json> {
        Json scale = ScaleOf(current);
        if (patch_type) {
          SW_ASSIGN_OR_RETURN(
              scale, ApplyPatch(scale, request.body, *patch_type, "autoscaling/v1", "Scale"));
        } else {
          scale = put_body;
        }
        const Json* spec = scale.is_object() ? ObjectField(scale, "spec") : nullptr;
        const std::optional<std::int64_t> replicas =
            spec == nullptr ? std::nullopt : IntField(*spec, "replicas");
        if (!replicas || *replicas < 0) {
          FieldErrors errors;
          errors.Invalid(
              "spec.replicas",
              spec != nullptr && spec->contains("replicas") ? (*spec)["replicas"] : Json(nullptr),
              "must be greater than or equal to 0");
          return errors.ToStatus("Scale.autoscaling", ri.name);
        }
        Json result = current;
        result["spec"]["replicas"] = *replicas;
        // A resourceVersion in the Scale guards the write as it would the object's.
        const Json* metadata = Metadata(scale);
        const std::string rv = metadata ? StringOr(*metadata, "resourceVersion") : "";
        if (rv.empty() || rv == StringOr(current["metadata"], "resourceVersion")) {
          result["metadata"].erase("resourceVersion");
        } else {
          result["metadata"]["resourceVersion"] = rv;
        }
        return result;
      });
  if (!updated.ok()) {
    return StatusResponse(AsServed(info, updated.status()), details);
  }
  Result<Json> object = ParseJson(updated->record->json, "stored object");
  if (!object.ok()) {
    return StatusResponse(object.status(), details);
  }
  return JsonResponse(200, DumpJson(ScaleOf(*object)));
}

HttpResponse ApiServer::Impl::HandleGet(HttpRequest& request, const ResourceInfo& info,
                                        const RequestInfo& ri) {
  const StatusDetails details{ri.name, info.group, info.resource, info.kind};
  Result<StoredObject> stored = storage->Get(info.Key(ri.namespace_, ri.name));
  if (!stored.ok()) {
    return StatusResponse(
        stored.status().code() == StatusCode::kNotFound ? NotFound(info, ri.name) : stored.status(),
        details);
  }
  std::string scratch;
  return ObjectResponse(request, info, 200, Served(info, stored->record->json, scratch));
}

HttpResponse ApiServer::Impl::HandleList(HttpRequest& request, const ResourceInfo& info,
                                         const RequestInfo& ri) {
  Result<ObjectFilter> filter = FilterFromRequest(request, info);
  if (!filter.ok()) {
    return StatusResponse(filter.status());
  }
  std::int64_t limit = 0;
  if (request.HasQuery("limit")) {
    const auto parsed = ParseRevision(request.Query("limit"));
    if (!parsed) {
      return StatusResponse(
          BadRequestError("invalid limit \"" + std::string(request.Query("limit")) + "\""));
    }
    limit = *parsed;
  }
  const std::string prefix = ListPrefix(info, ri.namespace_);
  const std::string_view rv_text = request.Query("resourceVersion");
  const std::string_view rv_match = request.Query("resourceVersionMatch");
  std::int64_t snapshot = 0;
  std::string start_after;
  const bool continuing = !request.Query("continue").empty();
  if (continuing) {
    if (!rv_text.empty() && rv_text != "0") {
      return StatusResponse(
          BadRequestError("specifying resource version is not allowed when using continue"));
    }
    const auto decoded = Base64Decode(request.Query("continue"));
    Result<Json> token =
        decoded ? ParseJson(*decoded, "continue") : Result<Json>(BadRequestError(""));
    if (!token.ok() || !token->is_object() || !IntField(*token, "rv") ||
        !StringOr(*token, "start").starts_with(prefix)) {
      return StatusResponse(BadRequestError("continue key is not valid"));
    }
    snapshot = *IntField(*token, "rv");
    start_after = StringOr(*token, "start");
  } else if (!rv_match.empty() && rv_match != "Exact" && rv_match != "NotOlderThan") {
    return StatusResponse(InvalidError("resourceVersionMatch: Unsupported value: \"" +
                                       std::string(rv_match) +
                                       "\": supported values: \"Exact\", \"NotOlderThan\""));
  } else if (!rv_text.empty()) {
    const auto revision = ParseRevision(rv_text);
    if (!revision) {
      return StatusResponse(
          BadRequestError("invalid resourceVersion \"" + std::string(rv_text) + "\""));
    }
    if (rv_match == "Exact") {
      snapshot = *revision;
    } else if (*revision > storage->CurrentRevision()) {
      return StatusResponse(Status(StatusCode::kTimeout,
                                   "Too large resource version: " + std::string(rv_text) +
                                       ", current: " + std::to_string(storage->CurrentRevision())));
    }
  }

  std::vector<StoredObject> items;
  std::string continue_token;
  for (;;) {
    ListOptions options;
    options.prefix = prefix;
    options.start_after = start_after;
    options.revision = snapshot;
    if (limit > 0) {
      options.limit = std::max<std::int64_t>(limit - static_cast<std::int64_t>(items.size()), 0);
      if (!filter->Empty()) {
        options.limit = std::max<std::int64_t>(options.limit, 500);
      }
    }
    Result<ListResult> page = storage->List(options);
    if (!page.ok()) {
      if (page.status().code() == StatusCode::kExpired && continuing) {
        return StatusResponse(Status(StatusCode::kExpired, std::string(kContinueTooOld)));
      }
      return StatusResponse(page.status());
    }
    snapshot = page->revision;
    bool stopped_early = false;
    for (std::size_t i = 0; i < page->items.size(); ++i) {
      const StoredObject& item = page->items[i];
      start_after = KeyOf(info, item.record->attributes);
      if (!filter->Matches(item.record->attributes)) {
        continue;
      }
      items.push_back(item);
      if (limit > 0 && static_cast<std::int64_t>(items.size()) == limit) {
        stopped_early = i + 1 < page->items.size() || page->more;
        break;
      }
    }
    if (limit > 0 && static_cast<std::int64_t>(items.size()) == limit) {
      if (stopped_early) {
        continue_token = EncodeContinue(snapshot, start_after);
      }
      break;
    }
    if (!page->more) {
      break;
    }
  }

  const std::string rv = std::to_string(snapshot);
  if (WantsTable(request)) {
    Result<IncludeObject> include = ParseIncludeObject(request.Query("includeObject"));
    if (!include.ok()) {
      return StatusResponse(include.status());
    }
    std::vector<Json> parsed;
    parsed.reserve(items.size());
    for (const StoredObject& item : items) {
      Result<Json> object = ParseJson(item.record->json, "object");
      if (object.ok()) {
        parsed.push_back(IsEventsV1(info) ? CoreEventToV1(*object) : std::move(object).value());
      }
    }
    std::vector<const Json*> pointers;
    for (const Json& object : parsed) {
      pointers.push_back(&object);
    }
    HttpResponse response = JsonResponse(
        200, DumpJson(ToTable(info, pointers, rv, continue_token, *include, NowTimePoint())));
    response.content_type = std::string(TableContentType());
    return response;
  }
  std::size_t size = 128;
  for (const StoredObject& item : items) {
    size += item.record->json.size() + 1;
  }
  std::string scratch;
  std::string body;
  body.reserve(size);
  body += R"({"kind":")" + info.list_kind + R"(","apiVersion":")" + info.GroupVersion() +
          R"(","metadata":{"resourceVersion":")" + rv + "\"";
  if (!continue_token.empty()) {
    body += R"(,"continue":")" + continue_token + "\"";
  }
  body += R"(},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      body += ',';
    }
    body += Served(info, items[i].record->json, scratch);
  }
  body += "]}";
  return JsonResponse(200, std::move(body));
}

HttpResponse ApiServer::Impl::HandleWatch(HttpRequest& request, const ResourceInfo& info,
                                          const RequestInfo& ri) {
  Result<ObjectFilter> filter = FilterFromRequest(request, info);
  if (!filter.ok()) {
    return StatusResponse(filter.status());
  }
  WatchStream::Options options;
  options.filter = std::move(filter).value();
  options.storage.prefix = ListPrefix(info, ri.namespace_);
  if (!ri.name.empty()) {
    // The deprecated /watch/.../NAME form: a watch of one object.
    options.filter.fields.push_back({"metadata.name", ri.name, true});
  }
  const std::string_view rv_text = request.Query("resourceVersion");
  options.allow_bookmarks = QueryParameterTrue(request.Query("allowWatchBookmarks"));
  options.send_initial_events = QueryParameterTrue(request.Query("sendInitialEvents"));
  if (options.send_initial_events && request.Query("resourceVersionMatch") != "NotOlderThan") {
    return StatusResponse(
        InvalidError("resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
                     "resourceVersionMatch to NotOlderThan"));
  }
  if (rv_text.empty() || rv_text == "0" || options.send_initial_events) {
    options.storage.initial_state = true;
  } else {
    const auto revision = ParseRevision(rv_text);
    if (!revision) {
      return StatusResponse(
          BadRequestError("invalid resourceVersion \"" + std::string(rv_text) + "\""));
    }
    if (*revision > storage->CurrentRevision()) {
      // A revision this store never reached (another data dir's): waiting for it would silently
      // skip every event up to it. kube-apiserver answers 504 and client-go relists.
      return StatusResponse(Status(StatusCode::kTimeout,
                                   "Too large resource version: " + std::string(rv_text) +
                                       ", current: " + std::to_string(storage->CurrentRevision())));
    }
    options.storage.after_revision = *revision;
  }
  std::int64_t timeout_seconds = 0;
  if (request.HasQuery("timeoutSeconds")) {
    const auto parsed = ParseRevision(request.Query("timeoutSeconds"));
    if (!parsed) {
      return StatusResponse(BadRequestError("invalid timeoutSeconds"));
    }
    timeout_seconds = *parsed;
  }
  if (timeout_seconds <= 0) {
    // kube-apiserver's default: --min-request-timeout (1800 s) times a random factor in [1, 2).
    MutexLock lock(rng_mu);
    timeout_seconds = 1800 + static_cast<std::int64_t>(rng() % 1800);
  }
  options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  options.api_version = info.GroupVersion();
  options.kind = info.kind;
  const bool events_v1 = IsEventsV1(info);
  if (events_v1) {
    // Events written through either API reach this watch from the shared core store.
    options.encoder = [](const std::string& json) {
      Result<Json> parsed = ParseJson(json, "stored Event");
      return parsed.ok() ? DumpJson(CoreEventToV1(*parsed)) : json;
    };
  }
  const std::vector<ResourcePtr> all = registry.All();
  ResourcePtr custom =
      info.builtin ? nullptr : registry.Find(info.group, info.version, info.resource);
  if (custom != nullptr && !info.crd_name.empty() &&
      std::count_if(all.begin(), all.end(),
                    [&](const ResourcePtr& r) { return r->crd_name == info.crd_name; }) > 1) {
    // A custom resource served in several versions: objects written through another one are
    // shown in this one (conversion strategy None). Only then does a watch lose shared lines.
    options.encoder = [held = std::move(custom)](const std::string& json) {
      std::string scratch;
      const std::string& shown = Served(*held, json, scratch);
      return &shown == &scratch ? scratch : json;
    };
  }
  if (WantsTable(request)) {
    Result<IncludeObject> include = ParseIncludeObject(request.Query("includeObject"));
    if (!include.ok()) {
      return StatusResponse(include.status());
    }
    ResourcePtr held = registry.Find(info.group, info.version, info.resource);
    options.encoder = [this, held, include = *include, events_v1](const std::string& json) {
      Result<Json> parsed = ParseJson(json, "object");
      if (!parsed.ok()) {
        return json;
      }
      if (events_v1) {
        *parsed = CoreEventToV1(*parsed);
      }
      std::vector<const Json*> objects = {&*parsed};
      const std::string rv = StringOr((*parsed)["metadata"], "resourceVersion");
      return DumpJson(ToTable(*held, objects, rv, "", include, NowTimePoint()));
    };
  }
  HttpResponse response;
  response.content_type = "application/json";
  response.stream = std::make_shared<WatchStream>(*storage, hub, std::move(options));
  return response;
}

namespace {

// The Go type a write's body decodes into: the scale subresource takes an autoscaling/v1 Scale,
// every other write the resource's own kind.
std::string BodyGroupVersion(const ResourceInfo& info, const RequestInfo& ri) {
  return ri.subresource == "scale" ? "autoscaling/v1" : info.GroupVersion();
}
std::string BodyKind(const ResourceInfo& info, const RequestInfo& ri) {
  return ri.subresource == "scale" ? "Scale" : info.kind;
}

}  // namespace

HttpResponse ApiServer::Impl::HandleCreate(HttpRequest& request, const ResourceInfo& info,
                                           const RequestInfo& ri) {
  Result<bool> dry_run = DryRun(request);
  if (!dry_run.ok()) {
    return StatusResponse(dry_run.status());
  }
  // kubectl create sends built-in kinds as protobuf (apiserver/api/protobuf.h).
  Result<Json> object = IsKubernetesProtobuf(request.Header("content-type"))
                            ? DecodeKubernetesProtobuf(request.body)
                            : ParseJson(request.body, "request body");
  if (!object.ok()) {
    return StatusResponse(object.status());
  }
  std::vector<std::string> unknown;  // of a built-in kind: pruned as Go's decoder drops them
  if (Status decoded =
          DecodeStrictJson(BodyGroupVersion(info, ri), BodyKind(info, ri), *object, &unknown);
      !decoded.ok()) {
    return StatusResponse(decoded);
  }
  Result<FieldValidation> field_validation = FieldValidationOf(request, "CreateOptions");
  if (!field_validation.ok()) {
    return StatusResponse(field_validation.status());
  }
  for (std::string& field : DecodeCustomResource(info, *object)) {
    unknown.push_back(std::move(field));
  }
  if (!unknown.empty() && *field_validation == FieldValidation::kStrict) {
    return StatusResponse(StrictBodyError(info, unknown));
  }
  HttpResponse response = CreateDecoded(request, info, ri, *dry_run, std::move(object).value());
  if (*field_validation == FieldValidation::kWarn) {
    AddUnknownFieldWarnings(response, unknown);
  }
  return response;
}

HttpResponse ApiServer::Impl::CreateDecoded(HttpRequest& request, const ResourceInfo& info,
                                            const RequestInfo& ri, bool dry_run, Json object) {
  // The Status names the object as kube-apiserver's does; kubectl prints that name for an
  // Invalid answer ("The deployments \"web\" is invalid").
  const Json* metadata = Metadata(object);
  std::string name = metadata == nullptr ? std::string() : StringOr(*metadata, "name");
  if (Status converted = ToStored(info, object); !converted.ok()) {
    return StatusResponse(converted, {std::move(name), info.group, info.resource, info.kind});
  }
  Result<StoredObject> created =
      CreateObject(StoredAs(info), ri.namespace_, std::move(object), dry_run);
  if (!created.ok()) {
    return StatusResponse(AsServed(info, created.status()),
                          {std::move(name), info.group, info.resource, info.kind});
  }
  std::string scratch;
  return ObjectResponse(request, info, 201, Served(info, created->record->json, scratch));
}

HttpResponse ApiServer::Impl::HandleUpdate(HttpRequest& request, const ResourceInfo& info,
                                           const RequestInfo& ri) {
  Result<bool> dry_run = DryRun(request);
  if (!dry_run.ok()) {
    return StatusResponse(dry_run.status());
  }
  // kubectl create sends built-in kinds as protobuf (apiserver/api/protobuf.h).
  Result<Json> body = IsKubernetesProtobuf(request.Header("content-type"))
                          ? DecodeKubernetesProtobuf(request.body)
                          : ParseJson(request.body, "request body");
  if (!body.ok()) {
    return StatusResponse(body.status());
  }
  std::vector<std::string> unknown;  // of a built-in kind: pruned as Go's decoder drops them
  if (Status decoded =
          DecodeStrictJson(BodyGroupVersion(info, ri), BodyKind(info, ri), *body, &unknown);
      !decoded.ok()) {
    return StatusResponse(decoded);
  }
  Result<FieldValidation> field_validation = FieldValidationOf(request, "UpdateOptions");
  if (!field_validation.ok()) {
    return StatusResponse(field_validation.status());
  }
  for (std::string& field : DecodeCustomResource(info, *body)) {
    unknown.push_back(std::move(field));
  }
  if (!unknown.empty() && *field_validation == FieldValidation::kStrict) {
    return StatusResponse(StrictBodyError(info, unknown));
  }
  HttpResponse response = UpdateDecoded(request, info, ri, *dry_run, std::move(body).value());
  if (*field_validation == FieldValidation::kWarn) {
    AddUnknownFieldWarnings(response, unknown);
  }
  return response;
}

HttpResponse ApiServer::Impl::UpdateDecoded(HttpRequest& request, const ResourceInfo& info,
                                            const RequestInfo& ri, bool dry_run, Json object) {
  const bool status_subresource = ri.subresource == "status";
  if (Status converted = ToStored(info, object); !converted.ok()) {
    return StatusResponse(converted, {ri.name, info.group, info.resource, info.kind});
  }
  Result<StoredObject> updated =
      UpdateObject(StoredAs(info), ri.namespace_, ri.name, status_subresource, dry_run,
                   [&object](const Json&) -> Result<Json> { return object; });
  if (!updated.ok() && updated.status().code() == StatusCode::kNotFound &&
      IsCoreResource(info, "endpoints") && !status_subresource) {
    // Endpoints allow create on update (AllowCreateOnUpdate), as controllers rely on.
    Result<StoredObject> created = CreateObject(info, ri.namespace_, object, dry_run);
    if (created.ok()) {
      return ObjectResponse(request, info, 201, created->record->json);
    }
    updated = created;
  }
  if (!updated.ok()) {
    return StatusResponse(AsServed(info, updated.status()),
                          {ri.name, info.group, info.resource, info.kind});
  }
  std::string scratch;
  return ObjectResponse(request, info, 200, Served(info, updated->record->json, scratch));
}

Status ApiServer::Impl::EnsureCrds(const std::vector<std::string>& crds) {
  ResourcePtr crd_info = registry.Find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  for (const std::string& text : crds) {
    SW_ASSIGN_OR_RETURN(Json crd, ParseJson(text, "CustomResourceDefinition"));
    if (!crd.is_object()) {
      return BadRequestError("a CustomResourceDefinition must be a JSON object");
    }
    const std::string name = StringOr(crd["metadata"], "name");
    Result<StoredObject> created = CreateObject(*crd_info, "", crd, /*dry_run=*/false);
    if (created.ok()) {
      continue;
    }
    if (created.status().code() != StatusCode::kAlreadyExists) {
      return created.status();
    }
    Result<StoredObject> updated =
        UpdateObject(*crd_info, "", name, /*status_subresource=*/false, /*dry_run=*/false,
                     [&crd](const Json& current) -> Result<Json> {
                       Json wanted = current;
                       wanted["spec"] = crd["spec"];
                       for (const char* key : {"labels", "annotations"}) {
                         if (crd["metadata"].contains(key)) {
                           wanted["metadata"][key] = crd["metadata"][key];
                         } else {
                           wanted["metadata"].erase(key);
                         }
                       }
                       return wanted;
                     });
    if (!updated.ok()) {
      return updated.status();
    }
  }
  return Status::Ok();
}

HttpResponse ApiServer::Impl::HandlePatch(HttpRequest& request, const ResourceInfo& info,
                                          const RequestInfo& ri) {
  Result<bool> dry_run = DryRun(request);
  if (!dry_run.ok()) {
    return StatusResponse(dry_run.status());
  }
  Result<PatchType> type = PatchTypeFromContentType(request.Header("content-type"));
  const std::string accepted =
      "application/json-patch+json, application/merge-patch+json" +
      std::string(info.builtin ? ", application/strategic-merge-patch+json" : "");
  if (!type.ok() || *type == PatchType::kApplyPatch ||
      (*type == PatchType::kStrategicMergePatch && !info.builtin)) {
    return StatusResponse(
        Status(StatusCode::kUnsupportedMediaType,
               "the body of the request was in an unknown format - accepted media types include: " +
                   accepted));
  }
  Result<FieldValidation> field_validation = FieldValidationOf(request, "PatchOptions");
  if (!field_validation.ok()) {
    return StatusResponse(field_validation.status());
  }
  const bool status_subresource = ri.subresource == "status";
  const std::string api_version = info.GroupVersion();
  std::vector<std::string> unknown;  // of the last attempt
  Result<StoredObject> patched = UpdateObject(
      StoredAs(info), ri.namespace_, ri.name, status_subresource, *dry_run,
      [&](const Json& current) -> Result<Json> {
        // The patch applies to the object as this endpoint shows it.
        Json base = IsEventsV1(info) ? CoreEventToV1(current) : current;
        if (!info.builtin) {
          // Custom resource versions convert with strategy None: only apiVersion changes.
          base["apiVersion"] = api_version;
        }
        // The client's patch may pin a resourceVersion; the stored one otherwise matches itself.
        SW_ASSIGN_OR_RETURN(Json result,
                            ApplyPatch(base, request.body, *type, api_version, info.kind));
        if (!result.is_object()) {
          return BadRequestError("the patched object is not a JSON object");
        }
        // kube-apiserver decodes the patched object into the Go struct too.
        const std::string patched_json =
            *field_validation == FieldValidation::kStrict ? DumpJson(result) : std::string();
        unknown.clear();
        SW_RETURN_IF_ERROR(
            DecodeStrictJson(BodyGroupVersion(info, ri), BodyKind(info, ri), result, &unknown));
        for (std::string& field : DecodeCustomResource(info, result)) {
          unknown.push_back(std::move(field));
        }
        if (!unknown.empty() && *field_validation == FieldValidation::kStrict) {
          // kube's patcher reports it against the patched object, with no kind or name.
          const std::string body = "Invalid value: " + DumpJson(Json(patched_json)) + ": " +
                                   StrictDecodingError(unknown);
          Status status = InvalidError(" \"\" is invalid: patch: " + body);
          status.WithCauses({StatusCause{"FieldValueInvalid", body, "patch"}});
          return status;
        }
        const Json* metadata = Metadata(result);
        const std::string rv = metadata ? StringOr(*metadata, "resourceVersion") : "";
        const std::string base_rv = StringOr(current["metadata"], "resourceVersion");
        if (rv == base_rv && metadata != nullptr) {
          // Unchanged by the patch: no precondition.
          result["metadata"].erase("resourceVersion");
        }
        SW_RETURN_IF_ERROR(ToStored(info, result));
        return result;
      });
  HttpResponse response;
  if (!patched.ok()) {
    // kube's strict-decoding refusal of a patched object names no kind or name (kubectl prints
    // "The request is invalid: patch: ...").
    const bool strict_refusal = patched.status().code() == StatusCode::kInvalid &&
                                patched.status().message().starts_with(" \"\" is invalid: patch:");
    response = StatusResponse(AsServed(info, patched.status()),
                              strict_refusal
                                  ? StatusDetails{}
                                  : StatusDetails{ri.name, info.group, info.resource, info.kind});
  } else {
    std::string scratch;
    response = ObjectResponse(request, info, 200, Served(info, patched->record->json, scratch));
  }
  if (*field_validation == FieldValidation::kWarn) {
    AddUnknownFieldWarnings(response, unknown);
  }
  return response;
}

// The resources whose kube-apiserver store answers a DELETE with the deleted object
// (ReturnDeletedObject: pods, services, serviceaccounts; a namespace's own REST; custom
// resources); every other one answers a completed deletion with a Status.
bool ReturnsDeletedObject(const ResourceInfo& info) {
  if (!info.builtin) {
    return true;
  }
  return info.group.empty() &&
         (info.resource == "pods" || info.resource == "services" ||
          info.resource == "serviceaccounts" || info.resource == "namespaces");
}

// Invalid DeleteOptions are named as kube-apiserver's errors.NewInvalid names them.
const StatusDetails kDeleteOptionsDetails{"", "meta.k8s.io", "", "DeleteOptions"};

HttpResponse ApiServer::Impl::HandleDelete(HttpRequest& request, const ResourceInfo& info,
                                           const RequestInfo& ri) {
  Result<DeleteOptions> options = DeleteOptionsFromRequest(request);
  if (!options.ok()) {
    return StatusResponse(options.status(), kDeleteOptionsDetails);
  }
  Result<StoredObject> deleted = DeleteObject(StoredAs(info), ri.namespace_, ri.name, *options);
  if (!deleted.ok()) {
    return StatusResponse(AsServed(info, deleted.status()),
                          {ri.name, info.group, info.resource, info.kind});
  }
  // 202 while the deletion waits (finalizers, a grace period); kube-apiserver answers 202 only
  // when orphanDependents=false (docs/design.md lists the difference; clients take both). Decided
  // from the object the delete left, not from a later read: the garbage collector may finish an
  // orphaning deletion before this answer is written.
  bool pending = false;
  if (!options->dry_run) {
    Result<Json> left = ParseJson(deleted->record->json, "deleted object");
    if (left.ok()) {
      const Json* metadata = Metadata(*left);
      // A Namespace waits on spec.finalizers ("kubernetes") while it is emptied.
      const Json* spec = ObjectField(*left, "spec");
      const Json* spec_finalizers = spec != nullptr ? ArrayField(*spec, "finalizers") : nullptr;
      pending =
          metadata != nullptr &&
          (HasAnyFinalizer(*left) || (spec_finalizers != nullptr && !spec_finalizers->empty()) ||
           IntField(*metadata, "deletionGracePeriodSeconds").value_or(0) > 0);
    }
  }
  std::string scratch;
  if (!pending && !ReturnsDeletedObject(info)) {
    // kube-apiserver's finalizeDelete: a store without ReturnDeletedObject answers a completed
    // deletion (a dry run's too) with a Status naming what went, not with the object.
    Result<Json> gone = ParseJson(deleted->record->json, "deleted object");
    const Json* metadata = gone.ok() ? Metadata(*gone) : nullptr;
    Json details = {{"name", ri.name}, {"kind", info.resource}};
    if (!info.group.empty()) {
      details["group"] = info.group;
    }
    if (metadata != nullptr && metadata->contains("uid")) {
      details["uid"] = (*metadata)["uid"];
    }
    return JsonResponse(200, DumpJson(Json{{"kind", "Status"},
                                           {"apiVersion", "v1"},
                                           {"metadata", Json::object()},
                                           {"status", "Success"},
                                           {"details", details}}));
  }
  return ObjectResponse(request, info, pending ? 202 : 200,
                        Served(info, deleted->record->json, scratch));
}

HttpResponse ApiServer::Impl::HandleDeleteCollection(HttpRequest& request, const ResourceInfo& info,
                                                     const RequestInfo& ri) {
  Result<DeleteOptions> options = DeleteOptionsFromRequest(request);
  if (!options.ok()) {
    return StatusResponse(options.status(), kDeleteOptionsDetails);
  }
  Result<ObjectFilter> filter = FilterFromRequest(request, info);
  if (!filter.ok()) {
    return StatusResponse(filter.status());
  }
  ListOptions list_options;
  list_options.prefix = ListPrefix(info, ri.namespace_);
  Result<ListResult> items = storage->List(list_options);
  if (!items.ok()) {
    return StatusResponse(items.status());
  }
  std::string body = R"({"kind":")" + info.list_kind + R"(","apiVersion":")" + info.GroupVersion() +
                     R"(","metadata":{"resourceVersion":")" + std::to_string(items->revision) +
                     R"("},"items":[)";
  bool first = true;
  for (const StoredObject& item : items->items) {
    if (!filter->Matches(item.record->attributes)) {
      continue;
    }
    const ObjectAttributes& attributes = item.record->attributes;
    const std::string namespace_(attributes.Field("metadata.namespace").value_or(""));
    const std::string name(attributes.Field("metadata.name").value_or(""));
    Result<StoredObject> deleted = DeleteObject(StoredAs(info), namespace_, name, *options);
    if (!deleted.ok()) {
      if (deleted.status().code() == StatusCode::kNotFound) {
        continue;
      }
      return StatusResponse(deleted.status(), {name, info.group, info.resource, info.kind});
    }
    body += first ? "" : ",";
    std::string scratch;
    body += Served(info, deleted->record->json, scratch);
    first = false;
  }
  body += "]}";
  return JsonResponse(200, std::move(body));
}

// --- ApiServer -------------------------------------------------------------------------------

Result<std::unique_ptr<ApiServer>> ApiServer::Create(ApiServerOptions options,
                                                     std::unique_ptr<Storage> storage) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(storage));
  {
    std::uint64_t seed = impl->config.seed;
    if (seed == 0) {
      std::random_device device;
      seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    }
    MutexLock lock(impl->rng_mu);
    impl->rng.seed(seed);
  }
  SW_RETURN_IF_ERROR(impl->InitServiceIpAllocators());

  // Custom resources of stored CRDs.
  ResourcePtr crds = impl->registry.Find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  ListOptions crd_list;
  crd_list.prefix = crds->KeyPrefix();
  SW_ASSIGN_OR_RETURN(ListResult stored_crds, impl->storage->List(crd_list));
  for (const StoredObject& item : stored_crds.items) {
    Result<Json> crd = ParseJson(item.record->json, "stored CustomResourceDefinition");
    if (!crd.ok()) {
      continue;
    }
    Result<std::vector<ResourceInfo>> resources = ResourcesFromCrd(*crd, &*crd);
    if (resources.ok()) {
      impl->registry.SetCustom(StringOr((*crd)["metadata"], "name"), std::move(resources).value());
    }
  }
  // Addresses already given to stored Services.
  ResourcePtr services = impl->registry.Find("", "v1", "services");
  ListOptions service_list;
  service_list.prefix = services->KeyPrefix();
  SW_ASSIGN_OR_RETURN(ListResult stored_services, impl->storage->List(service_list));
  for (const StoredObject& item : stored_services.items) {
    Result<Json> service = ParseJson(item.record->json, "stored Service");
    const Json* spec = service.ok() ? ObjectField(*service, "spec") : nullptr;
    if (spec == nullptr) {
      continue;
    }
    if (const Json* ips = ArrayField(*spec, "clusterIPs")) {
      for (const Json& ip : *ips) {
        if (ip.is_string()) {
          for (IpAllocator& allocator : impl->service_ip_allocators) {
            allocator.MarkUsed(ip.get<std::string>());
          }
        }
      }
    }
    if (const Json* ports = ArrayField(*spec, "ports")) {
      for (const Json& port : *ports) {
        if (const auto node_port = IntField(port, "nodePort")) {
          impl->node_ports.MarkUsed(static_cast<int>(*node_port));
        }
      }
    }
    if (const auto health_check = IntField(*spec, "healthCheckNodePort")) {
      impl->node_ports.MarkUsed(static_cast<int>(*health_check));
    }
  }

  // Before the owner index starts, so it sees the moved Events where they now live.
  SW_RETURN_IF_ERROR(impl->MigrateLegacyEventsV1());

  impl->owner_index = std::make_shared<Impl::OwnerIndex>(*impl);
  WatchOptions everything;
  everything.prefix = std::string(kRegistryPrefix);
  everything.initial_state = true;
  SW_ASSIGN_OR_RETURN(impl->owner_index_registration,
                      impl->storage->Watch(everything, impl->owner_index));
  impl->owner_index->MarkSeen(impl->owner_index_registration->start_revision());

  ResourcePtr namespaces = impl->registry.Find("", "v1", "namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (impl->storage->Get(namespaces->Key("", name)).ok()) {
      continue;
    }
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    Result<StoredObject> created = impl->CreateObject(*namespaces, "", std::move(ns), false);
    if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
      return created.status().WithContext("creating namespace " + std::string(name));
    }
  }
  impl->ScheduleStartupWork();
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ApiServer::~ApiServer() { Stop(); }

HttpResponse ApiServer::Handle(HttpRequest& request) {
  try {
    return impl_->Handle(request);
  } catch (const std::exception& e) {
    // Only a bug gets here (nlohmann throws on misuse): answer 500 and keep serving.
    return StatusResponse(InternalError(std::string("internal error: ") + e.what()));
  }
}

Status ApiServer::EnsureCrds(const std::vector<std::string>& crds) {
  try {
    return impl_->EnsureCrds(crds);
  } catch (const std::exception& e) {
    return InternalError(std::string("installing CRDs: ") + e.what());
  }
}

void ApiServer::Stop() {
  impl_->background.Stop();
  impl_->hub.Stop();
  impl_->owner_index_registration.reset();
}

Storage& ApiServer::storage() { return *impl_->storage; }

const ResourceRegistry& ApiServer::registry() const { return impl_->registry; }

std::size_t ApiServer::active_watches() const { return impl_->hub.active(); }

}  // namespace slicewright::apiserver
