#include "controllers/multinetwork/multinetwork.h"

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/network_status.h"
#include "slicewright/runtime/events.h"

#include "controllers/controller_test_util.h"

// The multi-network controller: the pure network lookups, then the controller next to the default
// one against the real embedded API server.
namespace slicewright::controllers::multinetwork {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;

constexpr std::string_view kStatus =
    R"([{"name":"kindnet","interface":"eth0","ips":["10.244.0.5"],"default":true},)"
    R"({"name":"default/storage","interface":"net1","ips":["192.168.10.5","fd10::5"]}])";

model::Pod PodWithStatus(std::string status) {
  model::Pod pod;
  pod.metadata.name = "web-1";
  pod.metadata.namespace_ = "default";
  pod.status.pod_ip = "10.244.0.5";
  pod.status.pod_ips = {"10.244.0.5"};
  pod.metadata.annotations[std::string(model::kAnnotationNetworkStatus)] = std::move(status);
  return pod;
}

TEST(MultinetworkTest, ServiceNetworkDefaultsToTheServiceNamespace) {
  model::Service service;
  service.metadata.namespace_ = "shop";
  EXPECT_EQ(ServiceNetwork(service), "");
  service.metadata.annotations[std::string(model::kAnnotationServiceNetwork)] = "storage";
  EXPECT_EQ(ServiceNetwork(service), "shop/storage");
  service.metadata.annotations[std::string(model::kAnnotationServiceNetwork)] = "infra/storage";
  EXPECT_EQ(ServiceNetwork(service), "infra/storage");
}

TEST(MultinetworkTest, PodOnNetworkUsesThatNetworksIps) {
  Result<std::optional<model::Pod>> on =
      PodOnNetwork(PodWithStatus(std::string(kStatus)), "default/storage");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  ASSERT_TRUE(on->has_value());
  EXPECT_EQ((*on)->status.pod_ips, (std::vector<std::string>{"192.168.10.5", "fd10::5"}));
  EXPECT_EQ((*on)->status.pod_ip, "192.168.10.5");

  // Not attached, no annotation, or only the default network: left out.
  EXPECT_FALSE(PodOnNetwork(PodWithStatus(std::string(kStatus)), "default/other")->has_value());
  model::Pod bare = PodWithStatus("");
  bare.metadata.annotations.clear();
  EXPECT_FALSE(PodOnNetwork(bare, "default/storage")->has_value());
  EXPECT_FALSE(PodOnNetwork(PodWithStatus(std::string(kStatus)), "default/kindnet")->has_value());
  // A bare attachment name matches in the pod's namespace only.
  const std::string bare_named = R"([{"name":"storage","interface":"net1","ips":["10.9.0.1"]}])";
  EXPECT_TRUE(PodOnNetwork(PodWithStatus(bare_named), "default/storage")->has_value());
  EXPECT_FALSE(PodOnNetwork(PodWithStatus(bare_named), "infra/storage")->has_value());

  const Status malformed = PodOnNetwork(PodWithStatus("[{\"name\":"), "default/storage").status();
  EXPECT_EQ(malformed.code(), StatusCode::kBadRequest);
  EXPECT_TRUE(malformed.ToString().starts_with(
      "pods/default/web-1: annotation k8s.v1.cni.cncf.io/network-status: malformed JSON"))
      << malformed.ToString();
}

// Collects Events instead of writing them.
class RecordingSink final : public runtime::EventSink {
 public:
  Result<model::Event> Create(const model::Event& event) override {
    std::lock_guard lock(mu_);
    reasons_.insert(event.reason);
    messages_.push_back(event.message);
    return event;
  }
  Result<model::Event> Patch(const model::Event& event, std::string_view) override { return event; }
  std::multiset<std::string> reasons() {
    std::lock_guard lock(mu_);
    return reasons_;
  }

 private:
  std::mutex mu_;
  std::multiset<std::string> reasons_;
  std::vector<std::string> messages_;
};

class MultinetworkControllerTest : public testing::ControllerTest {
 protected:
  std::unique_ptr<testing::RunningController> StartBoth(runtime::EventRecorder* events = nullptr) {
    return StartControllers(
        {{endpointslice::Options(), endpointslice::Plugin()}, {DefaultOptions(), MakePlugin()}},
        nullptr, events);
  }
  static model::StringMap OurLabel() {
    return {{std::string(model::kLabelEndpointControllerName), std::string(kControllerName)}};
  }
  static model::StringMap Network(std::string name) {
    return {{std::string(model::kAnnotationServiceNetwork), std::move(name)}};
  }
  static model::StringMap Status(std::string json) {
    return {{std::string(model::kAnnotationNetworkStatus), std::move(json)}};
  }
};

TEST_F(MultinetworkControllerTest, PublishesTheNetworksIps) {
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* events = sink.get();
  runtime::EventRecorderOptions event_options;
  event_options.component = "multinetwork-controller";
  auto recorder = runtime::EventRecorder::Create(std::move(sink), event_options);
  ASSERT_TRUE(recorder.ok());
  auto running = StartBoth(recorder->get());
  CreateService("web", OurLabel(), Network("storage"));
  CreatePod("web-1", "web", "node-a", "10.244.0.5", true, Status(std::string(kStatus)));
  CreatePod("web-2", "web", "node-b", "10.244.0.6", true,
            Status(R"([{"name":"default/storage","interface":"net1","ips":["192.168.10.6"]}])"));
  CreatePod("web-3", "web", "node-a", "10.244.0.7");  // not attached
  CreatePod("web-4", "web", "node-a", "10.244.0.8", true, Status("{broken"));
  const std::string managed_by(kControllerName);
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("web", managed_by) ==
           std::multiset<std::string>{"192.168.10.5", "192.168.10.6"};
  })) << ::testing::PrintToString(ReadyAddresses("web", managed_by));
  // The Service is single-stack IPv4 (the API server's default), so the network's IPv6 address
  // (fd10::5) is not published; the slice carries our labels and the ownerReference.
  std::vector<model::EndpointSlice> slices = OurSlicesOf("web", managed_by);
  ASSERT_EQ(slices.size(), 1U);
  for (const model::EndpointSlice& slice : slices) {
    EXPECT_EQ(slice.metadata.labels.at(std::string(model::kLabelServiceName)), "web");
    ASSERT_EQ(slice.metadata.owner_references.size(), 1U);
    EXPECT_EQ(slice.metadata.owner_references[0].name, "web");
  }
  // The default controller leaves the Service alone.
  EXPECT_TRUE(OurSlicesOf("web").empty());
  recorder->get()->Flush();
  EXPECT_TRUE(Eventually([&] { return events->reasons().contains("FailedToReadPodNetworks"); }));

  // A pod attached later (Multus writes network-status after the IPs): the endpoints follow.
  ASSERT_TRUE(pods_
                  ->Patch("default", "web-3", client::PatchType::kMergePatch,
                          R"({"metadata":{"annotations":{"k8s.v1.cni.cncf.io/network-status":)"
                          R"("[{\"name\":\"default/storage\",\"ips\":[\"192.168.10.7\"]}]"}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("web", managed_by) ==
           std::multiset<std::string>{"192.168.10.5", "192.168.10.6", "192.168.10.7"};
  })) << ::testing::PrintToString(ReadyAddresses("web", managed_by));

  // Another network in the annotation: the endpoints follow.
  ASSERT_TRUE(services_
                  ->Patch("default", "web", client::PatchType::kMergePatch,
                          R"({"metadata":{"annotations":{"k8s.v1.cni.cncf.io/service-network":)"
                          R"("nowhere"}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] { return ReadyAddresses("web", managed_by).empty(); }));
}

// Without our label value the Service belongs to someone else: our slices go, and the default
// controller takes it back once the label is gone.
TEST_F(MultinetworkControllerTest, LabelDecidesTheOwner) {
  auto running = StartBoth();
  CreateService("web", OurLabel(), Network("storage"));
  CreatePod("web-1", "web", "node-a", "10.244.0.5", true, Status(std::string(kStatus)));
  const std::string managed_by(kControllerName);
  ASSERT_TRUE(Eventually([&] { return !OurSlicesOf("web", managed_by).empty(); }));
  ASSERT_TRUE(services_
                  ->Patch("default", "web", client::PatchType::kMergePatch,
                          R"({"metadata":{"labels":{)"
                          R"("service.kubernetes.io/endpoint-controller-name":null}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return OurSlicesOf("web", managed_by).empty() &&
           ReadyAddresses("web") == std::multiset<std::string>{"10.244.0.5"};
  }));
}

TEST_F(MultinetworkControllerTest, HeadlessServices) {
  auto running = StartBoth();
  CreateService("db", OurLabel(), Network("storage"), /*headless=*/true);
  CreatePod("db-1", "db", "node-a", "10.244.1.5", true,
            Status(R"([{"name":"default/storage","interface":"net1","ips":["192.168.20.1"]}])"));
  const std::string managed_by(kControllerName);
  ASSERT_TRUE(Eventually([&] {
    return ReadyAddresses("db", managed_by) == std::multiset<std::string>{"192.168.20.1"};
  }));
  const std::vector<model::EndpointSlice> slices = OurSlicesOf("db", managed_by);
  ASSERT_EQ(slices.size(), 1U);
  EXPECT_TRUE(slices[0].metadata.labels.contains(std::string(model::kLabelHeadless)));
}

}  // namespace
}  // namespace slicewright::controllers::multinetwork
