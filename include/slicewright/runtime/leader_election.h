// Leader election on a coordination.k8s.io/v1 Lease, behaving like client-go's leaderelection
// package with a LeaseLock: candidates race to write their identity into one Lease; the holder
// renews it every retry period and gives up leading when it cannot renew within the renew
// deadline; the others take it over only once it has not changed for a whole lease duration of
// their own clock (never by comparing the remote renewTime with local time, so clock skew between
// candidates does not matter). Thread-safe: Run() on one thread, the accessors from any thread.
// The RestClient, Clock and Registry must outlive the elector.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/model/coordination.h"
#include "slicewright/runtime/metrics.h"

namespace slicewright::runtime {

struct LeaderCallbacks {
  // Required. Runs on a thread of its own once this candidate leads; `stop` is requested when it
  // stops leading (the lease was lost or Run() was stopped), and the callback should return soon
  // after: Run() joins it before returning.
  std::function<void(std::stop_token stop)> on_started_leading;
  // Required. Called on Run()'s thread when leading has ended, after the lease was released (with
  // release_on_cancel) and `stop` was requested, before the on_started_leading thread is joined,
  // so a process can exit at once as kube-controller-manager does. Unlike client-go, it is not
  // called when Run() returns without ever having led.
  std::function<void()> on_stopped_leading;
  // Optional. Called on Run()'s thread whenever the observed holder changes, ourselves included;
  // "" for a released lease. Must not block: it delays the next renewal.
  std::function<void(const std::string& identity)> on_new_leader;
};

// The upstream defaults (kube-controller-manager's --leader-elect-* flags map onto these).
struct LeaderElectionConfig {
  std::string lease_namespace = "kube-system";  // --leader-elect-resource-namespace
  std::string lease_name;                       // --leader-elect-resource-name; required
  // Required and unique per candidate; DefaultIdentity() gives what kube-controller-manager uses.
  std::string identity;
  // How long a non-leader waits after the lease last changed before taking it over. Written to
  // the lease in whole seconds (at least 1). --leader-elect-lease-duration
  Clock::Duration lease_duration = std::chrono::seconds(15);
  // How long the leader keeps retrying a failed renewal before it stops leading; must be shorter
  // than lease_duration. --leader-elect-renew-deadline
  Clock::Duration renew_deadline = std::chrono::seconds(10);
  // The wait between attempts (jittered by up to 1.2x while acquiring); renew_deadline must exceed
  // 1.2 * retry_period. --leader-elect-retry-period
  Clock::Duration retry_period = std::chrono::seconds(2);
  // When Run() ends, a leader writes an empty holder with a 1 s duration, so another candidate
  // takes over at once instead of waiting for the lease to expire. Only safe when nothing the
  // leader started keeps running after on_stopped_leading.
  bool release_on_cancel = true;
  LeaderCallbacks callbacks;
  // Where leader_election_master_status and leader_election_slowpath_total go (upstream names,
  // labelled name=<lease_name>); nullptr: no metrics.
  Registry* metrics = nullptr;
  // Why attempts failed, until the base layer has a logger; nullptr: silent.
  std::function<void(std::string_view message)> log;
  // Seeds the jitter of the acquire loop; 0 draws a seed from std::random_device.
  std::uint64_t random_seed = 0;
};

// "<hostname>_<random UUID>", as kube-controller-manager builds its identity, so two processes on
// one host never share one. kInternal if the host name cannot be read.
Result<std::string> DefaultIdentity();

class LeaderElector final {
 public:
  // kInvalid for a config client-go's NewLeaderElector rejects (missing name, identity or
  // callback; lease_duration <= renew_deadline; renew_deadline <= 1.2 * retry_period; a
  // non-positive duration) or a lease duration under one second; kAlreadyExists if the registry
  // holds another metric under one of the names.
  static Result<std::unique_ptr<LeaderElector>> Create(LeaderElectionConfig config,
                                                       client::RestClient& client, Clock& clock);
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;
  ~LeaderElector();

  // Campaigns until this candidate leads or `stop` is requested (an attempt every retry period,
  // jittered); then starts on_started_leading and renews until `stop` is requested or a renewal
  // fails for renew_deadline; then releases (release_on_cancel) and calls on_stopped_leading.
  // Blocks until all that is done. Call it at most once: like client-go, campaigning again takes
  // a new elector.
  void Run(const std::stop_token& stop);

  // One attempt, as client-go's tryAcquireOrRenew: the leader renews (a PUT of the lease it last
  // saw, re-reading it on a conflict); a candidate creates the lease when absent and takes it when
  // its holder is empty or it has not changed for its lease duration since first observed here.
  // True when this candidate holds the lease afterwards. Run() calls it; it is public for callers
  // that drive their own loop. Attempts are serialized.
  bool TryAcquireOrRenew();
  // Gives the lease up if this candidate holds it (empty holder, 1 s duration). True when released
  // or not held.
  bool Release();

  // Whether the last observed lease names this candidate.
  bool IsLeader() const;
  // The holder of the last observed lease ("" if none or unknown).
  std::string GetLeader() const;
  const std::string& identity() const { return config_.identity; }

 private:
  LeaderElector(LeaderElectionConfig config, client::RestClient& client, Clock& clock,
                Gauge* master_status, Counter* slowpath);

  // The lease with this candidate's record in it; `base` supplies the object (resourceVersion).
  model::Lease Desired(const model::Lease& base, bool keep_acquire_time, std::int32_t transitions,
                       model::Time now) const;
  // Records a lease we wrote or read as the observed one.
  void ObserveLocked(model::Lease lease, Clock::TimePoint now) SW_REQUIRES(mu_);
  bool IsLeaderLocked() const SW_REQUIRES(mu_);
  bool LeaseValidLocked(Clock::TimePoint now) const SW_REQUIRES(mu_);
  // Writes `lease` with PUT; on success it becomes the observed lease.
  bool Write(const model::Lease& lease, Clock::TimePoint now, std::string_view what);
  void MaybeReportTransition();
  void Log(std::string_view message) const;
  // Real time from the injected Clock: the wall time at construction plus the Clock's elapsed
  // time, so a FakeClock moves the times written to the lease too.
  model::Time WallNow() const;
  // Waits on the clock until `deadline`; false if `stop` was requested first.
  bool SleepUntil(Clock::TimePoint deadline, const std::stop_token& stop);
  // The acquire loop; false if stopped before leading.
  bool Acquire(const std::stop_token& stop);
  // The renew loop; returns when stopped or a renewal failed for renew_deadline.
  void Renew(const std::stop_token& stop);

  const LeaderElectionConfig config_;
  client::RestClient& client_;
  Clock& clock_;
  Gauge* const master_status_;
  Counter* const slowpath_;
  const Clock::TimePoint steady_origin_;
  const model::Time wall_origin_;

  Mutex attempt_mu_;  // serializes TryAcquireOrRenew() and Release()

  mutable Mutex mu_ SW_ACQUIRED_AFTER(attempt_mu_);
  // The last lease read or written (its object carries the resourceVersion a PUT needs).
  std::optional<model::Lease> observed_ SW_GUARDED_BY(mu_);
  // Local clock time when observed_'s spec last changed: expiry is judged from here.
  Clock::TimePoint observed_time_ SW_GUARDED_BY(mu_);
  std::string reported_leader_ SW_GUARDED_BY(mu_);  // the holder last passed to on_new_leader
  bool reported_ SW_GUARDED_BY(mu_) = false;

  Mutex wait_mu_;
  CondVar wait_cv_;         // SleepUntil() waits here; a stop request notifies it
  std::mt19937_64 random_;  // only Run()'s thread uses it
};

}  // namespace slicewright::runtime
