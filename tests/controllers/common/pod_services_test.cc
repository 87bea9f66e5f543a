#include "controllers/common/pod_services.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"

// Which Services a Pod event concerns (spec §10, scenario 47), shared by the endpoint controllers.
namespace slicewright::controllers {
namespace {

ServiceSnapshot MakeService(const std::string& name, std::optional<model::StringMap> selector) {
  auto service = std::make_shared<model::Service>();
  service->metadata.namespace_ = "test";
  service->metadata.name = name;
  service->spec.selector = std::move(selector);
  return service;
}

// a selects app=a, b selects app=b, all selects everything, none has no selector.
std::vector<ServiceSnapshot> Services() {
  return {MakeService("a", model::StringMap{{"app", "a"}}),
          MakeService("b", model::StringMap{{"app", "b"}}), MakeService("all", model::StringMap{}),
          MakeService("none", std::nullopt)};
}

model::Pod MakePod(const std::string& app, const std::string& ip, const std::string& version) {
  model::Pod pod;
  pod.metadata.namespace_ = "test";
  pod.metadata.name = "pod";
  pod.metadata.resource_version = version;
  pod.metadata.labels = {{"app", app}};
  pod.status.pod_ips = {ip};
  return pod;
}

using Keys = std::vector<std::string>;

// A nil selector selects nothing; an empty one selects every pod.
TEST(PodServicesTest, SelectingPod) {
  EXPECT_EQ(ServicesSelectingPod(Services(), {{"app", "a"}}), (Keys{"test/a", "test/all"}));
  EXPECT_EQ(ServicesSelectingPod(Services(), {}), (Keys{"test/all"}));
}

// Scenario 47: IP change -> Services of the new labels; label change only -> the symmetric
// difference; both -> the union; same resourceVersion or a nodeName change -> nothing; a hostname
// change -> the Services selecting the pod.
TEST(PodServicesTest, ServicesToUpdateOnPodChange) {
  const model::Pod old_pod = MakePod("a", "10.0.0.1", "1");
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, MakePod("a", "10.0.0.2", "2")),
            (Keys{"test/a", "test/all"}));
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, MakePod("b", "10.0.0.1", "2")),
            (Keys{"test/a", "test/b"}));
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, MakePod("b", "10.0.0.2", "2")),
            (Keys{"test/a", "test/b", "test/all"}));
  EXPECT_TRUE(
      ServicesToUpdateOnPodChange(Services(), old_pod, MakePod("b", "10.0.0.2", "1")).empty());
  model::Pod moved = MakePod("a", "10.0.0.1", "2");
  moved.spec.node_name = "node-9";
  EXPECT_TRUE(ServicesToUpdateOnPodChange(Services(), old_pod, moved).empty());
  model::Pod renamed = MakePod("a", "10.0.0.1", "2");
  renamed.spec.hostname = "web-0";
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, renamed),
            (Keys{"test/a", "test/all"}));
  model::Pod ready = MakePod("a", "10.0.0.1", "2");
  ready.status.conditions = {model::PodCondition{"Ready", "True", {}, "", ""}};
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, ready), (Keys{"test/a", "test/all"}));
  model::Pod terminating = MakePod("a", "10.0.0.1", "2");
  terminating.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1);
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, terminating),
            (Keys{"test/a", "test/all"}));
}

// The kept annotations (Multus' network status) are a pod change only where a plugin reads them.
TEST(PodServicesTest, AnnotationsMatterOnlyWhenAsked) {
  const model::Pod old_pod = MakePod("a", "10.0.0.1", "1");
  model::Pod attached = MakePod("a", "10.0.0.1", "2");
  attached.metadata.annotations["k8s.v1.cni.cncf.io/network-status"] = "[]";
  EXPECT_TRUE(ServicesToUpdateOnPodChange(Services(), old_pod, attached).empty());
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, attached, /*annotations_matter=*/true),
            (Keys{"test/a", "test/all"}));
  model::Pod moved_and_attached = attached;
  moved_and_attached.metadata.labels["app"] = "b";
  EXPECT_EQ(ServicesToUpdateOnPodChange(Services(), old_pod, moved_and_attached, true),
            (Keys{"test/a", "test/b", "test/all"}));
}

}  // namespace
}  // namespace slicewright::controllers
