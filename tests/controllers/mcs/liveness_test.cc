#include "controllers/mcs/liveness.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/coordination.h"
#include "slicewright/model/mcs.h"

#include "apiserver/rest/serve.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

// Cluster liveness against the embedded API server as the broker, on a FakeClock: our Lease is
// renewed, another member's Lease expires and comes back, a second holder of one id is refused,
// and a broker outage expires nobody.
namespace slicewright::controllers::mcs {
namespace {

using namespace std::chrono_literals;
using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::TempDir;

constexpr char kBrokerNamespace[] = "slicewright-mcs";

// A client that does not retry, so a renewal against a stopped broker fails at once.
std::unique_ptr<client::RestClient> NoRetryClient(std::uint16_t port) {
  client::RestConfig config;
  config.server.scheme = "http";
  config.server.host = "127.0.0.1";
  config.server.port = port;
  auto transport = client::Transport::Create(config, {});
  if (!transport.ok()) std::abort();
  client::RestClientOptions options;
  options.qps = 1000;
  options.burst = 1000;
  options.max_retries = 0;
  auto rest = client::RestClient::Create(
      std::shared_ptr<client::Transport>(std::move(transport).value()), options);
  if (!rest.ok()) std::abort();
  return std::move(rest).value();
}

bool CreateBrokerNamespace(client::RestClient& on) {
  return on
      .Create(client::NamespacesResource(), "",
              R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" +
                  std::string(kBrokerNamespace) + R"("}})")
      .ok();
}

// A time as a Lease carries it (MicroTime: whole microseconds).
model::Time Micros(model::Time time) { return model::Time{time.unix_nanos / 1000 * 1000}; }

// The on_change calls, in order.
class Changes final {
 public:
  void Record(const std::string& id, bool live) {
    std::lock_guard lock(mu_);
    seen_.emplace_back(id, live);
  }
  std::vector<std::pair<std::string, bool>> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }
  bool Saw(const std::string& id, bool live) const {
    std::lock_guard lock(mu_);
    for (const auto& [seen_id, seen_live] : seen_) {
      if (seen_id == id && seen_live == live) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, bool>> seen_;
};

class LivenessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = test_support::StartLoopbackApiServer(dir_.path());
    port_ = server_->port();
    client_ = LoopbackClient(port_);
    renew_client_ = NoRetryClient(port_);
    ASSERT_TRUE(CreateBrokerNamespace(*client_));
    informers_ = std::make_unique<cache::InformerFactory>(*client_);
  }

  void TearDown() override {
    for (auto& liveness : members_) liveness->Stop();
    informers_->Stop();
  }

  // A liveness of `id` held by `identity`, created and (unless told not to) started.
  ClusterLiveness* Member(std::string id, std::string identity,
                          Clock::Duration lease_duration = 30s, bool start = true) {
    LivenessOptions options;
    options.cluster_id = std::move(id);
    options.broker_namespace = kBrokerNamespace;
    options.identity = std::move(identity);
    options.lease_duration = lease_duration;
    options.on_change = [this](const std::string& cluster, bool live) {
      changes_.Record(cluster, live);
    };
    options.on_resumed = [this] { ++resumed_; };
    Result<std::unique_ptr<ClusterLiveness>> made = ClusterLiveness::Create(
        std::move(options),
        {.broker = renew_client_.get(), .broker_informers = informers_.get(), .clock = &clock_});
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    if (!made.ok()) return nullptr;
    informers_->Start();
    members_.push_back(std::move(made).value());
    if (start) {
      const Status started = members_.back()->Start();
      EXPECT_TRUE(started.ok()) << started.ToString();
    }
    return members_.back().get();
  }

  std::optional<model::Lease> GetLease(const std::string& id) const {
    Result<std::string> got =
        client_->Get(client::LeasesResource(), kBrokerNamespace, LivenessLeaseName(id));
    if (!got.ok()) return std::nullopt;
    Result<model::Lease> lease = codec::DecodeLease(*got);
    if (!lease.ok()) return std::nullopt;
    return std::move(lease).value();
  }

  // Writes another member's Lease as its agent would, renewed at `renew`.
  void PutLease(const std::string& id, const std::string& holder, model::Time renew,
                std::int32_t seconds) {
    PutLeaseOn(*client_, id, holder, renew, seconds);
  }
  static void PutLeaseOn(client::RestClient& on, const std::string& id, const std::string& holder,
                         model::Time renew, std::int32_t seconds) {
    model::Lease lease;
    if (Result<std::string> got =
            on.Get(client::LeasesResource(), kBrokerNamespace, LivenessLeaseName(id));
        got.ok()) {
      Result<model::Lease> decoded = codec::DecodeLease(*got);
      if (decoded.ok()) lease = std::move(decoded).value();
    }
    lease.metadata.name = LivenessLeaseName(id);
    lease.metadata.namespace_ = kBrokerNamespace;
    lease.metadata.labels[std::string(model::kLabelMcsSourceCluster)] = id;
    lease.spec.holder_identity = holder;
    lease.spec.lease_duration_seconds = seconds;
    lease.spec.renew_time = renew;
    const bool exists = !lease.metadata.resource_version.empty();
    Result<std::string> written =
        exists ? on.Update(client::LeasesResource(), kBrokerNamespace, lease.metadata.name,
                           codec::EncodeLease(lease))
               : on.Create(client::LeasesResource(), kBrokerNamespace, codec::EncodeLease(lease));
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }

  // Waits until the Lease cache the members share holds `id`'s Lease renewed at `renew`.
  bool WaitCached(const std::string& id, model::Time renew) {
    cache::Informer<model::Lease>& leases = informers_->For(
        cache::MakeKind(client::LeasesResource(), codec::DecodeLeaseList,
                        codec::DecodeLeaseWatchEvent),
        {.namespace_ = kBrokerNamespace, .label_selector = {}, .field_selector = {}});
    return Eventually([&] {
      const auto lease = leases.store().Get(kBrokerNamespace, LivenessLeaseName(id));
      return lease != nullptr && lease->spec.renew_time == renew;
    });
  }

  // Starts the broker again on its port and data dir (after server_.reset()).
  void RestartBroker() {
    apiserver::ServeOptions options;
    options.listen = "127.0.0.1:" + std::to_string(port_);
    options.data_dir = dir_.path();
    options.io_threads = 2;
    std::string last_error;
    ASSERT_TRUE(Eventually([&] {
      auto restarted = apiserver::RunningApiServer::Start(options);
      if (!restarted.ok()) {
        last_error = restarted.status().ToString();
        return false;
      }
      server_ = std::move(restarted).value();
      return true;
    })) << last_error;
  }

  TempDir dir_;
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::uint16_t port_ = 0;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<client::RestClient> renew_client_;
  FakeClock clock_;
  Changes changes_;
  std::atomic<int> resumed_{0};
  std::unique_ptr<cache::InformerFactory> informers_;
  std::vector<std::unique_ptr<ClusterLiveness>> members_;
};

TEST(LivenessOptionsTest, RefusesBadOptionsNamingTheField) {
  TempDir dir;
  auto server = test_support::StartLoopbackApiServer(dir.path());
  auto client = LoopbackClient(server->port());
  cache::InformerFactory informers(*client);
  const LivenessDeps deps{.broker = client.get(), .broker_informers = &informers, .clock = nullptr};
  const auto create = [&](std::string id, Clock::Duration duration) {
    LivenessOptions options;
    options.cluster_id = std::move(id);
    options.broker_namespace = kBrokerNamespace;
    options.identity = "me";
    options.lease_duration = duration;
    return ClusterLiveness::Create(std::move(options), deps).status();
  };
  EXPECT_TRUE(create("cluster-a.example", 30s).ok());
  const Status bad_id = create("Cluster_A", 30s);
  EXPECT_EQ(bad_id.code(), StatusCode::kInvalid);
  EXPECT_NE(bad_id.ToString().find("Cluster_A"), std::string::npos) << bad_id.ToString();
  const Status short_lease = create("a", 2s);
  EXPECT_EQ(short_lease.code(), StatusCode::kInvalid);
  EXPECT_NE(short_lease.ToString().find("--mcs-lease-duration"), std::string::npos);
  EXPECT_EQ(create("a", 2500ms).code(), StatusCode::kInvalid);
  EXPECT_EQ(LivenessLeaseName("cluster-a.example"), "mcs-cluster-a.example");
}

TEST_F(LivenessTest, HoldsAndRenewsItsLease) {
  ClusterLiveness* a = Member("cluster-a", "host-a_1");
  ASSERT_NE(a, nullptr);
  std::optional<model::Lease> lease = GetLease("cluster-a");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->spec.holder_identity, "host-a_1");
  EXPECT_EQ(lease->spec.lease_duration_seconds, 30);
  EXPECT_EQ(lease->metadata.labels.at(std::string(model::kLabelMcsSourceCluster)), "cluster-a");
  ASSERT_TRUE(lease->spec.renew_time.has_value());
  const model::Time first = *lease->spec.renew_time;
  EXPECT_TRUE(a->IsLive("cluster-a"));
  EXPECT_EQ(a->LiveClusters(), std::vector<std::string>{"cluster-a"});

  // A third of the lease duration later it is renewed, on the fake clock's time.
  clock_.Advance(10s);
  ASSERT_TRUE(Eventually([&] {
    std::optional<model::Lease> now = GetLease("cluster-a");
    return now.has_value() && now->spec.renew_time.has_value() &&
           now->spec.renew_time->unix_nanos - first.unix_nanos >= 10'000'000'000;
  }));
  EXPECT_FALSE(a->Frozen());

  // Stop() leaves the Lease to expire.
  a->Stop();
  EXPECT_TRUE(GetLease("cluster-a").has_value());
}

TEST_F(LivenessTest, AnotherClusterExpiresOnTheTimerAndComesBack) {
  // Our renewals every 20 s; cluster-b's Lease lasts 10 s: only the expiry timer wakes us at 10 s.
  ClusterLiveness* a = Member("cluster-a", "host-a_1", 60s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  const model::Time renewed = Micros(a->WallNow());
  PutLease("cluster-b", "host-b_1", renewed, 10);
  ASSERT_TRUE(WaitCached("cluster-b", renewed));
  ASSERT_TRUE(a->Start().ok());
  EXPECT_TRUE(changes_.Saw("cluster-b", true));
  EXPECT_TRUE(a->IsLive("cluster-b"));
  EXPECT_EQ(a->LiveClusters(), (std::vector<std::string>{"cluster-a", "cluster-b"}));
  EXPECT_FALSE(a->IsLive("cluster-c"));

  clock_.Advance(11s);
  ASSERT_TRUE(Eventually([&] { return changes_.Saw("cluster-b", false); }));
  EXPECT_FALSE(a->IsLive("cluster-b"));
  EXPECT_EQ(a->LiveClusters(), std::vector<std::string>{"cluster-a"});

  // cluster-b renews: live again, from the Lease event alone.
  PutLease("cluster-b", "host-b_1", a->WallNow(), 10);
  // (on_change runs just after IsLive turns, outside the lock: wait for the report itself.)
  ASSERT_TRUE(Eventually([&] { return changes_.seen().size() == 3; }));
  EXPECT_TRUE(a->IsLive("cluster-b"));
  const std::vector<std::pair<std::string, bool>> expected = {
      {"cluster-b", true}, {"cluster-b", false}, {"cluster-b", true}};
  EXPECT_EQ(changes_.seen(), expected);
}

TEST_F(LivenessTest, ADeletedLeaseExpiresItsClusterAndStopEndsTheReports) {
  ClusterLiveness* a = Member("cluster-a", "host-a_1", 30s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  const model::Time renewed = Micros(a->WallNow());
  PutLease("cluster-b.example", "host-b_1", renewed, 30);
  ASSERT_TRUE(WaitCached("cluster-b.example", renewed));
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(a->IsLive("cluster-b.example"));
  ASSERT_TRUE(
      client_->Delete(client::LeasesResource(), kBrokerNamespace, "mcs-cluster-b.example", {})
          .ok());
  ASSERT_TRUE(Eventually([&] { return changes_.Saw("cluster-b.example", false); }));
  EXPECT_FALSE(a->IsLive("cluster-b.example"));

  // After Stop() nothing is reported, though a Lease comes back and time passes.
  a->Stop();
  const std::size_t reported = changes_.seen().size();
  PutLease("cluster-b.example", "host-b_1", Micros(a->WallNow()), 30);
  ASSERT_TRUE(WaitCached("cluster-b.example", Micros(a->WallNow())));
  clock_.Advance(40s);
  EXPECT_EQ(changes_.seen().size(), reported);
  EXPECT_FALSE(a->IsLive("cluster-b.example"));
}

TEST_F(LivenessTest, ARenewingClusterWhoseClockIsBehindStaysLive) {
  ClusterLiveness* a = Member("cluster-a", "host-a_1", 60s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  // cluster-b's clock is an hour behind: its renewTime looks expired, but it keeps changing.
  const auto behind = [&](std::int64_t seconds_ago) {
    return Micros(model::Time{a->WallNow().unix_nanos - seconds_ago * 1'000'000'000});
  };
  PutLease("cluster-b", "host-b_1", behind(3600), 10);
  ASSERT_TRUE(WaitCached("cluster-b", behind(3600)));
  ASSERT_TRUE(a->Start().ok());
  EXPECT_FALSE(a->IsLive("cluster-b"));
  PutLease("cluster-b", "host-b_1", behind(3599), 10);
  ASSERT_TRUE(Eventually([&] { return a->IsLive("cluster-b"); }));
  // It stops renewing: expired one lease duration after we last saw it change.
  clock_.Advance(11s);
  ASSERT_TRUE(Eventually([&] { return !a->IsLive("cluster-b"); }));
}

TEST_F(LivenessTest, RefusesASecondHolderOfOneClusterIdUntilTheLeaseExpires) {
  ClusterLiveness* first = Member("cluster-a", "host-a_1");
  ASSERT_NE(first, nullptr);
  ClusterLiveness* second = Member("cluster-a", "host-z_9", 30s, /*start=*/false);
  ASSERT_NE(second, nullptr);
  // Acquire() needs no cache: the agent calls it when it is created.
  const Status refused = second->Acquire();
  EXPECT_EQ(refused.code(), StatusCode::kAlreadyExists);
  const std::string message = refused.ToString();
  EXPECT_NE(message.find("\"cluster-a\""), std::string::npos) << message;
  EXPECT_NE(message.find("host-a_1"), std::string::npos) << message;
  EXPECT_NE(message.find(std::string(kBrokerNamespace) + "/mcs-cluster-a"), std::string::npos)
      << message;
  // Start() does not give up (the holder may be a previous run whose Lease has not expired
  // yet): it waits the Lease out on its thread, frozen, holding nothing meanwhile.
  const Status started = second->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_TRUE(second->Frozen());
  EXPECT_EQ(second->Acquire().code(), StatusCode::kUnavailable);
  EXPECT_EQ(GetLease("cluster-a")->spec.holder_identity, "host-a_1");

  // The first stops (a previous run): once its Lease expired, the second takes it over.
  first->Stop();
  clock_.Advance(31s);
  ASSERT_TRUE(Eventually([&] {
    if (!second->Frozen()) return true;
    clock_.Advance(2s);
    return false;
  }));
  std::optional<model::Lease> lease = GetLease("cluster-a");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->spec.holder_identity, "host-z_9");
  EXPECT_EQ(lease->spec.lease_transitions, 1);
  EXPECT_TRUE(second->Acquire().ok());
  // And the first, restarted with its old identity, is now the duplicate.
  EXPECT_EQ(first->Acquire().code(), StatusCode::kInvalid);  // stopped
  ClusterLiveness* again = Member("cluster-a", "host-a_2", 30s, /*start=*/false);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->Acquire().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(second->Start().code(), StatusCode::kInvalid);
}

// Runs AcquireOrWaitOut() on a thread, advancing the clock by 2 s (its retry period) whenever it
// sleeps, after `on_sleep(n)` (n = 1, 2, ...: 2 s of fake time each). Gives up (stopping the
// liveness) after 100 advances. Returns its answer and how many advances it took.
std::pair<Status, int> WaitOut(ClusterLiveness& liveness, FakeClock& clock,
                               const std::function<void(int)>& on_sleep) {
  Status answer;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    answer = liveness.AcquireOrWaitOut();
    done = true;
  });
  int advances = 0;
  while (!done && advances < 100) {
    Eventually([&] { return done.load() || clock.Waiters() > 0; });
    if (done) break;
    on_sleep(++advances);
    clock.Advance(2s);
    // Usually lets the waiter wake before the next advance; a double advance only adds time.
    Eventually([&] { return done.load() || clock.Waiters() == 0; }, 200ms);
  }
  if (!done) liveness.Stop();
  waiter.join();
  return {answer, advances};
}

TEST_F(LivenessTest, AnAgentRestartedWithinTheTtlWaitsOutItsPreviousRunsLease) {
  ClusterLiveness* restarted = Member("cluster-a", "host-a_2", 30s, /*start=*/false);
  ASSERT_NE(restarted, nullptr);
  // The previous run (host-a_1) renewed just now, then was killed: nobody renews it.
  PutLease("cluster-a", "host-a_1", Micros(restarted->WallNow()), 30);
  const auto [taken, advances] = WaitOut(*restarted, clock_, [](int) {});
  ASSERT_TRUE(taken.ok()) << taken.ToString();
  // Not before the old Lease expired: 30 s in 2 s steps.
  EXPECT_GE(advances, 15);
  std::optional<model::Lease> lease = GetLease("cluster-a");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->spec.holder_identity, "host-a_2");
  EXPECT_TRUE(restarted->Start().ok());
}

// SIGTERM while an agent waits out its previous run's Lease: the stop token ends the wait at
// once (kCancelled), with no fake time passing and the old Lease left as it was.
TEST_F(LivenessTest, WaitingOutAPreviousRunsLeaseEndsOnStop) {
  ClusterLiveness* restarted = Member("cluster-a", "host-a_2", 30s, /*start=*/false);
  ASSERT_NE(restarted, nullptr);
  PutLease("cluster-a", "host-a_1", Micros(restarted->WallNow()), 30);
  std::stop_source stop;
  Status answer;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    answer = restarted->AcquireOrWaitOut(stop.get_token());
    done = true;
  });
  // It is waiting (on the fake clock, which never advances here).
  const bool waiting = Eventually([&] { return clock_.Waiters() > 0; });
  stop.request_stop();
  const bool ended = Eventually([&] { return done.load(); }, 5s);
  if (!ended) restarted->Stop();  // not to hang the test
  waiter.join();
  EXPECT_TRUE(waiting);
  EXPECT_TRUE(ended);
  EXPECT_EQ(answer.code(), StatusCode::kCancelled) << answer.ToString();
  EXPECT_EQ(GetLease("cluster-a")->spec.holder_identity, "host-a_1");
  // A stop already requested ends it before any wait.
  EXPECT_EQ(restarted->AcquireOrWaitOut(stop.get_token()).code(), StatusCode::kCancelled);
}

TEST_F(LivenessTest, WaitingOutALeaseThatIsRenewedMeanwhileIsRefused) {
  ClusterLiveness* second = Member("cluster-a", "host-z_9", 30s, /*start=*/false);
  ASSERT_NE(second, nullptr);
  const model::Time renewed = Micros(second->WallNow());
  PutLease("cluster-a", "host-a_1", renewed, 30);
  // The holder renews while the second waits: a live member with the same id.
  const Status refused = WaitOut(*second, clock_, [&](int n) {
                           if (n == 2)
                             PutLease("cluster-a", "host-a_1", Micros(second->WallNow()), 30);
                         }).first;
  EXPECT_EQ(refused.code(), StatusCode::kAlreadyExists);
  const std::string message = refused.ToString();
  EXPECT_NE(message.find("is already in use"), std::string::npos) << message;
  EXPECT_NE(message.find("renewed while we waited"), std::string::npos) << message;
  EXPECT_EQ(GetLease("cluster-a")->spec.holder_identity, "host-a_1");
}

TEST_F(LivenessTest, StartedWhileTheBrokerIsDownItTakesItsLeaseWhenTheBrokerAnswers) {
  ClusterLiveness* a = Member("cluster-a", "host-a_1", 30s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  const model::Time renewed = Micros(a->WallNow());
  PutLease("cluster-b", "host-b_1", renewed, 30);
  ASSERT_TRUE(WaitCached("cluster-b", renewed));  // the Lease cache has synced

  // The broker goes away before Start(): not fatal; frozen, nobody expires.
  server_.reset();
  const Status started = a->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_TRUE(a->Frozen());
  EXPECT_TRUE(a->IsLive("cluster-b"));
  clock_.Advance(40s);
  EXPECT_TRUE(Eventually([&] { return a->Rounds() > 0; }));
  EXPECT_TRUE(a->IsLive("cluster-b"));

  // It answers again: the thread takes our Lease and thaws.
  RestartBroker();
  ASSERT_TRUE(Eventually([&] {
    if (!a->Frozen()) return true;
    clock_.Advance(2s);
    return false;
  }));
  std::optional<model::Lease> lease = GetLease("cluster-a");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->spec.holder_identity, "host-a_1");
  EXPECT_TRUE(Eventually([&] { return resumed_.load() == 1; }));
  EXPECT_TRUE(a->Acquire().ok());
}

TEST_F(LivenessTest, ARestartedAgentGivesWhatItsPreviousRunSawLiveALeaseDuration) {
  ClusterLiveness* a = Member("cluster-a", "host-a_2", 30s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  // Every Lease aged during a broker outage: renewed 100 s ago.
  const model::Time aged{Micros(a->WallNow()).unix_nanos - 100'000'000'000};
  PutLease("cluster-b", "host-b_1", aged, 30);
  PutLease("cluster-c", "host-c_1", aged, 30);
  ASSERT_TRUE(WaitCached("cluster-b", aged));
  ASSERT_TRUE(WaitCached("cluster-c", aged));
  // The previous run had cluster-b live (in its imports' status.clusters), not cluster-c.
  ASSERT_TRUE(a->Start({"cluster-b"}).ok());
  EXPECT_TRUE(a->IsLive("cluster-b"));
  EXPECT_FALSE(a->IsLive("cluster-c"));
  EXPECT_TRUE(changes_.Saw("cluster-b", true));
  // Not renewed within that lease duration: expired then.
  clock_.Advance(29s);
  EXPECT_TRUE(Eventually([&] { return a->Rounds() > 0; }));
  EXPECT_TRUE(a->IsLive("cluster-b"));
  clock_.Advance(2s);
  ASSERT_TRUE(Eventually([&] { return changes_.Saw("cluster-b", false); }));
  EXPECT_FALSE(a->IsLive("cluster-b"));
}

TEST_F(LivenessTest, ABrokerOutageExpiresNobody) {
  ClusterLiveness* a = Member("cluster-a", "host-a_1", 30s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  const model::Time renewed = Micros(a->WallNow());
  PutLease("cluster-b", "host-b_1", renewed, 30);
  ASSERT_TRUE(WaitCached("cluster-b", renewed));
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(a->IsLive("cluster-b"));

  // The broker goes away; our next renewal fails and freezes the judgement.
  server_.reset();
  clock_.Advance(10s);
  ASSERT_TRUE(Eventually([&] { return a->Frozen(); }));
  // Far past cluster-b's expiry, with our retries failing: cluster-b is still live. Each
  // advance is a retry that judges after it; the rounds counter says it has run.
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t rounds = a->Rounds();
    clock_.Advance(2s);
    ASSERT_TRUE(Eventually([&] { return a->Rounds() > rounds; }));
    ASSERT_TRUE(a->Frozen());
    ASSERT_TRUE(a->IsLive("cluster-b")) << "after " << (i + 1) * 2 << " s of outage";
  }
  EXPECT_FALSE(changes_.Saw("cluster-b", false));

  // The broker returns (same port, same data): our renewal succeeds and judging resumes, but
  // cluster-b gets a full lease duration from then to renew.
  RestartBroker();
  ASSERT_TRUE(Eventually([&] {
    if (!a->Frozen()) return true;
    clock_.Advance(2s);
    return false;
  }));
  EXPECT_TRUE(a->IsLive("cluster-b"));
  EXPECT_FALSE(changes_.Saw("cluster-b", false));
  // The agent is told once that the broker answers again (it resyncs what failed meanwhile).
  ASSERT_TRUE(Eventually([&] { return resumed_.load() == 1; }));
  // cluster-b never renews: it expires a lease duration after the broker came back.
  clock_.Advance(31s);
  ASSERT_TRUE(Eventually([&] { return changes_.Saw("cluster-b", false); }));
  EXPECT_FALSE(a->IsLive("cluster-b"));
}

// An agent restarted during a broker outage shorter than its Lease: when the broker answers,
// its previous run's Lease is still live, so Start() cannot take it. It must neither give up
// (judging nobody and renewing nothing for the rest of its life) nor expire the others, whose
// Leases aged in the outage: frozen while it waits the old Lease out, it takes it over, and
// judging resumes with a full lease duration for the clusters its previous run imported.
TEST_F(LivenessTest, RestartedDuringAShortOutageItWaitsOutItsOldLeaseFrozen) {
  ClusterLiveness* a = Member("cluster-a", "host-a_2", 30s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  // The previous run renewed 5 s before the broker went away; so did cluster-b.
  const model::Time before_outage{Micros(a->WallNow()).unix_nanos - 5'000'000'000};
  PutLease("cluster-a", "host-a_1", before_outage, 30);
  PutLease("cluster-b", "host-b_1", before_outage, 30);
  ASSERT_TRUE(WaitCached("cluster-b", before_outage));
  clock_.Advance(20s);  // the rest of the outage: both Leases have 5 s left

  const Status started = a->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_TRUE(a->Frozen());
  EXPECT_TRUE(a->IsLive("cluster-b"));
  // Past both Leases' expiry, until the old one is taken over: cluster-b is not expired.
  int advances = 0;
  while (a->Frozen() && advances < 30) {
    const std::uint64_t rounds = a->Rounds();
    clock_.Advance(2s);
    ++advances;
    ASSERT_TRUE(Eventually([&] { return a->Rounds() > rounds; }));
    ASSERT_TRUE(a->IsLive("cluster-b")) << "after " << 20 + advances * 2 << " s";
  }
  ASSERT_FALSE(a->Frozen());
  EXPECT_GE(advances, 3);  // not before the old Lease expired (5 s)
  EXPECT_EQ(GetLease("cluster-a")->spec.holder_identity, "host-a_2");
  EXPECT_TRUE(a->IsLive("cluster-b"));
  EXPECT_FALSE(changes_.Saw("cluster-b", false));
  // cluster-b never renews: expired a lease duration after we thawed, not before.
  const std::uint64_t rounds = a->Rounds();
  clock_.Advance(27s);
  EXPECT_TRUE(Eventually([&] { return a->Rounds() > rounds; }));
  EXPECT_FALSE(changes_.Saw("cluster-b", false));
  clock_.Advance(4s);
  ASSERT_TRUE(Eventually([&] { return changes_.Saw("cluster-b", false); }));
}

// StartRenewing() renews before the caches sync (an agent restarted during an outage waits up to
// 30 s of informer backoff for them once the broker is back): the Lease is taken as soon as the
// broker answers and renewed from then on, while nobody is judged until Start().
TEST_F(LivenessTest, StartRenewingHoldsTheLeaseBeforeStartJudges) {
  ClusterLiveness* a = Member("cluster-a", "host-a_1", 30s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  PutLease("cluster-b", "host-b_1", Micros(a->WallNow()), 30);
  server_.reset();
  ASSERT_TRUE(a->StartRenewing().ok());
  ASSERT_TRUE(a->StartRenewing().ok());  // once is enough
  EXPECT_TRUE(a->Frozen());
  RestartBroker();
  ASSERT_TRUE(Eventually([&] {
    if (GetLease("cluster-a").has_value()) return true;
    clock_.Advance(2s);
    return false;
  }));
  const model::Time first = GetLease("cluster-a")->spec.renew_time.value_or(model::Time{});
  clock_.Advance(10s);
  ASSERT_TRUE(Eventually([&] {
    std::optional<model::Lease> lease = GetLease("cluster-a");
    return lease.has_value() && lease->spec.renew_time.value_or(model::Time{}) > first;
  }));
  EXPECT_TRUE(changes_.seen().empty());
  EXPECT_FALSE(a->IsLive("cluster-b"));
  EXPECT_EQ(resumed_.load(), 0);

  // Start() judges (cluster-b renews meanwhile, as a member does after an outage).
  PutLease("cluster-b", "host-b_1", Micros(a->WallNow()), 30);
  ASSERT_TRUE(WaitCached("cluster-b", Micros(a->WallNow())));
  ASSERT_TRUE(a->Start().ok());
  EXPECT_TRUE(a->IsLive("cluster-b"));
  EXPECT_TRUE(changes_.Saw("cluster-b", true));
  ASSERT_TRUE(Eventually([&] { return !a->Frozen(); }));
  EXPECT_EQ(a->Start().code(), StatusCode::kInvalid);
}

// A member whose clock runs an hour ahead of ours writes renewTimes in our future. Once it stops
// renewing (dead), it is expired a lease duration after we last saw its Lease, not an hour later.
TEST_F(LivenessTest, AClusterWhoseClockIsAheadExpiresALeaseDurationAfterItStopsRenewing) {
  ClusterLiveness* a = Member("cluster-a", "host-a_1", 60s, /*start=*/false);
  ASSERT_NE(a, nullptr);
  const model::Time ahead{Micros(a->WallNow()).unix_nanos + 3600'000'000'000};
  PutLease("cluster-b", "host-b_1", ahead, 10);
  ASSERT_TRUE(WaitCached("cluster-b", ahead));
  ASSERT_TRUE(a->Start().ok());
  EXPECT_TRUE(a->IsLive("cluster-b"));
  clock_.Advance(9s);
  EXPECT_TRUE(a->IsLive("cluster-b"));
  clock_.Advance(2s);
  ASSERT_TRUE(Eventually([&] { return changes_.Saw("cluster-b", false); }));
  // It renews (still an hour ahead): live again, for a lease duration from that change.
  PutLease("cluster-b", "host-b_1", model::Time{ahead.unix_nanos + 11'000'000'000}, 10);
  ASSERT_TRUE(Eventually([&] { return a->IsLive("cluster-b"); }));
  clock_.Advance(11s);
  ASSERT_TRUE(Eventually([&] { return !a->IsLive("cluster-b"); }));
}

// The broker is back, but the Lease cache has not caught up yet (its watch comes back after a
// backoff): judging stays frozen until the cache shows our own renewal, so a member whose renewals
// the cache has not seen is not expired meanwhile (the fault test's broker restart under ASan).
TEST_F(LivenessTest, AfterAnOutageJudgingWaitsForTheCacheToShowOurRenewal) {
  // The cache reads a second API server that this test fills by hand: it lags as the test says.
  TempDir cache_dir;
  std::unique_ptr<apiserver::RunningApiServer> cache_server =
      test_support::StartLoopbackApiServer(cache_dir.path());
  std::unique_ptr<client::RestClient> cache_client = LoopbackClient(cache_server->port());
  ASSERT_TRUE(CreateBrokerNamespace(*cache_client));
  cache::InformerFactory cache_informers(*cache_client);
  LivenessOptions options;
  options.cluster_id = "cluster-a";
  options.broker_namespace = kBrokerNamespace;
  options.identity = "host-a_1";
  options.lease_duration = 30s;
  options.on_change = [this](const std::string& cluster, bool live) {
    changes_.Record(cluster, live);
  };
  options.on_resumed = [this] { ++resumed_; };
  Result<std::unique_ptr<ClusterLiveness>> made = ClusterLiveness::Create(
      std::move(options),
      {.broker = renew_client_.get(), .broker_informers = &cache_informers, .clock = &clock_});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<ClusterLiveness> a = std::move(made).value();
  cache_informers.Start();
  const model::Time renewed = Micros(a->WallNow());
  PutLeaseOn(*cache_client, "cluster-b", "host-b_1", renewed, 30);
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(Eventually([&] { return a->IsLive("cluster-b"); }));

  server_.reset();
  clock_.Advance(10s);
  ASSERT_TRUE(Eventually([&] { return a->Frozen(); }));
  RestartBroker();
  // Our renewals succeed again, far past cluster-b's expiry, but the cache shows none of them.
  for (int i = 0; i < 6; ++i) {
    const std::uint64_t rounds = a->Rounds();
    clock_.Advance(10s);
    ASSERT_TRUE(Eventually([&] { return a->Rounds() > rounds; }));
    ASSERT_TRUE(a->Frozen()) << "after " << (i + 1) * 10 << " s";
    ASSERT_TRUE(a->IsLive("cluster-b"));
  }
  ASSERT_TRUE(GetLease("cluster-a").has_value());
  EXPECT_EQ(resumed_.load(), 0);

  // The cache catches up with our Lease as the broker holds it: judging resumes, and cluster-b
  // gets a full lease duration from now.
  const model::Lease ours = *GetLease("cluster-a");
  PutLeaseOn(*cache_client, "cluster-a", ours.spec.holder_identity.value_or(""),
             ours.spec.renew_time.value_or(model::Time{}), 30);
  ASSERT_TRUE(Eventually([&] { return !a->Frozen(); }));
  // (on_resumed runs just after the thaw, outside the lock.)
  EXPECT_TRUE(Eventually([&] { return resumed_.load() == 1; }));
  EXPECT_TRUE(a->IsLive("cluster-b"));
  EXPECT_FALSE(changes_.Saw("cluster-b", false));
  clock_.Advance(31s);
  ASSERT_TRUE(Eventually([&] { return changes_.Saw("cluster-b", false); }));
  a->Stop();
  cache_informers.Stop();
}

}  // namespace
}  // namespace slicewright::controllers::mcs
