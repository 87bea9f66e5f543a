#include "controllers/explain/explain.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/model/network_status.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/planner.h"
#include "slicewright/reconcile/pod_source.h"

// `slicewright explain service`: the controller decision (KEP-4770, gate, multi-network,
// mirroring), the per-pod verdicts and the in-sync check, on objects built in memory.
namespace slicewright::controllers::explain {
namespace {

model::Service WebService() {
  model::Service service;
  service.metadata.name = "web";
  service.metadata.namespace_ = "default";
  service.metadata.uid = "svc-uid";
  service.spec.selector = model::StringMap{{"app", "web"}};
  service.spec.cluster_ip = "10.96.0.10";
  service.spec.cluster_ips = {"10.96.0.10"};
  service.spec.ip_families = {"IPv4"};
  model::ServicePort port;
  port.name = "http";
  port.port = 80;
  port.target_port = model::IntOrString::FromString("http");
  service.spec.ports = {port};
  return service;
}

model::Pod WebPod(std::string name, std::vector<std::string> ips, bool ready = true) {
  model::Pod pod;
  pod.metadata.name = std::move(name);
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = pod.metadata.name + "-uid";
  pod.metadata.labels = {{"app", "web"}};
  pod.spec.node_name = "node-a";
  model::Container container;
  container.name = "web";
  model::ContainerPort port;
  port.name = "http";
  port.container_port = 8080;
  container.ports = {port};
  pod.spec.containers = {container};
  pod.status.phase = "Running";
  pod.status.pod_ips = ips;
  pod.status.pod_ip = ips.empty() ? "" : ips.front();
  model::PodCondition condition;
  condition.type = "Ready";
  condition.status = ready ? "True" : "False";
  pod.status.conditions = {condition};
  return pod;
}

model::Node NodeA() {
  model::Node node;
  node.metadata.name = "node-a";
  node.metadata.labels = {{std::string(model::kLabelTopologyZone), "zone-a"}};
  return node;
}

Input WebInput() {
  Input input;
  input.service = WebService();
  input.nodes = {NodeA()};
  return input;
}

const PodReport* FindPod(const Explanation& e, std::string_view name) {
  for (const PodReport& pod : e.pods) {
    if (pod.name == name) return &pod;
  }
  return nullptr;
}

// The slices the EndpointSlice controller would write for `input` (what a caught-up cluster has).
std::vector<model::EndpointSlice> WrittenSlices(const Input& input) {
  std::vector<const model::Pod*> pods;
  for (const model::Pod& pod : input.pods) pods.push_back(&pod);
  const auto find_node = [&input](std::string_view name) -> const model::Node* {
    for (const model::Node& node : input.nodes) {
      if (node.metadata.name == name) return &node;
    }
    return nullptr;
  };
  reconcile::ServiceSourceOptions source;
  reconcile::PlanOptions options;
  reconcile::Plan plan = reconcile::PlanSlices(
      reconcile::DesiredFromService(input.service, pods, find_node, source), {}, options);
  std::vector<model::EndpointSlice> slices;
  int index = 0;
  for (reconcile::SliceAction& action : plan.actions) {
    action.slice.metadata.name = "web-" + std::to_string(index++);
    action.slice.metadata.resource_version = "1";
    slices.push_back(std::move(action.slice));
  }
  return slices;
}

TEST(ExplainTest, SelectorServiceBelongsToTheEndpointSliceController) {
  Input input = WebInput();
  input.pods = {WebPod("web-1", {"10.1.0.1"}), WebPod("web-2", {"10.1.0.2"}, false)};
  input.slices = WrittenSlices(input);
  const Explanation e = Explain(input);
  EXPECT_EQ(e.service, "default/web");
  EXPECT_EQ(e.controller, "endpointslice");
  EXPECT_EQ(e.managed_by, "endpointslice-controller.k8s.io");
  EXPECT_EQ(e.selected_pods, 2);
  EXPECT_EQ(e.ready, 1);
  ASSERT_EQ(e.slices.size(), 1U);
  EXPECT_EQ(e.slices[0].endpoints, 2);
  ASSERT_NE(FindPod(e, "web-1"), nullptr);
  EXPECT_EQ(FindPod(e, "web-1")->verdict, PodVerdict::kReady);
  EXPECT_EQ(FindPod(e, "web-2")->verdict, PodVerdict::kNotReady);
  ASSERT_TRUE(e.in_sync.has_value());
  EXPECT_TRUE(*e.in_sync);
  const std::string text = RenderText(e);
  EXPECT_NE(text.find("Managed by:  endpointslice controller"), std::string::npos) << text;
  EXPECT_NE(text.find("1 ready, 1 serving"), std::string::npos) << text;
  EXPECT_NE(text.find("In sync:     yes"), std::string::npos) << text;
}

TEST(ExplainTest, ReportsEveryReasonAPodIsLeftOut) {
  Input input = WebInput();
  model::Pod finished = WebPod("done", {"10.1.0.9"});
  finished.status.phase = "Succeeded";
  model::Pod unscheduled = WebPod("pending", {});
  unscheduled.spec.node_name.clear();
  model::Pod lost = WebPod("lost", {"10.1.0.3"});
  lost.spec.node_name = "node-gone";
  model::Pod v6 = WebPod("v6-only", {"fd00::3"});
  model::Pod no_port = WebPod("no-port", {"10.1.0.4"});
  no_port.spec.containers[0].ports[0].name = "metrics";
  model::Pod leaving = WebPod("leaving", {"10.1.0.5"});
  leaving.metadata.deletion_timestamp = model::Time::FromUnixSeconds(1);
  model::Pod other = WebPod("other-app", {"10.1.0.6"});
  other.metadata.labels = {{"app", "api"}};
  input.pods = {finished, unscheduled, lost, v6, no_port, leaving, other};

  const Explanation e = Explain(input);
  EXPECT_EQ(e.selected_pods, 6);  // other-app is not selected
  EXPECT_EQ(FindPod(e, "other-app"), nullptr);
  EXPECT_EQ(FindPod(e, "done")->verdict, PodVerdict::kPodFinished);
  EXPECT_EQ(FindPod(e, "pending")->verdict, PodVerdict::kNoPodIP);
  EXPECT_EQ(FindPod(e, "pending")->detail, "not scheduled to a Node yet");
  EXPECT_EQ(FindPod(e, "lost")->verdict, PodVerdict::kNodeNotFound);
  EXPECT_NE(FindPod(e, "lost")->detail.find("node-gone"), std::string::npos);
  EXPECT_EQ(FindPod(e, "v6-only")->verdict, PodVerdict::kNoIPForFamily);
  EXPECT_EQ(FindPod(e, "v6-only")->detail, "the Service serves IPv4; the pod's IPs: fd00::3");
  EXPECT_EQ(FindPod(e, "no-port")->verdict, PodVerdict::kReady);
  EXPECT_EQ(FindPod(e, "no-port")->unresolved_ports, std::vector<std::string>{"http"});
  EXPECT_EQ(FindPod(e, "leaving")->verdict, PodVerdict::kTerminating);
  // Nothing written yet: two slices to create (the two port sets).
  ASSERT_TRUE(e.in_sync.has_value());
  EXPECT_FALSE(*e.in_sync);
  EXPECT_EQ(e.pending_writes, "2 create, 0 update, 0 delete");

  const std::string text = RenderText(e);
  EXPECT_NE(text.find("6 selected: 1 ready, 0 not ready (no traffic), 1 terminating, 4 left out"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NodeNotFound   lost"), std::string::npos) << text;
  EXPECT_NE(text.find("port(s) http not found"), std::string::npos) << text;
  const nlohmann::json json = nlohmann::json::parse(EncodeJson(e));
  EXPECT_EQ(json["pods"].size(), 6U);
  EXPECT_EQ(json["inSync"], false);
}

TEST(ExplainTest, PublishNotReadyAddressesKeepsAPodWhoseNodeIsMissing) {
  Input input = WebInput();
  input.service.spec.publish_not_ready_addresses = true;
  model::Pod lost = WebPod("lost", {"10.1.0.3"});
  lost.spec.node_name = "node-gone";
  input.pods = {lost};
  EXPECT_EQ(FindPod(Explain(input), "lost")->verdict, PodVerdict::kReady);
}

TEST(ExplainTest, Kep4770LabelHandsTheServiceToAnotherController) {
  Input input = WebInput();
  input.service.metadata.labels[std::string(model::kLabelEndpointControllerName)] = "example.com/x";
  input.pods = {WebPod("web-1", {"10.1.0.1"})};
  model::EndpointSlice theirs;
  theirs.metadata.name = "web-x";
  theirs.metadata.labels = {{std::string(model::kLabelManagedBy), "example.com/x"}};
  theirs.address_type = "IPv4";
  theirs.endpoints.resize(3);
  input.slices = {theirs};

  Explanation e = Explain(input);
  EXPECT_EQ(e.controller, "");
  EXPECT_NE(e.reason.find("KEP-4770"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("\"example.com/x\""), std::string::npos) << e.reason;
  EXPECT_TRUE(e.pods.empty());
  EXPECT_FALSE(e.in_sync.has_value());
  ASSERT_EQ(e.other_slices.size(), 1U);
  EXPECT_EQ(e.other_slices[0].ready, 3);  // unset conditions mean ready
  EXPECT_NE(RenderText(e).find("nobody in slicewright"), std::string::npos);

  // Gate off: the label is ignored, and the explanation says so.
  input.external_endpoint_controller = false;
  e = Explain(input);
  EXPECT_EQ(e.controller, "endpointslice");
  EXPECT_NE(e.reason.find("ExternalEndpointController=false"), std::string::npos) << e.reason;
}

TEST(ExplainTest, MultiNetworkPodsAreJudgedOnTheirNetwork) {
  Input input = WebInput();
  input.service.metadata.labels[std::string(model::kLabelEndpointControllerName)] =
      "multinetwork.slicewright.io";
  input.service.metadata.annotations[std::string(model::kAnnotationServiceNetwork)] = "storage";
  model::Pod attached = WebPod("attached", {"10.1.0.1"});
  attached.metadata.annotations[std::string(model::kAnnotationNetworkStatus)] =
      R"([{"name":"default/storage","interface":"net1","ips":["192.168.10.5"]}])";
  model::Pod detached = WebPod("detached", {"10.1.0.2"});
  model::Pod broken = WebPod("broken", {"10.1.0.3"});
  broken.metadata.annotations[std::string(model::kAnnotationNetworkStatus)] = "[{not json";
  input.pods = {attached, detached, broken};

  const Explanation e = Explain(input);
  EXPECT_EQ(e.controller, "multinetwork");
  EXPECT_EQ(e.managed_by, "multinetwork.slicewright.io");
  EXPECT_NE(e.reason.find("default/storage"), std::string::npos) << e.reason;
  EXPECT_EQ(FindPod(e, "attached")->verdict, PodVerdict::kReady);
  EXPECT_EQ(FindPod(e, "detached")->verdict, PodVerdict::kNotOnNetwork);
  EXPECT_EQ(FindPod(e, "broken")->verdict, PodVerdict::kBadNetworkStatus);
  EXPECT_NE(FindPod(e, "broken")->detail.find("pods/default/broken"), std::string::npos)
      << FindPod(e, "broken")->detail;

  // The parse error (quotes and all) survives the JSON output.
  const nlohmann::json json = nlohmann::json::parse(EncodeJson(e));
  ASSERT_EQ(json["pods"].size(), 3U);
  EXPECT_EQ(json["pods"][1]["name"], "broken");
  EXPECT_EQ(json["pods"][1]["verdict"], "BadNetworkStatus");
  EXPECT_EQ(json["pods"][1]["detail"], FindPod(e, "broken")->detail);
  EXPECT_EQ(json["controller"], "multinetwork");

  // Labelled for multinetwork but naming no network: nobody writes its endpoints.
  input.service.metadata.annotations.clear();
  const Explanation orphan = Explain(input);
  EXPECT_EQ(orphan.controller, "");
  EXPECT_NE(orphan.reason.find("nothing writes its endpoints"), std::string::npos);
}

TEST(ExplainTest, SelectorlessServiceIsMirrored) {
  Input input = WebInput();
  input.service.spec.selector.reset();
  Explanation e = Explain(input);
  EXPECT_EQ(e.controller, "endpointslice-mirroring");
  EXPECT_EQ(e.managed_by, "endpointslicemirroring-controller.k8s.io");
  ASSERT_EQ(e.notes.size(), 1U);
  EXPECT_NE(e.notes[0].find("no Endpoints web"), std::string::npos);

  input.endpoints = model::Endpoints{};
  input.endpoints->metadata.labels[std::string(model::kLabelSkipMirror)] = "true";
  e = Explain(input);
  ASSERT_EQ(e.notes.size(), 1U);
  EXPECT_NE(e.notes[0].find("not mirrored"), std::string::npos);
}

TEST(ExplainTest, SelectorMatchingNothingIsNoted) {
  const Explanation e = Explain(WebInput());
  EXPECT_EQ(e.selected_pods, 0);
  ASSERT_FALSE(e.notes.empty());
  EXPECT_NE(e.notes[0].find("app=web matches no pod"), std::string::npos) << e.notes[0];
}

TEST(ExplainTest, StaleSlicesAreNotInSync) {
  Input input = WebInput();
  input.pods = {WebPod("web-1", {"10.1.0.1"})};
  input.slices = WrittenSlices(input);
  input.pods.push_back(WebPod("web-2", {"10.1.0.2"}));
  const Explanation e = Explain(input);
  ASSERT_TRUE(e.in_sync.has_value());
  EXPECT_FALSE(*e.in_sync);
  EXPECT_EQ(e.pending_writes, "0 create, 1 update, 0 delete");
}

}  // namespace
}  // namespace slicewright::controllers::explain
