#include "slicewright/runtime/leader_election.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <thread>
#include <utility>

#include <unistd.h>

#include "slicewright/base/thread_name.h"
#include "slicewright/codec/coordination.h"

#include "runtime/wall_time.h"

namespace slicewright::runtime {
namespace {

// wait.JitterUntil's factor in client-go's acquire loop: each wait is retry * (1 + [0, 1.2)).
constexpr double kJitterFactor = 1.2;

std::string FormatSeconds(Clock::Duration duration) {
  return std::to_string(std::chrono::duration<double>(duration).count()) + " s";
}

}  // namespace

Result<std::string> DefaultIdentity() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0 || host[0] == '\0') {
    return InternalError("leader election identity: cannot read the host name");
  }
  // A random (version 4) UUID, as uuid.NewUUID() gives kube-controller-manager.
  std::random_device device;
  std::array<unsigned char, 16> bytes{};
  for (unsigned char& byte : bytes) byte = static_cast<unsigned char>(device() & 0xFF);
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0F) | 0x40);
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3F) | 0x80);
  char uuid[37];
  std::snprintf(uuid, sizeof uuid,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", bytes[0],
                bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
  return std::string(host.data()) + "_" + uuid;
}

Result<std::unique_ptr<LeaderElector>> LeaderElector::Create(LeaderElectionConfig config,
                                                             client::RestClient& client,
                                                             Clock& clock) {
  using std::chrono::seconds;
  if (config.lease_name.empty()) return InvalidError("leader election: lease name is required");
  if (config.lease_namespace.empty()) {
    return InvalidError("leader election: lease namespace is required");
  }
  if (config.identity.empty()) return InvalidError("leader election: identity is required");
  if (!config.callbacks.on_started_leading || !config.callbacks.on_stopped_leading) {
    return InvalidError(
        "leader election: on_started_leading and on_stopped_leading callbacks are required");
  }
  if (config.retry_period <= Clock::Duration::zero() ||
      config.renew_deadline <= Clock::Duration::zero()) {
    return InvalidError("leader election: retry period and renew deadline must be positive");
  }
  if (config.lease_duration < seconds(1) ||
      config.lease_duration > seconds(std::numeric_limits<std::int32_t>::max())) {
    return InvalidError("leader election: lease duration must be at least 1 s, got " +
                        FormatSeconds(config.lease_duration));
  }
  if (config.lease_duration <= config.renew_deadline) {
    return InvalidError("leader election: lease duration (" + FormatSeconds(config.lease_duration) +
                        ") must be greater than renew deadline (" +
                        FormatSeconds(config.renew_deadline) + ")");
  }
  if (std::chrono::duration<double>(config.renew_deadline).count() <=
      kJitterFactor * std::chrono::duration<double>(config.retry_period).count()) {
    return InvalidError("leader election: renew deadline (" + FormatSeconds(config.renew_deadline) +
                        ") must be greater than 1.2 * retry period (" +
                        FormatSeconds(config.retry_period) + ")");
  }

  Gauge* master_status = nullptr;
  Counter* slowpath = nullptr;
  if (config.metrics != nullptr) {
    SW_ASSIGN_OR_RETURN(GaugeFamily * gauges,
                        config.metrics->AddGaugeFamily(
                            "leader_election_master_status",
                            "Gauge of if the reporting system is master of the relevant lease, 0 "
                            "indicates backup, 1 indicates master. 'name' is the string used to "
                            "identify the lease. Please make sure to group by name.",
                            {"name"}));
    SW_ASSIGN_OR_RETURN(master_status, gauges->WithLabelValues({config.lease_name}));
    SW_ASSIGN_OR_RETURN(CounterFamily * counters,
                        config.metrics->AddCounterFamily(
                            "leader_election_slowpath_total",
                            "Total number of slow path exercised in renewing leader leases. "
                            "'name' is the string used to identify the lease. Please make sure "
                            "to group by name.",
                            {"name"}));
    SW_ASSIGN_OR_RETURN(slowpath, counters->WithLabelValues({config.lease_name}));
    master_status->Set(0);
  }
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(std::move(config), client, clock, master_status, slowpath));
}

LeaderElector::LeaderElector(LeaderElectionConfig config, client::RestClient& client, Clock& clock,
                             Gauge* master_status, Counter* slowpath)
    : config_(std::move(config)),
      client_(client),
      clock_(clock),
      master_status_(master_status),
      slowpath_(slowpath),
      steady_origin_(clock.Now()),
      wall_origin_(internal::SystemWallTime()),
      random_(config_.random_seed != 0 ? config_.random_seed : std::random_device{}()) {}

LeaderElector::~LeaderElector() = default;

model::Time LeaderElector::WallNow() const {
  return internal::WallTimeAt(clock_.Now(), steady_origin_, wall_origin_);
}

void LeaderElector::Log(std::string_view message) const {
  if (config_.log) config_.log(message);
}

bool LeaderElector::IsLeaderLocked() const {
  return observed_.has_value() && observed_->spec.holder_identity == config_.identity;
}

bool LeaderElector::IsLeader() const {
  MutexLock lock(mu_);
  return IsLeaderLocked();
}

std::string LeaderElector::GetLeader() const {
  MutexLock lock(mu_);
  return observed_.has_value() ? observed_->spec.holder_identity.value_or("") : "";
}

// Valid while the record has not changed for its own lease duration on our clock (client-go's
// isLeaseValid): a stale renewTime from a skewed remote clock cannot make it look expired.
bool LeaderElector::LeaseValidLocked(Clock::TimePoint now) const {
  if (!observed_.has_value()) return false;
  const auto duration = std::chrono::seconds(observed_->spec.lease_duration_seconds.value_or(0));
  return observed_time_ + duration > now;
}

void LeaderElector::ObserveLocked(model::Lease lease, Clock::TimePoint now) {
  if (!observed_.has_value() || observed_->spec != lease.spec) observed_time_ = now;
  observed_ = std::move(lease);
}

model::Lease LeaderElector::Desired(const model::Lease& base, bool keep_acquire_time,
                                    std::int32_t transitions, model::Time now) const {
  model::Lease lease = base;
  lease.metadata.name = config_.lease_name;
  lease.metadata.namespace_ = config_.lease_namespace;
  lease.spec.holder_identity = config_.identity;
  lease.spec.lease_duration_seconds = static_cast<std::int32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  if (!keep_acquire_time || !lease.spec.acquire_time.has_value()) lease.spec.acquire_time = now;
  lease.spec.renew_time = now;
  lease.spec.lease_transitions = transitions;
  return lease;
}

bool LeaderElector::Write(const model::Lease& lease, Clock::TimePoint now, std::string_view what) {
  Result<std::string> answer = client_.Update(client::LeasesResource(), config_.lease_namespace,
                                              config_.lease_name, codec::EncodeLease(lease));
  if (!answer.ok()) {
    Log(std::string(what) + " lease " + config_.lease_namespace + "/" + config_.lease_name + ": " +
        answer.status().ToString());
    return false;
  }
  Result<model::Lease> written = codec::DecodeLease(*answer);
  MutexLock lock(mu_);
  // The server's answer carries the new resourceVersion; should it be unreadable, keep what we
  // sent, so the next renewal conflicts and re-reads instead of failing forever.
  ObserveLocked(written.ok() ? std::move(written).value() : lease, now);
  return true;
}

bool LeaderElector::TryAcquireOrRenew() {
  MutexLock attempt(attempt_mu_);
  const Clock::TimePoint now = clock_.Now();
  const model::Time wall_now = WallNow();
  const client::ResourceRef leases = client::LeasesResource();

  // 1. Fast path: a leader whose lease is still valid writes over the version it last saw,
  //    without a read first. A conflict falls through to the slow path, which re-reads.
  std::optional<model::Lease> fast;
  {
    MutexLock lock(mu_);
    if (IsLeaderLocked() && LeaseValidLocked(now)) {
      fast = Desired(*observed_, /*keep_acquire_time=*/true,
                     observed_->spec.lease_transitions.value_or(0), wall_now);
    }
  }
  if (fast.has_value()) {
    if (Write(*fast, now, "renewing")) return true;
    if (slowpath_ != nullptr) slowpath_->Inc();
  }

  // 2. Read the lease, creating it when absent.
  Result<std::string> got = client_.Get(leases, config_.lease_namespace, config_.lease_name);
  if (!got.ok()) {
    if (got.status().code() != StatusCode::kNotFound) {
      Log("reading lease " + config_.lease_namespace + "/" + config_.lease_name + ": " +
          got.status().ToString());
      return false;
    }
    const model::Lease lease = Desired({}, /*keep_acquire_time=*/false, 0, wall_now);
    Result<std::string> created =
        client_.Create(leases, config_.lease_namespace, codec::EncodeLease(lease));
    if (!created.ok()) {
      Log("creating lease " + config_.lease_namespace + "/" + config_.lease_name + ": " +
          created.status().ToString());
      return false;
    }
    Result<model::Lease> written = codec::DecodeLease(*created);
    MutexLock lock(mu_);
    ObserveLocked(written.ok() ? std::move(written).value() : lease, now);
    return true;
  }
  Result<model::Lease> current = codec::DecodeLease(*got);
  if (!current.ok()) {
    Log("decoding lease: " + current.status().ToString());
    return false;
  }

  // 3. Someone else holds a lease that has not expired by our own observation: wait.
  model::Lease desired;
  {
    MutexLock lock(mu_);
    ObserveLocked(std::move(current).value(), now);
    const std::string holder = observed_->spec.holder_identity.value_or("");
    if (!holder.empty() && LeaseValidLocked(now) && !IsLeaderLocked()) {
      return false;
    }
    // 4. Take it (a new transition) or renew it (keeping acquireTime and the transition count).
    const bool leader = IsLeaderLocked();
    const std::int32_t transitions =
        observed_->spec.lease_transitions.value_or(0) + (leader ? 0 : 1);
    desired = Desired(*observed_, leader, transitions, wall_now);
  }
  // A conflict here means another candidate wrote first; the next attempt re-reads.
  return Write(desired, now, "acquiring");
}

bool LeaderElector::Release() {
  MutexLock attempt(attempt_mu_);
  model::Lease lease;
  {
    MutexLock lock(mu_);
    if (!IsLeaderLocked()) return true;
    lease = *observed_;
  }
  const model::Time wall_now = WallNow();
  lease.spec.holder_identity = "";
  lease.spec.lease_duration_seconds = 1;
  lease.spec.acquire_time = wall_now;
  lease.spec.renew_time = wall_now;
  return Write(lease, clock_.Now(), "releasing");
}

void LeaderElector::MaybeReportTransition() {
  std::string holder;
  {
    MutexLock lock(mu_);
    if (!observed_.has_value()) return;
    holder = observed_->spec.holder_identity.value_or("");
    if (reported_ && holder == reported_leader_) return;
    reported_ = true;
    reported_leader_ = holder;
  }
  if (config_.callbacks.on_new_leader) config_.callbacks.on_new_leader(holder);
}

bool LeaderElector::SleepUntil(Clock::TimePoint deadline, const std::stop_token& stop) {
  // Registered before taking wait_mu_: a stop already requested runs the callback right here.
  std::stop_callback wake(stop, [this] {
    MutexLock lock(wait_mu_);
    wait_cv_.NotifyAll();
  });
  MutexLock lock(wait_mu_);
  while (!stop.stop_requested() && clock_.Now() < deadline) {
    clock_.WaitUntil(wait_cv_, wait_mu_, deadline);
  }
  return !stop.stop_requested();
}

bool LeaderElector::Acquire(const std::stop_token& stop) {
  std::uniform_real_distribution<double> jitter(0.0, kJitterFactor);
  while (!stop.stop_requested()) {
    const bool acquired = TryAcquireOrRenew();
    MaybeReportTransition();
    if (acquired) return true;
    // Sliding, as wait.JitterUntil(..., sliding=true): the period starts after the attempt.
    const auto wait =
        std::chrono::duration_cast<Clock::Duration>(config_.retry_period * (1.0 + jitter(random_)));
    if (!SleepUntil(clock_.Now() + wait, stop)) return false;
  }
  return false;
}

void LeaderElector::Renew(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    // Retry every retry period until the renew deadline (wait.PollUntilContextTimeout, immediate).
    const Clock::TimePoint deadline = clock_.Now() + config_.renew_deadline;
    bool renewed = false;
    while (true) {
      renewed = TryAcquireOrRenew();
      if (renewed) break;
      if (!SleepUntil(std::min(clock_.Now() + config_.retry_period, deadline), stop)) break;
      if (clock_.Now() >= deadline) break;
    }
    MaybeReportTransition();
    if (!renewed) {
      if (!stop.stop_requested()) {
        Log("failed to renew lease " + config_.lease_namespace + "/" + config_.lease_name +
            " within " + FormatSeconds(config_.renew_deadline) + "; stopping leading");
      }
      return;
    }
    if (!SleepUntil(clock_.Now() + config_.retry_period, stop)) return;
  }
}

void LeaderElector::Run(const std::stop_token& stop) {
  if (!Acquire(stop)) return;
  if (stop.stop_requested()) {
    // Won in an attempt that was under way when the stop came (the lease may have just been
    // released by a leader shutting down too): a process on its way out starts nothing.
    if (config_.release_on_cancel && !Release()) {
      Log("could not release lease " + config_.lease_namespace + "/" + config_.lease_name);
    }
    return;
  }
  if (master_status_ != nullptr) master_status_->Set(1);
  std::jthread leading([this, name = ThreadName("leading")](std::stop_token leading_stop) {
    name.Apply();
    config_.callbacks.on_started_leading(std::move(leading_stop));
  });
  Renew(stop);
  if (master_status_ != nullptr) master_status_->Set(0);
  if (config_.release_on_cancel && !Release()) {
    Log("could not release lease " + config_.lease_namespace + "/" + config_.lease_name);
  }
  leading.request_stop();
  config_.callbacks.on_stopped_leading();
  leading.join();
}

}  // namespace slicewright::runtime
