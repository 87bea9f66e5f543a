// Cluster liveness for the MCS agent (issue #23 §1, spec §7 ES9 and §10): renews this cluster's
// Lease `mcs-<cluster id>` in the broker namespace, watches the other members' Leases, tells which
// clusters are live and reports when one expires or comes back. It also makes a cluster id unique:
// Start() refuses an id whose Lease another live process holds. Thread-safe; one thread of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/cache/informer_factory.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/model/coordination.h"
#include "slicewright/model/time.h"

namespace slicewright::controllers::mcs {

struct LivenessOptions {
  // This cluster's id (a lower-case RFC 1123 subdomain, mcs/identity.h); required.
  std::string cluster_id;
  // Where the Leases live (the agent's --broker-namespace); required.
  std::string broker_namespace;
  // The Lease's holderIdentity, one per process; "" takes runtime::DefaultIdentity()
  // ("<hostname>_<random UUID>").
  std::string identity;
  // leaseDurationSeconds of our Lease (--mcs-lease-duration): whole seconds, at least 3 s. We renew
  // every third of it, and retry a failed renewal after min(that, 2 s).
  Clock::Duration lease_duration = std::chrono::seconds(30);
  // How long Start() waits for the broker's Lease cache to sync.
  Clock::Duration sync_timeout = std::chrono::seconds(30);
  // Called when another cluster turns live (true) or expired (false), from Start() and then the
  // liveness thread, one call at a time and never under a lock of ours; optional. A cluster first
  // seen live is reported live; one never seen live is not reported (it was not live before
  // either).
  std::function<void(const std::string& cluster_id, bool live)> on_change;
  // Called when a renewal succeeds after failing (the broker is back after an outage), from the
  // liveness thread, never under a lock of ours; optional. Whatever failed to reach the broker
  // meanwhile can be synced now rather than when its retry's backoff (up to minutes) ends.
  std::function<void()> on_resumed;
};

struct LivenessDeps {
  client::RestClient* broker = nullptr;                // required
  cache::InformerFactory* broker_informers = nullptr;  // required; its Lease informer is made here
  Clock* clock = nullptr;                              // null: SystemClock
};

// The Lease name of a cluster id: "mcs-" + id (an id is a subdomain, so dots stay).
std::string LivenessLeaseName(std::string_view cluster_id);

// The Lease an agent writes for `cluster_id` at `now`, from `base` (the Lease as last read or
// written; empty for a create): name, namespace, the source-cluster label, holderIdentity,
// leaseDurationSeconds and renewTime set; acquireTime and leaseTransitions moved on when the
// holder changes. Pure: ClusterLiveness renews with it, and bench/simulated_member.h writes a
// simulated member's Lease with it.
model::Lease LivenessLease(model::Lease base, std::string_view cluster_id,
                           std::string_view broker_namespace, std::string_view identity,
                           Clock::Duration lease_duration, model::Time now);

// When is a cluster live? Each other cluster has a deadline on our steady clock, and is live while
// its Lease is present, held, and the deadline is ahead. Every change of its Lease that we see
// moves the deadline to one of its lease durations (leaseDurationSeconds) from then, so a member
// whose clock runs behind ours is not expired while it renews. A Lease first seen (at Start(),
// or when it appears) has the deadline its renewTime gives on our wall clock, but never more
// than one lease duration from then: a member whose clock runs ahead of ours (a renewTime in our
// future) is not kept live past that. Our own cluster is always live. A cluster without a Lease
// is not live.
//
// The broker outage freeze. Every member renews through the same broker, so when we cannot renew
// (the broker is unreachable or answers errors, or we do not hold our Lease yet) the others most
// likely cannot either, and their Leases age for a reason that is not theirs. Expiring them would
// make every member delete every other member's slices at once, the opposite of what the spec
// asks (imports stay as they were and converge when the broker returns). So while our renewals
// fail, nobody is judged expired (a Lease seen renewed may still turn a cluster live); when a
// renewal succeeds again and the Lease cache shows it, each cluster that was live gets one full
// lease duration from that moment to renew before it can expire. A restarted agent does the
// same for the clusters its previous run imported (Start()'s previously_live), whatever order the
// restart and the outage came in.
//
// The bound. A member whose agent stops renewing (dead, or cut off from the broker alone) is
// expired by us at most one of its lease durations after the latest of: the last change of its
// Lease we saw, our Start() (when it was previously live), and the end of our last freeze (our
// renewal succeeding and showing in our cache). We never expire anyone while frozen, so the
// bound holds from when the broker answers us again; how long that takes is the outage's.
class ClusterLiveness final {
 public:
  // Validates the options (kInvalid naming the field) and creates the Lease informer of the broker
  // namespace in `broker_informers` (so it starts with the factory).
  static Result<std::unique_ptr<ClusterLiveness>> Create(LivenessOptions options,
                                                         LivenessDeps deps);
  // Stop().
  ~ClusterLiveness();
  ClusterLiveness(const ClusterLiveness&) = delete;
  ClusterLiveness& operator=(const ClusterLiveness&) = delete;

  // Takes our Lease (creating it, renewing our own, or taking over an expired one) and so checks
  // that the cluster id is ours alone; needs no cache, so the agent can call it when it is
  // created, before the informers start. Errors:
  // - kAlreadyExists when another holder identity holds our Lease and it has not expired: two
  //   members with one cluster id ("mcs: cluster id \"a\" is already in use: Lease
  //   slicewright-mcs/mcs-a is held by \"host_uuid\" until ..."). An expired Lease (a previous
  //   run's) is taken over.
  // - the broker's error (kUnavailable, kForbidden, kConflict, ...) when the Lease cannot be read
  //   or written; the caller may retry.
  // OK at once when already acquired; kInvalid after Stop(); kUnavailable while the renewing
  // thread (StartRenewing()) has not taken it yet.
  Status Acquire();
  // Acquire(), but a Lease of another holder identity that nobody renews while we wait (a previous
  // run of this cluster, killed without releasing it) is waited out and then taken over, so an
  // agent restarted within the TTL starts once its old Lease expires. One renewed while we wait
  // belongs to a live member: kAlreadyExists, its message saying so. Other errors as Acquire().
  // Blocks for at most the held Lease's remaining duration and a retry (min(duration/3, 2 s)),
  // or until `stop` is requested or Stop() is called: then kCancelled.
  Status AcquireOrWaitOut(const std::stop_token& stop = {});
  // Starts the thread that renews our Lease, before the caches sync (the agent calls it when it
  // is created): the others keep seeing us live however long our informers take (after a broker
  // outage they back off for up to 30 s). Until we hold the Lease (the broker does not answer, or
  // a previous run's Lease is still live: waited out, then taken over) we are frozen. Nobody is
  // judged until Start(). OK when already renewing; kInvalid after Stop().
  Status StartRenewing();
  // Waits up to sync_timeout for the Lease cache (call it once the broker informers are started;
  // kTimeout if it does not sync), judges, reports the clusters live now through on_change, and
  // judges from then on. Without StartRenewing() it first takes our Lease (Acquire()) and starts
  // renewing: when that fails with a retryable error (the broker does not answer) or with
  // kAlreadyExists (our Lease is held by another identity: a previous run whose Lease has not
  // expired yet, or another member with our id), the thread keeps trying, frozen until it holds
  // the Lease; it logs an error if that Lease is renewed while it waits (two members with one
  // id). Its other errors are returned. kInvalid when called after Start() or Stop(); after an
  // error it may be called again.
  //
  // `previously_live`: the clusters a previous run of this agent imported (what it left in this
  // cluster's ServiceImports' status.clusters and MCS EndpointSlices). Their Leases, when found
  // expired at this first judgement, get one lease duration from now to be renewed, as after a
  // broker outage: an agent restarted during or just after an outage (every Lease aged) must
  // not delete what its previous run imported before the others had a chance to renew. A
  // cluster found expired that is not among them is not imported until its Lease changes.
  Status Start(const std::vector<std::string>& previously_live = {});
  // Stops renewing and judging and joins the thread; on_change is not called after it returns.
  // The Lease is left in place: it expires, so the others drop our slices only after the TTL.
  // Idempotent.
  void Stop();

  // Before Start() has judged, only our own cluster is live.
  bool IsLive(std::string_view cluster_id) const;
  // Every live cluster, ours included, sorted.
  std::vector<std::string> LiveClusters() const;
  // True while our renewals fail (the freeze above).
  bool Frozen() const;
  // How many renewal rounds (a renewal tried, then the judgement after it) have finished: lets a
  // test know the thread has acted on a clock advance.
  std::uint64_t Rounds() const;

  const std::string& cluster_id() const { return options_.cluster_id; }
  const std::string& identity() const { return options_.identity; }
  const std::string& lease_name() const { return lease_name_; }
  // The wall time on our clock (what we write as renewTime and judge others' Leases against).
  model::Time WallNow() const;

 private:
  // What we know of another cluster's Lease.
  struct Tracked {
    model::LeaseSpec spec;
    // Live until then (our steady clock), see "When is a cluster live?" above.
    Clock::TimePoint deadline = Clock::TimePoint::min();
    bool live = false;    // as reported
    bool present = true;  // the Lease is in the cache
  };
  struct Change {
    std::string cluster_id;
    bool live;
  };
  // The Lease informer's handler reaches us through this, so an event after our destruction (the
  // informer lives as long as the factory, and handlers cannot be removed) finds nobody.
  struct Waker {
    Mutex mu;
    ClusterLiveness* target SW_GUARDED_BY(mu) = nullptr;
  };

  ClusterLiveness(LivenessOptions options, LivenessDeps deps, Clock& clock,
                  cache::Informer<model::Lease>& leases);
  // One renewal, or the first acquisition (`initial`: refuse a live foreign holder).
  Status Renew(bool initial);
  Status AcquireLocked() SW_REQUIRES(run_mu_);
  model::Lease Desired(model::Lease base) const;
  void Run();
  // Reads the Lease cache, updates `tracked_` and returns what changed; sets next_expiry_.
  std::vector<Change> JudgeLocked(Clock::TimePoint now) SW_REQUIRES(mu_);
  // True when the Lease cache holds our Lease renewed at `renewed_at` or later.
  bool CachedRenewalLocked(model::Time renewed_at) const SW_REQUIRES(mu_);
  // The deadline of a Lease first seen at `now`: its wall expiry, at most one duration away.
  Clock::TimePoint FirstSightDeadline(const model::LeaseSpec& spec, Clock::TimePoint now,
                                      model::Time wall_now) const;
  // One of `spec`'s lease durations (ours when it has none).
  Clock::Duration DurationOf(const model::LeaseSpec& spec) const;
  // The thread, renewing and refused: logs once when the Lease that refused us is renewed.
  void NoteRefusalLocked(const Status& renewed) SW_REQUIRES(mu_);
  void Notify(const std::vector<Change>& changes) const;
  void Poke();

  const LivenessOptions options_;
  const LivenessDeps deps_;
  Clock& clock_;
  cache::Informer<model::Lease>& leases_;
  const std::string lease_name_;
  const Clock::TimePoint steady_origin_;
  const model::Time wall_origin_;
  const std::shared_ptr<Waker> waker_;

  Mutex run_mu_;  // serialises Acquire(), StartRenewing(), Start() and Stop()
  mutable Mutex mu_ SW_ACQUIRED_AFTER(run_mu_);
  CondVar cv_;  // the thread waits here (through the clock); Poke() and Stop() notify it
  bool acquired_ SW_GUARDED_BY(mu_) = false;
  bool started_ SW_GUARDED_BY(mu_) = false;   // judging (Start() has judged once)
  bool renewing_ SW_GUARDED_BY(mu_) = false;  // the thread runs
  bool stopping_ SW_GUARDED_BY(mu_) = false;
  bool dirty_ SW_GUARDED_BY(mu_) = false;   // a Lease event since the last judgement
  bool frozen_ SW_GUARDED_BY(mu_) = false;  // our last renewal failed, or we hold no Lease yet
  // Frozen, a renewal succeeded at this renewTime, and the Lease cache has not shown it yet.
  std::optional<model::Time> resume_after_ SW_GUARDED_BY(mu_);
  std::uint64_t rounds_ SW_GUARDED_BY(mu_) = 0;
  // Start()'s previously_live, until the first judgement.
  std::vector<std::string> previously_live_ SW_GUARDED_BY(mu_);
  // The Lease of another holder that our last acquisition attempt was refused.
  std::optional<model::LeaseSpec> refused_ SW_GUARDED_BY(mu_);
  // The thread's first refusal while it waits a held Lease out, and whether it said the holder
  // renews it (a live member with our id).
  std::optional<model::LeaseSpec> waiting_out_ SW_GUARDED_BY(mu_);
  bool duplicate_logged_ SW_GUARDED_BY(mu_) = false;
  std::map<std::string, Tracked, std::less<>> tracked_ SW_GUARDED_BY(mu_);
  Clock::TimePoint next_renew_ SW_GUARDED_BY(mu_);
  Clock::TimePoint next_expiry_ SW_GUARDED_BY(mu_) = Clock::TimePoint::max();
  // Our Lease as last written (its resourceVersion). Not under mu_: only Acquire() (under run_mu_,
  // before the thread exists) and then the thread touch it, one after the other.
  std::optional<model::Lease> ours_;
  std::thread thread_ SW_GUARDED_BY(run_mu_);
};

}  // namespace slicewright::controllers::mcs
