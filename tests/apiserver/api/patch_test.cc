#include "apiserver/api/patch.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

// The live objects the patches below apply to.
constexpr std::string_view kPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "fe"},
               "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "old"},
               "finalizers": ["a.example.com/x"],
               "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                    "uid": "u-1"}]},
  "spec": {
    "containers": [
      {"name": "web", "image": "nginx:1.25", "args": ["-g", "daemon off;"],
       "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443, "protocol": "TCP"}],
       "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
       "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
      {"name": "sidecar", "image": "envoy:1"}],
    "initContainers": [{"name": "init", "image": "busybox"}],
    "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c1"}}],
    "imagePullSecrets": [{"name": "regcred"}],
    "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["db"]}],
    "tolerations": [{"key": "k1", "operator": "Exists"}],
    "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 1,
                                   "whenUnsatisfiable": "DoNotSchedule"}]},
  "status": {
    "phase": "Running",
    "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}],
    "podIPs": [{"ip": "10.244.0.5"}],
    "containerStatuses": [{"name": "web", "ready": false}, {"name": "sidecar", "ready": true}]}
})";

constexpr std::string_view kService = R"({
  "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
  "spec": {"clusterIP": "10.96.0.10", "selector": {"app": "web"},
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
                     {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8443}]},
  "status": {"conditions": [{"type": "A", "status": "True"}]}
})";

constexpr std::string_view kNode = R"({
  "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
  "spec": {"podCIDRs": ["10.244.0.0/24"], "taints": [{"key": "t1", "effect": "NoSchedule"}]},
  "status": {"conditions": [{"type": "Ready", "status": "False"},
                            {"type": "MemoryPressure", "status": "False"}],
             "addresses": [{"type": "InternalIP", "address": "10.0.0.1"},
                           {"type": "Hostname", "address": "n1"}]}
})";

constexpr std::string_view kSlice = R"({
  "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
  "addressType": "IPv4",
  "endpoints": [{"addresses": ["10.244.0.5"], "conditions": {"ready": true}},
                {"addresses": ["10.244.0.6"], "conditions": {"ready": true}}],
  "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]
})";

Result<json> Apply(std::string_view original, std::string_view patch, PatchType type,
                   std::string_view api_version = "v1", std::string_view kind = "Pod") {
  return ApplyPatch(json::parse(original), patch, type, api_version, kind);
}

// Applies `patch` and returns the value at `pointer` of the result, or the error as text.
std::string Field(const Result<json>& result, std::string_view pointer) {
  if (!result.ok()) return "error: " + result.status().ToString();
  const json::json_pointer path{std::string(pointer)};
  if (!result->contains(path)) return "<absent>";
  return result->at(path).dump();
}

// Canonical form of an expected Field(): JSON literals are normalised, "<absent>" and "error: ..."
// are kept.
std::string Canon(std::string_view text) {
  if (text.starts_with("<") || text.starts_with("error: ")) return std::string(text);
  return json::parse(text).dump();
}

struct ErrorCase {
  std::string_view name;
  std::string_view original;
  std::string_view patch;
  PatchType type;
  StatusCode code;
  std::string_view message;
  std::string_view api_version = "v1";
  std::string_view kind = "Pod";
};

void ExpectErrors(const ErrorCase* cases, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const ErrorCase& c = cases[i];
    SCOPED_TRACE(c.name);
    const Result<json> result = Apply(c.original, c.patch, c.type, c.api_version, c.kind);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), c.code);
    EXPECT_EQ(result.status().message(), c.message);
  }
}

// Content types map to patch types, parameters and case ignored; others are 415-style errors.
TEST(PatchTypeFromContentTypeTest, MapsMediaTypes) {
  struct Case {
    std::string_view name;
    std::string_view content_type;
    PatchType want;
  };
  constexpr Case kCases[] = {
      {"json patch", "application/json-patch+json", PatchType::kJsonPatch},
      {"merge patch", "application/merge-patch+json", PatchType::kMergePatch},
      {"strategic", "application/strategic-merge-patch+json", PatchType::kStrategicMergePatch},
      {"apply", "application/apply-patch+yaml", PatchType::kApplyPatch},
      {"charset parameter", "application/merge-patch+json; charset=utf-8", PatchType::kMergePatch},
      {"case and spaces", " Application/JSON-Patch+JSON ;charset=UTF-8", PatchType::kJsonPatch},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Result<PatchType> type = PatchTypeFromContentType(c.content_type);
    ASSERT_TRUE(type.ok()) << type.status().ToString();
    EXPECT_EQ(*type, c.want);
  }
  for (const std::string_view bad : {"", "application/json", "text/plain", "application/yaml"}) {
    SCOPED_TRACE(bad);
    const Result<PatchType> type = PatchTypeFromContentType(bad);
    ASSERT_FALSE(type.ok());
    EXPECT_EQ(type.status().code(), StatusCode::kBadRequest);
    EXPECT_EQ(type.status().message(),
              "the body of the request was in an unknown format - accepted media types include: "
              "application/json-patch+json, application/merge-patch+json, "
              "application/strategic-merge-patch+json");
  }
}

// Strategic merge patch is defined for the built-in kinds we serve and for nothing else.
TEST(SupportsStrategicMergePatchTest, BuiltinKindsOnly) {
  struct Case {
    std::string_view api_version;
    std::string_view kind;
    bool want;
  };
  constexpr Case kCases[] = {
      {"v1", "Namespace", true},
      {"v1", "Service", true},
      {"v1", "Pod", true},
      {"v1", "Node", true},
      {"v1", "Endpoints", true},
      {"v1", "Event", true},
      {"v1", "ConfigMap", true},
      {"v1", "Secret", true},
      {"discovery.k8s.io/v1", "EndpointSlice", true},
      {"coordination.k8s.io/v1", "Lease", true},
      {"events.k8s.io/v1", "Event", true},
      {"apiextensions.k8s.io/v1", "CustomResourceDefinition", true},
      {"multicluster.x-k8s.io/v1alpha1", "ServiceImport", false},
      {"example.com/v1", "Widget", false},
      {"v1", "Widget", false},
      {"discovery.k8s.io/v1beta1", "EndpointSlice", false},
      {"Pod", "v1", false},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.api_version) + " " + std::string(c.kind));
    EXPECT_EQ(SupportsStrategicMergePatch(c.api_version, c.kind), c.want);
  }
}

// RFC 7386: objects merge, null deletes, lists and scalars are replaced.
TEST(MergePatchTest, AppliesRfc7386) {
  struct Case {
    std::string_view name;
    std::string_view patch;
    std::string_view pointer;
    std::string_view want;
  };
  constexpr Case kCases[] = {
      {"sets a scalar", R"({"spec":{"nodeName":"n1"}})", "/spec/nodeName", R"("n1")"},
      {"adds a label", R"({"metadata":{"labels":{"x":"y"}}})", "/metadata/labels",
       R"({"app":"web","tier":"fe","x":"y"})"},
      {"null deletes a label", R"({"metadata":{"labels":{"tier":null}}})", "/metadata/labels",
       R"({"app":"web"})"},
      {"replaces a list", R"({"spec":{"tolerations":[{"key":"k2"}]}})", "/spec/tolerations",
       R"([{"key":"k2"}])"},
      {"drops nulls in new objects", R"({"spec":{"dnsConfig":{"options":[],"x":null}}})",
       "/spec/dnsConfig", R"({"options":[]})"},
      {"empty patch is a no-op", "{}", "/metadata/name", R"("web")"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Field(Apply(kPod, c.patch, PatchType::kMergePatch), c.pointer), Canon(c.want));
  }
}

// Merge patch bodies that are not JSON objects are rejected as kube-apiserver does.
TEST(MergePatchTest, RejectsBadBodies) {
  const ErrorCase kCases[] = {
      {"array", kPod, R"([{"a":1}])", PatchType::kMergePatch, StatusCode::kBadRequest,
       "error decoding patch: json: cannot unmarshal array into Go value of type "
       "map[string]interface {}"},
      {"string", kPod, R"("x")", PatchType::kMergePatch, StatusCode::kBadRequest,
       "error decoding patch: json: cannot unmarshal string into Go value of type "
       "map[string]interface {}"},
      {"number", kPod, "5", PatchType::kMergePatch, StatusCode::kBadRequest,
       "error decoding patch: json: cannot unmarshal number into Go value of type "
       "map[string]interface {}"},
      {"null", kPod, "null", PatchType::kMergePatch, StatusCode::kBadRequest, "Invalid JSON Patch"},
      {"truncated", kPod, R"({"a":)", PatchType::kMergePatch, StatusCode::kBadRequest,
       "error decoding patch: unexpected end of JSON input"},
      {"empty", kPod, "", PatchType::kMergePatch, StatusCode::kBadRequest,
       "error decoding patch: unexpected end of JSON input"},
      {"syntax", kPod, "{x}", PatchType::kMergePatch, StatusCode::kBadRequest,
       "error decoding patch: invalid JSON: parse error at line 1, column 2: syntax error while "
       "parsing object key - invalid literal; last read: '{x'; expected string literal"},
  };
  ExpectErrors(kCases, std::size(kCases));
}

// RFC 6902 operations behave as evanphx/json-patch (kube-apiserver's library) applies them.
TEST(JsonPatchTest, AppliesOperations) {
  struct Case {
    std::string_view name;
    std::string_view patch;
    std::string_view pointer;
    std::string_view want;
  };
  constexpr Case kCases[] = {
      {"add a label", R"([{"op":"add","path":"/metadata/labels/x","value":"y"}])",
       "/metadata/labels/x", R"("y")"},
      {"add escapes ~1 and ~0",
       R"([{"op":"add","path":"/metadata/annotations/example.com~1a~0b","value":"v"}])",
       "/metadata/annotations/example.com~1a~0b", R"("v")"},
      {"add replaces an existing key", R"([{"op":"add","path":"/metadata/name","value":"w"}])",
       "/metadata/name", R"("w")"},
      {"add inserts at an index",
       R"([{"op":"add","path":"/spec/containers/0/args/1","value":"-x"}])",
       "/spec/containers/0/args", R"(["-g","-x","daemon off;"])"},
      {"add appends with -", R"([{"op":"add","path":"/spec/containers/0/args/-","value":"-z"}])",
       "/spec/containers/0/args", R"(["-g","daemon off;","-z"])"},
      {"add at a negative index",
       R"([{"op":"add","path":"/spec/containers/0/args/-1","value":"-n"}])",
       "/spec/containers/0/args", R"(["-g","daemon off;","-n"])"},
      {"add without a value adds null", R"([{"op":"add","path":"/spec/x"}])", "/spec/x", "null"},
      {"remove a label", R"([{"op":"remove","path":"/metadata/labels/tier"}])", "/metadata/labels",
       R"({"app":"web"})"},
      {"remove an item", R"([{"op":"remove","path":"/spec/containers/0/ports/0"}])",
       "/spec/containers/0/ports", R"([{"containerPort":443,"protocol":"TCP"}])"},
      {"replace an image",
       R"([{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.26"}])",
       "/spec/containers/0/image", R"("nginx:1.26")"},
      {"replace an item", R"([{"op":"replace","path":"/spec/containers/0/args/-1","value":"q"}])",
       "/spec/containers/0/args", R"(["-g","q"])"},
      {"move a label",
       R"([{"op":"move","from":"/metadata/labels/tier","path":"/metadata/labels/t"}])",
       "/metadata/labels", R"({"app":"web","t":"fe"})"},
      {"copy an image",
       R"([{"op":"copy","from":"/spec/containers/0/image","path":"/metadata/labels/img"}])",
       "/metadata/labels/img", R"("nginx:1.25")"},
      {"test then replace",
       R"([{"op":"test","path":"/metadata/name","value":"web"},
           {"op":"replace","path":"/metadata/name","value":"web2"}])",
       "/metadata/name", R"("web2")"},
      {"test a missing key against null", R"([{"op":"test","path":"/metadata/nope","value":null}])",
       "/metadata/name", R"("web")"},
      {"test the whole document", R"([{"op":"test","path":"","value":{"a":1}},{"op":"x"}])",
       "/metadata/name", "error: testing value  failed: test failed"},
      {"replace the root", R"([{"op":"replace","path":"","value":{"kind":"Pod"}}])", "",
       R"({"kind":"Pod"})"},
      {"null body is a no-op", "null", "/metadata/name", R"("web")"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Field(Apply(kPod, c.patch, PatchType::kJsonPatch), c.pointer), Canon(c.want));
  }
}

// A failing operation is kInvalid with evanphx/json-patch's message.
TEST(JsonPatchTest, FailingOperationsAreInvalid) {
  const ErrorCase kCases[] = {
      {"add below a missing key", kPod, R"([{"op":"add","path":"/spec/nope/x","value":1}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       R"(add operation does not apply: doc is missing path: "/spec/nope/x": missing value)"},
      {"add below a scalar", kPod, R"([{"op":"add","path":"/metadata/name/x","value":1}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       R"(add operation does not apply: doc is missing path: "/metadata/name/x": missing value)"},
      {"add past the end", kPod, R"([{"op":"add","path":"/spec/containers/5","value":{}}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "error in add for path: '/spec/containers/5': Unable to access invalid index: 5: invalid "
       "index referenced"},
      {"add at a bad index", kPod, R"([{"op":"add","path":"/spec/containers/x","value":{}}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "error in add for path: '/spec/containers/x': value was not a proper array index: 'x': "
       "strconv.Atoi: parsing \"x\": invalid syntax"},
      {"add without a path", kPod, R"([{"op":"add","value":1}])", PatchType::kJsonPatch,
       StatusCode::kInvalid, "add operation failed to decode path: missing value"},
      {"remove a missing key", kPod, R"([{"op":"remove","path":"/metadata/labels/nope"}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "error in remove for path: '/metadata/labels/nope': unable to remove nonexistent key: "
       "nope: missing value"},
      {"remove below a missing key", kPod, R"([{"op":"remove","path":"/nope/x"}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       R"(remove operation does not apply: doc is missing path: "/nope/x": missing value)"},
      {"remove past the end", kPod, R"([{"op":"remove","path":"/spec/containers/9"}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "error in remove for path: '/spec/containers/9': Unable to access invalid index: 9: "
       "invalid index referenced"},
      {"remove an index out of int64", kPod,
       R"([{"op":"remove","path":"/spec/containers/99999999999999999999"}])", PatchType::kJsonPatch,
       StatusCode::kInvalid,
       "error in remove for path: '/spec/containers/99999999999999999999': strconv.Atoi: parsing "
       "\"99999999999999999999\": value out of range"},
      {"replace a missing key", kPod, R"([{"op":"replace","path":"/metadata/nope","value":1}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "replace operation does not apply: doc is missing key: /metadata/nope: missing value"},
      {"replace below a missing key", kPod, R"([{"op":"replace","path":"/nope/x","value":1}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "replace operation does not apply: doc is missing path: /nope/x: missing value"},
      {"move from a missing key", kPod,
       R"([{"op":"move","from":"/metadata/nope","path":"/metadata/x"}])", PatchType::kJsonPatch,
       StatusCode::kInvalid,
       "error in move for path: 'nope': unable to get nonexistent key: nope: missing value"},
      {"move from below a missing key", kPod,
       R"([{"op":"move","from":"/nope/x","path":"/metadata/x"}])", PatchType::kJsonPatch,
       StatusCode::kInvalid,
       "move operation does not apply: doc is missing from path: /nope/x: missing value"},
      {"move into itself", kPod, R"([{"op":"move","from":"/metadata","path":"/metadata/x"}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "move operation does not apply: doc is missing destination path: /metadata/x: missing "
       "value"},
      {"move without from", kPod, R"([{"op":"move","path":"/a"}])", PatchType::kJsonPatch,
       StatusCode::kInvalid,
       "move operation failed to decode from: operation, missing from field: missing value"},
      {"test fails", kPod, R"([{"op":"test","path":"/metadata/name","value":"db"}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "testing value /metadata/name failed: test failed"},
      {"test a missing key", kPod, R"([{"op":"test","path":"/metadata/nope","value":"x"}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "testing value /metadata/nope failed: test failed"},
      {"test below a missing key", kPod, R"([{"op":"test","path":"/nope/x","value":1}])",
       PatchType::kJsonPatch, StatusCode::kInvalid,
       "test operation does not apply: is missing path: /nope/x: missing value"},
      {"copy from a missing key", kPod,
       R"([{"op":"copy","from":"/metadata/nope","path":"/metadata/x"}])", PatchType::kJsonPatch,
       StatusCode::kInvalid,
       "error in copy for from: '/metadata/nope': unable to get nonexistent key: nope: missing "
       "value"},
      {"copy to below a missing key", kPod,
       R"([{"op":"copy","from":"/metadata/name","path":"/nope/x"}])", PatchType::kJsonPatch,
       StatusCode::kInvalid,
       "copy operation does not apply: doc is missing destination path: /nope/x: missing value"},
      {"unknown op", kPod, R"([{"op":"frobnicate","path":"/a"}])", PatchType::kJsonPatch,
       StatusCode::kInvalid, "Unexpected kind: frobnicate"},
      {"missing op", kPod, R"([{"path":"/a"}])", PatchType::kJsonPatch, StatusCode::kInvalid,
       "Unexpected kind: unknown"},
      {"null op", kPod, "[null]", PatchType::kJsonPatch, StatusCode::kInvalid,
       "Unexpected kind: unknown"},
      {"root replaced by an array", kPod, R"([{"op":"replace","path":"","value":[1]}])",
       PatchType::kJsonPatch, StatusCode::kBadRequest,
       "json: cannot unmarshal array into Go value of type map[string]interface {}"},
  };
  ExpectErrors(kCases, std::size(kCases));
}

// JSON patch bodies must decode as []handlers.jsonPatchOp, with at most 10000 operations.
TEST(JsonPatchTest, RejectsMalformedBodies) {
  std::string too_many = "[";
  for (int i = 0; i <= 10000; ++i) too_many += R"({"op":"test","path":"/kind","value":"Pod"},)";
  too_many.back() = ']';
  const ErrorCase kCases[] = {
      {"object", kPod, R"({"op":"add"})", PatchType::kJsonPatch, StatusCode::kBadRequest,
       "error decoding patch: json: cannot unmarshal object into Go value of type "
       "[]handlers.jsonPatchOp"},
      {"number item", kPod, "[1]", PatchType::kJsonPatch, StatusCode::kBadRequest,
       "error decoding patch: json: cannot unmarshal number into Go value of type "
       "handlers.jsonPatchOp"},
      {"op not a string", kPod, R"([{"op":1,"path":"/a"}])", PatchType::kJsonPatch,
       StatusCode::kBadRequest,
       "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op "
       "of type string"},
      {"path not a string", kPod, R"([{"op":"add","path":["a"]}])", PatchType::kJsonPatch,
       StatusCode::kBadRequest,
       "error decoding patch: json: cannot unmarshal array into Go struct field jsonPatchOp.path "
       "of type string"},
      {"empty", kPod, "", PatchType::kJsonPatch, StatusCode::kBadRequest,
       "error decoding patch: unexpected end of JSON input"},
      {"too many operations", kPod, too_many, PatchType::kJsonPatch, StatusCode::kBadRequest,
       "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got "
       "10001"},
  };
  ExpectErrors(kCases, std::size(kCases));
}

// Copies are capped at 3 MiB in total (JSONPatchMaxCopyBytes) and may not nest the document
// past the depth limit; moves that do are caught after the patch.
TEST(JsonPatchTest, BoundsCopiesAndDepth) {
  const std::string big = json{{"kind", "Pod"}, {"blob", std::string(1000000, 'x')}}.dump();
  std::string copies = "[";
  for (int i = 0; i < 4; ++i) {
    copies += R"({"op":"copy","from":"/blob","path":"/c)" + std::to_string(i) + R"("},)";
  }
  copies.back() = ']';

  std::string deep;   // {"d":{"d":...{}}} 600 levels
  std::string chain;  // "/d/d/.../d" 599 tokens: the innermost object
  for (int i = 0; i < 600; ++i) deep += R"({"d":)";
  deep += "{}";
  for (int i = 0; i < 600; ++i) deep += "}";
  for (int i = 0; i < 599; ++i) chain += "/d";
  const std::string original = R"({"kind":"Pod","a":)" + deep + R"(,"b":)" + deep + "}";
  const std::string copy_deep = R"([{"op":"copy","from":"/b","path":"/a)" + chain + R"(/x"}])";
  const std::string move_deep = R"([{"op":"move","from":"/b","path":"/a)" + chain + R"(/x"}])";

  const ErrorCase kCases[] = {
      {"copies beyond 3 MiB", big, copies, PatchType::kJsonPatch, StatusCode::kInvalid,
       "Unable to complete the copy, the accumulated size increase of copy is 4000008, exceeding "
       "the limit 3145728"},
      {"copy nests too deep", original, copy_deep, PatchType::kJsonPatch, StatusCode::kInvalid,
       "copy operation would nest the document more than 1000 levels deep"},
      {"move nests too deep", original, move_deep, PatchType::kJsonPatch, StatusCode::kInvalid,
       "the patched object is nested more than 1000 levels deep"},
  };
  ExpectErrors(kCases, std::size(kCases));
  // Three copies stay within the limit.
  const std::string three = copies.substr(0, copies.rfind(R"(,{"op")")) + "]";
  EXPECT_EQ(Field(Apply(big, three, PatchType::kJsonPatch), "/c2").size(), 1000002U);
}

struct MergeCase {
  std::string_view name;
  std::string_view original;
  std::string_view patch;
  std::string_view pointer;
  std::string_view want;
  std::string_view api_version = "v1";
  std::string_view kind = "Pod";
};

void ExpectMerges(const MergeCase* cases, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const MergeCase& c = cases[i];
    SCOPED_TRACE(c.name);
    const Result<json> result =
        Apply(c.original, c.patch, PatchType::kStrategicMergePatch, c.api_version, c.kind);
    EXPECT_EQ(Field(result, c.pointer), Canon(c.want));
  }
}

// The patches kubectl apply (client side, last-applied-configuration) computes for everyday
// edits merge as kube-apiserver merges them.
TEST(StrategicMergePatchTest, KubectlApplyPatches) {
  constexpr MergeCase kCases[] = {
      {"change a container image", kPod,
       R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"new"}},
           "spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"sidecar"}],
                   "containers":[{"image":"nginx:1.26","name":"web"}]}})",
       "/spec/containers",
       R"([{"name":"web","image":"nginx:1.26","args":["-g","daemon off;"],
            "ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP"}],
            "env":[{"name":"A","value":"1"},{"name":"B","value":"2"},{"name":"C","value":"3"}],
            "volumeMounts":[{"name":"data","mountPath":"/data"}]},
           {"name":"sidecar","image":"envoy:1"}])"},
      {"annotation updated alongside", kPod,
       R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"new"}}})",
       "/metadata/annotations", R"({"kubectl.kubernetes.io/last-applied-configuration":"new"})"},
      {"remove a container port", kPod,
       R"({"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"sidecar"}],
                   "containers":[{"$setElementOrder/ports":[{"containerPort":80}],"name":"web",
                                  "ports":[{"$patch":"delete","containerPort":443}]}]}})",
       "/spec/containers/0/ports", R"([{"containerPort":80,"protocol":"TCP"}])"},
      {"remove a label", kPod, R"({"metadata":{"labels":{"tier":null}}})", "/metadata/labels",
       R"({"app":"web"})"},
      {"add a container before the others", kPod,
       R"({"spec":{"$setElementOrder/containers":[{"name":"log"},{"name":"web"},{"name":"sidecar"}],
                   "containers":[{"image":"fluentd","name":"log"}]}})",
       "/spec/containers/0", R"({"name":"log","image":"fluentd"})"},
      {"reorder env", kPod,
       R"({"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"sidecar"}],
                   "containers":[{"$setElementOrder/env":[{"name":"C"},{"name":"A"},{"name":"B"}],
                                  "name":"web"}]}})",
       "/spec/containers/0/env",
       R"([{"name":"C","value":"3"},{"name":"A","value":"1"},{"name":"B","value":"2"}])"},
      {"change Service ports", kService,
       R"({"spec":{"$setElementOrder/ports":[{"port":80},{"port":8443}],
                   "ports":[{"port":80,"targetPort":9090},
                            {"name":"alt","port":8443,"targetPort":8443},
                            {"$patch":"delete","port":443}]}})",
       "/spec/ports",
       R"([{"name":"http","port":80,"protocol":"TCP","targetPort":9090},
           {"name":"alt","port":8443,"targetPort":8443}])",
       "v1", "Service"},
      {"add a finalizer", kPod,
       R"({"metadata":{"$setElementOrder/finalizers":["a.example.com/x","b.example.com/y"],
                       "finalizers":["b.example.com/y"]}})",
       "/metadata/finalizers", R"(["a.example.com/x","b.example.com/y"])"},
      {"remove a finalizer, keeping one the server added",
       R"({"metadata":{"finalizers":["a.example.com/x","b.example.com/y","kubernetes"]}})",
       R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a.example.com/x"],
                       "$setElementOrder/finalizers":["b.example.com/y"]}})",
       "/metadata/finalizers", R"(["b.example.com/y","kubernetes"])"},
      {"change a volume's source", kPod,
       R"({"spec":{"$setElementOrder/volumes":[{"name":"data"},{"name":"cfg"}],
                   "volumes":[{"$retainKeys":["hostPath","name"],"emptyDir":null,
                               "hostPath":{"path":"/srv"},"name":"data"}]}})",
       "/spec/volumes",
       R"([{"name":"data","hostPath":{"path":"/srv"}},{"name":"cfg","configMap":{"name":"c1"}}])"},
  };
  ExpectMerges(kCases, std::size(kCases));
}

// Lists with patchStrategy "merge" merge by their patchMergeKey in every kind we serve.
TEST(StrategicMergePatchTest, MergeKeysPerKind) {
  constexpr std::string_view kNamespace =
      R"({"metadata":{"name":"ns"},"status":{"phase":"Active",
          "conditions":[{"type":"A","status":"False"},{"type":"B","status":"False"}]}})";
  constexpr std::string_view kCrd =
      R"({"metadata":{"name":"w.example.com","finalizers":["f1"]},
          "spec":{"versions":[{"name":"v1","served":true},{"name":"v2","served":true}]}})";
  constexpr MergeCase kCases[] = {
      {"pod condition by type", kPod,
       R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})", "/status/conditions",
       R"([{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True"}])"},
      {"pod IP by ip", kPod, R"({"status":{"podIPs":[{"ip":"fd00::5"}]}})", "/status/podIPs",
       R"([{"ip":"fd00::5"},{"ip":"10.244.0.5"}])"},
      {"owner reference by uid", kPod,
       R"({"metadata":{"ownerReferences":[{"uid":"u-1","controller":true}]}})",
       "/metadata/ownerReferences",
       R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"u-1",
            "controller":true}])"},
      {"env by name", kPod,
       R"({"spec":{"containers":[{"name":"web","env":[{"name":"B","value":"20"}]}]}})",
       "/spec/containers/0/env",
       R"([{"name":"A","value":"1"},{"name":"B","value":"20"},{"name":"C","value":"3"}])"},
      {"volume mount by mountPath", kPod,
       R"({"spec":{"containers":[{"name":"web",
            "volumeMounts":[{"mountPath":"/data","readOnly":true}]}]}})",
       "/spec/containers/0/volumeMounts",
       R"([{"name":"data","mountPath":"/data","readOnly":true}])"},
      {"container port by containerPort", kPod,
       R"({"spec":{"containers":[{"name":"web","ports":[{"containerPort":443,"name":"https"}]}]}})",
       "/spec/containers/0/ports",
       R"([{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP","name":"https"}])"},
      {"init container by name", kPod,
       R"({"spec":{"initContainers":[{"name":"init","image":"busybox:2"}]}})",
       "/spec/initContainers", R"([{"name":"init","image":"busybox:2"}])"},
      {"ephemeral container ports by containerPort", kPod,
       R"({"spec":{"ephemeralContainers":[{"name":"dbg","image":"b","ports":[{"containerPort":1}]}]}})",
       "/spec/ephemeralContainers",
       R"([{"name":"dbg","image":"b","ports":[{"containerPort":1}]}])"},
      {"image pull secret by name", kPod, R"({"spec":{"imagePullSecrets":[{"name":"other"}]}})",
       "/spec/imagePullSecrets", R"([{"name":"other"},{"name":"regcred"}])"},
      {"host alias by ip", kPod,
       R"({"spec":{"hostAliases":[{"ip":"10.0.0.1","hostnames":["db","db2"]}]}})",
       "/spec/hostAliases", R"([{"ip":"10.0.0.1","hostnames":["db","db2"]}])"},
      {"topology spread by topologyKey", kPod,
       R"({"spec":{"topologySpreadConstraints":[{"topologyKey":"zone","maxSkew":2}]}})",
       "/spec/topologySpreadConstraints",
       R"([{"topologyKey":"zone","maxSkew":2,"whenUnsatisfiable":"DoNotSchedule"}])"},
      {"service port by port", kService, R"({"spec":{"ports":[{"port":443,"targetPort":9443}]}})",
       "/spec/ports",
       R"([{"name":"http","port":80,"protocol":"TCP","targetPort":8080},
           {"name":"https","port":443,"protocol":"TCP","targetPort":9443}])",
       "v1", "Service"},
      {"service condition by type", kService,
       R"({"status":{"conditions":[{"type":"B","status":"True"}]}})", "/status/conditions",
       R"([{"type":"B","status":"True"},{"type":"A","status":"True"}])", "v1", "Service"},
      {"node condition by type", kNode,
       R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})", "/status/conditions",
       R"([{"type":"Ready","status":"True"},{"type":"MemoryPressure","status":"False"}])", "v1",
       "Node"},
      {"node address by type", kNode,
       R"({"status":{"addresses":[{"type":"InternalIP","address":"10.0.0.2"}]}})",
       "/status/addresses",
       R"([{"type":"InternalIP","address":"10.0.0.2"},{"type":"Hostname","address":"n1"}])", "v1",
       "Node"},
      {"node podCIDRs merge as a set", kNode,
       R"({"spec":{"podCIDRs":["fd00::/64","10.244.0.0/24"]}})", "/spec/podCIDRs",
       R"(["fd00::/64","10.244.0.0/24"])", "v1", "Node"},
      {"namespace condition by type", kNamespace,
       R"({"status":{"conditions":[{"type":"B","status":"True"}]}})", "/status/conditions",
       R"([{"type":"A","status":"False"},{"type":"B","status":"True"}])", "v1", "Namespace"},
      {"CRD finalizers merge", kCrd, R"({"metadata":{"finalizers":["f2"]}})",
       "/metadata/finalizers", R"(["f2","f1"])", "apiextensions.k8s.io/v1",
       "CustomResourceDefinition"},
  };
  ExpectMerges(kCases, std::size(kCases));
}

// Lists without a patch strategy are replaced whole; maps merge key by key.
TEST(StrategicMergePatchTest, AtomicListsAndMaps) {
  constexpr std::string_view kConfigMap = R"({"metadata":{"name":"c"},"data":{"a":"1","b":"2"}})";
  constexpr std::string_view kCrd =
      R"({"metadata":{"name":"w.example.com"},
          "spec":{"versions":[{"name":"v1","served":true},{"name":"v2","served":true}]}})";
  constexpr std::string_view kEndpoints =
      R"({"metadata":{"name":"web"},"subsets":[{"addresses":[{"ip":"10.0.0.1"}]}]})";
  constexpr MergeCase kCases[] = {
      {"pod tolerations", kPod, R"({"spec":{"tolerations":[{"key":"k2","operator":"Exists"}]}})",
       "/spec/tolerations", R"([{"key":"k2","operator":"Exists"}])"},
      {"container args", kPod, R"({"spec":{"containers":[{"name":"web","args":["-v"]}]}})",
       "/spec/containers/0/args", R"(["-v"])"},
      {"container statuses", kPod,
       R"({"status":{"containerStatuses":[{"name":"web","ready":true}]}})",
       "/status/containerStatuses", R"([{"name":"web","ready":true}])"},
      {"node taints", kNode, R"({"spec":{"taints":[{"key":"t2","effect":"NoExecute"}]}})",
       "/spec/taints", R"([{"key":"t2","effect":"NoExecute"}])", "v1", "Node"},
      {"slice endpoints", kSlice,
       R"({"endpoints":[{"addresses":["10.244.0.7"],"conditions":{"ready":false}}]})", "/endpoints",
       R"([{"addresses":["10.244.0.7"],"conditions":{"ready":false}}])", "discovery.k8s.io/v1",
       "EndpointSlice"},
      {"slice ports", kSlice, R"({"ports":[{"name":"https","port":8443}]})", "/ports",
       R"([{"name":"https","port":8443}])", "discovery.k8s.io/v1", "EndpointSlice"},
      {"slice labels merge", kSlice, R"({"metadata":{"labels":{"x":"y"}}})", "/metadata/labels",
       R"({"kubernetes.io/service-name":"web","x":"y"})", "discovery.k8s.io/v1", "EndpointSlice"},
      {"endpoints subsets", kEndpoints, R"({"subsets":[]})", "/subsets", "[]", "v1", "Endpoints"},
      {"CRD versions", kCrd, R"({"spec":{"versions":[{"name":"v2","served":false}]}})",
       "/spec/versions", R"([{"name":"v2","served":false}])", "apiextensions.k8s.io/v1",
       "CustomResourceDefinition"},
      {"configmap data merges", kConfigMap, R"({"data":{"b":"20","c":"3"}})", "/data",
       R"({"a":"1","b":"20","c":"3"})", "v1", "ConfigMap"},
      {"secret data key deleted", R"({"data":{"a":"MQ==","b":"Mg=="}})", R"({"data":{"a":null}})",
       "/data", R"({"b":"Mg=="})", "v1", "Secret"},
      {"lease spec", R"({"spec":{"holderIdentity":"a","leaseDurationSeconds":15}})",
       R"({"spec":{"holderIdentity":"b"}})", "/spec",
       R"({"holderIdentity":"b","leaseDurationSeconds":15})", "coordination.k8s.io/v1", "Lease"},
      {"event series", R"({"series":{"count":1},"note":"x"})", R"({"series":{"count":2}})",
       "/series", R"({"count":2})", "events.k8s.io/v1", "Event"},
      {"unknown fields are atomic lists", kPod, R"({"spec":{"x":[1],"containers":[]}})", "/spec/x",
       "[1]"},
      {"atomic list items lose directives", kPod,
       R"({"spec":{"tolerations":[{"key":"a","value":null},{"$patch":"delete","key":"b"}]}})",
       "/spec/tolerations", R"([{"key":"a"}])"},
  };
  ExpectMerges(kCases, std::size(kCases));
}

// Every directive of the strategic merge patch format.
TEST(StrategicMergePatchTest, Directives) {
  constexpr std::string_view kEnv =
      R"({"spec":{"containers":[{"name":"web","env":[
          {"name":"A","value":"1"},{"name":"X","value":"x"},{"name":"B","value":"2"}]}]}})";
  constexpr MergeCase kCases[] = {
      {"null deletes a key", kPod, R"({"spec":{"hostAliases":null}})", "/spec/hostAliases",
       "<absent>"},
      {"null for a missing key is dropped", kPod, R"({"spec":{"nope":null}})", "/spec/nope",
       "<absent>"},
      {"$patch replace on a map", kPod,
       R"({"metadata":{"labels":{"$patch":"replace","only":"this"}}})", "/metadata/labels",
       R"({"only":"this"})"},
      {"$patch delete on a map", kPod, R"({"metadata":{"labels":{"$patch":"delete"}}})",
       "/metadata/labels", "{}"},
      {"$patch merge on a map", kPod, R"({"metadata":{"labels":{"$patch":"merge","x":"y"}}})",
       "/metadata/labels", R"({"app":"web","tier":"fe","x":"y"})"},
      {"$patch replace in a list", kPod,
       R"({"spec":{"containers":[{"name":"only","image":"i"},{"$patch":"replace"}]}})",
       "/spec/containers", R"([{"name":"only","image":"i"}])"},
      {"$patch delete in a list", kPod,
       R"({"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}})", "/spec/containers/1",
       "<absent>"},
      {"$patch delete removes every match",
       R"({"spec":{"containers":[{"name":"a"},{"name":"a"}]}})",
       R"({"spec":{"containers":[{"name":"a","$patch":"delete"}]}})", "/spec/containers", "[]"},
      {"$patch merge in a list item", kPod,
       R"({"spec":{"containers":[{"name":"sidecar","$patch":"merge","image":"envoy:2"}]}})",
       "/spec/containers/1", R"({"name":"sidecar","image":"envoy:2"})"},
      {"$retainKeys clears unlisted keys", kPod,
       R"({"spec":{"volumes":[{"name":"cfg","$retainKeys":["name","secret"],
                               "secret":{"secretName":"s"}}]}})",
       "/spec/volumes/1", R"({"name":"cfg","secret":{"secretName":"s"}})"},
      {"$setElementOrder keeps server-only items in place", kEnv,
       R"({"spec":{"containers":[{"name":"web","$setElementOrder/env":[{"name":"A"},{"name":"B"}],
                                  "env":[{"name":"B","value":"20"}]}]}})",
       "/spec/containers/0/env",
       R"([{"name":"A","value":"1"},{"name":"X","value":"x"},{"name":"B","value":"20"}])"},
      {"$setElementOrder reorders around server-only items", kEnv,
       R"({"spec":{"containers":[{"name":"web","$setElementOrder/env":[{"name":"B"},{"name":"A"}]}]}})",
       "/spec/containers/0/env",
       R"([{"name":"X","value":"x"},{"name":"B","value":"2"},{"name":"A","value":"1"}])"},
      {"$setElementOrder puts trailing server-only items last",
       R"({"spec":{"containers":[{"name":"web","env":[
           {"name":"A","value":"1"},{"name":"B","value":"2"},{"name":"X","value":"x"}]}]}})",
       R"({"spec":{"containers":[{"name":"web","$setElementOrder/env":[{"name":"B"},{"name":"A"}]}]}})",
       "/spec/containers/0/env",
       R"([{"name":"B","value":"2"},{"name":"A","value":"1"},{"name":"X","value":"x"}])"},
      {"$setElementOrder of scalars", kNode,
       R"({"spec":{"$setElementOrder/podCIDRs":["fd00::/64","10.244.0.0/24"],
                   "podCIDRs":["fd00::/64"]}})",
       "/spec/podCIDRs", R"(["fd00::/64","10.244.0.0/24"])", "v1", "Node"},
      {"$setElementOrder for a new list", kNode,
       R"({"metadata":{"$setElementOrder/finalizers":["b","a"],"finalizers":["b","a"]}})",
       "/metadata/finalizers", R"(["b","a"])", "v1", "Node"},
      {"$deleteFromPrimitiveList", kNode,
       R"({"spec":{"$deleteFromPrimitiveList/podCIDRs":["10.244.0.0/24","nope"]}})",
       "/spec/podCIDRs", "[]", "v1", "Node"},
      {"$deleteFromPrimitiveList of a missing list", kNode,
       R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})", "/metadata/finalizers",
       "<absent>", "v1", "Node"},
      {"primitive merge removes duplicates", kPod,
       R"({"metadata":{"finalizers":["b","a.example.com/x","b"]}})", "/metadata/finalizers",
       R"(["b","a.example.com/x"])"},
      {"new map value has its directives applied", kPod,
       R"({"spec":{"securityContext":{"$patch":"replace","runAsUser":1,"x":null}}})",
       "/spec/securityContext", R"({"runAsUser":1})"},
      {"new $patch delete map is dropped", kPod,
       R"({"spec":{"securityContext":{"$patch":"delete"}}})", "/spec/securityContext", "<absent>"},
      {"new merge list drops delete items", R"({"spec":{}})",
       R"({"spec":{"containers":[{"name":"a","$patch":"delete"},{"name":"b","env":[{"name":"E","value":null}]}]}})",
       "/spec/containers", R"([{"name":"b","env":[{"name":"E"}]}])"},
      {"type change takes the patch value", kPod, R"({"spec":{"containers":"none"}})",
       "/spec/containers", R"("none")"},
      {"null body changes nothing", kPod, "null", "/metadata/name", R"("web")"},
      {"$patch replace at the root", kPod, R"({"$patch":"replace","kind":"Pod"})", "",
       R"({"kind":"Pod"})"},
  };
  ExpectMerges(kCases, std::size(kCases));
}

// Malformed strategic merge patches fail with kube-apiserver's code and message.
TEST(StrategicMergePatchTest, RejectsMalformedPatches) {
  constexpr ErrorCase kCases[] = {
      {"unknown $patch in a map", kPod, R"({"metadata":{"labels":{"$patch":"remove","a":"b"}}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "unknown patch type: remove in map: map[$patch:remove a:b]"},
      {"unknown $patch in a list item", kPod,
       R"({"spec":{"containers":[{"name":"web","$patch":"bogus"}]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "unknown patch type: bogus in map: map[$patch:bogus name:web]"},
      {"non-string $patch", kPod, R"({"metadata":{"$patch":5}})", PatchType::kStrategicMergePatch,
       StatusCode::kBadRequest, "unknown patch type: %!s(int64=5) in map: map[$patch:5]"},
      {"missing merge key", kPod, R"({"spec":{"containers":[{"image":"x"}]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "map: map[image:x] does not contain declared merge key: name"},
      {"delete without merge key", kPod, R"({"spec":{"containers":[{"$patch":"delete"}]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "map: map[$patch:delete] does not contain declared merge key: name"},
      {"$retainKeys not a list", kPod,
       R"({"spec":{"volumes":[{"name":"data","$retainKeys":"name"}]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "invalid patch format of retainKeys"},
      {"$retainKeys missing a patched key", kPod,
       R"({"spec":{"volumes":[{"name":"data","$retainKeys":["name"],"hostPath":{"path":"/x"}}]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "invalid patch format of retainKeys"},
      {"$setElementOrder without a slash", kPod, R"({"spec":{"$setElementOrderX":[]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "invalid patch format of setElementOrder list"},
      {"$setElementOrder not a list", kPod, R"({"spec":{"$setElementOrder/containers":"web"}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "expected a []interface {}, but received a string"},
      {"$setElementOrder on a scalar", kPod, R"({"metadata":{"$setElementOrder/name":["web"]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "expected a []interface {}, but received a string"},
      {"$setElementOrder disagrees with the patch", kPod,
       R"({"spec":{"$setElementOrder/containers":[{"name":"web"}],
                   "containers":[{"name":"log","image":"x"}]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "The order in patch list:\n[map[image:x name:log]]\n doesn't match $setElementOrder "
       "list:\n[map[name:web]]\n"},
      {"$deleteFromPrimitiveList without a slash", kPod,
       R"({"metadata":{"$deleteFromPrimitiveListfinalizers":["a"]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "invalid patch format of primitive list"},
      {"list of lists", R"({"metadata":{}})", R"({"metadata":{"finalizers":[["a"]]}})",
       PatchType::kStrategicMergePatch, StatusCode::kInvalid, "lists of lists are not supported"},
      {"mixed element types", kPod, R"({"metadata":{"finalizers":[1]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "list element types are not identical: [[a.example.com/x] [1]]"},
      {"a list among strings", kPod, R"({"metadata":{"finalizers":[["a"]]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "list element types are not identical: [[a.example.com/x] [[a]]]"},
      {"maps in a list of scalars", R"({"metadata":{}})",
       R"({"metadata":{"finalizers":[{"x":1}]}})", PatchType::kStrategicMergePatch,
       StatusCode::kBadRequest, "cannot merge lists without merge key for finalizers"},
      {"scalars in a list of maps", R"({"spec":{}})", R"({"spec":{"containers":["web"]}})",
       PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "expected a map[string]interface {}, but received a string"},
      {"array body", kPod, R"([{"a":1}])", PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "json: cannot unmarshal array into Go value of type map[string]interface {}"},
      {"string body", kPod, R"("x")", PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "json: cannot unmarshal string into Go value of type map[string]interface {}"},
      {"bool body", kPod, "true", PatchType::kStrategicMergePatch, StatusCode::kBadRequest,
       "json: cannot unmarshal bool into Go value of type map[string]interface {}"},
      {"truncated body", kPod, R"({"metadata":)", PatchType::kStrategicMergePatch,
       StatusCode::kBadRequest, "unexpected end of JSON input"},
      {"custom resource", R"({"spec":{}})", "{}", PatchType::kStrategicMergePatch,
       StatusCode::kBadRequest,
       "the body of the request was in an unknown format - accepted media types include: "
       "application/json-patch+json, application/merge-patch+json",
       "example.com/v1", "Widget"},
      {"server-side apply", kPod, "{}", PatchType::kApplyPatch, StatusCode::kBadRequest,
       "the body of the request was in an unknown format - accepted media types include: "
       "application/json-patch+json, application/merge-patch+json, "
       "application/strategic-merge-patch+json"},
  };
  ExpectErrors(kCases, std::size(kCases));
}

std::string Nested(int depth) {
  std::string body;
  for (int i = 0; i < depth; ++i) body += R"({"a":)";
  body += "1";
  for (int i = 0; i < depth; ++i) body += "}";
  return body;
}

// Bodies nested deeper than 1000 levels are refused before parsing; 1000 levels still apply.
TEST(PatchHostileInputTest, CapsNesting) {
  const std::string too_deep = Nested(1001);
  const std::string deep_list = std::string(5000, '[') + std::string(5000, ']');
  for (const PatchType type :
       {PatchType::kJsonPatch, PatchType::kMergePatch, PatchType::kStrategicMergePatch}) {
    for (const std::string& body : {too_deep, deep_list}) {
      const Result<json> result = Apply(kPod, body, type);
      ASSERT_FALSE(result.ok());
      EXPECT_EQ(result.status().code(), StatusCode::kBadRequest);
      EXPECT_TRUE(
          result.status().message().ends_with("the patch is nested more than 1000 levels deep"))
          << result.status().ToString();
    }
  }
  EXPECT_TRUE(Apply(kPod, Nested(1000), PatchType::kMergePatch).ok());
  EXPECT_TRUE(Apply(kPod, Nested(1000), PatchType::kStrategicMergePatch).ok());
  // 1000 levels that each carry directives, merged into an equally deep original.
  std::string directives;
  for (int i = 0; i < 999; ++i) directives += R"({"$patch":"replace","$retainKeys":["a"],"a":)";
  directives += "1" + std::string(999, '}');
  EXPECT_TRUE(Apply(Nested(999), directives, PatchType::kStrategicMergePatch).ok());
  EXPECT_TRUE(Apply(Nested(999), Nested(999), PatchType::kStrategicMergePatch).ok());
  // A bracket inside a string does not count.
  EXPECT_TRUE(
      Apply(kPod, R"({"metadata":{"labels":{"x":"[[[{{{"}}})", PatchType::kStrategicMergePatch)
          .ok());
}

// No body, however odd, crashes or throws: each is applied or refused as a client error.
TEST(PatchHostileInputTest, NeverThrows) {
  constexpr std::string_view kBodies[] = {
      "",
      " ",
      "null",
      "[]",
      "{}",
      "[null]",
      "[{}]",
      R"([{"op":"add"}])",
      R"([{"op":"copy","from":"","path":"/a"}])",
      R"([{"op":"move","from":"/spec","path":"/spec/x"}])",
      R"([{"op":"add","path":"/metadata/name/x/y","value":1}])",
      R"([{"op":"replace","path":"","value":5}])",
      R"([{"op":"remove","path":"/spec/containers/-"}])",
      R"([{"op":"test","path":"/spec/containers/-1"}])",
      R"({"$patch":5})",
      R"({"$retainKeys":null,"a":1})",
      R"({"$retainKeys":[1,null,{}],"kind":"x"})",
      R"({"spec":{"containers":[1,2]}})",
      R"({"spec":{"containers":[null]}})",
      R"({"spec":{"containers":[{"name":null}]}})",
      R"({"spec":{"containers":[{"name":{"a":1}},{"name":{"a":1},"$patch":"delete"}]}})",
      R"({"spec":{"$setElementOrder/containers":[1]}})",
      R"({"spec":{"$setElementOrder/containers":[{"name":"web"},1],"containers":[{"name":"web"}]}})",
      R"({"spec":{"$setElementOrder/tolerations":[{"key":"k1"}]}})",
      R"({"spec":{"$setElementOrder/":[]}})",
      R"({"metadata":{"$deleteFromPrimitiveList/finalizers":{"a":1}}})",
      R"({"metadata":{"$deleteFromPrimitiveList/ownerReferences":[{"uid":"u-1"}]}})",
      R"({"metadata":{"$deleteFromPrimitiveList/":["a"]}})",
      R"({"status":{"conditions":[{"type":"Ready","$retainKeys":["type"]}]}})",
      R"({"a":1e400})",
      R"("\ud800")",
      "{\"a\":\"\xff\xfe\"}",
      R"({"a":"\u0000"})",
      "{\"a\":1}garbage",
  };
  for (const std::string_view body : kBodies) {
    for (const PatchType type : {PatchType::kJsonPatch, PatchType::kMergePatch,
                                 PatchType::kStrategicMergePatch, PatchType::kApplyPatch}) {
      SCOPED_TRACE(std::string(body) + " as type " + std::to_string(static_cast<int>(type)));
      Result<json> result = Status(StatusCode::kInternal, "not run");
      EXPECT_NO_THROW(result = Apply(kPod, body, type));
      if (!result.ok()) {
        EXPECT_TRUE(result.status().code() == StatusCode::kBadRequest ||
                    result.status().code() == StatusCode::kInvalid)
            << result.status().ToString();
      }
    }
  }
}

// Merging large lists stays fast: no quadratic step on a hostile 5000-item list.
TEST(PatchHostileInputTest, LargeListsMergeQuickly) {
  json original = json::parse(kPod);
  json finalizers = json::array();
  json order = json::array();
  json env = json::array();
  for (int i = 0; i < 5000; ++i) {
    finalizers.push_back("f" + std::to_string(i));
    order.push_back("f" + std::to_string(4999 - i));
    env.push_back({{"name", "E" + std::to_string(i)}, {"value", "v"}});
  }
  original["metadata"]["finalizers"] = finalizers;
  const json patch = {{"metadata", {{"$setElementOrder/finalizers", order}, {"finalizers", order}}},
                      {"spec", {{"containers", {{{"name", "web"}, {"env", env}}}}}}};
  const Result<json> result =
      ApplyPatch(original, patch.dump(), PatchType::kStrategicMergePatch, "v1", "Pod");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ((*result)["metadata"]["finalizers"], order);
  EXPECT_EQ((*result)["spec"]["containers"][0]["env"].size(), 5003U);
}

}  // namespace
}  // namespace slicewright::apiserver
