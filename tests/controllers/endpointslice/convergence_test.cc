#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/labels/selector.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"

#include "controllers/controller_test_util.h"
#include "controllers/endpointslice/controller.h"

// Convergence (issue #5 §5): after seeded random churn of Pods and Services, the slices the
// EndpointSlice controller wrote hold exactly what the reconciler library derives from the final
// objects (as `slicewright plan` does), whatever the history. SW_CHURN_SEED=N replays a run.
namespace slicewright::controllers::endpointslice {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;

constexpr int kInitialPods = 60;
constexpr int kMaxPods = 75;
constexpr int kSteps = 300;
constexpr int kMaxTerminating = 8;
// The controller restarts halfway with the larger value: slices written under the smaller one
// stay within the larger, and the new controller takes over the old one's slices.
constexpr int kFirstMaxEndpoints = 3;
constexpr int kFinalMaxEndpoints = 5;
constexpr std::string_view kOtherController = "other-controller.example.com";

std::uint64_t ChurnSeed() {
  if (const char* text = std::getenv("SW_CHURN_SEED"); text != nullptr && *text != '\0') {
    return std::strtoull(text, nullptr, 10);
  }
  return std::random_device{}();
}

// One Service of the churn and the selectors it may be switched between (the first is its own).
struct ServiceCase {
  model::Service service;
  std::vector<model::StringMap> selectors;
};

model::ServicePort Port(std::string name, std::int32_t port, model::IntOrString target) {
  model::ServicePort out;
  out.name = std::move(name);
  out.port = port;
  out.target_port = std::move(target);
  return out;
}

std::vector<ServiceCase> ServiceCases() {
  std::vector<ServiceCase> cases;
  const auto add = [&](std::string name, std::vector<model::StringMap> selectors,
                       std::vector<model::ServicePort> ports) -> model::Service& {
    ServiceCase& c = cases.emplace_back();
    c.service.metadata.name = std::move(name);
    c.service.metadata.namespace_ = "default";
    c.service.metadata.labels = {{"team", "churn"}};
    c.service.spec.selector = selectors.front();
    c.service.spec.ports = std::move(ports);
    c.selectors = std::move(selectors);
    return c.service;
  };
  // A named targetPort: pods name "http" on different container ports, or not at all.
  add("web", {{{"app", "web"}}, {{"app", "web"}, {"tier", "front"}}, {{"tier", "front"}}},
      {Port("http", 80, model::IntOrString::FromString("http"))});
  // Overlaps "web" through tier=front.
  add("front", {{{"tier", "front"}}, {{"tier", "back"}}, {{"app", "api"}}},
      {Port("http", 80, model::IntOrString::FromInt(8080))});
  model::Service& dual =
      add("api-dual", {{{"app", "api"}}, {{"app", "api"}, {"tier", "back"}}, {{"app", "web"}}},
          {Port("https", 443, model::IntOrString::FromInt(8443))});
  dual.spec.ip_family_policy = "RequireDualStack";
  dual.spec.ip_families = {"IPv4", "IPv6"};
  model::Service& headless =
      add("db-headless", {{{"app", "db"}}, {{"app", "db"}, {"tier", "back"}}},
          {Port("db", 5432, model::IntOrString::FromInt(5432))});
  headless.spec.cluster_ip = "None";
  model::Service& all = add("db-all", {{{"app", "db"}}, {{"tier", "back"}}},
                            {Port("db", 5432, model::IntOrString::FromInt(5432))});
  all.spec.publish_not_ready_addresses = true;
  // Two ports, one of them named.
  add("multi", {{{"app", "web"}}, {{"app", "api"}}},
      {Port("http", 80, model::IntOrString::FromString("http")),
       Port("metrics", 9090, model::IntOrString::FromInt(9090))});
  return cases;
}

// An endpoint as the comparison sees it: every field the controller writes except hints.
std::string EndpointText(const model::Endpoint& endpoint) {
  std::ostringstream out;
  for (const std::string& address : endpoint.addresses) out << address << ' ';
  const auto flag = [](const std::optional<bool>& value) {
    return value ? (*value ? "true" : "false") : "nil";
  };
  out << "ready=" << flag(endpoint.conditions.ready)
      << " serving=" << flag(endpoint.conditions.serving)
      << " terminating=" << flag(endpoint.conditions.terminating)
      << " node=" << endpoint.node_name.value_or("-") << " zone=" << endpoint.zone.value_or("-")
      << " hostname=" << (endpoint.hostname ? *endpoint.hostname : "-");
  if (endpoint.target_ref) {
    out << " ref=" << endpoint.target_ref->kind << '/' << endpoint.target_ref->namespace_ << '/'
        << endpoint.target_ref->name << '/' << endpoint.target_ref->uid;
  }
  return out.str();
}

// "IPv4 <port map key>" -> endpoints, for the groups or slices that have any.
using EndpointSets = std::map<std::string, std::multiset<std::string>>;

void DescribeDifference(const std::string& service, const EndpointSets& want,
                        const EndpointSets& have, std::ostream& out) {
  std::set<std::string> keys;
  for (const auto& [key, endpoints] : want) keys.insert(key);
  for (const auto& [key, endpoints] : have) keys.insert(key);
  for (const std::string& key : keys) {
    static const std::multiset<std::string> kNone;
    const auto& w = want.contains(key) ? want.at(key) : kNone;
    const auto& h = have.contains(key) ? have.at(key) : kNone;
    for (const std::string& endpoint : w) {
      if (!h.contains(endpoint)) out << service << " [" << key << "] missing " << endpoint << '\n';
    }
    for (const std::string& endpoint : h) {
      if (!w.contains(endpoint)) out << service << " [" << key << "] extra " << endpoint << '\n';
    }
  }
}

class ConvergenceTest : public testing::ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    CreateNode("node-c", "zone-a");
  }

  // Applies one random change; returns what it did, for the failure log.
  std::string Step() {
    std::uniform_int_distribution<int> op(0, 99);
    const int roll = op(rng_);
    if (roll < 14 || live_.empty()) return AddPod();
    if (roll < 22) return DeletePod(/*graceful=*/false);
    if (roll < 27) return DeletePod(/*graceful=*/true);
    if (roll < 45) return FlipReady();
    if (roll < 58) return ChangeIp();
    if (roll < 76) return Relabel();
    if (roll < 88) return ChangeSelector();
    return ToggleControllerName();
  }

  std::string AddPod() {
    if (static_cast<int>(live_.size()) >= kMaxPods) return DeletePod(false);
    model::Pod pod;
    pod.metadata.name = "pod-" + std::to_string(next_pod_++);
    pod.metadata.namespace_ = "default";
    pod.metadata.labels = RandomLabels();
    pod.spec.node_name = Pick(std::vector<std::string>{"node-a", "node-b", "node-c"});
    if (pod.metadata.labels["app"] == "db" && Chance(50)) {
      // Published as the endpoint's hostname by the headless Service this subdomain names.
      pod.spec.hostname = pod.metadata.name;
      pod.spec.subdomain = "db-headless";
    }
    model::Container& container = pod.spec.containers.emplace_back();
    container.name = "app";
    container.image = "nginx";
    if (!Chance(12)) {
      model::ContainerPort& port = container.ports.emplace_back();
      port.name = "http";
      port.container_port = Chance(20) ? 8081 : 8080;
    }
    Result<model::Pod> created = pods_->Create(pod);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return "add failed";
    model::Pod with_status = *created;
    with_status.status.phase = "Running";
    with_status.status.pod_ips = NewAddresses(Chance(50));
    with_status.status.pod_ip = with_status.status.pod_ips.front();
    SetReady(with_status, Chance(75));
    Result<model::Pod> updated = pods_->UpdateStatus(with_status);
    EXPECT_TRUE(updated.ok()) << updated.status().ToString();
    live_.push_back(pod.metadata.name);
    return "add " + pod.metadata.name;
  }

  std::string DeletePod(bool graceful) {
    if (live_.empty()) return "nothing to delete";
    const std::size_t index = Index(live_.size());
    const std::string name = live_[index];
    client::DeleteOptions options;
    if (graceful) {
      if (terminating_.size() >= static_cast<std::size_t>(kMaxTerminating) ||
          terminating_.contains(name)) {
        return FlipReady();
      }
      // Longer than the test: the pod stays terminating, and takes status updates meanwhile.
      options.grace_period_seconds = 600;
      terminating_.insert(name);
    } else {
      options.grace_period_seconds = 0;
      live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(index));
      terminating_.erase(name);
    }
    const Status status = pods_->Delete("default", name, options);
    EXPECT_TRUE(status.ok()) << name << ": " << status.ToString();
    return (graceful ? "terminate " : "delete ") + name;
  }

  std::string FlipReady() {
    return UpdatePod(/*status=*/true, [](model::Pod& pod) {
      SetReady(pod, !model::IsPodReady(pod));
      return std::string("ready=") + (model::IsPodReady(pod) ? "true" : "false");
    });
  }

  std::string ChangeIp() {
    return UpdatePod(/*status=*/true, [this](model::Pod& pod) {
      pod.status.pod_ips = NewAddresses(pod.status.pod_ips.size() > 1);
      pod.status.pod_ip = pod.status.pod_ips.front();
      return "ip=" + pod.status.pod_ip;
    });
  }

  std::string Relabel() {
    return UpdatePod(/*status=*/false, [this](model::Pod& pod) {
      pod.metadata.labels = RandomLabels();
      std::string text = "labels=";
      for (const auto& [key, value] : pod.metadata.labels) text += key + ":" + value + ",";
      return text;
    });
  }

  std::string ChangeSelector() {
    const std::size_t index = Index(cases_.size());
    const ServiceCase& c = cases_[index];
    const model::StringMap selector = Pick(c.selectors);
    return UpdateService(c.service.metadata.name, [&](model::Service& service) {
      service.spec.selector = selector;
      std::string text = "selector=";
      for (const auto& [key, value] : selector) text += key + ":" + value + ",";
      return text;
    });
  }

  std::string ToggleControllerName() {
    const std::size_t index = Index(cases_.size());
    return UpdateService(cases_[index].service.metadata.name, [](model::Service& service) {
      const std::string key(model::kLabelEndpointControllerName);
      if (service.metadata.labels.erase(key) > 0) return std::string("controller-name removed");
      service.metadata.labels[key] = std::string(kOtherController);
      return std::string("controller-name added");
    });
  }

  template <typename Fn>
  std::string UpdatePod(bool status, Fn&& change) {
    if (live_.empty()) return AddPod();
    const std::string name = live_[Index(live_.size())];
    Result<model::Pod> pod = pods_->Get("default", name);
    EXPECT_TRUE(pod.ok()) << name << ": " << pod.status().ToString();
    if (!pod.ok()) return "get failed";
    const std::string what = change(*pod);
    Result<model::Pod> updated = status ? pods_->UpdateStatus(*pod) : pods_->Update(*pod);
    EXPECT_TRUE(updated.ok()) << name << ": " << updated.status().ToString();
    return name + " " + what;
  }

  template <typename Fn>
  std::string UpdateService(const std::string& name, Fn&& change) {
    Result<model::Service> service = services_->Get("default", name);
    EXPECT_TRUE(service.ok()) << name << ": " << service.status().ToString();
    if (!service.ok()) return "get failed";
    const std::string what = change(*service);
    Result<model::Service> updated = services_->Update(*service);
    EXPECT_TRUE(updated.ok()) << name << ": " << updated.status().ToString();
    return "service " + name + " " + what;
  }

  static void SetReady(model::Pod& pod, bool ready) {
    pod.status.conditions.clear();
    model::PodCondition& condition = pod.status.conditions.emplace_back();
    condition.type = "Ready";
    condition.status = ready ? "True" : "False";
    condition.last_transition_time = model::Time::FromUnixSeconds(1'800'000'000);
  }

  model::StringMap RandomLabels() {
    model::StringMap labels;
    const std::string app = Pick(std::vector<std::string>{"web", "api", "db", "batch"});
    labels["app"] = app;
    const int tier = std::uniform_int_distribution<int>(0, 2)(rng_);
    if (tier == 0) labels["tier"] = "front";
    if (tier == 1) labels["tier"] = "back";
    return labels;
  }

  // Fresh addresses, never reused: two pods never share an endpoint identity.
  std::vector<std::string> NewAddresses(bool dual_stack) {
    const int n = next_address_++;
    std::vector<std::string> out = {"10.1." + std::to_string(n / 250) + "." +
                                    std::to_string(n % 250 + 1)};
    if (dual_stack) {
      std::ostringstream v6;
      v6 << "fd00:1::" << std::hex << (n + 1);
      out.push_back(v6.str());
    }
    return out;
  }

  bool Chance(int percent) { return std::uniform_int_distribution<int>(0, 99)(rng_) < percent; }
  std::size_t Index(std::size_t size) {
    return std::uniform_int_distribution<std::size_t>(0, size - 1)(rng_);
  }
  template <typename T>
  T Pick(const std::vector<T>& from) {
    return from[Index(from.size())];
  }

  // Compares the controller's slices with what the library derives from the objects on the
  // server now; true when they agree, else a description of the first differences in `report`.
  bool Converged(int max_endpoints, std::string& report) {
    std::ostringstream out;
    const auto services = services_->ListAll("default", {});
    const auto pods = pods_->ListAll("default", {});
    const auto nodes = nodes_->ListAll("", {});
    const auto slices = slices_->ListAll("default", {});
    if (!services.ok() || !pods.ok() || !nodes.ok() || !slices.ok()) {
      report = "list failed";
      return false;
    }
    std::map<std::string, const model::Node*, std::less<>> node_by_name;
    for (const model::Node& node : nodes->items) node_by_name[node.metadata.name] = &node;
    const auto lookup = [&](std::string_view name) -> const model::Node* {
      auto it = node_by_name.find(name);
      return it == node_by_name.end() ? nullptr : it->second;
    };
    for (const model::Service& service : services->items) {
      if (!service.spec.selector) continue;  // the default "kubernetes" Service
      const std::string& name = service.metadata.name;
      std::vector<model::EndpointSlice> ours;
      for (const model::EndpointSlice& slice : slices->items) {
        const auto& labels = slice.metadata.labels;
        auto owner = labels.find(model::kLabelServiceName);
        auto manager = labels.find(model::kLabelManagedBy);
        if (owner != labels.end() && owner->second == name && manager != labels.end() &&
            manager->second == model::kManagedByEndpointSliceController &&
            !slice.metadata.deletion_timestamp) {
          ours.push_back(slice);
        }
      }
      if (service.metadata.labels.contains(model::kLabelEndpointControllerName)) {
        if (!ours.empty()) out << name << ": " << ours.size() << " slices left by KEP-4770\n";
        continue;
      }
      std::vector<const model::Pod*> selected;
      for (const model::Pod& pod : pods->items) {
        if (labels::SelectorMatchesMap(*service.spec.selector, pod.metadata.labels)) {
          selected.push_back(&pod);
        }
      }
      reconcile::DesiredEndpoints desired =
          reconcile::DesiredFromService(service, selected, lookup, {});

      EndpointSets want;
      for (const reconcile::EndpointGroup& group : desired.groups) {
        for (const model::Endpoint& endpoint : group.endpoints) {
          want[group.address_type + " " + reconcile::PortMapKey(group.ports)].insert(
              EndpointText(endpoint));
        }
      }
      EndpointSets have;
      for (const model::EndpointSlice& slice : ours) {
        for (const model::Endpoint& endpoint : slice.endpoints) {
          have[slice.address_type + " " + reconcile::PortMapKey(slice.ports)].insert(
              EndpointText(endpoint));
        }
        if (slice.metadata.labels != desired.labels) {
          out << name << ": slice " << slice.metadata.name << " has other labels\n";
        }
        if (std::find(desired.address_types.begin(), desired.address_types.end(),
                      slice.address_type) == desired.address_types.end()) {
          out << name << ": slice " << slice.metadata.name << " of address type "
              << slice.address_type << '\n';
        }
      }
      if (want != have) DescribeDifference(name, want, have, out);

      // What `slicewright plan` would write on top of what is there: nothing.
      reconcile::PlanOptions options;
      options.max_endpoints_per_slice = max_endpoints;
      const reconcile::Plan plan = reconcile::PlanSlices(desired, ours, options);
      if (!plan.empty()) out << name << ": the plan has " << plan.actions.size() << " actions\n";
    }
    report = out.str();
    return report.empty();
  }

  // The invariants that hold whatever the packing: no slice over the limit, and no endpoint in
  // two slices of one Service and address type.
  void ExpectPackingInvariants(int max_endpoints) {
    const auto slices = slices_->ListAll("default", {});
    ASSERT_TRUE(slices.ok()) << slices.status().ToString();
    std::map<std::string, std::multiset<std::string>> seen;  // "service addressType" -> addresses
    for (const model::EndpointSlice& slice : slices->items) {
      auto manager = slice.metadata.labels.find(model::kLabelManagedBy);
      if (manager == slice.metadata.labels.end() ||
          manager->second != model::kManagedByEndpointSliceController) {
        continue;
      }
      EXPECT_LE(slice.endpoints.size(), static_cast<std::size_t>(max_endpoints))
          << slice.metadata.name;
      auto service = slice.metadata.labels.find(model::kLabelServiceName);
      const std::string key = (service == slice.metadata.labels.end() ? "" : service->second) +
                              " " + slice.address_type;
      for (const model::Endpoint& endpoint : slice.endpoints) {
        std::string identity;
        for (const std::string& address : endpoint.addresses) identity += address + ",";
        EXPECT_FALSE(seen[key].contains(identity))
            << identity << " twice in the slices of " << key << " (" << slice.metadata.name << ")";
        seen[key].insert(identity);
      }
    }
  }

  std::mt19937_64 rng_;
  std::vector<ServiceCase> cases_ = ServiceCases();
  std::vector<std::string> live_;      // pods not deleted with grace 0
  std::set<std::string> terminating_;  // pods deleted gracefully, still there
  int next_pod_ = 0;
  int next_address_ = 0;
};

// Random churn (pods added, deleted, terminating, readiness and IPs flipped, relabelled;
// selectors changed; KEP-4770's label added and removed; the controller restarted with another
// --max-endpoints-per-slice) ends with the slices the library computes from the final objects.
// 0: every sync derives every pod; 1: every Service keeps its derived state; 12: Services cross
// the threshold both ways as pods come and go and selectors change.
class ChurnTest : public ConvergenceTest, public ::testing::WithParamInterface<int> {};

TEST_P(ChurnTest, ConcurrentChurnEndsWithTheLibrarysSlices) {
  const std::uint64_t seed = ChurnSeed();
  std::cout << "churn seed " << seed << " (SW_CHURN_SEED=" << seed << " replays it)\n";
  SCOPED_TRACE("SW_CHURN_SEED=" + std::to_string(seed));
  rng_.seed(seed);

  for (const ServiceCase& c : cases_) {
    Result<model::Service> created = services_->Create(c.service);
    ASSERT_TRUE(created.ok()) << c.service.metadata.name << ": " << created.status().ToString();
  }
  Options options;
  options.max_endpoints_per_slice = kFirstMaxEndpoints;
  options.incremental_min_pods = GetParam();
  auto running = StartController(options);
  for (int i = 0; i < kInitialPods; ++i) AddPod();

  std::vector<std::string> history;
  for (int step = 0; step < kSteps; ++step) {
    if (step == kSteps / 2) {
      running.reset();
      options.max_endpoints_per_slice = kFinalMaxEndpoints;
      running = StartController(options);
      history.push_back("restart with max " + std::to_string(kFinalMaxEndpoints));
    }
    history.push_back(Step());
    ASSERT_FALSE(HasFailure()) << "step " << step << ": " << history.back();
  }

  std::string report;
  const bool converged =
      Eventually([&] { return Converged(kFinalMaxEndpoints, report); }, 30'000ms);
  if (!converged) {
    std::ostringstream last;
    for (std::size_t i = history.size() > 20 ? history.size() - 20 : 0; i < history.size(); ++i) {
      last << "  " << history[i] << '\n';
    }
    ADD_FAILURE() << "not converged after 30 s:\n" << report << "last steps:\n" << last.str();
  }
  ExpectPackingInvariants(kFinalMaxEndpoints);
}

INSTANTIATE_TEST_SUITE_P(IncrementalMinPods, ChurnTest, ::testing::Values(0, 1, 12),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "MinPods" + std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace slicewright::controllers::endpointslice
