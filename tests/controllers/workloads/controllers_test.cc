// The workload controllers against the real embedded API server, the test standing in for the
// kubelet (it writes pod readiness): a ReplicaSet creates and removes owned pods, a Deployment
// creates its ReplicaSet, a StatefulSet starts ordinals in order with hostname and subdomain.
#include "controllers/workloads/controllers.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/client/typed_client.h"
#include "slicewright/codec/apps.h"

#include "fakes/loopback.h"
#include "fakes/loopback_api_server.h"

namespace slicewright::controllers::workloads {
namespace {

using test_support::Eventually;
using test_support::LoopbackClient;
using test_support::TempDir;

constexpr std::string_view kTemplate =
    R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}})";

class WorkloadControllersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = test_support::StartLoopbackApiServer(dir_.path());
    client_ = LoopbackClient(server_->port());
    pods_ = std::make_unique<client::TypedClient<model::Pod>>(*client_, client::PodCodec());
    controller_client_ = LoopbackClient(server_->port());
    auto created = WorkloadControllers::Create({}, *controller_client_, SystemClock::Get());
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    controllers_ = std::move(created).value();
    ASSERT_TRUE(controllers_->Start().ok());
  }
  void TearDown() override {
    if (controllers_ != nullptr) controllers_->Stop();
    if (server_ != nullptr) server_->Stop();
  }

  void Apply(std::string_view resource, std::string_view kind, std::string_view name,
             std::string_view spec) {
    const std::string body = R"({"apiVersion":"apps/v1","kind":")" + std::string(kind) +
                             R"(","metadata":{"name":")" + std::string(name) + R"("},"spec":)" +
                             std::string(spec) + "}";
    Result<std::string> created = client_->Create(
        client::ResourceRef{"apps", "v1", std::string(resource), true}, "default", body);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  std::vector<model::Pod> Pods() {
    auto listed = pods_->List("default", {});
    return listed.ok() ? listed->items : std::vector<model::Pod>{};
  }

  std::vector<model::Pod> ActivePods() {
    std::vector<model::Pod> out;
    for (model::Pod& pod : Pods()) {
      if (!pod.metadata.deletion_timestamp) out.push_back(std::move(pod));
    }
    return out;
  }

  // What a kubelet would write: Running and Ready.
  void MarkReady(const std::string& name) {
    Result<model::Pod> pod = pods_->Get("default", name);
    ASSERT_TRUE(pod.ok()) << pod.status().ToString();
    pod->status.phase = "Running";
    pod->status.conditions = {{"Ready", "True", model::Time::FromUnixSeconds(1), "", ""}};
    ASSERT_TRUE(pods_->UpdateStatus(*pod).ok());
  }

  TempDir dir_;
  std::unique_ptr<apiserver::RunningApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<client::RestClient> controller_client_;
  std::unique_ptr<client::TypedClient<model::Pod>> pods_;
  std::unique_ptr<WorkloadControllers> controllers_;
};

// Pods are created once each (expectations hold back a second sync), owned by their ReplicaSet
// with controller and blockOwnerDeletion; a scale down removes the surplus.
TEST_F(WorkloadControllersTest, ReplicaSetOwnsItsPods) {
  Apply("replicasets", "ReplicaSet", "rs",
        R"({"replicas":3,"selector":{"matchLabels":{"app":"x"}},"template":)" +
            std::string(kTemplate) + "}");
  ASSERT_TRUE(Eventually([&] { return Pods().size() == 3; }));
  for (const model::Pod& pod : Pods()) {
    EXPECT_EQ(pod.metadata.name.rfind("rs-", 0), 0U) << pod.metadata.name;
    ASSERT_EQ(pod.metadata.owner_references.size(), 1U);
    const model::OwnerReference& owner = pod.metadata.owner_references[0];
    EXPECT_EQ(owner.kind, "ReplicaSet");
    EXPECT_EQ(owner.name, "rs");
    EXPECT_EQ(owner.controller, true);
    EXPECT_EQ(owner.block_owner_deletion, true);
    MarkReady(pod.metadata.name);
  }
  const client::ResourceRef replicasets{"apps", "v1", "replicasets", true};
  ASSERT_TRUE(Eventually([&] {
    Result<std::string> rs = client_->Get(replicasets, "default", "rs");
    if (!rs.ok()) return false;
    Result<model::Workload> decoded = codec::DecodeWorkload(*rs);
    return decoded.ok() && decoded->status.ready_replicas == 3 &&
           decoded->status.observed_generation == 1;
  }));
  ASSERT_TRUE(client_
                  ->Patch(replicasets, "default", "rs", client::PatchType::kMergePatch,
                          R"({"spec":{"replicas":1}})", "scale")
                  .ok());
  EXPECT_TRUE(Eventually([&] { return ActivePods().size() == 1; }));
  // Stays at one: no extra creates while the deletions finish.
  EXPECT_EQ(ActivePods().size(), 1U);
}

// A Deployment rolls out through a ReplicaSet named after its template hash.
TEST_F(WorkloadControllersTest, DeploymentCreatesItsReplicaSet) {
  Apply("deployments", "Deployment", "web",
        R"({"replicas":2,"selector":{"matchLabels":{"app":"x"}},"template":)" +
            std::string(kTemplate) + "}");
  ASSERT_TRUE(Eventually([&] { return Pods().size() == 2; }));
  for (const model::Pod& pod : Pods()) {
    EXPECT_TRUE(pod.metadata.labels.contains("pod-template-hash")) << pod.metadata.name;
    ASSERT_EQ(pod.metadata.owner_references.size(), 1U);
    EXPECT_EQ(pod.metadata.owner_references[0].name,
              "web-" + pod.metadata.labels.at("pod-template-hash"));
  }
}

// OrderedReady: db-1 only after db-0 is Ready; each with its hostname, subdomain and labels.
TEST_F(WorkloadControllersTest, StatefulSetStartsInOrder) {
  Apply("statefulsets", "StatefulSet", "db",
        R"({"replicas":2,"serviceName":"dbs","selector":{"matchLabels":{"app":"x"}},"template":)" +
            std::string(kTemplate) + "}");
  ASSERT_TRUE(Eventually([&] { return Pods().size() == 1; }));
  const model::Pod first = Pods()[0];
  EXPECT_EQ(first.metadata.name, "db-0");
  EXPECT_EQ(first.spec.hostname, "db-0");
  EXPECT_EQ(first.spec.subdomain, "dbs");
  EXPECT_EQ(first.metadata.labels.at("statefulset.kubernetes.io/pod-name"), "db-0");
  EXPECT_EQ(first.metadata.labels.at("apps.kubernetes.io/pod-index"), "0");
  EXPECT_EQ(first.metadata.labels.at("controller-revision-hash").rfind("db-", 0), 0U);
  // The controller has decided with db-0 not ready (its status says so) and created nothing more.
  const client::ResourceRef statefulsets{"apps", "v1", "statefulsets", true};
  ASSERT_TRUE(Eventually([&] {
    Result<std::string> sts = client_->Get(statefulsets, "default", "db");
    Result<model::Workload> decoded =
        sts.ok() ? codec::DecodeWorkload(*sts) : Result<model::Workload>(sts.status());
    return decoded.ok() && decoded->status.replicas == 1 && decoded->status.ready_replicas == 0 &&
           !decoded->status.update_revision.empty();
  }));
  EXPECT_EQ(Pods().size(), 1U);
  MarkReady("db-0");
  ASSERT_TRUE(Eventually([&] { return Pods().size() == 2; }));
  EXPECT_EQ(pods_->Get("default", "db-1")->spec.hostname, "db-1");
}

}  // namespace
}  // namespace slicewright::controllers::workloads
