#include "slicewright/runtime/leader_election.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/clock.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/transport.h"
#include "slicewright/codec/coordination.h"
#include "slicewright/runtime/metrics.h"

#include "apiserver/rest/serve.h"
#include "client/client_test_util.h"
#include "runtime/stepped_clock.h"

// LeaderElector against the real embedded API server. Single attempts (TryAcquireOrRenew) pin the
// exact timing rules on a FakeClock; the Concurrent* tests run whole candidates on threads and
// step a FakeClock (each step once every candidate sleeps again) until an outcome, asserting on the
// fake times the callbacks recorded.
namespace slicewright::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kNamespace[] = "kube-system";
constexpr char kLeaseName[] = "slicewright-controller-manager";

// Records what a candidate's callbacks saw, with the fake time of each.
struct Observer {
  Observer(Clock& time, std::string self) : clock(time), identity(std::move(self)) {}

  LeaderCallbacks Callbacks() {
    LeaderCallbacks callbacks;
    callbacks.on_started_leading = [this](std::stop_token) {
      std::lock_guard<std::mutex> lock(mu);
      started_at = clock.Now();
    };
    callbacks.on_stopped_leading = [this] {
      std::lock_guard<std::mutex> lock(mu);
      stopped_at = clock.Now();
      ++stopped_calls;
    };
    // Called on Run()'s thread right after the winning attempt, so its time is exact (the
    // on_started_leading thread may start a few clock steps later).
    callbacks.on_new_leader = [this](const std::string& leader) {
      std::lock_guard<std::mutex> lock(mu);
      new_leaders.push_back(leader);
      if (leader == identity && !became_leader_at) became_leader_at = clock.Now();
    };
    return callbacks;
  }
  bool Started() {
    std::lock_guard<std::mutex> lock(mu);
    return started_at.has_value();
  }
  bool Stopped() {
    std::lock_guard<std::mutex> lock(mu);
    return stopped_at.has_value();
  }

  Clock& clock;
  const std::string identity;
  std::mutex mu;
  std::optional<Clock::TimePoint> became_leader_at;
  std::optional<Clock::TimePoint> started_at;
  std::optional<Clock::TimePoint> stopped_at;
  int stopped_calls = 0;
  std::vector<std::string> new_leaders;
};

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir.Path("");
    auto started = apiserver::RunningApiServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(started).value();
    client = MakeClient();
    ASSERT_NE(client, nullptr);
  }

  // The client waits on the real clock (its own backoff) and does not retry, so a stopped server
  // fails an attempt at once; the elector's waits use the FakeClock.
  std::unique_ptr<client::RestClient> MakeClient() {
    client::RestConfig config;
    config.server.scheme = "http";
    config.server.host = "127.0.0.1";
    config.server.port = server->port();
    auto transport = client::Transport::Create(config, {});
    if (!transport.ok()) return nullptr;
    client::RestClientOptions options;
    options.max_retries = 0;
    options.qps = 1000;
    options.burst = 1000;
    auto made = client::RestClient::Create(
        std::shared_ptr<client::Transport>(std::move(transport).value()), options);
    return made.ok() ? std::move(made).value() : nullptr;
  }

  LeaderElectionConfig Config(std::string identity, Observer* observer = nullptr) {
    LeaderElectionConfig config;
    config.lease_namespace = kNamespace;
    config.lease_name = kLeaseName;
    config.identity = std::move(identity);
    config.random_seed = 42;
    if (observer != nullptr) {
      config.callbacks = observer->Callbacks();
    } else {
      config.callbacks.on_started_leading = [](std::stop_token) {};
      config.callbacks.on_stopped_leading = [] {};
    }
    return config;
  }

  std::unique_ptr<LeaderElector> Elector(LeaderElectionConfig config) {
    auto elector = LeaderElector::Create(std::move(config), *client, clock);
    EXPECT_TRUE(elector.ok()) << elector.status().ToString();
    return elector.ok() ? std::move(elector).value() : nullptr;
  }

  model::Lease ReadLease() {
    Result<std::string> json = client->Get(client::LeasesResource(), kNamespace, kLeaseName);
    EXPECT_TRUE(json.ok()) << json.status().ToString();
    if (!json.ok()) return {};
    Result<model::Lease> lease = codec::DecodeLease(*json);
    EXPECT_TRUE(lease.ok()) << lease.status().ToString();
    return lease.ok() ? *lease : model::Lease{};
  }

  // Moves the clock by `step` each time `sleepers` threads have settled on it, until `done`.
  bool AdvanceUntil(const std::function<bool()>& done, int sleepers,
                    Clock::Duration step = milliseconds(500)) {
    return clock.AdvanceUntil(done, sleepers, step);
  }

  // Starts `elector`'s Run() on a thread that the returned jthread joins (stopping it first).
  static std::jthread Start(LeaderElector& elector) {
    return std::jthread([&elector](std::stop_token stop) { elector.Run(stop); });
  }

  client::testing::TempDir dir;
  std::unique_ptr<apiserver::RunningApiServer> server;
  std::unique_ptr<client::RestClient> client;
  testing::SteppedClock clock;
};

TEST_F(LeaderElectionTest, RejectsConfigsClientGoRejects) {
  auto rejected = [&](const std::function<void(LeaderElectionConfig&)>& change) {
    LeaderElectionConfig config = Config("a");
    change(config);
    return LeaderElector::Create(std::move(config), *client, clock).status().code() ==
           StatusCode::kInvalid;
  };
  EXPECT_TRUE(rejected([](auto& c) { c.lease_name.clear(); }));
  EXPECT_TRUE(rejected([](auto& c) { c.identity.clear(); }));
  EXPECT_TRUE(rejected([](auto& c) { c.callbacks.on_stopped_leading = nullptr; }));
  EXPECT_TRUE(rejected([](auto& c) { c.lease_duration = c.renew_deadline; }));
  EXPECT_TRUE(rejected([](auto& c) { c.renew_deadline = c.retry_period * 6 / 5; }));
  EXPECT_TRUE(rejected([](auto& c) { c.retry_period = Clock::Duration::zero(); }));
  EXPECT_TRUE(rejected([](auto& c) {
    c.lease_duration = milliseconds(900);
    c.renew_deadline = milliseconds(500);
    c.retry_period = milliseconds(100);
  }));
  EXPECT_FALSE(rejected([](auto&) {}));
}

// kube-controller-manager's --leader-elect-lease-duration, --leader-elect-renew-deadline and
// --leader-elect-retry-period defaults; changing them changes failover time for every deployment.
TEST(LeaderElectionConfigTest, DefaultsAreKubeControllerManagers) {
  const LeaderElectionConfig config;
  EXPECT_EQ(config.lease_duration, seconds(15));
  EXPECT_EQ(config.renew_deadline, seconds(10));
  EXPECT_EQ(config.retry_period, seconds(2));
}

TEST(DefaultIdentityTest, HostNameAndUuid) {
  Result<std::string> a = DefaultIdentity();
  Result<std::string> b = DefaultIdentity();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(std::regex_match(
      *a, std::regex(".+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << *a;
}

TEST_F(LeaderElectionTest, SingleCandidateCreatesTheLease) {
  Registry registry;
  LeaderElectionConfig config = Config("node-a_1");
  config.metrics = &registry;
  auto a = Elector(std::move(config));
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->IsLeader());
  ASSERT_TRUE(a->TryAcquireOrRenew());
  EXPECT_TRUE(a->IsLeader());
  EXPECT_EQ(a->GetLeader(), "node-a_1");

  const model::Lease lease = ReadLease();
  EXPECT_EQ(lease.spec.holder_identity, "node-a_1");
  EXPECT_EQ(lease.spec.lease_duration_seconds, 15);
  EXPECT_EQ(lease.spec.lease_transitions, 0);
  ASSERT_TRUE(lease.spec.acquire_time.has_value());
  EXPECT_EQ(lease.spec.acquire_time, lease.spec.renew_time);
  // MicroTime on the wire: six fractional digits.
  Result<std::string> json = client->Get(client::LeasesResource(), kNamespace, kLeaseName);
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(std::regex_search(*json, std::regex(R"("renewTime":"[-0-9T:]+\.[0-9]{6}Z")")))
      << *json;

  // A renewal moves renewTime with the (fake) clock and keeps acquireTime and transitions.
  clock.Advance(seconds(2));
  ASSERT_TRUE(a->TryAcquireOrRenew());
  const model::Lease renewed = ReadLease();
  EXPECT_EQ(renewed.spec.acquire_time, lease.spec.acquire_time);
  EXPECT_EQ(renewed.spec.renew_time->unix_nanos - lease.spec.renew_time->unix_nanos, 2'000'000'000);
  EXPECT_EQ(renewed.spec.lease_transitions, 0);
  EXPECT_NE(renewed.metadata.resource_version, lease.metadata.resource_version);
  EXPECT_NE(registry.Expose().find("leader_election_slowpath_total{name=\"" +
                                   std::string(kLeaseName) + "\"} 0"),
            std::string::npos);
}

TEST_F(LeaderElectionTest, AnotherCandidateWaitsALeaseDurationFromItsOwnObservation) {
  auto a = Elector(Config("a"));
  auto b = Elector(Config("b"));
  ASSERT_TRUE(a->TryAcquireOrRenew());
  // b first sees the record 10 s after a wrote it: expiry counts from there, not from renewTime.
  clock.Advance(seconds(10));
  EXPECT_FALSE(b->TryAcquireOrRenew());
  EXPECT_EQ(b->GetLeader(), "a");
  EXPECT_FALSE(b->IsLeader());
  // a is "killed": it never renews again. 16 s after a's write, but 6 s after b's observation.
  clock.Advance(seconds(6));
  EXPECT_FALSE(b->TryAcquireOrRenew());
  clock.Advance(seconds(8));  // 14 s observed
  EXPECT_FALSE(b->TryAcquireOrRenew());
  clock.Advance(milliseconds(999));
  EXPECT_FALSE(b->TryAcquireOrRenew());
  clock.Advance(milliseconds(1));  // 15 s: expired
  EXPECT_TRUE(b->TryAcquireOrRenew());
  EXPECT_TRUE(b->IsLeader());

  const model::Lease lease = ReadLease();
  EXPECT_EQ(lease.spec.holder_identity, "b");
  EXPECT_EQ(lease.spec.lease_transitions, 1);
  // a notices on its next attempt: it is no longer the leader and may not take it back.
  EXPECT_FALSE(a->TryAcquireOrRenew());
  EXPECT_FALSE(a->IsLeader());
  EXPECT_EQ(a->GetLeader(), "b");
}

TEST_F(LeaderElectionTest, RenewalsKeepOthersOut) {
  auto a = Elector(Config("a"));
  auto b = Elector(Config("b"));
  ASSERT_TRUE(a->TryAcquireOrRenew());
  for (int i = 0; i < 30; ++i) {
    clock.Advance(seconds(2));
    ASSERT_TRUE(a->TryAcquireOrRenew()) << i;
    ASSERT_FALSE(b->TryAcquireOrRenew()) << i;
  }
  EXPECT_EQ(ReadLease().spec.lease_transitions, 0);
}

TEST_F(LeaderElectionTest, ReleaseLetsAnotherTakeOverAtOnce) {
  auto a = Elector(Config("a"));
  auto b = Elector(Config("b"));
  EXPECT_TRUE(a->Release());  // not held: nothing to do
  ASSERT_TRUE(a->TryAcquireOrRenew());
  EXPECT_FALSE(b->TryAcquireOrRenew());
  ASSERT_TRUE(a->Release());
  EXPECT_FALSE(a->IsLeader());
  const model::Lease released = ReadLease();
  EXPECT_EQ(released.spec.holder_identity, "");  // written as "", not omitted
  EXPECT_EQ(released.spec.lease_duration_seconds, 1);
  EXPECT_EQ(released.spec.lease_transitions, 0);

  EXPECT_TRUE(b->TryAcquireOrRenew());  // no wait: the holder is empty
  const model::Lease taken = ReadLease();
  EXPECT_EQ(taken.spec.holder_identity, "b");
  EXPECT_EQ(taken.spec.lease_duration_seconds, 15);
  EXPECT_EQ(taken.spec.lease_transitions, 1);
}

TEST_F(LeaderElectionTest, ConflictFallsBackToTheSlowPathAndYieldsToTheNewHolder) {
  Registry registry;
  LeaderElectionConfig config = Config("a");
  config.metrics = &registry;
  auto a = Elector(std::move(config));
  ASSERT_TRUE(a->TryAcquireOrRenew());

  // Someone else overwrites the lease: a's fast-path PUT carries a stale resourceVersion (409).
  model::Lease stolen = ReadLease();
  stolen.spec.holder_identity = "intruder";
  ASSERT_TRUE(
      client->Update(client::LeasesResource(), kNamespace, kLeaseName, codec::EncodeLease(stolen))
          .ok());
  clock.Advance(seconds(2));
  EXPECT_FALSE(a->TryAcquireOrRenew());
  EXPECT_FALSE(a->IsLeader());
  EXPECT_EQ(a->GetLeader(), "intruder");
  EXPECT_NE(registry.Expose().find("leader_election_slowpath_total{name=\"" +
                                   std::string(kLeaseName) + "\"} 1"),
            std::string::npos)
      << registry.Expose();
  EXPECT_EQ(ReadLease().spec.holder_identity, "intruder");

  // Two candidates that both saw the same expired version: the first PUT wins, the second
  // conflicts and does not lead.
  auto b = Elector(Config("b"));
  auto c = Elector(Config("c"));
  EXPECT_FALSE(b->TryAcquireOrRenew());
  EXPECT_FALSE(c->TryAcquireOrRenew());
  clock.Advance(seconds(15));
  EXPECT_TRUE(b->TryAcquireOrRenew());
  EXPECT_FALSE(c->TryAcquireOrRenew());
  EXPECT_EQ(ReadLease().spec.holder_identity, "b");
}

TEST_F(LeaderElectionTest, ConcurrentCandidatesOnlyOneLeads) {
  constexpr int kCandidates = 3;
  std::vector<std::unique_ptr<Observer>> observers;
  std::vector<std::unique_ptr<LeaderElector>> electors;
  for (int i = 0; i < kCandidates; ++i) {
    const std::string name = "c" + std::to_string(i);
    observers.push_back(std::make_unique<Observer>(clock, name));
    electors.push_back(Elector(Config(name, observers.back().get())));
    ASSERT_NE(electors.back(), nullptr);
  }
  std::vector<std::jthread> runs;
  for (auto& elector : electors) {
    runs.emplace_back([&elector](std::stop_token stop) { elector->Run(stop); });
  }
  // Each made its first attempt at once and then went to sleep on the clock.
  ASSERT_TRUE(clock.WaitSettled(kCandidates));
  // A minute of renewal rounds: still exactly one leader.
  const Clock::TimePoint later = clock.Now() + seconds(60);
  ASSERT_TRUE(AdvanceUntil([&] { return clock.Now() >= later; }, kCandidates, seconds(1)));
  // Let the attempts of the last step finish, or one could see the lease the leader releases on
  // the stop below and take it.
  ASSERT_TRUE(clock.WaitSettled(kCandidates));
  int leaders = 0;
  std::string leader;
  for (auto& elector : electors) {
    if (elector->IsLeader()) {
      ++leaders;
      leader = elector->identity();
    }
  }
  ASSERT_EQ(leaders, 1);
  for (auto& elector : electors) EXPECT_EQ(elector->GetLeader(), leader);
  for (auto& run : runs) run.request_stop();
  runs.clear();  // joins
  int stopped = 0;
  for (auto& observer : observers) stopped += observer->stopped_calls;
  EXPECT_EQ(stopped, 1);                            // only the leader had something to stop
  EXPECT_EQ(ReadLease().spec.holder_identity, "");  // released on cancel
}

// A stop that arrives while the winning attempt is under way: the process is shutting down, so it
// does not start leading, and it gives the lease straight back.
TEST_F(LeaderElectionTest, WinningAfterTheStopStartsNothingAndReleases) {
  Observer observer(clock, "a");
  LeaderElectionConfig config = Config("a", &observer);
  std::stop_source stop;
  // on_new_leader runs on Run()'s thread right after the winning write.
  config.callbacks.on_new_leader = [&stop](const std::string& leader) {
    if (leader == "a") stop.request_stop();
  };
  std::unique_ptr<LeaderElector> elector = Elector(std::move(config));
  ASSERT_NE(elector, nullptr);
  elector->Run(stop.get_token());  // returns: stopped
  EXPECT_FALSE(observer.Started());
  EXPECT_EQ(observer.stopped_calls, 0);
  EXPECT_FALSE(elector->IsLeader());
  EXPECT_EQ(ReadLease().spec.holder_identity, "");
}

TEST_F(LeaderElectionTest, ConcurrentKilledLeaderIsReplacedOnlyAfterTheLeaseDuration) {
  Observer observer_a(clock, "a");
  Observer observer_b(clock, "b");
  LeaderElectionConfig config_a = Config("a", &observer_a);
  config_a.release_on_cancel = false;  // a dies without a word
  auto a = Elector(std::move(config_a));
  auto b = Elector(Config("b", &observer_b));
  {
    std::jthread run_a = Start(*a);
    ASSERT_TRUE(AdvanceUntil([&] { return observer_a.Started(); }, 1));
  }  // killed: stops renewing, leaves the lease as it was
  EXPECT_EQ(ReadLease().spec.holder_identity, "a");
  EXPECT_EQ(observer_a.stopped_calls, 1);

  const Clock::TimePoint killed_at = clock.Now();
  std::jthread run_b = Start(*b);
  ASSERT_TRUE(AdvanceUntil([&] { return observer_b.Started(); }, 1));
  std::lock_guard<std::mutex> lock(observer_b.mu);
  // b's first observation was at killed_at; it takes over at its first attempt after 15 s
  // (attempts are at most 2 s * 2.2 apart).
  EXPECT_GE(*observer_b.became_leader_at - killed_at, seconds(15));
  EXPECT_LE(*observer_b.became_leader_at - killed_at, milliseconds(15'000 + 4'400 + 500));
  EXPECT_EQ(observer_b.new_leaders, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ReadLease().spec.lease_transitions, 1);
}

TEST_F(LeaderElectionTest, ConcurrentGracefulReleaseIsTakenOverAtOnce) {
  Registry registry;
  Observer observer_a(clock, "a");
  Observer observer_b(clock, "b");
  LeaderElectionConfig config_a = Config("a", &observer_a);
  config_a.metrics = &registry;
  auto a = Elector(std::move(config_a));
  auto b = Elector(Config("b", &observer_b));
  std::jthread run_a = Start(*a);
  ASSERT_TRUE(AdvanceUntil([&] { return observer_a.Started(); }, 1));
  const std::string leading = "leader_election_master_status{name=\"" + std::string(kLeaseName);
  EXPECT_NE(registry.Expose().find(leading + "\"} 1"), std::string::npos);
  std::jthread run_b = Start(*b);
  ASSERT_TRUE(AdvanceUntil([&] { return b->GetLeader() == "a"; }, 2));

  run_a.request_stop();
  run_a.join();
  EXPECT_EQ(ReadLease().spec.holder_identity, "");
  EXPECT_NE(registry.Expose().find(leading + "\"} 0"), std::string::npos);
  const Clock::TimePoint released_at = clock.Now();
  ASSERT_TRUE(AdvanceUntil([&] { return observer_b.Started(); }, 1, milliseconds(100)));
  std::lock_guard<std::mutex> lock(observer_b.mu);
  // One jittered retry period at most (2 s * 2.2), far below the 15 s lease duration.
  EXPECT_LE(*observer_b.became_leader_at - released_at, milliseconds(4500));
}

TEST_F(LeaderElectionTest, ConcurrentRenewFailureWhenTheLeaseIsTakenStopsLeading) {
  Observer observer(clock, "a");
  auto a = Elector(Config("a", &observer));
  std::jthread run = Start(*a);
  ASSERT_TRUE(AdvanceUntil([&] { return observer.Started(); }, 1));
  // Renew() writes at once after it starts leading (an immediate poll); the steal is read and
  // written after that write, or it would carry a stale resourceVersion and be refused (409).
  ASSERT_TRUE(clock.WaitSettled(1));

  model::Lease stolen = ReadLease();
  stolen.spec.holder_identity = "intruder";
  ASSERT_TRUE(
      client->Update(client::LeasesResource(), kNamespace, kLeaseName, codec::EncodeLease(stolen))
          .ok());
  const Clock::TimePoint stolen_at = clock.Now();
  ASSERT_TRUE(AdvanceUntil([&] { return observer.Stopped(); }, 1));
  std::lock_guard<std::mutex> lock(observer.mu);
  // The first failed renewal comes within a retry period; the renew deadline runs from there.
  EXPECT_GE(*observer.stopped_at - stolen_at, seconds(10));
  EXPECT_LE(*observer.stopped_at - stolen_at, milliseconds(12'500));
  EXPECT_EQ(observer.stopped_calls, 1);
  EXPECT_FALSE(a->IsLeader());
  EXPECT_EQ(ReadLease().spec.holder_identity, "intruder");  // not ours to release
}

TEST_F(LeaderElectionTest, ConcurrentRenewFailureWhenTheServerIsGoneStopsLeading) {
  Observer observer(clock, "a");
  std::vector<std::string> logged;
  std::mutex log_mu;
  LeaderElectionConfig config = Config("a", &observer);
  config.log = [&](std::string_view message) {
    std::lock_guard<std::mutex> lock(log_mu);
    logged.emplace_back(message);
  };
  auto a = Elector(std::move(config));
  std::jthread run = Start(*a);
  ASSERT_TRUE(AdvanceUntil([&] { return observer.Started(); }, 1));

  server->Stop();
  const Clock::TimePoint gone_at = clock.Now();
  ASSERT_TRUE(AdvanceUntil([&] { return observer.Stopped(); }, 1));
  run.join();  // Run() returned: the failed release did not hang it
  std::lock_guard<std::mutex> lock(observer.mu);
  EXPECT_GE(*observer.stopped_at - gone_at, seconds(10));
  EXPECT_LE(*observer.stopped_at - gone_at, milliseconds(12'500));
  std::lock_guard<std::mutex> log_lock(log_mu);
  ASSERT_FALSE(logged.empty());
  EXPECT_NE(logged.back().find("release"), std::string::npos) << logged.back();
}

}  // namespace
}  // namespace slicewright::runtime
