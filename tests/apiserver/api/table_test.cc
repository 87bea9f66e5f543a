// Tests for the Table form: built-in printer cells, CRD printer columns, JSONPath and ages.
#include "apiserver/api/table.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace slicewright::apiserver {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// 2024-01-01T00:00:00Z; objects below are created at midnight unless stated.
const auto kNow = std::chrono::system_clock::time_point(seconds(1704067200)) + minutes(5);

json Cells(const ResourceInfo& info, const json& object) {
  json table = ToTable(info, {&object}, "7", "", IncludeObject::kNone, kNow);
  return table["rows"][0]["cells"];
}

std::vector<std::string> ColumnNames(const json& table) {
  std::vector<std::string> names;
  for (const json& c : table["columnDefinitions"]) names.push_back(c["name"]);
  return names;
}

// kube's HumanDuration boundaries.
TEST(TableTest, HumanDuration) {
  struct Case {
    std::chrono::nanoseconds d;
    std::string_view want;
  };
  const Case cases[] = {
      {seconds(-3), "<invalid>"}, {seconds(-1), "0s"},         {seconds(0), "0s"},
      {seconds(119), "119s"},     {seconds(125), "2m5s"},      {minutes(5), "5m"},
      {minutes(15), "15m"},       {minutes(179), "179m"},      {hours(3), "3h"},
      {minutes(200), "3h20m"},    {hours(12), "12h"},          {hours(47), "47h"},
      {hours(76), "3d4h"},        {hours(96), "4d"},           {hours(24 * 45), "45d"},
      {hours(24 * 760), "2y30d"}, {hours(24 * 365 * 9), "9y"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.want));
    EXPECT_EQ(HumanDuration(c.d), c.want);
  }
}

// The JSONPath subset resolves fields, indexes, quoted keys and equality filters.
TEST(TableTest, JsonPath) {
  json obj = json::parse(R"({"spec":{"ips":["10.0.0.1","10.0.0.2"],"n":3},
      "metadata":{"labels":{"app.kubernetes.io/name":"web"}},
      "status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Synced","status":"False"}]}})");
  EXPECT_EQ(*EvaluateJsonPath(obj, ".spec.n"), 3);
  EXPECT_EQ(*EvaluateJsonPath(obj, ".spec.ips[1]"), "10.0.0.2");
  EXPECT_EQ(*EvaluateJsonPath(obj, ".spec.ips[-1]"), "10.0.0.2");
  EXPECT_EQ(*EvaluateJsonPath(obj, ".spec.ips[*]"), "10.0.0.1");
  EXPECT_EQ(*EvaluateJsonPath(obj, ".metadata.labels['app.kubernetes.io/name']"), "web");
  EXPECT_EQ(*EvaluateJsonPath(obj, R"(.status.conditions[?(@.type=="Synced")].status)"), "False");
  EXPECT_EQ(*EvaluateJsonPath(obj, "{.spec.n}"), 3);
  EXPECT_EQ(EvaluateJsonPath(obj, ".spec.ips[2]"), nullptr);
  EXPECT_EQ(EvaluateJsonPath(obj, ".spec.missing.x"), nullptr);
  EXPECT_EQ(EvaluateJsonPath(obj, "spec.n"), nullptr);
  EXPECT_EQ(EvaluateJsonPath(obj, ".spec.ips[x]"), nullptr);
  EXPECT_EQ(EvaluateJsonPath(obj, ".spec.ips[0"), nullptr);
  EXPECT_EQ(EvaluateJsonPath(obj, R"(.status.conditions[?(@.type=="Nope")].status)"), nullptr);
}

// Pods: READY, STATUS, RESTARTS, AGE and the wide columns, as kubectl prints them.
TEST(TableTest, Pods) {
  ResourceRegistry registry;
  ResourcePtr pods = registry.Find("", "v1", "pods");
  struct Case {
    std::string_view name;
    std::string_view pod;
    std::string_view want;
  };
  const Case cases[] = {
      {"running", R"({"metadata":{"name":"web-1","creationTimestamp":"2024-01-01T00:00:00Z"},
         "spec":{"containers":[{"name":"a"},{"name":"b"}],"nodeName":"n1"},
         "status":{"phase":"Running","podIPs":[{"ip":"10.0.0.5"}],"containerStatuses":[
           {"name":"a","ready":true,"restartCount":2,"state":{"running":{}},
            "lastState":{"terminated":{"finishedAt":"2024-01-01T00:02:00Z"}}},
           {"name":"b","ready":false,"restartCount":1,"state":{"running":{}}}]}})",
       R"j(["web-1","1/2","Running","3 (3m ago)","5m","10.0.0.5","n1","<none>","<none>"])j"},
      {"crash loop", R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
         "status":{"phase":"Running","containerStatuses":[{"name":"a","restartCount":0,
           "state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})",
       R"(["p","0/1","CrashLoopBackOff","0","<unknown>","<none>","<none>","<none>","<none>"])"},
      {"pending", R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
         "status":{"phase":"Pending"}})",
       R"(["p","0/1","Pending","0","<unknown>","<none>","<none>","<none>","<none>"])"},
      {"terminating", R"({"metadata":{"name":"p","deletionTimestamp":"2024-01-01T00:04:00Z"},
         "spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running"}})",
       R"(["p","0/1","Terminating","0","<unknown>","<none>","<none>","<none>","<none>"])"},
      {"init waiting", R"({"metadata":{"name":"p"},
         "spec":{"initContainers":[{"name":"i"}],"containers":[{"name":"a"}]},
         "status":{"phase":"Pending","initContainerStatuses":[{"name":"i",
           "state":{"waiting":{"reason":"PodInitializing"}}}]}})",
       R"(["p","0/1","Init:0/1","0","<unknown>","<none>","<none>","<none>","<none>"])"},
      {"completed", R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}],
         "readinessGates":[{"conditionType":"x"}]},"status":{"phase":"Succeeded",
         "conditions":[{"type":"x","status":"True"}],
         "containerStatuses":[{"name":"a","state":{"terminated":{"reason":"Completed"}}}]}})",
       R"(["p","0/1","Completed","0","<unknown>","<none>","<none>","<none>","1/1"])"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_EQ(Cells(*pods, json::parse(c.pod)), json::parse(c.want));
  }
  json table = ToTable(*pods, {}, "7", "", IncludeObject::kMetadata, kNow);
  EXPECT_EQ(ColumnNames(table),
            (std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                                      "Nominated Node", "Readiness Gates"}));
  EXPECT_EQ(table["columnDefinitions"][0]["format"], "name");
  EXPECT_EQ(table["columnDefinitions"][5]["priority"], 1);
  EXPECT_TRUE(table["rows"].empty());
}

// Services: TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), AGE, SELECTOR.
TEST(TableTest, Services) {
  ResourceRegistry registry;
  ResourcePtr services = registry.Find("", "v1", "services");
  EXPECT_EQ(Cells(*services, json::parse(R"({"metadata":{"name":"web",
      "creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"type":"NodePort",
      "clusterIPs":["10.96.0.10"],"selector":{"b":"2","a":"1"},"ports":[
      {"port":80,"protocol":"TCP","nodePort":30080},{"port":53,"protocol":"UDP"}]}})")),
            json::parse(R"(["web","NodePort","10.96.0.10","<none>","80:30080/TCP,53/UDP","5m",
                "a=1,b=2"])"));
  EXPECT_EQ(Cells(*services, json::parse(R"({"metadata":{"name":"lb"},"spec":{
      "type":"LoadBalancer","clusterIP":"10.96.0.11","ports":[{"port":443}]}})")),
            json::parse(R"(["lb","LoadBalancer","10.96.0.11","<pending>","443/TCP",
                "<unknown>","<none>"])"));
  EXPECT_EQ(Cells(*services, json::parse(R"({"metadata":{"name":"ext"},"spec":{
      "type":"ExternalName","externalName":"example.com"}})")),
            json::parse(R"(["ext","ExternalName","<none>","example.com","<none>","<unknown>",
                "<none>"])"));
}

// EndpointSlices and Endpoints list at most three addresses, then "+ N more...".
TEST(TableTest, SlicesAndEndpoints) {
  ResourceRegistry registry;
  ResourcePtr slices = registry.Find("discovery.k8s.io", "v1", "endpointslices");
  EXPECT_EQ(Cells(*slices, json::parse(R"({"metadata":{"name":"web-abc"},"addressType":"IPv4",
      "ports":[{"name":"http","port":80},{"name":"dns"}],"endpoints":[
      {"addresses":["10.0.0.1"]},{"addresses":["10.0.0.2","10.0.0.3"]},
      {"addresses":["10.0.0.4"]},{"addresses":["10.0.0.5"]}]})")),
            json::parse(R"(["web-abc","IPv4","80,dns","10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...",
                "<unknown>"])"));
  EXPECT_EQ(Cells(*slices, json::parse(R"({"metadata":{"name":"empty"},"addressType":"IPv6"})")),
            json::parse(R"(["empty","IPv6","<unset>","<unset>","<unknown>"])"));
  ResourcePtr endpoints = registry.Find("", "v1", "endpoints");
  EXPECT_EQ(Cells(*endpoints, json::parse(R"({"metadata":{"name":"web"},"subsets":[
      {"addresses":[{"ip":"10.0.0.1"},{"ip":"fd00::1"}],"ports":[{"port":80}]}]})")),
            json::parse(R"(["web","10.0.0.1:80,[fd00::1]:80","<unknown>"])"));
  EXPECT_EQ(Cells(*endpoints, json::parse(R"({"metadata":{"name":"none"}})")),
            json::parse(R"(["none","<none>","<unknown>"])"));
}

// Nodes, namespaces, leases, config maps, CRDs and events.
TEST(TableTest, OtherBuiltins) {
  ResourceRegistry registry;
  EXPECT_EQ(Cells(*registry.Find("", "v1", "nodes"), json::parse(R"({"metadata":{"name":"n1",
      "labels":{"node-role.kubernetes.io/control-plane":""}},"spec":{"unschedulable":true},
      "status":{"conditions":[{"type":"Ready","status":"True"}],
      "addresses":[{"type":"InternalIP","address":"192.168.1.2"}],
      "nodeInfo":{"kubeletVersion":"v1.32.0"}}})")),
            json::parse(R"(["n1","Ready,SchedulingDisabled","control-plane","<unknown>",
                "v1.32.0","192.168.1.2","<none>","<unknown>","<unknown>","<unknown>"])"));
  EXPECT_EQ(Cells(*registry.Find("", "v1", "namespaces"), json::parse(R"({"metadata":{
      "name":"default"},"status":{"phase":"Active"}})")),
            json::parse(R"(["default","Active","<unknown>"])"));
  EXPECT_EQ(Cells(*registry.Find("coordination.k8s.io", "v1", "leases"),
                  json::parse(R"({"metadata":{"name":"l"},"spec":{"holderIdentity":"me"}})")),
            json::parse(R"(["l","me","<unknown>"])"));
  EXPECT_EQ(Cells(*registry.Find("", "v1", "configmaps"),
                  json::parse(R"({"metadata":{"name":"c"},"data":{"a":"1","b":"2"}})")),
            json::parse(R"(["c",2,"<unknown>"])"));
  EXPECT_EQ(Cells(*registry.Find("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
                  json::parse(R"({"metadata":{"name":"a.b.c",
                      "creationTimestamp":"2024-01-01T00:00:00Z"}})")),
            json::parse(R"(["a.b.c","2024-01-01T00:00:00Z"])"));
  ResourcePtr events = registry.Find("", "v1", "events");
  json table = ToTable(*events, {}, "1", "", IncludeObject::kNone, kNow);
  EXPECT_EQ(ColumnNames(table).front(), "Last Seen");
  EXPECT_EQ(ColumnNames(table).back(), "Name");
  EXPECT_EQ(Cells(*events, json::parse(R"({"metadata":{"name":"e1"},"type":"Warning",
      "reason":"Failed","message":" boom \n","involvedObject":{"kind":"Pod","name":"web-1"},
      "source":{"component":"kubelet","host":"n1"},
      "firstTimestamp":"2024-01-01T00:00:00Z","lastTimestamp":"2024-01-01T00:04:00Z",
      "count":3})")),
            json::parse(R"(["60s","Warning","Failed","pod/web-1","","kubelet, n1","boom","5m",3,
                "e1"])"));
  ResourcePtr new_events = registry.Find("events.k8s.io", "v1", "events");
  EXPECT_EQ(Cells(*new_events, json::parse(R"({"metadata":{"name":"e2"},"type":"Normal",
      "reason":"Created","note":"made","regarding":{"kind":"Service","name":"web"},
      "reportingController":"ctl","eventTime":"2024-01-01T00:03:00.000000Z"})")),
            json::parse(R"(["2m","Normal","Created","service/web","","ctl","made","2m",1,
                "e2"])"));
}

// deploy/'s kinds print kube's columns: Deployments (wide: containers, images, selector),
// PodDisruptionBudgets, (Cluster)Roles' creation time and (Cluster)RoleBindings' subjects.
TEST(TableTest, DeployKinds) {
  ResourceRegistry registry;
  ResourcePtr deployments = registry.Find("apps", "v1", "deployments");
  json table = ToTable(*deployments, {}, "1", "", IncludeObject::kNone, kNow);
  EXPECT_EQ(ColumnNames(table),
            (std::vector<std::string>{"Name", "Ready", "Up-to-date", "Available", "Age",
                                      "Containers", "Images", "Selector"}));
  EXPECT_EQ(Cells(*deployments, json::parse(R"({"metadata":{"name":"sw",
      "creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"replicas":2,
      "selector":{"matchLabels":{"b":"2","a":"1"},
        "matchExpressions":[{"key":"c","operator":"In","values":["y","x"]}]},
      "template":{"spec":{"containers":[{"name":"m","image":"i:1"},{"name":"s","image":"j:2"}]}}},
      "status":{"readyReplicas":1,"updatedReplicas":2,"availableReplicas":1}})")),
            json::parse(R"j(["sw","1/2",2,1,"5m","m,s","i:1,j:2","a=1,b=2,c in (x,y)"])j"));
  // An unset spec.replicas is apps/v1's default of one; no status is zero of everything.
  EXPECT_EQ(Cells(*deployments, json::parse(R"({"metadata":{"name":"d"},"spec":{}})")),
            json::parse(R"(["d","0/1",0,0,"<unknown>","","",""])"));
  // ReplicaSets: desired, current, ready; StatefulSets: ready/desired.
  ResourcePtr replicasets = registry.Find("apps", "v1", "replicasets");
  EXPECT_EQ(ColumnNames(ToTable(*replicasets, {}, "1", "", IncludeObject::kNone, kNow)),
            (std::vector<std::string>{"Name", "Desired", "Current", "Ready", "Age", "Containers",
                                      "Images", "Selector"}));
  EXPECT_EQ(
      Cells(*replicasets, json::parse(R"({"metadata":{"name":"web-abc"},"spec":{
      "replicas":3,"selector":{"matchLabels":{"app":"web","pod-template-hash":"abc"}},
      "template":{"spec":{"containers":[{"name":"m","image":"i:1"}]}}},
      "status":{"replicas":2,"readyReplicas":1}})")),
      json::parse(R"(["web-abc",3,2,1,"<unknown>","m","i:1","app=web,pod-template-hash=abc"])"));
  ResourcePtr statefulsets = registry.Find("apps", "v1", "statefulsets");
  EXPECT_EQ(ColumnNames(ToTable(*statefulsets, {}, "1", "", IncludeObject::kNone, kNow)),
            (std::vector<std::string>{"Name", "Ready", "Age", "Containers", "Images"}));
  EXPECT_EQ(Cells(*statefulsets, json::parse(R"({"metadata":{"name":"db"},"spec":{"replicas":3,
      "template":{"spec":{"containers":[{"name":"pg","image":"postgres"}]}}},
      "status":{"readyReplicas":2}})")),
            json::parse(R"(["db","2/3","<unknown>","pg","postgres"])"));
  EXPECT_EQ(Cells(*registry.Find("policy", "v1", "poddisruptionbudgets"),
                  json::parse(R"({"metadata":{"name":"p"},"spec":{"maxUnavailable":"50%"},
                      "status":{"disruptionsAllowed":1}})")),
            json::parse(R"(["p","N/A","50%",1,"<unknown>"])"));
  EXPECT_EQ(Cells(*registry.Find("rbac.authorization.k8s.io", "v1", "clusterroles"),
                  json::parse(R"({"metadata":{"name":"r",
                      "creationTimestamp":"2024-01-01T00:00:00Z"}})")),
            json::parse(R"(["r","2024-01-01T00:00:00Z"])"));
  EXPECT_EQ(Cells(*registry.Find("rbac.authorization.k8s.io", "v1", "rolebindings"),
                  json::parse(R"({"metadata":{"name":"b"},
                      "roleRef":{"kind":"Role","name":"r"},
                      "subjects":[{"kind":"ServiceAccount","namespace":"kube-system","name":"sa"},
                                  {"kind":"User","name":"u"},{"kind":"Group","name":"g1"},
                                  {"kind":"Group","name":"g2"}]})")),
            json::parse(R"(["b","Role/r","<unknown>","u","g1, g2","kube-system/sa"])"));
}

// Custom resources: CRD printer columns with kube's cell types; metadata rows; table metadata.
TEST(TableTest, CustomResourceColumns) {
  ResourceInfo info;
  info.group = "multicluster.x-k8s.io";
  info.version = "v1beta1";
  info.resource = "serviceimports";
  info.kind = "ServiceImport";
  info.builtin = false;
  auto col = [](std::string name, std::string type, std::string path, std::int32_t priority = 0) {
    PrinterColumn c;
    c.name = std::move(name);
    c.type = std::move(type);
    c.json_path = std::move(path);
    c.priority = priority;
    return c;
  };
  info.printer_columns = {col("Type", "string", ".spec.type"),
                          col("IP", "string", ".spec.ips"),
                          col("Ports", "integer", ".spec.ports[0].port"),
                          col("Weight", "number", ".spec.weight"),
                          col("Ready", "boolean", ".status.ready"),
                          col("Count", "string", ".spec.count", 1),
                          col("Age", "date", ".metadata.creationTimestamp")};
  json obj = json::parse(R"({"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceImport",
      "metadata":{"name":"web","namespace":"ns1","creationTimestamp":"2024-01-01T00:00:00Z",
                  "resourceVersion":"5"},
      "spec":{"type":"ClusterSetIP","ips":["10.42.0.1"],"ports":[{"port":80}],"weight":1.5,
              "count":2}})");
  json table = ToTable(info, {&obj}, "9", "next", IncludeObject::kMetadata, kNow);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(table["metadata"], json::parse(R"({"resourceVersion":"9","continue":"next"})"));
  EXPECT_EQ(ColumnNames(table), (std::vector<std::string>{"Name", "Type", "IP", "Ports", "Weight",
                                                          "Ready", "Count", "Age"}));
  EXPECT_EQ(table["columnDefinitions"][7]["type"], "date");
  EXPECT_EQ(table["rows"][0]["cells"],
            json::parse(R"(["web","ClusterSetIP","[\"10.42.0.1\"]",80,1.5,null,"2","5m"])"));
  EXPECT_EQ(table["rows"][0]["object"],
            json::parse(R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
                "metadata":{"name":"web","namespace":"ns1",
                "creationTimestamp":"2024-01-01T00:00:00Z","resourceVersion":"5"}})"));
  json full = ToTable(info, {&obj}, "9", "", IncludeObject::kObject, kNow);
  EXPECT_EQ(full["rows"][0]["object"], obj);
  EXPECT_FALSE(full["metadata"].contains("continue"));
  json none = ToTable(info, {&obj}, "9", "", IncludeObject::kNone, kNow);
  EXPECT_FALSE(none["rows"][0].contains("object"));
}

// includeObject parsing.
TEST(TableTest, ParseIncludeObject) {
  EXPECT_EQ(*ParseIncludeObject(""), IncludeObject::kMetadata);
  EXPECT_EQ(*ParseIncludeObject("None"), IncludeObject::kNone);
  EXPECT_EQ(*ParseIncludeObject("Object"), IncludeObject::kObject);
  Result<IncludeObject> bad = ParseIncludeObject("All");
  EXPECT_EQ(bad.status().code(), StatusCode::kBadRequest);
  EXPECT_EQ(
      bad.status().message(),
      R"(includeObject: Unsupported value: "All": supported values: "Metadata", "None", "Object")");
}

}  // namespace
}  // namespace slicewright::apiserver
