// Tests for custom resources through the REST layer, as kube-apiserver treats them: the MCS CRDs
// installed at startup (ApiServer::EnsureCrds), then pruning, defaulting, fieldValidation and
// schema validation with kube's messages on create, update, patch and the status subresource.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/api/embedded_crds.h"
#include "apiserver/rest/api_server.h"
#include "apiserver/storage/sqlite_storage.h"

namespace slicewright::apiserver {
namespace {

using Json = nlohmann::json;

constexpr char kImports[] = "/apis/multicluster.x-k8s.io/v1beta1/namespaces/default/serviceimports";
constexpr char kRecords[] =
    "/apis/mcs.slicewright.io/v1alpha1/namespaces/default/serviceexportrecords";
constexpr char kProperties[] = "/apis/about.k8s.io/v1alpha1/clusterproperties";
constexpr char kCrds[] = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

// Collects a watch stream's lines.
class RecordingSink final : public StreamSink {
 public:
  bool Write(std::shared_ptr<const std::string> chunk) override {
    std::lock_guard lock(mu_);
    lines_.push_back(*chunk);
    return true;
  }
  void Finish() override {}
  std::vector<Json> Events() {
    std::lock_guard lock(mu_);
    std::vector<Json> events;
    for (const std::string& line : lines_) events.push_back(Json::parse(line));
    return events;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

class ApiServerCrdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/sw-apiserver-crd-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    SqliteStorageOptions options;
    options.path = dir_ + "/state.db";
    auto storage = SqliteStorage::Open(options);
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    ApiServerOptions api;
    api.seed = 7;
    auto server = ApiServer::Create(api, std::move(storage).value());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    std::vector<std::string> crds;
    for (const CrdManifest& manifest : McsCrdManifests()) {
      Result<std::vector<std::string>> documents = CrdDocuments(manifest);
      ASSERT_TRUE(documents.ok()) << documents.status().ToString();
      crds.insert(crds.end(), documents->begin(), documents->end());
    }
    ASSERT_EQ(crds.size(), 4u);
    Status installed = server_->EnsureCrds(crds);
    ASSERT_TRUE(installed.ok()) << installed.ToString();
  }
  void TearDown() override {
    server_->Stop();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  HttpResponse Call(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& content_type = "application/json",
                    std::vector<std::pair<std::string, std::string>> query = {}) {
    HttpRequest request;
    request.method = method;
    request.path = path;
    request.query = std::move(query);
    request.body = body;
    request.headers.emplace_back("content-type", content_type);
    return server_->Handle(request);
  }
  // The Status message of a refused request, checking its HTTP code.
  std::string Refusal(const HttpResponse& response, int code) {
    EXPECT_EQ(response.status, code) << response.body;
    return Json::parse(response.body).value("message", "");
  }
  static std::vector<std::string> Warnings(const HttpResponse& response) {
    std::vector<std::string> out;
    for (const auto& [name, value] : response.headers) {
      if (name == "Warning") out.push_back(value);
    }
    return out;
  }

  static Json Import(const std::string& name, Json spec) {
    return {{"apiVersion", "multicluster.x-k8s.io/v1beta1"},
            {"kind", "ServiceImport"},
            {"metadata", {{"name", name}}},
            {"spec", std::move(spec)}};
  }
  static Json DemoSpec() {
    return {{"type", "ClusterSetIP"}, {"ports", {{{"port", 80}, {"protocol", "TCP"}}}}};
  }
  static Json Record(Json spec) {
    return {{"apiVersion", "mcs.slicewright.io/v1alpha1"},
            {"kind", "ServiceExportRecord"},
            {"metadata", {{"name", "serve.demo.cluster-1"}}},
            {"spec", std::move(spec)}};
  }
  static Json RecordSpec() {
    return {{"cluster", "cluster-1"}, {"namespace", "demo"},
            {"name", "serve"},        {"exportCreationTimestamp", "2026-12-06T03:00:00Z"},
            {"type", "ClusterSetIP"}, {"ports", {{{"name", "http"}, {"port", 80}}}},
            {"ipFamilies", {"IPv4"}}};
  }

  std::string dir_;
  std::unique_ptr<ApiServer> server_;
};

// The compiled-in CRDs are served at once; installing them again writes nothing, and a changed
// label is brought back to the compiled-in value.
TEST_F(ApiServerCrdTest, EnsureCrdsInstallsOnceAndRepairs) {
  const std::string path = std::string(kCrds) + "/serviceimports.multicluster.x-k8s.io";
  Json crd = Json::parse(Call("GET", path, "").body);
  EXPECT_EQ(crd["metadata"]["labels"]["multicluster.x-k8s.io/release-version"], "v0.5.2");
  EXPECT_EQ(crd["status"]["storedVersions"], Json::array({"v1beta1"}));
  const std::string rv = crd["metadata"]["resourceVersion"];
  std::vector<std::string> again;
  for (const CrdManifest& manifest : McsCrdManifests()) {
    auto documents = CrdDocuments(manifest);
    ASSERT_TRUE(documents.ok());
    again.insert(again.end(), documents->begin(), documents->end());
  }
  ASSERT_TRUE(server_->EnsureCrds(again).ok());
  EXPECT_EQ(Json::parse(Call("GET", path, "").body)["metadata"]["resourceVersion"], rv);

  HttpResponse patched =
      Call("PATCH", path,
           R"({"metadata": {"labels": {"multicluster.x-k8s.io/release-version": "v0.4.0"}}})",
           "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  ASSERT_TRUE(server_->EnsureCrds(again).ok());
  EXPECT_EQ(Json::parse(Call("GET", path, "")
                            .body)["metadata"]["labels"]["multicluster.x-k8s.io/release-version"],
            "v0.5.2");
  for (const char* served :
       {"/apis/multicluster.x-k8s.io/v1alpha1/namespaces/default/serviceexports",
        "/apis/multicluster.x-k8s.io/v1beta1/namespaces/default/serviceexports", kImports, kRecords,
        kProperties}) {
    EXPECT_EQ(Call("GET", served, "").status, 200) << served;
  }
  // A refused CRD stops the installation with kube's message.
  Json bad = Json::parse(again[0]);
  bad["spec"]["scope"] = "Galaxy";
  Status refused = server_->EnsureCrds({bad.dump()});
  EXPECT_EQ(refused.code(), StatusCode::kInvalid);
  EXPECT_NE(refused.message().find("spec.scope: Unsupported value: \"Galaxy\""), std::string::npos)
      << refused.ToString();
}

// Unknown fields are pruned: silently with fieldValidation=Ignore, with a Warning header by
// default (Warn), refused with the decoder's message with Strict; a bad value is refused.
TEST_F(ApiServerCrdTest, PrunesUnknownFieldsPerFieldValidation) {
  Json body = Import("warned", DemoSpec());
  body["spec"]["foo"] = "bar";
  body["spec"]["ports"][0]["targetPort"] = 8080;
  HttpResponse warned = Call("POST", kImports, body.dump());
  ASSERT_EQ(warned.status, 201) << warned.body;
  EXPECT_EQ(Warnings(warned),
            (std::vector<std::string>{R"(299 - "unknown field \"spec.foo\"")",
                                      R"(299 - "unknown field \"spec.ports[0].targetPort\"")"}));
  Json stored = Json::parse(warned.body);
  EXPECT_FALSE(stored["spec"].contains("foo"));
  EXPECT_FALSE(stored["spec"]["ports"][0].contains("targetPort"));

  body["metadata"]["name"] = "ignored";
  HttpResponse ignored =
      Call("POST", kImports, body.dump(), "application/json", {{"fieldValidation", "Ignore"}});
  EXPECT_EQ(ignored.status, 201) << ignored.body;
  EXPECT_TRUE(Warnings(ignored).empty());

  body["metadata"]["name"] = "strict";
  EXPECT_EQ(Refusal(Call("POST", kImports, body.dump(), "application/json",
                         {{"fieldValidation", "Strict"}}),
                    400),
            "ServiceImport in version \"v1beta1\" cannot be handled as a ServiceImport: strict "
            "decoding error: unknown field \"spec.foo\", unknown field "
            "\"spec.ports[0].targetPort\"");
  EXPECT_EQ(Call("GET", std::string(kImports) + "/strict", "").status, 404);

  // Update and patch prune too.
  Json update = Json::parse(warned.body);
  update["spec"]["bar"] = 1;
  EXPECT_EQ(Refusal(Call("PUT", std::string(kImports) + "/warned", update.dump(),
                         "application/json", {{"fieldValidation", "Strict"}}),
                    400),
            "ServiceImport in version \"v1beta1\" cannot be handled as a ServiceImport: strict "
            "decoding error: unknown field \"spec.bar\"");
  HttpResponse patched = Call("PATCH", std::string(kImports) + "/warned",
                              R"({"spec": {"baz": true}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Warnings(patched), std::vector<std::string>{R"(299 - "unknown field \"spec.baz\"")"});
  EXPECT_FALSE(Json::parse(patched.body)["spec"].contains("baz"));
  const std::string strict_patch =
      Refusal(Call("PATCH", std::string(kImports) + "/warned", R"({"spec": {"baz": true}})",
                   "application/merge-patch+json", {{"fieldValidation", "Strict"}}),
              422);
  EXPECT_EQ(strict_patch.substr(0, 40), " \"\" is invalid: patch: Invalid value: \"{");
  EXPECT_NE(strict_patch.find("strict decoding error: unknown field \"spec.baz\""),
            std::string::npos);

  EXPECT_EQ(Refusal(Call("POST", kImports, Import("x", DemoSpec()).dump(), "application/json",
                         {{"fieldValidation", "Loose"}}),
                    422),
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: "
            "\"Loose\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
}

// The ServiceImport schema's rules, with kube's 422 messages.
TEST_F(ApiServerCrdTest, ValidatesServiceImports) {
  Json three = DemoSpec();
  three["ips"] = {"1.2.3.4", "5.6.7.8", "9.9.9.9"};
  EXPECT_EQ(Refusal(Call("POST", kImports, Import("three", three).dump()), 422),
            "ServiceImport.multicluster.x-k8s.io \"three\" is invalid: spec.ips: Too many: 3: must "
            "have at most 2 items");
  EXPECT_EQ(
      Refusal(Call("POST", kImports, Import("untyped", {{"ports", Json::array()}}).dump()), 422),
      "ServiceImport.multicluster.x-k8s.io \"untyped\" is invalid: spec.type: Required value");
  Json odd = DemoSpec();
  odd["type"] = "LoadBalancer";
  odd["ports"][0]["port"] = "eighty";
  HttpResponse both = Call("POST", kImports, Import("odd", odd).dump());
  EXPECT_EQ(Refusal(both, 422),
            "ServiceImport.multicluster.x-k8s.io \"odd\" is invalid: [spec.ports[0].port: Invalid "
            "value: \"string\": spec.ports[0].port in body must be of type integer: \"string\", "
            "spec.type: Unsupported value: \"LoadBalancer\": supported values: \"ClusterSetIP\", "
            "\"Headless\"]");
  // kubectl lists the causes under the message.
  const Json details = Json::parse(both.body)["details"];
  EXPECT_EQ(details["kind"], "ServiceImport");
  EXPECT_EQ(details["causes"][1], (Json{{"reason", "FieldValueNotSupported"},
                                        {"message",
                                         "Unsupported value: \"LoadBalancer\": supported values: "
                                         "\"ClusterSetIP\", \"Headless\""},
                                        {"field", "spec.type"}}));
  // An update is validated as well.
  HttpResponse created = Call("POST", kImports, Import("serve", DemoSpec()).dump());
  ASSERT_EQ(created.status, 201) << created.body;
  Json update = Json::parse(created.body);
  update["spec"]["ipFamilies"] = {"IPv4", "IPv6", "IPv4"};
  EXPECT_EQ(Refusal(Call("PUT", std::string(kImports) + "/serve", update.dump()), 422),
            "ServiceImport.multicluster.x-k8s.io \"serve\" is invalid: spec.ipFamilies: Too many: "
            "3: must have at most 2 items");
}

// status.endpointSliceObjects through the status subresource (patch and update), in both
// versions; the main resource keeps the stored status.
TEST_F(ApiServerCrdTest, ValidatesTheStatusSubresource) {
  ASSERT_EQ(Call("POST", kImports, Import("serve", DemoSpec()).dump()).status, 201);
  const std::string status = std::string(kImports) + "/serve/status";
  EXPECT_EQ(Refusal(Call("PATCH", status, R"({"status": {"endpointSliceObjects": "Maybe"}})",
                         "application/merge-patch+json"),
                    422),
            "ServiceImport.multicluster.x-k8s.io \"serve\" is invalid: "
            "status.endpointSliceObjects: Unsupported value: \"Maybe\": supported values: "
            "\"Present\", \"Absent\"");
  HttpResponse present = Call("PATCH", status, R"({"status": {"endpointSliceObjects": "Present"}})",
                              "application/merge-patch+json");
  ASSERT_EQ(present.status, 200) << present.body;
  Json object = Json::parse(present.body);
  EXPECT_EQ(object["status"]["endpointSliceObjects"], "Present");
  // PUT /status with two conditions of the same type: the list-map rule.
  Json condition = {{"type", "Ready"},
                    {"status", "True"},
                    {"reason", "Ready"},
                    {"message", ""},
                    {"lastTransitionTime", "2026-12-06T03:00:00Z"}};
  object["status"]["conditions"] = {condition, condition};
  EXPECT_EQ(Refusal(Call("PUT", status, object.dump()), 422),
            "ServiceImport.multicluster.x-k8s.io \"serve\" is invalid: status.conditions[1]: "
            "Duplicate value: map[string]interface {}{\"type\":\"Ready\"}");
  condition["lastTransitionTime"] = "now";
  condition["reason"] = "not valid";
  object["status"]["conditions"] = {condition};
  EXPECT_EQ(Refusal(Call("PUT", status, object.dump()), 422),
            "ServiceImport.multicluster.x-k8s.io \"serve\" is invalid: "
            "[status.conditions[0].lastTransitionTime: Invalid value: \"now\": "
            "conditions[0].lastTransitionTime in body must be of type date-time: \"now\", "
            "status.conditions[0].reason: Invalid value: \"not valid\": conditions[0].reason in "
            "body should match '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$']");
  // v1alpha1 serves the same field.
  EXPECT_EQ(Refusal(Call("PATCH",
                         "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/default/serviceimports/"
                         "serve/status",
                         R"({"status": {"endpointSliceObjects": "Sometimes"}})",
                         "application/merge-patch+json"),
                    422),
            "ServiceImport.multicluster.x-k8s.io \"serve\" is invalid: "
            "status.endpointSliceObjects: Unsupported value: \"Sometimes\": supported values: "
            "\"Present\", \"Absent\"");
}

// An object written through v1beta1 is shown as v1alpha1 to a v1alpha1 reader: GET, LIST and
// WATCH (conversion strategy None changes only apiVersion).
TEST_F(ApiServerCrdTest, ServesEachVersionsApiVersion) {
  const std::string alpha =
      "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/default/serviceimports";
  HttpResponse watch = Call("GET", alpha, "", "application/json", {{"watch", "true"}});
  ASSERT_EQ(watch.status, 200) << watch.body;
  ASSERT_NE(watch.stream, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  watch.stream->Start(sink);
  ASSERT_EQ(Call("POST", kImports, Import("serve", DemoSpec()).dump()).status, 201);
  EXPECT_EQ(Json::parse(Call("GET", alpha + "/serve", "").body)["apiVersion"],
            "multicluster.x-k8s.io/v1alpha1");
  EXPECT_EQ(Json::parse(Call("GET", alpha, "").body)["items"][0]["apiVersion"],
            "multicluster.x-k8s.io/v1alpha1");
  EXPECT_EQ(Json::parse(Call("GET", std::string(kImports) + "/serve", "").body)["apiVersion"],
            "multicluster.x-k8s.io/v1beta1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (sink->Events().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<Json> events = sink->Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["apiVersion"], "multicluster.x-k8s.io/v1alpha1");
  watch.stream->Stop();
}

// ClusterProperty is cluster scoped, its value required and at least one character.
TEST_F(ApiServerCrdTest, ClusterProperties) {
  Json property = {{"apiVersion", "about.k8s.io/v1alpha1"},
                   {"kind", "ClusterProperty"},
                   {"metadata", {{"name", "cluster.clusterset.k8s.io"}}},
                   {"spec", {{"value", "cluster-1"}}}};
  HttpResponse created = Call("POST", kProperties, property.dump());
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_FALSE(Json::parse(created.body)["metadata"].contains("namespace"));
  property["metadata"]["name"] = "id.k8s.io";
  property["spec"]["value"] = "";
  EXPECT_EQ(Refusal(Call("POST", kProperties, property.dump()), 422),
            "ClusterProperty.about.k8s.io \"id.k8s.io\" is invalid: spec.value: Invalid value: "
            "\"\": spec.value in body should be at least 1 chars long");
  property["spec"]["value"] = std::string(128001, 'a');
  EXPECT_EQ(Refusal(Call("POST", kProperties, property.dump()), 422),
            "ClusterProperty.about.k8s.io \"id.k8s.io\" is invalid: spec.value: Too long: may not "
            "be more than 128000 bytes");
  property.erase("spec");
  EXPECT_EQ(Refusal(Call("POST", kProperties, property.dump()), 422),
            "ClusterProperty.about.k8s.io \"id.k8s.io\" is invalid: spec: Required value");
}

// The broker's export record: a valid one is stored with protocol defaulted; bad ones refused.
TEST_F(ApiServerCrdTest, ServiceExportRecords) {
  HttpResponse created = Call("POST", kRecords, Record(RecordSpec()).dump());
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(Json::parse(created.body)["spec"]["ports"][0]["protocol"], "TCP");
  Json spec = RecordSpec();
  spec["type"] = "NodePort";
  spec["ipFamilies"] = {"IPv4", "IPv7"};
  spec["exportCreationTimestamp"] = "yesterday";
  spec.erase("cluster");
  EXPECT_EQ(Refusal(Call("POST", kRecords, Record(spec).dump()), 422),
            "ServiceExportRecord.mcs.slicewright.io \"serve.demo.cluster-1\" is invalid: "
            "[spec.exportCreationTimestamp: Invalid value: \"yesterday\": "
            "spec.exportCreationTimestamp in body must be of type date-time: \"yesterday\", "
            "spec.ipFamilies[1]: Unsupported value: \"IPv7\": supported values: \"IPv4\", "
            "\"IPv6\", spec.type: Unsupported value: \"NodePort\": supported values: "
            "\"ClusterSetIP\", \"Headless\", spec.cluster: Required value]");
  spec = RecordSpec();
  spec["ports"][0]["port"] = 70000000000LL;
  EXPECT_EQ(Refusal(Call("POST", kRecords, Record(spec).dump()), 422),
            "ServiceExportRecord.mcs.slicewright.io \"serve.demo.cluster-1\" is invalid: <nil>: "
            "Invalid value: \"\": Checked value must be of type integer with format int32 in "
            "spec.ports[0].port");
}

// A CRD whose schema is malformed is refused (naming the keyword), and the server goes on.
TEST_F(ApiServerCrdTest, RefusesMalformedSchemas) {
  Json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.example.com"}}},
      {"spec",
       {{"group", "example.com"},
        {"scope", "Namespaced"},
        {"names", {{"plural", "widgets"}, {"kind", "Widget"}}},
        {"versions",
         {{{"name", "v1"},
           {"served", true},
           {"storage", true},
           {"schema",
            {{"openAPIV3Schema",
              {{"type", "object"},
               {"properties",
                {{"spec", {{"type", "string"}, {"pattern", "(["}, {"maxLength", -3}}}}}}}}}}}}}}};
  const std::string message = Refusal(Call("POST", kCrds, crd.dump()), 422);
  EXPECT_NE(message.find("spec.versions[0].schema.openAPIV3Schema.properties[spec].maxLength: "
                         "Invalid value: -3: must be a non-negative integer"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("spec.versions[0].schema.openAPIV3Schema.properties[spec].pattern: "
                         "Invalid value: \"([\": must be a valid regular expression"),
            std::string::npos)
      << message;
  EXPECT_EQ(Call("GET", kImports, "").status, 200);
}

}  // namespace
}  // namespace slicewright::apiserver
