#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/log.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/codec/mcs.h"
#include "slicewright/mcs/conditions.h"
#include "slicewright/mcs/identity.h"
#include "slicewright/model/mcs.h"
#include "slicewright/model/well_known.h"

#include "controllers/mcs/agent.h"
#include "controllers/mcs/agent_test_util.h"
#include "controllers/mcs/kinds.h"
#include "fakes/fault_proxy.h"
#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

// A write the API server refuses is never dropped in silence (issue #30): the object's Ready says
// why and the agent retries it with backoff until it goes through. The agent talks to its cluster
// and to the broker through a FaultProxy that refuses the writes a real server refused: the
// derived Service of a dual-stack import on an IPv4-only cluster (kube-apiserver's 422 "not
// configured for dual-stack", issue #30), the import's MCS EndpointSlices, the export's broker
// EndpointSlices (a broker's forging guard, 403). Without the slow retry, each stayed refused
// after the cause was gone.
namespace slicewright::controllers::mcs {
namespace {

using test_support::CreateNamespace;
using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::StartLoopbackApiServer;
using test_support::TempDir;

constexpr char kNamespace[] = "mcs-refusals";

// kube-apiserver's answer to a RequireDualStack Service on a single-stack cluster (v1.34.2).
constexpr char kNotDualStack[] = R"({"kind":"Status","apiVersion":"v1","metadata":{},
"status":"Failure","message":"Service \"refused\" is invalid: spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services",
"reason":"Invalid","details":{"name":"refused","kind":"Service","causes":[{"reason":"FieldValueInvalid",
"message":"Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services",
"field":"spec.ipFamilyPolicy"}]},"code":422})";

// A ValidatingAdmissionPolicy's refusal (the broker's forging guard, deploy/mcs/broker).
constexpr char kForbidden[] = R"({"kind":"Status","apiVersion":"v1","metadata":{},
"status":"Failure","message":"endpointslices.discovery.k8s.io \"x\" is forbidden: ValidatingAdmissionPolicy 'slicewright-mcs-member-owns-its-cluster' with binding 'slicewright-mcs-member-owns-its-cluster' denied request: member cluster-a may only write EndpointSlices labelled multicluster.kubernetes.io/source-cluster=cluster-a",
"reason":"Forbidden","details":{"name":"x","group":"discovery.k8s.io","kind":"endpointslices"},"code":403})";

// kube-apiserver's NamespaceLifecycle refusal of a create in a namespace being deleted (v1.34.2).
constexpr char kNamespaceTerminating[] = R"({"kind":"Status","apiVersion":"v1","metadata":{},
"status":"Failure","message":"services \"derived-x\" is forbidden: unable to create new content in namespace mcs-refusals because it is being terminated",
"reason":"Forbidden","details":{"name":"derived-x","kind":"services","causes":[{"reason":"NamespaceTerminating",
"message":"namespace mcs-refusals is being terminated","field":"metadata.namespace"}]},"code":403})";

// kube-apiserver's answer to a write of an object deleted since it was read (v1.34.2).
constexpr char kExportNotFound[] = R"({"kind":"Status","apiVersion":"v1","metadata":{},
"status":"Failure","message":"serviceexports.multicluster.x-k8s.io \"web\" not found",
"reason":"NotFound","details":{"name":"web","group":"multicluster.x-k8s.io","kind":"serviceexports"},"code":404})";

using ::slicewright::mcs::FindCondition;

class AgentRefusalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    member_server_ = StartLoopbackApiServer(member_dir_.path(), /*mcs_crds=*/true);
    broker_server_ = StartLoopbackApiServer(broker_dir_.path(), /*mcs_crds=*/true);
    ASSERT_NE(member_server_, nullptr);
    ASSERT_NE(broker_server_, nullptr);
    member_ = LoopbackClient(member_server_->port());
    broker_ = LoopbackClient(broker_server_->port());
    ASSERT_TRUE(CreateNamespace(*broker_, std::string(model::kDefaultBrokerNamespace)).ok());
    ASSERT_TRUE(CreateNamespace(*member_, kNamespace).ok());
    member_proxy_ =
        std::move(fakes::FaultProxy::Start("127.0.0.1", member_server_->port())).value();
    broker_proxy_ =
        std::move(fakes::FaultProxy::Start("127.0.0.1", broker_server_->port())).value();
    agent_member_ = LoopbackClient(member_proxy_->port());
    agent_broker_ = LoopbackClient(broker_proxy_->port());
  }

  void TearDown() override {
    if (agent_ != nullptr) agent_->Stop();
    if (member_informers_ != nullptr) member_informers_->Stop();
    if (broker_informers_ != nullptr) broker_informers_->Stop();
  }

  // The agent of cluster-a (whose families the flag says), through the proxies; slow retries
  // after 100 ms, doubled up to 400 ms.
  void Run(const std::string& families) {
    member_informers_ = std::make_unique<cache::InformerFactory>(*agent_member_);
    broker_informers_ = std::make_unique<cache::InformerFactory>(*agent_broker_);
    Options options;
    options.cluster_id = "cluster-a";
    options.cluster_ip_families = families;
    options.dns_address = "";
    options.slow_retry = {std::chrono::milliseconds(100), std::chrono::milliseconds(400)};
    Result<std::unique_ptr<Agent>> created =
        Agent::Create(std::move(options), {.client = agent_member_.get(),
                                           .informers = member_informers_.get(),
                                           .broker = agent_broker_.get(),
                                           .broker_informers = broker_informers_.get()});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    agent_ = std::move(created).value();
    member_informers_->Start();
    broker_informers_->Start();
    ASSERT_TRUE(member_informers_->WaitForCacheSync(std::chrono::seconds(10)));
    ASSERT_TRUE(broker_informers_->WaitForCacheSync(std::chrono::seconds(10)));
    agent_->Start();
  }

  // A dual-stack (RequireDualStack) Service with one ready endpoint in its own EndpointSlice, and
  // its ServiceExport: written directly, not through the proxies.
  void ExportDualStack(const std::string& name) {
    model::Service service;
    service.metadata.namespace_ = kNamespace;
    service.metadata.name = name;
    service.spec.selector = model::StringMap{{"app", name}};
    service.spec.ip_families = {"IPv4", "IPv6"};
    service.spec.ip_family_policy = "RequireDualStack";
    service.spec.ports.emplace_back().port = 80;
    ASSERT_TRUE(
        client::TypedClient<model::Service>(*member_, client::ServiceCodec()).Create(service).ok());
    model::EndpointSlice slice;
    slice.metadata.namespace_ = kNamespace;
    slice.metadata.name = name + "-abcde";
    slice.metadata.labels[std::string(model::kLabelServiceName)] = name;
    slice.metadata.labels[std::string(model::kLabelManagedBy)] = "endpointslice-controller.k8s.io";
    slice.address_type = "IPv4";
    model::Endpoint& endpoint = slice.endpoints.emplace_back();
    endpoint.addresses = {"10.244.0.7"};
    endpoint.conditions.ready = true;
    model::EndpointPort& port = slice.ports.emplace_back();
    port.port = 80;
    port.protocol = "TCP";
    ASSERT_TRUE(client::TypedClient<model::EndpointSlice>(*member_, client::EndpointSliceCodec())
                    .Create(slice)
                    .ok());
    model::ServiceExport service_export;
    service_export.metadata.namespace_ = kNamespace;
    service_export.metadata.name = name;
    ASSERT_TRUE(client::TypedClient<model::ServiceExport>(*member_, ServiceExportCodec())
                    .Create(service_export)
                    .ok());
  }

  std::optional<model::ServiceImport> Import(const std::string& name) {
    return GetServiceImport(*member_, kNamespace, name);
  }

  std::optional<model::ServiceExport> GetExport(const std::string& name) {
    return GetServiceExport(*member_, kNamespace, name);
  }

  // The ServiceExport's Ready as "status reason", "" without one.
  std::string ExportReady(const std::string& name, std::string* message = nullptr) {
    const std::optional<model::ServiceExport> got = GetExport(name);
    const model::Condition* ready =
        got ? FindCondition(got->status.conditions, model::kConditionReady) : nullptr;
    if (ready == nullptr) return "";
    if (message != nullptr) *message = ready->message;
    return ready->status + " " + ready->reason;
  }

  // The import's Ready as "status reason", "" without one.
  std::string ImportReady(const std::string& name, std::string* message = nullptr) {
    const std::optional<model::ServiceImport> got = Import(name);
    const model::Condition* ready =
        got ? FindCondition(got->status.conditions, model::kConditionReady) : nullptr;
    if (ready == nullptr) return "";
    if (message != nullptr) *message = ready->message;
    return ready->status + " " + ready->reason;
  }

  TempDir member_dir_;
  TempDir broker_dir_;
  std::unique_ptr<apiserver::RunningApiServer> member_server_;
  std::unique_ptr<apiserver::RunningApiServer> broker_server_;
  std::unique_ptr<client::RestClient> member_;
  std::unique_ptr<client::RestClient> broker_;
  std::unique_ptr<fakes::FaultProxy> member_proxy_;
  std::unique_ptr<fakes::FaultProxy> broker_proxy_;
  std::unique_ptr<client::RestClient> agent_member_;
  std::unique_ptr<client::RestClient> agent_broker_;
  std::unique_ptr<cache::InformerFactory> member_informers_;
  std::unique_ptr<cache::InformerFactory> broker_informers_;
  std::unique_ptr<Agent> agent_;
};

// The derived Service of a dual-stack import refused as kube-apiserver refuses it on an IPv4-only
// cluster (an agent told the wrong families): the import says Ready=False IPFamilyNotSupported
// with the server's answer, has no ClusterSetIP, and the write is retried; once the server takes
// it (the cluster fixed), the import heals on its own: Ready, both IPs.
TEST_F(AgentRefusalsTest, ARefusedDerivedServiceIsReportedAndRetried) {
  const fakes::RuleId refused = member_proxy_->Add(
      fakes::Match::Post(std::string("/namespaces/") + kNamespace + "/services").Forever(),
      fakes::Fault::Respond(422, kNotDualStack));
  Run("IPv4,IPv6");
  ExportDualStack("web");
  std::string message;
  ASSERT_TRUE(Eventually([&] {
    return ImportReady("web", &message) == "False IPFamilyNotSupported";
  })) << ImportReady("web", &message)
      << ": " << message;
  const std::string derived = ::slicewright::mcs::DerivedServiceName(kNamespace, "web");
  EXPECT_NE(message.find("the derived Service " + derived), std::string::npos) << message;
  EXPECT_NE(message.find("this cluster is not configured for dual-stack services"),
            std::string::npos)
      << message;
  EXPECT_TRUE(Import("web")->spec.ips.empty());
  // Retried with backoff, not given up: once everything else settled (the export published, no
  // event left to requeue the import), the refused create keeps coming back.
  ASSERT_TRUE(Eventually([&] { return ExportReady("web") == "True Exported"; }))
      << ExportReady("web");
  const int hits = member_proxy_->Hits(refused);
  EXPECT_TRUE(member_proxy_->WaitForHits(refused, hits + 3, std::chrono::seconds(10)))
      << member_proxy_->Hits(refused) - hits << " retries";

  member_proxy_->ClearRules();
  ASSERT_TRUE(Eventually([&] {
    const std::optional<model::ServiceImport> got = Import("web");
    return ImportReady("web") == "True Ready" && got->spec.ips.size() == 2;
  })) << ImportReady("web", &message)
      << ": " << message;
}

// The import's MCS EndpointSlices refused (403): Ready=False Failed saying so, endpointSliceObjects
// Absent (they are not there), retried until they are written: then Ready and Present. The
// export's slices refused in the broker (the forging guard): its ServiceExport is Ready=False
// Failed with the broker's answer, and heals the same way.
TEST_F(AgentRefusalsTest, RefusedEndpointSlicesAreReportedAndRetried) {
  member_proxy_->Add(
      fakes::Match::Post(std::string("/namespaces/") + kNamespace + "/endpointslices").Forever(),
      fakes::Fault::Respond(403, kForbidden));
  const fakes::RuleId broker_refused = broker_proxy_->Add(
      fakes::Match::Post(std::string("/namespaces/") + std::string(model::kDefaultBrokerNamespace) +
                         "/endpointslices")
          .Forever(),
      fakes::Fault::Respond(403, kForbidden));
  Run("IPv4,IPv6");
  ExportDualStack("web");

  const auto export_ready = [&](std::string* message) { return ExportReady("web", message); };
  std::string message;
  // (Failed for another reason first when the agent sees the ServiceExport before its Service.)
  ASSERT_TRUE(Eventually([&] {
    return export_ready(&message) == "False Failed" &&
           message.find("its EndpointSlices") != std::string::npos;
  })) << export_ready(&message)
      << ": " << message;
  EXPECT_NE(message.find("ValidatingAdmissionPolicy"), std::string::npos) << message;
  EXPECT_TRUE(broker_proxy_->WaitForHits(broker_refused, 3, std::chrono::seconds(10)));
  broker_proxy_->ClearRules();
  ASSERT_TRUE(Eventually([&] { return export_ready(&message) == "True Exported"; }))
      << export_ready(&message) << ": " << message;

  // The broker now holds the slice; this cluster's own import of it is refused here.
  ASSERT_TRUE(Eventually([&] {
    return ImportReady("web", &message) == "False Failed" &&
           message.find("its MCS EndpointSlices") != std::string::npos;
  })) << ImportReady("web", &message)
      << ": " << message;
  EXPECT_NE(Import("web")->status.endpoint_slice_objects, model::EndpointSliceObjects::kPresent);
  member_proxy_->ClearRules();
  ASSERT_TRUE(Eventually([&] {
    return ImportReady("web") == "True Ready" &&
           Import("web")->status.endpoint_slice_objects == model::EndpointSliceObjects::kPresent;
  })) << ImportReady("web", &message)
      << ": " << message;
}

// A namespace being deleted refuses every create in it (found on a real cluster, where the
// upstream conformance suite deletes its namespaces while imports are still arriving): that is
// no refusal to report on the import, nor a write to retry: the namespace and what we wrote there
// are going. So the import gets no failed Ready, and the refused creates are not retried.
TEST_F(AgentRefusalsTest, ANamespaceBeingDeletedIsNoRefusal) {
  const fakes::RuleId services = member_proxy_->Add(
      fakes::Match::Post(std::string("/namespaces/") + kNamespace + "/services").Forever(),
      fakes::Fault::Respond(403, kNamespaceTerminating));
  const fakes::RuleId slices = member_proxy_->Add(
      fakes::Match::Post(std::string("/namespaces/") + kNamespace + "/endpointslices").Forever(),
      fakes::Fault::Respond(403, kNamespaceTerminating));
  Run("IPv4,IPv6");
  ExportDualStack("web");
  ASSERT_TRUE(Eventually([&] { return ExportReady("web") == "True Exported"; }))
      << ExportReady("web");
  ASSERT_TRUE(Eventually([&] { return member_proxy_->Hits(services) >= 1; }));
  // The import's status written: its first syncs are done.
  ASSERT_TRUE(Eventually([&] { return !ImportReady("web").empty(); }));
  // Retried slowly (100 ms doubling to 400 ms here), a refusal would come back at least 8 times in
  // 3 s; later events (a renewal, a record's mark) may sync the import a few times.
  const int service_hits = member_proxy_->Hits(services);
  const int slice_hits = member_proxy_->Hits(slices);
  EXPECT_FALSE(member_proxy_->WaitForHits(services, service_hits + 6, std::chrono::seconds(3)));
  EXPECT_LT(member_proxy_->Hits(slices), slice_hits + 6);
  const std::string ready = ImportReady("web");
  EXPECT_TRUE(ready.find("Failed") == std::string::npos &&
              ready.find("IPFamilyNotSupported") == std::string::npos)
      << ready;
}

// A status write answered NotFound (the ServiceExport deleted after our cache read it, as the
// upstream conformance suite's namespace deletes do on a real cluster) is a stale read, retried
// at once, not a refusal given a slow retry and an error line.
TEST_F(AgentRefusalsTest, AWriteToAnObjectDeletedSinceReadIsAStaleRead) {
  std::mutex mu;
  std::vector<std::string> errors;
  log::SetSinkForTesting([&](log::Severity severity, std::string_view message) {
    std::lock_guard lock(mu);
    if (severity >= log::Severity::kWarning) errors.emplace_back(message);
  });
  const fakes::RuleId gone =
      member_proxy_->Add(fakes::Match::Method("PUT", std::string("/namespaces/") + kNamespace +
                                                         "/serviceexports/web/status")
                             .Times(1),
                         fakes::Fault::Respond(404, kExportNotFound));
  Run("IPv4,IPv6");
  ExportDualStack("web");
  const bool exported = Eventually([&] { return ExportReady("web") == "True Exported"; });
  log::SetSinkForTesting({});
  ASSERT_TRUE(exported) << ExportReady("web");
  EXPECT_EQ(member_proxy_->Hits(gone), 1);
  std::lock_guard lock(mu);
  for (const std::string& line : errors) {
    EXPECT_EQ(line.find("retrying in"), std::string::npos) << line;
  }
}

// An import whose families change gets a new derived Service: the old one is deleted first. A
// delete answered NotFound (an earlier sync deleted it; our cache has not seen that yet: found on
// a real cluster under load) is the Service gone as wanted, not a refusal of the derived Service.
TEST_F(AgentRefusalsTest, ADerivedServiceAlreadyDeletedIsNoRefusal) {
  std::mutex mu;
  std::vector<std::string> warnings;
  log::SetSinkForTesting([&](log::Severity severity, std::string_view message) {
    std::lock_guard lock(mu);
    if (severity >= log::Severity::kWarning) warnings.emplace_back(message);
  });
  const std::string derived = ::slicewright::mcs::DerivedServiceName(kNamespace, "web");
  const fakes::RuleId gone = member_proxy_->Add(
      fakes::Match::Method("DELETE",
                           std::string("/namespaces/") + kNamespace + "/services/" + derived)
          .Times(1),
      fakes::Fault::Respond(
          404, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
               R"("message":"services \")" +
                   derived + R"(\" not found","reason":"NotFound","details":{"name":")" + derived +
                   R"(","kind":"services"},"code":404})"));
  Run("IPv4,IPv6");
  ExportDualStack("web");
  ASSERT_TRUE(Eventually([&] {
    const std::optional<model::ServiceImport> got = Import("web");
    return ImportReady("web") == "True Ready" && got->spec.ips.size() == 2;
  })) << ImportReady("web");

  // The exported Service goes single-stack: the import's families, so its derived Service's, too.
  client::TypedClient<model::Service> services(*member_, client::ServiceCodec());
  Result<model::Service> service = services.Get(kNamespace, "web");
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  service->spec.ip_families = {"IPv4"};
  service->spec.ip_family_policy = "SingleStack";
  if (service->spec.cluster_ips.size() > 1) service->spec.cluster_ips.resize(1);
  const Result<model::Service> updated = services.Update(*service);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  // Until the old derived Service is replaced, the import already shows its IPv4 address: wait
  // for the new single-stack one, made after the delete answered NotFound and a real one.
  const bool single = Eventually([&] {
    const std::optional<model::ServiceImport> got = Import("web");
    const Result<model::Service> derived_service = services.Get(kNamespace, derived);
    return ImportReady("web") == "True Ready" && got->spec.ips.size() == 1 &&
           derived_service.ok() && derived_service->spec.ip_families.size() == 1 &&
           derived_service->spec.cluster_ips.size() == 1 &&
           derived_service->spec.cluster_ips[0] == got->spec.ips[0];
  });
  log::SetSinkForTesting({});
  ASSERT_TRUE(single) << ImportReady("web");
  EXPECT_EQ(member_proxy_->Hits(gone), 1);
  std::lock_guard lock(mu);
  for (const std::string& line : warnings) {
    EXPECT_EQ(line.find("refused the derived Service"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace slicewright::controllers::mcs
