// The EndpointSlice controller's cost for one pod event on a large Service, as the process runs
// it: its informers fed by the embedded API server on loopback, and Controller::Sync timed on
// the Service's key after one pod's readiness flipped. The sync lists or looks up the pods,
// reads the slices, derives, plans and writes one slice through the API server (the write's
// round trip is in the wall time; the server's work is on other threads, not in the CPU time).
// Arg 1 turns the controller's kept state on (Options::incremental_min_pods) or off. The CPU
// column is the benchmark thread's alone.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/model/well_known.h"

#include "apiserver/rest/serve.h"
#include "controllers/endpointslice/controller.h"
#include "fakes/loopback.h"
#include "fakes/objects.h"
#include "smoke.h"

namespace slicewright {
namespace {

using test_support::Eventually;
using test_support::LoopbackClient;

// A Service with `pods` ready pods on 3 Nodes, its slices written, and a controller whose workers
// are not started: the benchmark calls Sync itself.
class ControllerFixture {
 public:
  ControllerFixture(std::int64_t pods, bool incremental) { ok_ = SetUp(pods, incremental); }

  ~ControllerFixture() {
    if (controller_ != nullptr) controller_->Stop();
    if (informers_ != nullptr) informers_->Stop();
  }

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  controllers::endpointslice::Controller& controller() { return *controller_; }
  std::int64_t slice_events() const { return slice_events_.load(); }

  // Flips pod `index`'s readiness on the server and waits until the controller's handlers have
  // seen it. The cache holding the new version is not enough: the handlers run after the store
  // is updated, and a kept Service re-derives only the pods they marked.
  bool FlipReadiness(std::size_t index) {
    model::Pod& pod = pod_objects_[index];
    model::PodCondition& ready = pod.status.conditions[0];
    ready.status = ready.status == "True" ? "False" : "True";
    Result<model::Pod> updated = pods_->UpdateStatus(pod);
    if (!updated.ok()) return Fail(updated.status().ToString());
    pod = std::move(updated).value();
    const std::string version = pod.metadata.name + "@" + pod.metadata.resource_version;
    return Eventually([&] {
      std::lock_guard lock(handled_mu_);
      return last_handled_pod_ == version;
    });
  }

  // Waits until the slice cache has seen `count` slice events in all.
  bool WaitForSliceEvents(std::int64_t count) {
    return Eventually([&] { return slice_events_.load() >= count; });
  }

  std::size_t pod_count() const { return pod_objects_.size(); }

 private:
  bool SetUp(std::int64_t pods, bool incremental) {
    apiserver::ServeOptions serve;
    serve.listen = "127.0.0.1:0";
    serve.data_dir = dir_.path();
    serve.io_threads = 2;
    auto started = apiserver::RunningApiServer::Start(serve);
    if (!started.ok()) return Fail(started.status().ToString());
    server_ = std::move(started).value();
    client_ = LoopbackClient(server_->port());
    pods_ = std::make_unique<client::TypedClient<model::Pod>>(*client_, client::PodCodec());
    if (!CreateObjects(pods)) return false;

    controller_client_ = LoopbackClient(server_->port());
    informers_ = std::make_unique<cache::InformerFactory>(*controller_client_);
    controllers::endpointslice::Options options;
    options.incremental_min_pods = incremental ? 1 : 0;
    controllers::endpointslice::Deps deps;
    deps.client = controller_client_.get();
    deps.informers = informers_.get();
    auto controller = controllers::endpointslice::Controller::Create(options, deps);
    if (!controller.ok()) return Fail(controller.status().ToString());
    controller_ = std::move(controller).value();
    cache::EventHandler<cache::CompactEndpointSlice> counter;
    counter.on_add = [this](const auto&, bool) { slice_events_.fetch_add(1); };
    counter.on_update = [this](const auto&, const auto&) { slice_events_.fetch_add(1); };
    informers_->EndpointSlices().AddEventHandler(std::move(counter));
    // Registered after the controller's handlers, so it runs after them for each event.
    cache::EventHandler<model::CompactPod> handled;
    handled.on_update = [this](const auto&, const auto& pod) {
      std::lock_guard lock(handled_mu_);
      last_handled_pod_ = std::string(pod->name()) + "@" + pod->resource_version();
    };
    informers_->Pods().AddEventHandler(std::move(handled));
    informers_->Start();
    if (!informers_->WaitForCacheSync(std::chrono::seconds(60)))
      return Fail("informers not synced");
    // The first sync creates every slice; wait until the cache holds them all.
    const std::int64_t slices = (pods + 99) / 100;
    return SyncUntilClean(slices);
  }

  bool Fail(std::string error) {
    error_ = std::move(error);
    return false;
  }

  bool CreateObjects(std::int64_t pods) {
    client::TypedClient<model::Node> nodes(*client_, client::NodeCodec());
    for (int n = 0; n < 3; ++n) {
      model::Node node;
      node.metadata.name = "node-" + std::to_string(n);
      node.metadata.labels[std::string(model::kLabelTopologyZone)] = "zone-" + std::to_string(n);
      if (auto created = nodes.Create(node); !created.ok()) {
        return Fail(created.status().ToString());
      }
    }
    client::TypedClient<model::Service> services(*client_, client::ServiceCodec());
    const model::Service service = test_support::HttpService("web");
    if (auto created = services.Create(service); !created.ok()) {
      return Fail(created.status().ToString());
    }
    // Pods are created and made ready from a few clients at once.
    pod_objects_.resize(static_cast<std::size_t>(pods));
    constexpr int kWriters = 4;
    std::vector<std::thread> writers;
    std::vector<std::string> errors(kWriters);
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([this, w, pods, &errors] {
        auto client = LoopbackClient(server_->port());
        client::TypedClient<model::Pod> typed(*client, client::PodCodec());
        for (std::int64_t i = w; i < pods; i += kWriters) {
          model::Pod pod;
          pod.metadata.name = "web-" + std::to_string(i);
          pod.metadata.namespace_ = "default";
          pod.metadata.labels["app"] = "web";
          pod.spec.node_name = "node-" + std::to_string(i % 3);
          model::Container& container = pod.spec.containers.emplace_back();
          container.name = "app";
          container.image = "nginx";
          Result<model::Pod> created = typed.Create(pod);
          if (!created.ok()) {
            errors[static_cast<std::size_t>(w)] = created.status().ToString();
            return;
          }
          pod = std::move(created).value();
          pod.status.phase = "Running";
          const std::string ip = "10." + std::to_string(i / 65536 % 256) + "." +
                                 std::to_string(i / 256 % 256) + "." + std::to_string(i % 256);
          pod.status.pod_ip = ip;
          pod.status.pod_ips = {ip};
          model::PodCondition& ready = pod.status.conditions.emplace_back();
          ready.type = "Ready";
          ready.status = "True";
          ready.last_transition_time = model::Time::FromUnixSeconds(1'800'000'000);
          Result<model::Pod> updated = typed.UpdateStatus(pod);
          if (!updated.ok()) {
            errors[static_cast<std::size_t>(w)] = updated.status().ToString();
            return;
          }
          pod_objects_[static_cast<std::size_t>(i)] = std::move(updated).value();
        }
      });
    }
    for (std::thread& writer : writers) writer.join();
    for (const std::string& error : errors) {
      if (!error.empty()) return Fail(error);
    }
    return true;
  }

  bool SyncUntilClean(std::int64_t slices) {
    const std::string key = "default/web";
    if (Status synced = controller_->Sync(key); !synced.ok()) return Fail(synced.ToString());
    if (!WaitForSliceEvents(slices)) return Fail("the first sync's slices never arrived");
    // Another sync plans nothing once the cache holds every write.
    const std::int64_t events = slice_events_.load();
    const bool clean = Eventually([&] { return controller_->Sync(key).ok(); });
    if (!clean || slice_events_.load() != events) return Fail("the slices did not settle");
    return true;
  }

  test_support::TempDir dir_{"sw_bench"};
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<client::TypedClient<model::Pod>> pods_;
  std::vector<model::Pod> pod_objects_;
  std::unique_ptr<client::RestClient> controller_client_;
  std::unique_ptr<cache::InformerFactory> informers_;
  std::unique_ptr<controllers::endpointslice::Controller> controller_;
  std::atomic<std::int64_t> slice_events_{0};
  std::mutex handled_mu_;
  std::string last_handled_pod_;  // name@resourceVersion of the last pod update handled
  bool ok_ = false;
  std::string error_;
};

void BM_ControllerOnePodChange(benchmark::State& state) {
  const std::int64_t pods = bench::SmokeMode() ? 1 : state.range(0);
  ControllerFixture fixture(pods, state.range(1) != 0);
  if (!fixture.ok()) {
    state.SkipWithError(fixture.error().c_str());
    return;
  }
  const std::string key = "default/web";
  std::size_t next = 0;
  std::int64_t events = fixture.slice_events();
  for (auto _ : state) {
    state.PauseTiming();
    if (!fixture.FlipReadiness(next)) {
      state.SkipWithError(("flipping a pod failed: " + fixture.error()).c_str());
      break;
    }
    state.ResumeTiming();
    const Status synced = fixture.controller().Sync(key);
    state.PauseTiming();
    // Exactly one slice write per pod event: wait for it, so the next sync's cache is current.
    if (!synced.ok() || !fixture.WaitForSliceEvents(events + 1)) {
      state.SkipWithError(("the sync failed or wrote nothing: " + synced.ToString()).c_str());
      break;
    }
    ++events;
    next = (next + 97) % fixture.pod_count();
    state.ResumeTiming();
  }
  // A second write per event would show here (its event arrives after the one awaited).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (fixture.slice_events() != events) {
    state.SkipWithError("a one-pod change must make exactly one slice write");
  }
}
BENCHMARK(BM_ControllerOnePodChange)
    ->ArgsProduct({{10000}, {0, 1}})
    ->ArgNames({"pods", "kept"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace slicewright
