#include "controllers/mcs/liveness.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "slicewright/base/log.h"
#include "slicewright/base/thread_name.h"
#include "slicewright/codec/coordination.h"
#include "slicewright/labels/validation.h"
#include "slicewright/mcs/identity.h"
#include "slicewright/model/mcs.h"
#include "slicewright/runtime/leader_election.h"

#include "runtime/wall_time.h"

namespace slicewright::controllers::mcs {
namespace {

constexpr std::string_view kLeasePrefix = "mcs-";
// A failed renewal is retried this soon (client-go's leader election retry period), or sooner
// when a third of the lease duration is shorter.
constexpr Clock::Duration kMaxRetry = std::chrono::seconds(2);

std::string FormatDuration(Clock::Duration duration) {
  return fmt::format("{}s", std::chrono::duration<double>(duration).count());
}

std::chrono::seconds SecondsOf(const model::LeaseSpec& spec, std::chrono::seconds fallback) {
  const std::int32_t seconds =
      spec.lease_duration_seconds.value_or(static_cast<std::int32_t>(fallback.count()));
  return std::chrono::seconds(std::max<std::int32_t>(seconds, 0));
}

// renewTime + leaseDurationSeconds on the wall clock; unset without a renewTime.
std::optional<model::Time> WallExpiry(const model::LeaseSpec& spec, std::chrono::seconds fallback) {
  if (!spec.renew_time.has_value()) return std::nullopt;
  const auto duration =
      std::chrono::duration_cast<std::chrono::nanoseconds>(SecondsOf(spec, fallback));
  return model::Time{spec.renew_time->unix_nanos + static_cast<std::int64_t>(duration.count())};
}

}  // namespace

std::string LivenessLeaseName(std::string_view cluster_id) {
  return std::string(kLeasePrefix) + std::string(cluster_id);
}

model::Lease LivenessLease(model::Lease base, std::string_view cluster_id,
                           std::string_view broker_namespace, std::string_view identity,
                           Clock::Duration lease_duration, model::Time now) {
  const std::string previous_holder = base.spec.holder_identity.value_or("");
  base.metadata.name = LivenessLeaseName(cluster_id);
  base.metadata.namespace_ = std::string(broker_namespace);
  // A label value holds at most 63 characters, an id up to 127: the name is what we read back.
  if (labels::IsLabelValueValid(cluster_id)) {
    base.metadata.labels[std::string(model::kLabelMcsSourceCluster)] = std::string(cluster_id);
  }
  if (previous_holder != identity || !base.spec.acquire_time.has_value()) {
    base.spec.acquire_time = now;
    if (!previous_holder.empty()) {
      base.spec.lease_transitions = base.spec.lease_transitions.value_or(0) + 1;
    }
  }
  if (!base.spec.lease_transitions.has_value()) base.spec.lease_transitions = 0;
  base.spec.holder_identity = std::string(identity);
  base.spec.lease_duration_seconds = static_cast<std::int32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(lease_duration).count());
  base.spec.renew_time = now;
  return base;
}

Result<std::unique_ptr<ClusterLiveness>> ClusterLiveness::Create(LivenessOptions options,
                                                                 LivenessDeps deps) {
  if (deps.broker == nullptr || deps.broker_informers == nullptr) {
    return InvalidError("mcs liveness: the broker's client and informers are required");
  }
  if (Status valid = ::slicewright::mcs::ValidateClusterId(options.cluster_id); !valid.ok()) {
    return Status(valid.code(), "mcs liveness: " + std::string(valid.message()));
  }
  if (options.broker_namespace.empty()) {
    return InvalidError("mcs liveness: --broker-namespace must not be empty");
  }
  const auto whole = std::chrono::duration_cast<std::chrono::seconds>(options.lease_duration);
  if (whole != options.lease_duration || whole < std::chrono::seconds(3) ||
      whole.count() > std::numeric_limits<std::int32_t>::max()) {
    return InvalidError("--mcs-lease-duration: must be whole seconds, at least 3s, got " +
                        FormatDuration(options.lease_duration));
  }
  if (options.sync_timeout <= Clock::Duration::zero()) {
    return InvalidError("mcs liveness: the sync timeout must be positive");
  }
  if (options.identity.empty()) {
    SW_ASSIGN_OR_RETURN(options.identity, runtime::DefaultIdentity());
  }
  Clock& clock = deps.clock != nullptr ? *deps.clock : SystemClock::Get();
  const cache::Kind<model::Lease> kind = cache::MakeKind(
      client::LeasesResource(), codec::DecodeLeaseList, codec::DecodeLeaseWatchEvent);
  cache::Informer<model::Lease>& leases = deps.broker_informers->For(
      kind, {.namespace_ = options.broker_namespace, .label_selector = {}, .field_selector = {}});
  std::unique_ptr<ClusterLiveness> liveness(
      new ClusterLiveness(std::move(options), deps, clock, leases));
  // Every Lease event wakes the judging thread; the waker outlives us in the handler.
  const std::shared_ptr<Waker> waker = liveness->waker_;
  const auto poke = [waker] {
    MutexLock lock(waker->mu);
    if (waker->target != nullptr) waker->target->Poke();
  };
  cache::EventHandler<model::Lease> handler;
  handler.on_add = [poke](const auto&, bool) { poke(); };
  handler.on_update = [poke](const auto&, const auto&) { poke(); };
  handler.on_delete = [poke](const auto&, bool) { poke(); };
  leases.AddEventHandler(std::move(handler));
  return liveness;
}

ClusterLiveness::ClusterLiveness(LivenessOptions options, LivenessDeps deps, Clock& clock,
                                 cache::Informer<model::Lease>& leases)
    : options_(std::move(options)),
      deps_(deps),
      clock_(clock),
      leases_(leases),
      lease_name_(LivenessLeaseName(options_.cluster_id)),
      steady_origin_(clock.Now()),
      wall_origin_(runtime::internal::SystemWallTime()),
      waker_(std::make_shared<Waker>()) {
  MutexLock lock(waker_->mu);
  waker_->target = this;
}

ClusterLiveness::~ClusterLiveness() { Stop(); }

model::Time ClusterLiveness::WallNow() const {
  return runtime::internal::WallTimeAt(clock_.Now(), steady_origin_, wall_origin_);
}

void ClusterLiveness::Poke() {
  MutexLock lock(mu_);
  dirty_ = true;
  cv_.NotifyAll();
}

Status ClusterLiveness::Acquire() {
  MutexLock run(run_mu_);
  return AcquireLocked();
}

Status ClusterLiveness::AcquireLocked() {
  {
    MutexLock lock(mu_);
    if (stopping_) {
      return InvalidError("mcs liveness: cluster " + options_.cluster_id + ": stopped");
    }
    if (acquired_) return Status();
    // The thread owns the renewals (and ours_) now: it takes the Lease when it can.
    if (renewing_) {
      return UnavailableError("mcs liveness: cluster " + options_.cluster_id + ": Lease " +
                              lease_name_ + " not taken yet");
    }
  }
  SW_RETURN_IF_ERROR(Renew(/*initial=*/true));
  MutexLock lock(mu_);
  acquired_ = true;
  // The next renewal is due a third of the duration after this write, however long Start()
  // then waits for the cache (a renewal already due runs at once).
  next_renew_ = clock_.Now() + options_.lease_duration / 3;
  SW_LOG(kInfo, "mcs liveness: cluster {} holds Lease {}/{} as {}, lease duration {}",
         options_.cluster_id, options_.broker_namespace, lease_name_, options_.identity,
         FormatDuration(options_.lease_duration));
  return Status();
}

Status ClusterLiveness::AcquireOrWaitOut(const std::stop_token& stop) {
  const Clock::Duration retry = std::min(options_.lease_duration / 3, kMaxRetry);
  std::optional<model::LeaseSpec> first;
  // Wakes the wait below at once on `stop` (SIGTERM while an agent waits out its old Lease).
  const std::stop_callback wake(stop, [this] {
    MutexLock lock(mu_);
    cv_.NotifyAll();
  });
  const auto stopped = [&]() SW_REQUIRES(mu_) { return stopping_ || stop.stop_requested(); };
  while (true) {
    const Status acquired = Acquire();
    if (acquired.code() != StatusCode::kAlreadyExists) return acquired;
    MutexLock lock(mu_);
    if (!refused_.has_value()) return acquired;
    if (!first.has_value()) {
      first = refused_;
      SW_LOG(kWarning, "{}; waiting for that Lease to expire (refused if it is renewed meanwhile)",
             acquired.ToString());
    } else if (refused_->holder_identity != first->holder_identity ||
               refused_->renew_time != first->renew_time) {
      return AlreadyExistsError(std::string(acquired.message()) +
                                "; it was renewed while we waited, so a live member uses this id");
    }
    const Clock::TimePoint until = clock_.Now() + retry;
    while (!stopped() && clock_.Now() < until) clock_.WaitUntil(cv_, mu_, until);
    if (stopped()) {
      return Status(StatusCode::kCancelled, "mcs liveness: cluster " + options_.cluster_id +
                                                ": stopped while waiting for the Lease to expire");
    }
  }
}

Status ClusterLiveness::StartRenewing() {
  MutexLock run(run_mu_);
  MutexLock lock(mu_);
  if (stopping_) {
    return InvalidError("mcs liveness: cluster " + options_.cluster_id + ": stopped");
  }
  if (renewing_) return Status();
  // Not holding our Lease yet (the broker did not answer, or a previous run's Lease is live):
  // frozen until the thread takes it, so whatever judges before that expires nobody.
  if (!acquired_) {
    frozen_ = true;
    next_renew_ = clock_.Now();
  }
  renewing_ = true;
  thread_ = std::thread([this, name = ThreadName("mcs-live")] {
    name.Apply();
    Run();
  });
  return Status();
}

Status ClusterLiveness::Start(const std::vector<std::string>& previously_live) {
  MutexLock run(run_mu_);
  bool renewing = false;
  {
    MutexLock lock(mu_);
    if (started_ || stopping_) {
      return InvalidError("mcs liveness: cluster " + options_.cluster_id +
                          ": Start() after Start() or Stop()");
    }
    renewing = renewing_;
  }
  if (!renewing) {
    if (const Status acquired = AcquireLocked(); !acquired.ok()) {
      const bool held = acquired.code() == StatusCode::kAlreadyExists;
      if (!IsRetryable(acquired) && !held) return acquired;
      // The broker does not answer, or our Lease is another identity's (a previous run's, not
      // expired yet, or a duplicate's): the thread takes the Lease when it can, frozen until
      // then. Failing here instead would leave this agent judging nobody and renewing nothing.
      SW_LOG(kWarning, "mcs liveness: cluster {}: {}; retrying{}", options_.cluster_id,
             acquired.ToString(), held ? " until that Lease expires" : "");
      MutexLock lock(mu_);
      frozen_ = true;
      next_renew_ = clock_.Now();
      if (held) {
        waiting_out_ = refused_;
        next_renew_ += std::min(options_.lease_duration / 3, kMaxRetry);
      }
    }
  }
  if (!leases_.WaitForSync(options_.sync_timeout)) {
    return Status(StatusCode::kTimeout, "mcs liveness: the broker's Leases in namespace " +
                                            options_.broker_namespace + " did not sync within " +
                                            FormatDuration(options_.sync_timeout));
  }
  std::vector<Change> changes;
  {
    MutexLock lock(mu_);
    previously_live_ = previously_live;
    changes = JudgeLocked(clock_.Now());
    previously_live_.clear();
  }
  // Reported before the thread judges (it waits for started_), so on_change runs one at a time.
  Notify(changes);
  {
    MutexLock lock(mu_);
    started_ = true;
    cv_.NotifyAll();
    if (renewing) return Status();
    renewing_ = true;
  }
  thread_ = std::thread([this, name = ThreadName("mcs-live")] {
    name.Apply();
    Run();
  });
  return Status();
}

void ClusterLiveness::Stop() {
  MutexLock run(run_mu_);
  {
    MutexLock lock(waker_->mu);
    waker_->target = nullptr;
  }
  {
    MutexLock lock(mu_);
    stopping_ = true;
    cv_.NotifyAll();
  }
  if (thread_.joinable()) thread_.join();
}

bool ClusterLiveness::IsLive(std::string_view cluster_id) const {
  if (cluster_id == options_.cluster_id) return true;
  MutexLock lock(mu_);
  const auto it = tracked_.find(cluster_id);
  return it != tracked_.end() && it->second.live;
}

std::vector<std::string> ClusterLiveness::LiveClusters() const {
  std::vector<std::string> out{options_.cluster_id};
  {
    MutexLock lock(mu_);
    for (const auto& [id, tracked] : tracked_) {
      if (tracked.live) out.push_back(id);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool ClusterLiveness::Frozen() const {
  MutexLock lock(mu_);
  return frozen_;
}

std::uint64_t ClusterLiveness::Rounds() const {
  MutexLock lock(mu_);
  return rounds_;
}

model::Lease ClusterLiveness::Desired(model::Lease base) const {
  return LivenessLease(std::move(base), options_.cluster_id, options_.broker_namespace,
                       options_.identity, options_.lease_duration, WallNow());
}

Status ClusterLiveness::Renew(bool initial) {
  const client::ResourceRef resource = client::LeasesResource();
  const std::string where = options_.broker_namespace + "/" + lease_name_;
  // Fast path: write over the version we wrote last; a conflict or a deleted Lease re-reads.
  if (!initial && ours_.has_value()) {
    const model::Lease next = Desired(*ours_);
    Result<std::string> answer = deps_.broker->Update(resource, options_.broker_namespace,
                                                      lease_name_, codec::EncodeLease(next));
    if (answer.ok()) {
      Result<model::Lease> written = codec::DecodeLease(*answer);
      ours_ = written.ok() ? std::move(written).value() : next;
      return Status();
    }
    const StatusCode code = answer.status().code();
    if (code != StatusCode::kConflict && code != StatusCode::kNotFound) {
      return Status(code, "renewing Lease " + where + ": " + answer.status().ToString());
    }
  }
  Result<std::string> got = deps_.broker->Get(resource, options_.broker_namespace, lease_name_);
  if (!got.ok()) {
    if (got.status().code() != StatusCode::kNotFound) {
      return Status(got.status().code(), "reading Lease " + where + ": " + got.status().ToString());
    }
    const model::Lease lease = Desired({});
    Result<std::string> created =
        deps_.broker->Create(resource, options_.broker_namespace, codec::EncodeLease(lease));
    if (!created.ok()) {
      // kAlreadyExists: another process created it first; the next attempt reads it.
      return Status(created.status().code(),
                    "creating Lease " + where + ": " + created.status().ToString());
    }
    Result<model::Lease> written = codec::DecodeLease(*created);
    ours_ = written.ok() ? std::move(written).value() : lease;
    return Status();
  }
  Result<model::Lease> current = codec::DecodeLease(*got);
  if (!current.ok()) return current.status();
  const std::string holder = current->spec.holder_identity.value_or("");
  if (!holder.empty() && holder != options_.identity) {
    const std::optional<model::Time> expiry = WallExpiry(
        current->spec, std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration));
    if (!expiry.has_value() || *expiry > WallNow()) {
      {
        MutexLock lock(mu_);
        refused_ = current->spec;
      }
      return AlreadyExistsError(
          "mcs: cluster id \"" + options_.cluster_id + "\" is already in use: Lease " + where +
          " is held by \"" + holder + "\"" +
          (expiry.has_value() ? " until " + model::FormatRfc3339Micro(*expiry) : std::string()) +
          " (we are \"" + options_.identity +
          "\"); two member clusters cannot share an id, so give this one another "
          "(ClusterProperty id.k8s.io or --cluster-id), or wait for the Lease to expire if the "
          "other holder is a previous run of this cluster");
    }
    SW_LOG(kInfo, "mcs liveness: taking over the expired Lease {} of \"{}\"", where, holder);
  }
  const model::Lease next = Desired(*std::move(current));
  Result<std::string> answer = deps_.broker->Update(resource, options_.broker_namespace,
                                                    lease_name_, codec::EncodeLease(next));
  if (!answer.ok()) {
    // kConflict: someone wrote in between; the next attempt re-reads.
    return Status(answer.status().code(),
                  "writing Lease " + where + ": " + answer.status().ToString());
  }
  Result<model::Lease> written = codec::DecodeLease(*answer);
  ours_ = written.ok() ? std::move(written).value() : next;
  return Status();
}

void ClusterLiveness::Run() {
  const Clock::Duration period = options_.lease_duration / 3;
  const Clock::Duration retry = std::min(period, kMaxRetry);
  MutexLock lock(mu_);
  while (!stopping_) {
    Clock::TimePoint now = clock_.Now();
    const bool renewing = now >= next_renew_;
    if (renewing) {
      lock.Unlock();
      const Status renewed = Renew(/*initial=*/false);
      lock.Lock();
      if (stopping_) break;
      now = clock_.Now();
      if (renewed.ok()) {
        if (!acquired_) {
          SW_LOG(kInfo, "mcs liveness: cluster {} holds Lease {}/{} as {}", options_.cluster_id,
                 options_.broker_namespace, lease_name_, options_.identity);
        }
        acquired_ = true;
        waiting_out_.reset();
        next_renew_ = now + period;
        if (frozen_ && !resume_after_.has_value()) {
          // The broker answers again, but the Lease cache may still show the outage (its watch
          // comes back after a backoff of up to 30 s): judging from it would expire every member
          // whose renewals it has not seen yet. Stay frozen until it shows this renewal.
          resume_after_ = ours_.has_value() ? ours_->spec.renew_time : std::nullopt;
          if (!resume_after_.has_value()) resume_after_ = model::Time{};
        }
      } else {
        next_renew_ = now + retry;
        resume_after_.reset();
        NoteRefusalLocked(renewed);
        if (!frozen_) {
          frozen_ = true;
          SW_LOG(kWarning,
                 "mcs liveness: cluster {}: {}; no cluster is expired until a renewal succeeds",
                 options_.cluster_id, renewed.ToString());
        }
      }
    }
    if (!started_) {
      // Renewing only, until Start() has judged once.
      if (renewing) ++rounds_;
      if (!stopping_) clock_.WaitUntil(cv_, mu_, next_renew_);
      continue;
    }
    if (frozen_ && resume_after_.has_value() && CachedRenewalLocked(*resume_after_)) {
      // Everyone renews through the broker we just got back, and our cache follows it again:
      // each cluster that was live gets a full lease duration from now before it can expire.
      frozen_ = false;
      resume_after_.reset();
      for (auto& [id, tracked] : tracked_) {
        if (tracked.live) {
          tracked.deadline = std::max(tracked.deadline, now + DurationOf(tracked.spec));
        }
      }
      SW_LOG(kInfo, "mcs liveness: cluster {}: renewed Lease {} again; judging liveness",
             options_.cluster_id, lease_name_);
      if (options_.on_resumed) {
        lock.Unlock();
        options_.on_resumed();
        lock.Lock();
        if (stopping_) break;
      }
    }
    dirty_ = false;
    std::vector<Change> changes = JudgeLocked(now);
    if (!changes.empty()) {
      lock.Unlock();
      Notify(changes);
      lock.Lock();
    }
    if (renewing) ++rounds_;
    if (!changes.empty()) continue;
    if (dirty_ || stopping_) continue;
    clock_.WaitUntil(cv_, mu_, std::min(next_renew_, next_expiry_));
  }
}

bool ClusterLiveness::CachedRenewalLocked(model::Time renewed_at) const {
  const auto lease = leases_.store().Get(options_.broker_namespace, lease_name_);
  return lease != nullptr && lease->spec.renew_time.value_or(model::Time{}) >= renewed_at;
}

void ClusterLiveness::NoteRefusalLocked(const Status& renewed) {
  if (renewed.code() != StatusCode::kAlreadyExists || !refused_.has_value()) return;
  if (!waiting_out_.has_value()) {
    waiting_out_ = refused_;
    SW_LOG(kWarning,
           "mcs liveness: {}; waiting for that Lease to expire (frozen meanwhile: nobody is "
           "expired)",
           renewed.ToString());
    return;
  }
  if (duplicate_logged_ || (refused_->holder_identity == waiting_out_->holder_identity &&
                            refused_->renew_time == waiting_out_->renew_time)) {
    return;
  }
  duplicate_logged_ = true;
  SW_LOG(kError,
         "mcs liveness: {}; it was renewed while we waited, so a live member uses this id: this "
         "agent holds no Lease and expires nobody until that member stops",
         renewed.ToString());
}

Clock::Duration ClusterLiveness::DurationOf(const model::LeaseSpec& spec) const {
  return SecondsOf(spec, std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration));
}

Clock::TimePoint ClusterLiveness::FirstSightDeadline(const model::LeaseSpec& spec,
                                                     Clock::TimePoint now,
                                                     model::Time wall_now) const {
  const std::optional<model::Time> wall =
      WallExpiry(spec, std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration));
  if (!wall.has_value() || wall->unix_nanos <= wall_now.unix_nanos) {
    return Clock::TimePoint::min();
  }
  // Within one duration of now, so a renewTime in our future (a clock ahead of ours) does not
  // keep a member that never renews again live for longer.
  const auto left = std::chrono::duration_cast<Clock::Duration>(
      std::chrono::nanoseconds(wall->unix_nanos - wall_now.unix_nanos));
  return now + std::min(left, DurationOf(spec));
}

std::vector<ClusterLiveness::Change> ClusterLiveness::JudgeLocked(Clock::TimePoint now) {
  const model::Time wall_now = runtime::internal::WallTimeAt(now, steady_origin_, wall_origin_);
  for (auto& [id, tracked] : tracked_) tracked.present = false;
  for (const auto& lease : leases_.store().List()) {
    const std::string& name = lease->metadata.name;
    if (!name.starts_with(kLeasePrefix) || name.size() == kLeasePrefix.size()) continue;
    std::string id = name.substr(kLeasePrefix.size());
    if (id == options_.cluster_id) continue;
    auto [it, inserted] = tracked_.try_emplace(std::move(id));
    Tracked& tracked = it->second;
    if (inserted) {
      tracked.spec = lease->spec;
      tracked.deadline = FirstSightDeadline(tracked.spec, now, wall_now);
      if (std::find(previously_live_.begin(), previously_live_.end(), it->first) !=
          previously_live_.end()) {
        // A full lease duration to renew (see Start()).
        tracked.deadline = std::max(tracked.deadline, now + DurationOf(tracked.spec));
      }
    } else if (tracked.spec != lease->spec) {
      tracked.spec = lease->spec;
      tracked.deadline = now + DurationOf(tracked.spec);
    }
    tracked.present = true;
  }
  std::vector<Change> changes;
  next_expiry_ = Clock::TimePoint::max();
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    Tracked& tracked = it->second;
    const bool live = tracked.present && !tracked.spec.holder_identity.value_or("").empty() &&
                      now < tracked.deadline;
    if (live && !tracked.live) {
      tracked.live = true;
      changes.push_back({it->first, true});
    } else if (!live && tracked.live && !frozen_) {
      tracked.live = false;
      changes.push_back({it->first, false});
    }
    // Frozen: no expiry to wake for; the renewal retry wakes us.
    if (tracked.live && live && !frozen_) {
      next_expiry_ = std::min(next_expiry_, tracked.deadline);
    }
    if (!tracked.present && !tracked.live) {
      it = tracked_.erase(it);
    } else {
      ++it;
    }
  }
  return changes;
}

void ClusterLiveness::Notify(const std::vector<Change>& changes) const {
  for (const Change& change : changes) {
    SW_LOG(kInfo, "mcs liveness: cluster {} is {}", change.cluster_id,
           change.live ? "live" : "expired (its Lease was not renewed in time)");
    if (options_.on_change) options_.on_change(change.cluster_id, change.live);
  }
}

}  // namespace slicewright::controllers::mcs
