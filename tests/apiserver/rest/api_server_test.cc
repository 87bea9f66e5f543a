#include "apiserver/rest/api_server.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include "slicewright/model/time.h"

#include "apiserver/rest/serve.h"
#include "apiserver/storage/sqlite_storage.h"

namespace slicewright::apiserver {
namespace {

using Json = nlohmann::json;

class RecordingSink final : public StreamSink {
 public:
  bool Write(std::shared_ptr<const std::string> chunk) override {
    std::lock_guard lock(mu_);
    lines_.push_back(*chunk);
    return true;
  }
  void Finish() override {
    std::lock_guard lock(mu_);
    finished_ = true;
  }
  std::vector<Json> Events() {
    std::lock_guard lock(mu_);
    std::vector<Json> events;
    for (const std::string& line : lines_) {
      events.push_back(Json::parse(line));
    }
    return events;
  }
  bool finished() {
    std::lock_guard lock(mu_);
    return finished_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
  bool finished_ = false;
};

// Percent-decoding, as the HTTP layer does before the handler sees a query.
std::string Unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/sw-apiserver-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    Open();
  }
  void TearDown() override {
    if (server_) {
      server_->Stop();
    }
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open() {
    SqliteStorageOptions options;
    options.path = dir_ + "/state.db";
    auto storage = SqliteStorage::Open(options);
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    ApiServerOptions api;
    api.seed = 42;
    auto server = ApiServer::Create(api, std::move(storage).value());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }
  void Restart() {
    server_->Stop();
    server_.reset();
    Open();
  }

  HttpResponse Call(std::string method, std::string target, std::string body = "",
                    std::string content_type = "application/json",
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpRequest request;
    request.method = std::move(method);
    const std::size_t q = target.find('?');
    request.path = target.substr(0, q);
    if (q != std::string::npos) {
      std::string query = target.substr(q + 1);
      std::size_t at = 0;
      while (at <= query.size()) {
        std::size_t amp = query.find('&', at);
        if (amp == std::string::npos) {
          amp = query.size();
        }
        const std::string part = query.substr(at, amp - at);
        const std::size_t eq = part.find('=');
        if (!part.empty()) {
          request.query.emplace_back(part.substr(0, eq),
                                     eq == std::string::npos ? "" : Unescape(part.substr(eq + 1)));
        }
        at = amp + 1;
      }
    }
    request.body = std::move(body);
    request.headers = std::move(headers);
    request.headers.emplace_back("content-type", std::move(content_type));
    return server_->Handle(request);
  }
  Json CallJson(std::string method, std::string target, const Json& body, int want_status,
                std::string content_type = "application/json") {
    HttpResponse response =
        Call(std::move(method), std::move(target), body.is_null() ? "" : body.dump(), content_type);
    EXPECT_EQ(response.status, want_status) << response.body;
    return Json::parse(response.body);
  }
  Json Get(const std::string& path, int want_status = 200) {
    return CallJson("GET", path, nullptr, want_status);
  }

  static Json Service(const std::string& name, Json extra_spec = Json::object()) {
    Json service = {{"apiVersion", "v1"},
                    {"kind", "Service"},
                    {"metadata", {{"name", name}}},
                    {"spec", {{"selector", {{"app", name}}}, {"ports", {{{"port", 80}}}}}}};
    service["spec"].update(extra_spec);
    return service;
  }
  static Json Slice(const std::string& name, const std::string& owner_uid = "") {
    Json slice = {
        {"apiVersion", "discovery.k8s.io/v1"},
        {"kind", "EndpointSlice"},
        {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/service-name", "web"}}}}},
        {"addressType", "IPv4"},
        {"endpoints", {{{"addresses", {"10.0.0.1"}}}}},
        {"ports", {{{"name", "http"}, {"port", 80}}}}};
    if (!owner_uid.empty()) {
      slice["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                               {"kind", "Service"},
                                               {"name", "web"},
                                               {"uid", owner_uid},
                                               {"controller", true},
                                               {"blockOwnerDeletion", true}}};
    }
    return slice;
  }

  // The events a watch-list (sendInitialEvents=true) of `path` delivers at once: the initial
  // state and its closing bookmark. The stream is stopped afterwards.
  std::vector<Json> WatchListEvents(const std::string& path) {
    HttpResponse response =
        Call("GET", path +
                        "?watch=true&sendInitialEvents=true&allowWatchBookmarks="
                        "true&resourceVersionMatch=NotOlderThan");
    EXPECT_NE(response.stream, nullptr) << response.body;
    if (response.stream == nullptr) return {};
    auto sink = std::make_shared<RecordingSink>();
    response.stream->Start(sink);
    std::vector<Json> events = sink->Events();
    response.stream->Stop();
    return events;
  }

  // Polls until `done` holds or two seconds pass.
  template <typename F>
  bool Eventually(F done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  std::string dir_;
  std::unique_ptr<ApiServer> server_;
};

const char* kServices = "/api/v1/namespaces/default/services";
const char* kSlices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";

// The default namespaces exist from the start and survive a restart without being recreated.
// A namespace created with generateName is labelled with the name it got (kube's Canonicalize),
// a dry run's too.
TEST_F(ApiServerTest, GeneratedNamespaceNamesAreLabelled) {
  for (const char* query : {"", "?dryRun=All"}) {
    Json created = CallJson("POST", std::string("/api/v1/namespaces") + query,
                            Json{{"metadata", {{"generateName", "gen-"}}}}, 201);
    const std::string name = created["metadata"]["name"];
    EXPECT_TRUE(name.starts_with("gen-") && name.size() == 9) << name;
    EXPECT_EQ(created["metadata"]["labels"]["kubernetes.io/metadata.name"], name);
  }
}

TEST_F(ApiServerTest, CreatesDefaultNamespaces) {
  Json list = Get("/api/v1/namespaces");
  std::vector<std::string> names;
  for (const Json& item : list["items"]) {
    names.push_back(item["metadata"]["name"]);
    EXPECT_EQ(item["status"]["phase"], "Active");
    EXPECT_EQ(item["metadata"]["labels"]["kubernetes.io/metadata.name"], item["metadata"]["name"]);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"default", "kube-node-lease", "kube-public", "kube-system"}));
  const std::string rv = list["metadata"]["resourceVersion"];
  Restart();
  EXPECT_EQ(Get("/api/v1/namespaces")["metadata"]["resourceVersion"], rv);
}

// Create fills uid, creationTimestamp and resourceVersion; get returns the same bytes.
TEST_F(ApiServerTest, CreateThenGet) {
  Json created = CallJson("POST", kServices, Service("web"), 201);
  EXPECT_EQ(created["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_FALSE(created["metadata"]["creationTimestamp"].get<std::string>().empty());
  EXPECT_FALSE(created["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(created["metadata"]["namespace"], "default");
  // Service defaults and an allocated cluster IP.
  EXPECT_EQ(created["spec"]["type"], "ClusterIP");
  EXPECT_EQ(created["spec"]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(created["spec"]["ports"][0]["targetPort"], 80);
  EXPECT_TRUE(created["spec"]["clusterIP"].get<std::string>().starts_with("10."));
  EXPECT_EQ(created["spec"]["ipFamilies"], Json::array({"IPv4"}));
  EXPECT_EQ(Get(std::string(kServices) + "/web"), created);
}

// Creating a name that exists is 409 AlreadyExists with kube-apiserver's message.
TEST_F(ApiServerTest, CreateTwiceIsAlreadyExists) {
  CallJson("POST", kServices, Service("web"), 201);
  Json status = CallJson("POST", kServices, Service("web"), 409);
  EXPECT_EQ(status["reason"], "AlreadyExists");
  EXPECT_EQ(status["message"], "services \"web\" already exists");
}

// generateName gets a five-character random suffix.
TEST_F(ApiServerTest, GenerateName) {
  Json slice = Slice("");
  slice["metadata"].erase("name");
  slice["metadata"]["generateName"] = "web-";
  Json created = CallJson("POST", kSlices, slice, 201);
  const std::string name = created["metadata"]["name"];
  EXPECT_EQ(name.size(), 9u);
  EXPECT_TRUE(name.starts_with("web-"));
  EXPECT_EQ(created["metadata"]["generation"], 1);
}

// Bad input is answered with the right code and message, and the server keeps serving.
TEST_F(ApiServerTest, RejectsBadRequests) {
  struct Case {
    std::string_view name;
    std::string method;
    std::string path;
    std::string body;
    int status;
    std::string_view message;
  };
  const Case cases[] = {
      {"malformed JSON", "POST", kServices, "{\"kind\": ", 400, ""},
      {"wrong kind", "POST", kServices,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}})", 400,
       "the kind in the data (Pod) does not match the expected kind (Service)"},
      {"wrong version", "POST", kServices,
       R"({"apiVersion":"v2","kind":"Service","metadata":{"name":"x"}})", 400,
       "the API version in the data (v2) does not match the expected API version (v1)"},
      {"invalid name", "POST", kServices,
       R"({"metadata":{"name":"Web"},"spec":{"ports":[{"port":80}]}})", 422,
       "Service \"Web\" is invalid: metadata.name: Invalid value: \"Web\": a DNS-1035 label must "
       "consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
       "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
       "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"},
      {"no name", "POST", kServices, R"({"spec":{"ports":[{"port":80}]}})", 422,
       "Service \"\" is invalid: metadata.name: Required value: name or generateName is required"},
      {"missing namespace", "POST", "/api/v1/namespaces/nope/services", Service("web").dump(), 404,
       "namespaces \"nope\" not found"},
      {"unknown resource", "GET", "/api/v1/namespaces/default/widgets", "", 404,
       "the server could not find the requested resource"},
      {"unknown group", "GET", "/apis/example.com/v1/widgets", "", 404,
       "the server could not find the requested resource"},
      {"missing object", "GET", std::string(kServices) + "/nope", "", 404,
       "services \"nope\" not found"},
      {"bad label selector", "GET", std::string(kServices) + "?labelSelector=a%20in", "", 400, ""},
      {"bad field selector", "GET", std::string(kServices) + "?fieldSelector=spec.foo=1", "", 400,
       "field label not supported: spec.foo"},
      {"deep nesting", "POST", kServices, std::string(5000, '[') + std::string(5000, ']'), 400,
       "request body: JSON nested deeper than 1000 levels"},
      {"resourceVersion on create", "POST", kServices,
       R"({"metadata":{"name":"a","resourceVersion":"5"},"spec":{"ports":[{"port":80}]}})", 400,
       "resourceVersion should not be set on objects to be created"},
      {"create on collection of all namespaces", "POST", "/api/v1/services", Service("a").dump(),
       405, "the server does not allow this method on the requested resource"},
      {"create on a named object", "POST", std::string(kServices) + "/named",
       Service("named").dump(), 405,
       "the server does not allow this method on the requested resource"},
      {"update of a collection", "PUT", kServices, Service("a").dump(), 405,
       "the server does not allow this method on the requested resource"},
      {"patch of a collection", "PATCH", kServices, "{}", 405,
       "the server does not allow this method on the requested resource"},
      {"delete of a discovery document", "DELETE", "/api/v1", "", 405,
       "the server does not allow this method on the requested resource"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    HttpResponse response = Call(c.method, c.path, c.body);
    EXPECT_EQ(response.status, c.status) << response.body;
    Json status = Json::parse(response.body);
    EXPECT_EQ(status["kind"], "Status");
    EXPECT_EQ(status["code"], c.status);
    if (!c.message.empty()) {
      EXPECT_EQ(status["message"], c.message);
    }
  }
  CallJson("POST", kServices, Service("after"), 201);
  // The POST to a named object created nothing.
  Get(std::string(kServices) + "/named", 404);
}

// An update or patch naming another namespace than the URL's is 400, as on create, and moves
// nothing.
TEST_F(ApiServerTest, UpdateToAnotherNamespaceIsBadRequest) {
  Json created = CallJson("POST", kServices, Service("web"), 201);
  const std::string message =
      "the namespace of the provided object does not match the namespace sent on the request";
  Json moved = created;
  moved["metadata"]["namespace"] = "kube-system";
  EXPECT_EQ(CallJson("PUT", std::string(kServices) + "/web", moved, 400)["message"], message);
  EXPECT_EQ(CallJson("PATCH", std::string(kServices) + "/web",
                     {{"metadata", {{"namespace", "kube-system"}}}}, 400,
                     "application/merge-patch+json")["message"],
            message);
  Json same = created;
  same["metadata"]["labels"] = {{"a", "b"}};
  EXPECT_EQ(CallJson("PUT", std::string(kServices) + "/web", same, 200)["metadata"]["namespace"],
            "default");
}

// A watch from a revision the store never reached is 504 "Too large resource version" (as
// kube-apiserver answers, so clients relist) instead of silently skipping events up to it.
TEST_F(ApiServerTest, WatchFromTooLargeResourceVersion) {
  Json a = CallJson("POST", kSlices, Slice("a"), 201);
  const std::int64_t current = std::stoll(a["metadata"]["resourceVersion"].get<std::string>());
  HttpResponse response = Call(
      "GET", std::string(kSlices) + "?watch=true&resourceVersion=" + std::to_string(current + 100));
  EXPECT_EQ(response.stream, nullptr);
  EXPECT_EQ(response.status, 504) << response.body;
  EXPECT_EQ(Json::parse(response.body)["message"],
            "Too large resource version: " + std::to_string(current + 100) +
                ", current: " + std::to_string(current));
  // The current revision itself is fine.
  response =
      Call("GET", std::string(kSlices) + "?watch=true&resourceVersion=" + std::to_string(current));
  EXPECT_EQ(response.status, 200);
  ASSERT_NE(response.stream, nullptr);
}

// A stale resourceVersion on update is 409 Conflict; a matching one succeeds.
TEST_F(ApiServerTest, OptimisticConcurrency) {
  Json created = CallJson("POST", kServices, Service("web"), 201);
  Json update = created;
  update["metadata"]["labels"] = {{"tier", "front"}};
  Json updated = CallJson("PUT", std::string(kServices) + "/web", update, 200);
  EXPECT_NE(updated["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
  Json stale = CallJson("PUT", std::string(kServices) + "/web", update, 409);
  EXPECT_EQ(stale["reason"], "Conflict");
  EXPECT_EQ(stale["message"],
            "Operation cannot be fulfilled on services \"web\": the object has been modified; "
            "please apply your changes to the latest version and try again");
}

// An update that changes nothing writes nothing: the resourceVersion stays.
TEST_F(ApiServerTest, NoOpUpdateKeepsResourceVersion) {
  Json created = CallJson("POST", kServices, Service("web"), 201);
  Json same = CallJson("PUT", std::string(kServices) + "/web", created, 200);
  EXPECT_EQ(same["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
}

// The cluster IP survives a replace that omits it, and may not be changed.
TEST_F(ApiServerTest, ServiceClusterIpIsKeptAndImmutable) {
  Json created = CallJson("POST", kServices, Service("web"), 201);
  Json replace = Service("web");
  replace["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"];
  Json replaced = CallJson("PUT", std::string(kServices) + "/web", replace, 200);
  EXPECT_EQ(replaced["spec"]["clusterIP"], created["spec"]["clusterIP"]);
  replaced["spec"]["clusterIP"] = "10.96.99.99";
  replaced["spec"]["clusterIPs"] = {"10.96.99.99"};
  Json status = CallJson("PUT", std::string(kServices) + "/web", replaced, 422);
  EXPECT_NE(status["message"].get<std::string>().find("may not change once set"),
            std::string::npos);
}

// EndpointSlice generation moves with content changes; addressType is immutable.
TEST_F(ApiServerTest, EndpointSliceGenerationAndImmutableAddressType) {
  Json created = CallJson("POST", kSlices, Slice("web-1"), 201);
  EXPECT_EQ(created["metadata"]["generation"], 1);
  Json labelled = created;
  labelled["metadata"]["labels"]["extra"] = "x";
  Json after_label = CallJson("PUT", std::string(kSlices) + "/web-1", labelled, 200);
  EXPECT_EQ(after_label["metadata"]["generation"], 1);
  Json moved = after_label;
  moved["endpoints"][0]["addresses"] = {"10.0.0.2"};
  Json after_move = CallJson("PUT", std::string(kSlices) + "/web-1", moved, 200);
  EXPECT_EQ(after_move["metadata"]["generation"], 2);
  Json retyped = after_move;
  retyped["addressType"] = "IPv6";
  retyped["endpoints"][0]["addresses"] = {"fd00::1"};
  Json status = CallJson("PUT", std::string(kSlices) + "/web-1", retyped, 422);
  EXPECT_EQ(status["message"],
            "EndpointSlice.discovery.k8s.io \"web-1\" is invalid: addressType: Invalid value: "
            "\"IPv6\": field is "
            "immutable");
  Json bad_ip = Slice("web-2");
  bad_ip["endpoints"][0]["addresses"] = {"10.0.0.300"};
  status = CallJson("POST", kSlices, bad_ip, 422);
  EXPECT_EQ(status["message"],
            "EndpointSlice.discovery.k8s.io \"web-2\" is invalid: endpoints[0].addresses[0]: "
            "Invalid value: "
            "\"10.0.0.300\": must be a valid IP address");
  // As errors.NewInvalid: the kind (not the resource), its group, the name, and one cause per
  // field error; kubectl prints the causes and nothing else of the message.
  EXPECT_EQ(status["details"],
            Json({{"name", "web-2"},
                  {"group", "discovery.k8s.io"},
                  {"kind", "EndpointSlice"},
                  {"causes",
                   {{{"reason", "FieldValueInvalid"},
                     {"message", "Invalid value: \"10.0.0.300\": must be a valid IP address"},
                     {"field", "endpoints[0].addresses[0]"}}}}}));
}

// Every field error of an invalid object is a cause, with its CauseType, in the order found.
TEST_F(ApiServerTest, InvalidObjectsListEachFieldErrorAsACause) {
  const Json service = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", {{"name", "web"}}},
      {"spec", {{"ports", {{{"name", "a"}, {"port", 0}}, {{"name", "a"}, {"port", 80}}}}}}};
  const Json status = CallJson("POST", "/api/v1/namespaces/default/services", service, 422);
  ASSERT_TRUE(status["details"].contains("causes"));
  const Json& causes = status["details"]["causes"];
  EXPECT_EQ(status["details"]["kind"], "Service");
  EXPECT_EQ(status["details"]["name"], "web");
  EXPECT_FALSE(status["details"].contains("group"));
  std::string rendered;
  for (const Json& cause : causes) {
    rendered += cause["reason"].get<std::string>() + " " + cause["field"].get<std::string>() +
                ": " + cause["message"].get<std::string>() + "\n";
  }
  EXPECT_EQ(rendered,
            "FieldValueInvalid spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, "
            "inclusive\n"
            "FieldValueInvalid spec.ports[0].targetPort: Invalid value: 0: must be between 1 and "
            "65535, inclusive\n"
            "FieldValueDuplicate spec.ports[1].name: Duplicate value: \"a\"\n");
  // The message aggregates the same errors.
  EXPECT_EQ(status["message"],
            "Service \"web\" is invalid: [spec.ports[0].port: Invalid value: 0: must be between 1 "
            "and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 0: must be between 1 "
            "and 65535, inclusive, spec.ports[1].name: Duplicate value: \"a\"]");
  // Errors that are not field errors carry no causes.
  const Json missing = CallJson("GET", "/api/v1/namespaces/default/services/nothing", {}, 404);
  EXPECT_FALSE(missing["details"].contains("causes"));
  EXPECT_EQ(missing["details"]["kind"], "services");
}

// The main resource ignores status; the status subresource changes only status.
TEST_F(ApiServerTest, StatusSubresource) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx:1.27"}}}}}},
              {"status", {{"phase", "Running"}}}};
  const std::string pods = "/api/v1/namespaces/default/pods";
  Json created = CallJson("POST", pods, pod, 201);
  EXPECT_EQ(created["status"]["phase"], "Pending");
  Json status_update = created;
  status_update["status"]["phase"] = "Running";
  status_update["metadata"]["labels"] = {{"ignored", "yes"}};
  Json updated = CallJson("PUT", pods + "/p/status", status_update, 200);
  EXPECT_EQ(updated["status"]["phase"], "Running");
  EXPECT_FALSE(updated["metadata"].contains("labels"));
  Json main_update = updated;
  main_update["status"]["phase"] = "Failed";
  main_update["metadata"]["labels"] = {{"kept", "yes"}};
  Json after = CallJson("PUT", pods + "/p", main_update, 200);
  EXPECT_EQ(after["status"]["phase"], "Running");
  EXPECT_EQ(after["metadata"]["labels"]["kept"], "yes");
}

// Merge and JSON patches apply; strategic merge patch is refused for custom resources only.
TEST_F(ApiServerTest, Patch) {
  CallJson("POST", kServices, Service("web"), 201);
  Json merged =
      CallJson("PATCH", std::string(kServices) + "/web",
               Json{{"metadata", {{"labels", {{"a", "b"}}}}}}, 200, "application/merge-patch+json");
  EXPECT_EQ(merged["metadata"]["labels"]["a"], "b");
  Json patched = CallJson("PATCH", std::string(kServices) + "/web",
                          Json::array({{{"op", "remove"}, {"path", "/metadata/labels/a"}}}), 200,
                          "application/json-patch+json");
  EXPECT_FALSE(patched["metadata"].contains("labels") &&
               patched["metadata"]["labels"].contains("a"));
  Json missing = CallJson("PATCH", std::string(kServices) + "/nope", Json::object(), 404,
                          "application/merge-patch+json");
  EXPECT_EQ(missing["message"], "services \"nope\" not found");
  HttpResponse bad_type = Call("PATCH", std::string(kServices) + "/web", "{}", "text/plain");
  EXPECT_EQ(bad_type.status, 415);
}

// LIST pages with limit/continue over one snapshot, even while objects change.
TEST_F(ApiServerTest, ListPagination) {
  for (int i = 0; i < 5; ++i) {
    CallJson("POST", kSlices, Slice("s" + std::to_string(i)), 201);
  }
  Json first = Get(std::string(kSlices) + "?limit=2");
  ASSERT_EQ(first["items"].size(), 2u);
  const std::string token = first["metadata"]["continue"];
  CallJson("POST", kSlices, Slice("s9"), 201);  // after the snapshot: not in later pages
  Json second = Get(std::string(kSlices) + "?limit=2&continue=" + token);
  ASSERT_EQ(second["items"].size(), 2u);
  EXPECT_EQ(second["items"][0]["metadata"]["name"], "s2");
  EXPECT_EQ(second["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"]);
  Json third = Get(std::string(kSlices) +
                   "?limit=2&continue=" + second["metadata"]["continue"].get<std::string>());
  ASSERT_EQ(third["items"].size(), 1u);
  EXPECT_EQ(third["items"][0]["metadata"]["name"], "s4");
  EXPECT_FALSE(third["metadata"].contains("continue"));
  Json bad = Get(std::string(kSlices) + "?continue=garbage", 400);
  EXPECT_EQ(bad["message"], "continue key is not valid");
}

// Label and field selectors filter lists.
TEST_F(ApiServerTest, ListSelectors) {
  Json a = Slice("a");
  a["metadata"]["labels"]["tier"] = "front";
  CallJson("POST", kSlices, a, 201);
  CallJson("POST", kSlices, Slice("b"), 201);
  Json by_label = Get(std::string(kSlices) + "?labelSelector=tier%3Dfront");
  ASSERT_EQ(by_label["items"].size(), 1u);
  Json by_field = Get(std::string(kSlices) + "?fieldSelector=metadata.name%3Db");
  ASSERT_EQ(by_field["items"].size(), 1u);
  EXPECT_EQ(by_field["items"][0]["metadata"]["name"], "b");
  Json not_a = Get(std::string(kSlices) + "?labelSelector=tier!%3Dfront");
  ASSERT_EQ(not_a["items"].size(), 1u);
  EXPECT_EQ(not_a["items"][0]["metadata"]["name"], "b");
}

// A watch from a resourceVersion gets exactly the later changes, in order, with selector
// transitions as ADDED and DELETED.
TEST_F(ApiServerTest, WatchFromResourceVersion) {
  Json a = CallJson("POST", kSlices, Slice("a"), 201);
  HttpResponse response =
      Call("GET", std::string(kSlices) + "?watch=true&labelSelector=tier%3Dfront&resourceVersion=" +
                      a["metadata"]["resourceVersion"].get<std::string>());
  ASSERT_EQ(response.status, 200);
  ASSERT_NE(response.stream, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  response.stream->Start(sink);
  a["metadata"]["labels"]["tier"] = "front";
  a = CallJson("PUT", std::string(kSlices) + "/a", a, 200);
  a["endpoints"][0]["addresses"] = {"10.0.0.9"};
  a = CallJson("PUT", std::string(kSlices) + "/a", a, 200);
  a["metadata"]["labels"]["tier"] = "back";
  a = CallJson("PUT", std::string(kSlices) + "/a", a, 200);
  CallJson("DELETE", std::string(kSlices) + "/a", nullptr, 200);
  ASSERT_TRUE(Eventually([&] { return sink->Events().size() >= 3; }));
  std::vector<Json> events = sink->Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[1]["type"], "MODIFIED");
  EXPECT_EQ(events[2]["type"], "DELETED");
  EXPECT_EQ(events[2]["object"]["metadata"]["resourceVersion"], a["metadata"]["resourceVersion"]);
  response.stream->Stop();
}

// The Python client's "watch=True" is a watch (kube-apiserver's boolean query decoding), not a
// list.
TEST_F(ApiServerTest, WatchParameterAsPythonSendsIt) {
  Json a = CallJson("POST", kSlices, Slice("a"), 201);
  HttpResponse response = Call("GET", std::string(kSlices) + "?watch=True&resourceVersion=" +
                                          a["metadata"]["resourceVersion"].get<std::string>());
  ASSERT_EQ(response.status, 200);
  ASSERT_NE(response.stream, nullptr) << response.body;
  auto sink = std::make_shared<RecordingSink>();
  response.stream->Start(sink);
  CallJson("DELETE", std::string(kSlices) + "/a", nullptr, 200);
  ASSERT_TRUE(Eventually([&] { return !sink->Events().empty(); }));
  EXPECT_EQ(sink->Events()[0]["type"], "DELETED");
  response.stream->Stop();
}

// sendInitialEvents delivers the current state, then a bookmark marking its end.
TEST_F(ApiServerTest, WatchListSendsInitialEventsThenBookmark) {
  CallJson("POST", kSlices, Slice("a"), 201);
  CallJson("POST", kSlices, Slice("b"), 201);
  std::vector<Json> events = WatchListEvents(kSlices);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[1]["type"], "ADDED");
  EXPECT_EQ(events[2]["type"], "BOOKMARK");
  EXPECT_EQ(events[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
  EXPECT_EQ(events[2]["object"]["kind"], "EndpointSlice");
}

// Deleting an owner deletes its dependents in the background (Background propagation).
TEST_F(ApiServerTest, GarbageCollectsDependents) {
  Json service = CallJson("POST", kServices, Service("web"), 201);
  CallJson("POST", kSlices, Slice("web-1", service["metadata"]["uid"]), 201);
  CallJson("POST", kSlices, Slice("unowned"), 201);
  CallJson("DELETE", std::string(kServices) + "/web", nullptr, 200);
  EXPECT_TRUE(
      Eventually([&] { return Call("GET", std::string(kSlices) + "/web-1").status == 404; }));
  EXPECT_EQ(Call("GET", std::string(kSlices) + "/unowned").status, 200);
}

// A Foreground or Orphan delete answers with the object it marked, even when the background work
// finishes the deletion before the answer is written (it used to leak storage's "key ... not
// found" as a 404).
TEST_F(ApiServerTest, PropagationDeleteAnswersWithTheObject) {
  for (int i = 0; i < 40; ++i) {
    SCOPED_TRACE(i);
    const std::string name = "web" + std::to_string(i);
    Json service = CallJson("POST", kServices, Service(name), 201);
    Json slice = Slice(name + "-1", service["metadata"]["uid"]);
    slice["metadata"]["ownerReferences"][0]["name"] = name;
    CallJson("POST", kSlices, slice, 201);
    const char* policy = i % 2 == 0 ? "Orphan" : "Foreground";
    HttpResponse response =
        Call("DELETE", std::string(kServices) + "/" + name,
             Json{{"kind", "DeleteOptions"}, {"propagationPolicy", policy}}.dump());
    EXPECT_TRUE(response.status == 200 || response.status == 202) << response.body;
    Json answered = Json::parse(response.body);
    EXPECT_EQ(answered["metadata"]["name"], name);
    EXPECT_TRUE(answered["metadata"].contains("deletionTimestamp")) << response.body;
    EXPECT_TRUE(
        Eventually([&] { return Call("GET", std::string(kServices) + "/" + name).status == 404; }));
  }
}

// Orphan propagation keeps the dependents and drops their owner reference.
TEST_F(ApiServerTest, OrphanPropagationKeepsDependents) {
  Json service = CallJson("POST", kServices, Service("web"), 201);
  CallJson("POST", kSlices, Slice("web-1", service["metadata"]["uid"]), 201);
  CallJson("DELETE", std::string(kServices) + "/web",
           Json{{"kind", "DeleteOptions"}, {"propagationPolicy", "Orphan"}}, 202);
  EXPECT_TRUE(
      Eventually([&] { return Call("GET", std::string(kServices) + "/web").status == 404; }));
  Json slice = Get(std::string(kSlices) + "/web-1");
  EXPECT_FALSE(slice["metadata"].contains("ownerReferences"));
}

// Finalizers hold a deletion until they are removed.
TEST_F(ApiServerTest, FinalizersHoldDeletion) {
  Json slice = Slice("held");
  slice["metadata"]["finalizers"] = {"example.com/hold"};
  CallJson("POST", kSlices, slice, 201);
  Json deleting = CallJson("DELETE", std::string(kSlices) + "/held", nullptr, 202);
  EXPECT_TRUE(deleting["metadata"].contains("deletionTimestamp"));
  Json current = Get(std::string(kSlices) + "/held");
  current["metadata"].erase("finalizers");
  CallJson("PUT", std::string(kSlices) + "/held", current, 200);
  EXPECT_EQ(Call("GET", std::string(kSlices) + "/held").status, 404);
}

// Deleting a namespace empties it, then removes it; new content is refused meanwhile.
TEST_F(ApiServerTest, NamespaceDeletion) {
  CallJson("POST", "/api/v1/namespaces",
           Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "shop"}}}},
           201);
  CallJson("POST", "/api/v1/namespaces/shop/services", Service("web"), 201);
  Json deleting = CallJson("DELETE", "/api/v1/namespaces/shop", nullptr, 202);
  EXPECT_EQ(deleting["status"]["phase"], "Terminating");
  EXPECT_TRUE(Eventually([&] { return Call("GET", "/api/v1/namespaces/shop").status == 404; }));
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/shop/services/web").status, 404);
}

// While a namespace is being deleted (held here by a finalizer), a create in it is refused as
// kube-apiserver's NamespaceLifecycle refuses it: 403 with the NamespaceTerminating cause, which
// controllers recognise (they drop such a write instead of retrying it).
TEST_F(ApiServerTest, CreateInATerminatingNamespaceIsRefusedWithItsCause) {
  CallJson("POST", "/api/v1/namespaces",
           Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "going"}}}},
           201);
  Json held = Slice("held");
  held["metadata"]["namespace"] = "going";
  held["metadata"]["finalizers"] = {"example.com/hold"};
  CallJson("POST", "/apis/discovery.k8s.io/v1/namespaces/going/endpointslices", held, 201);
  CallJson("DELETE", "/api/v1/namespaces/going", nullptr, 202);
  const Json refused = CallJson("POST", "/api/v1/namespaces/going/services", Service("web"), 403);
  EXPECT_EQ(refused["reason"], "Forbidden");
  EXPECT_NE(refused["message"].get<std::string>().find(
                "unable to create new content in namespace going because it is being terminated"),
            std::string::npos)
      << refused.dump();
  ASSERT_TRUE(refused["details"].contains("causes")) << refused.dump();
  EXPECT_EQ(refused["details"]["causes"][0],
            (Json{{"reason", "NamespaceTerminating"},
                  {"message", "namespace going is being terminated"},
                  {"field", "metadata.namespace"}}));
  EXPECT_EQ(refused["details"]["kind"], "services") << refused.dump();
}

// A pod named "p" bound to n1, with `grace_seconds` of termination grace and, when given, one
// finalizer.
Json ScheduledPod(int grace_seconds, const std::string& finalizer = "") {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec",
               {{"nodeName", "n1"},
                {"terminationGracePeriodSeconds", grace_seconds},
                {"containers", {{{"name", "c"}, {"image", "nginx"}}}}}}};
  if (!finalizer.empty()) pod["metadata"]["finalizers"] = Json::array({finalizer});
  return pod;
}

// A scheduled pod terminates gracefully; gracePeriodSeconds=0 deletes at once.
TEST_F(ApiServerTest, PodGracefulDeletion) {
  Json pod = ScheduledPod(1);
  const std::string pods = "/api/v1/namespaces/default/pods";
  CallJson("POST", pods, pod, 201);
  const auto before = std::chrono::system_clock::now();
  Json terminating = CallJson("DELETE", pods + "/p", nullptr, 202);
  EXPECT_EQ(terminating["metadata"]["deletionGracePeriodSeconds"], 1);
  // The whole grace period: deletionTimestamp (whole seconds) is not before the request + 1 s.
  const auto deadline =
      model::ParseRfc3339(terminating["metadata"]["deletionTimestamp"].get<std::string>());
  ASSERT_TRUE(deadline.has_value());
  EXPECT_GE(
      deadline->unix_nanos,
      std::chrono::duration_cast<std::chrono::nanoseconds>(before.time_since_epoch()).count() +
          1'000'000'000);
  EXPECT_TRUE(Eventually([&] { return Call("GET", pods + "/p").status == 404; }));
  pod["metadata"]["name"] = "q";
  CallJson("POST", pods, pod, 201);
  CallJson("DELETE", pods + "/q?gracePeriodSeconds=0", nullptr, 200);
  EXPECT_EQ(Call("GET", pods + "/q").status, 404);
}

// A gracefully deleted pod stays until deleted with grace 0: updates, status updates included,
// only update it (the kubelet reports its containers stopping while the pod terminates).
TEST_F(ApiServerTest, TerminatingPodTakesUpdatesUntilDeletedWithoutGrace) {
  Json pod = ScheduledPod(300);
  const std::string pods = "/api/v1/namespaces/default/pods";
  CallJson("POST", pods, pod, 201);
  CallJson("DELETE", pods + "/p", nullptr, 202);

  Json current = Get(pods + "/p");
  current["status"]["conditions"] = {{{"type", "Ready"}, {"status", "False"}}};
  Json updated = CallJson("PUT", pods + "/p/status", current, 200);
  EXPECT_EQ(updated["status"]["conditions"][0]["status"], "False");
  CallJson("PATCH", pods + "/p", Json{{"metadata", {{"labels", {{"phase", "stopping"}}}}}}, 200,
           "application/merge-patch+json");

  Json stored = Get(pods + "/p");
  EXPECT_EQ(stored["status"]["conditions"][0]["status"], "False");
  EXPECT_EQ(stored["metadata"]["labels"]["phase"], "stopping");
  EXPECT_EQ(stored["metadata"]["deletionGracePeriodSeconds"], 300);

  CallJson("DELETE", pods + "/p?gracePeriodSeconds=0", nullptr, 200);
  EXPECT_EQ(Call("GET", pods + "/p").status, 404);
}

// A pod with a finalizer, deleted gracefully: removing the finalizer during the grace period
// leaves it terminating; the grace period's end (grace 0) then removes it.
TEST_F(ApiServerTest, PodFinalizerRemovedDuringGracePeriodWaitsForItsEnd) {
  Json pod = ScheduledPod(300, "example.com/hold");
  const std::string pods = "/api/v1/namespaces/default/pods";
  CallJson("POST", pods, pod, 201);
  CallJson("DELETE", pods + "/p", nullptr, 202);
  Json current = Get(pods + "/p");
  current["metadata"].erase("finalizers");
  CallJson("PUT", pods + "/p", current, 200);
  EXPECT_EQ(Get(pods + "/p")["metadata"]["deletionGracePeriodSeconds"], 300);
  CallJson("DELETE", pods + "/p?gracePeriodSeconds=0", nullptr, 200);
  EXPECT_EQ(Call("GET", pods + "/p").status, 404);
}

// A pod whose grace period ends with a finalizer left stays with deletionGracePeriodSeconds 0,
// and removing the finalizer then completes the deletion.
TEST_F(ApiServerTest, PodFinalizerRemovedAfterGracePeriodDeletes) {
  Json pod = ScheduledPod(1, "example.com/hold");
  const std::string pods = "/api/v1/namespaces/default/pods";
  CallJson("POST", pods, pod, 201);
  CallJson("DELETE", pods + "/p", nullptr, 202);
  ASSERT_TRUE(Eventually([&] {
    HttpResponse response = Call("GET", pods + "/p");
    return response.status == 200 &&
           Json::parse(response.body)["metadata"]["deletionGracePeriodSeconds"] == 0;
  }));
  Json current = Get(pods + "/p");
  current["metadata"].erase("finalizers");
  CallJson("PUT", pods + "/p", current, 200);
  EXPECT_EQ(Call("GET", pods + "/p").status, 404);
}

// A terminating namespace waits for every spec.finalizer, not only ours ("kubernetes").
TEST_F(ApiServerTest, NamespaceWaitsForForeignSpecFinalizers) {
  CallJson("POST", "/api/v1/namespaces",
           Json{{"apiVersion", "v1"},
                {"kind", "Namespace"},
                {"metadata", {{"name", "shop"}}},
                {"spec", {{"finalizers", {"kubernetes", "example.com/hold"}}}}},
           201);
  CallJson("DELETE", "/api/v1/namespaces/shop", nullptr, 202);
  ASSERT_TRUE(Eventually([&] {
    HttpResponse response = Call("GET", "/api/v1/namespaces/shop");
    return response.status == 200 &&
           Json::parse(response.body)["spec"]["finalizers"] == Json{"example.com/hold"};
  }));
  CallJson("PATCH", "/api/v1/namespaces/shop",
           Json{{"metadata", {{"labels", {{"state", "held"}}}}}}, 200,
           "application/merge-patch+json");
  EXPECT_EQ(Get("/api/v1/namespaces/shop")["metadata"]["labels"]["state"], "held");
}

// A CRD, once created, serves its resource; deleting it removes the resource and its objects.
TEST_F(ApiServerTest, CustomResourceDefinitions) {
  Json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "widgets.example.com"}}},
              {"spec",
               {{"group", "example.com"},
                {"scope", "Namespaced"},
                {"names", {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
                {"versions",
                 {{{"name", "v1"},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", Json::object()}}},
                   {"schema",
                    {{"openAPIV3Schema",
                      {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
  Json created =
      CallJson("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, 201);
  bool established = false;
  for (const Json& condition : created["status"]["conditions"]) {
    established =
        established || (condition["type"] == "Established" && condition["status"] == "True");
  }
  EXPECT_TRUE(established);
  const std::string widgets = "/apis/example.com/v1/namespaces/default/widgets";
  Json widget = {{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w"}}},
                 {"spec", {{"size", 1}}}};
  Json w = CallJson("POST", widgets, widget, 201);
  EXPECT_EQ(w["metadata"]["generation"], 1);
  HttpResponse smp = Call("PATCH", widgets + "/w", "{}", "application/strategic-merge-patch+json");
  EXPECT_EQ(smp.status, 415);
  Restart();  // the resource is served again from the stored CRD
  EXPECT_EQ(Get(widgets + "/w")["spec"]["size"], 1);
  CallJson("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
           nullptr, 200);
  EXPECT_EQ(Call("GET", widgets + "/w").status, 404);
}

// kubectl create sends built-in kinds as protobuf; they are stored as the equivalent JSON, and a
// protobuf body of a kind that is not built in is 415.
TEST_F(ApiServerTest, CreatesFromKubectlProtobufBodies) {
  auto read = [](const std::string& name) {
    const std::string path = std::string(SW_SOURCE_DIR) + "/testdata/apiserver/protobuf/" + name;
    // Sized read: istreambuf_iterator trips g++ 12's -Wnull-dereference at -O2 here.
    std::string data(std::filesystem::file_size(path), '\0');
    std::ifstream in(path, std::ios::binary);
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    return data;
  };
  HttpResponse created = Call("POST", "/api/v1/namespaces", read("namespace.pb"),
                              "application/vnd.kubernetes.protobuf");
  ASSERT_EQ(created.status, 201) << created.body;
  const Json ns = Json::parse(created.body);
  EXPECT_EQ(ns["kind"], "Namespace");
  EXPECT_EQ(
      Get("/api/v1/namespaces/" + ns["metadata"]["name"].get<std::string>())["status"]["phase"],
      "Active");
  // Every built-in kind decodes: kubectl create deployment --replicas=3.
  HttpResponse deployment =
      Call("POST", "/apis/apps/v1/namespaces/default/deployments", read("deployment_replicas.pb"),
           "application/vnd.kubernetes.protobuf");
  ASSERT_EQ(deployment.status, 201) << deployment.body;
  const Json stored = Get("/apis/apps/v1/namespaces/default/deployments/web");
  EXPECT_EQ(stored["spec"]["replicas"], 3);
  EXPECT_EQ(stored["spec"]["template"]["spec"]["containers"][0]["image"], "nginx");
  // A protobuf body of a kind that is not built in is 415.
  std::string custom = read("deployment.pb");
  custom.replace(custom.find("apps/v1"), 7, "zzzz/v1");
  HttpResponse widget = Call("POST", kServices, custom, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(widget.status, 415) << widget.body;
}

// A request body from testdata/apiserver/protobuf.
std::string ReadProtobufFixture(const std::string& name) {
  const std::string path = std::string(SW_SOURCE_DIR) + "/testdata/apiserver/protobuf/" + name;
  // Sized read: istreambuf_iterator trips g++ 12's -Wnull-dereference at -O2 here.
  std::string data(std::filesystem::file_size(path), '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  return data;
}

// kube-apiserver's SetDefaults_Service: a targetPort left unset is the port. client-go sends an
// unset targetPort as 0 (JSON and protobuf alike), so it must be defaulted, not refused as out
// of range; absent, null and "" are unset too. On create, update and every kind of patch; a set
// targetPort (a number or a name) is kept.
TEST_F(ApiServerTest, UnsetTargetPortDefaultsToThePort) {
  // The mcs-api conformance suite's Service, as client-go v0.32 sends it (captured).
  HttpResponse created = Call("POST", kServices, ReadProtobufFixture("service_client_go.pb"),
                              "application/vnd.kubernetes.protobuf");
  ASSERT_EQ(created.status, 201) << created.body;
  const Json from_client_go = Json::parse(created.body);
  for (const Json& port : from_client_go["spec"]["ports"]) {
    EXPECT_EQ(port["targetPort"], 42) << port;
  }
  const Json unset_spellings[] = {0, "", nullptr};
  int n = 0;
  for (const Json& unset : unset_spellings) {
    SCOPED_TRACE(unset.dump());
    const std::string name = "json" + std::to_string(n++);
    Json service = Service(name);
    service["spec"]["ports"] = {{{"name", "a"}, {"port", 80}, {"targetPort", unset}},
                                {{"name", "b"}, {"port", 81}, {"targetPort", 8081}},
                                {{"name", "c"}, {"port", 82}, {"targetPort", "http"}},
                                {{"name", "d"}, {"port", 83}}};
    Json stored = CallJson("POST", kServices, service, 201);
    EXPECT_EQ(stored["spec"]["ports"][0]["targetPort"], 80);
    EXPECT_EQ(stored["spec"]["ports"][1]["targetPort"], 8081);
    EXPECT_EQ(stored["spec"]["ports"][2]["targetPort"], "http");
    EXPECT_EQ(stored["spec"]["ports"][3]["targetPort"], 83);
    // Update: a new port with an unset targetPort.
    stored["spec"]["ports"].push_back({{"name", "e"}, {"port", 84}, {"targetPort", unset}});
    Json updated = CallJson("PUT", std::string(kServices) + "/" + name, stored, 200);
    EXPECT_EQ(updated["spec"]["ports"][4]["targetPort"], 84);
  }
  const std::string web = std::string(kServices) + "/hello";
  Json merge = {{"spec", {{"ports", {{{"name", "tcp"}, {"port", 43}, {"targetPort", 0}}}}}}};
  Json merged = CallJson("PATCH", web, merge, 200, "application/merge-patch+json");
  EXPECT_EQ(merged["spec"]["ports"], Json::parse(R"([{"name": "tcp", "port": 43,
      "protocol": "TCP", "targetPort": 43}])"));
  Json strategic = {
      {"spec",
       {{"ports", {{{"name", "udp"}, {"port", 44}, {"protocol", "UDP"}, {"targetPort", ""}}}}}}};
  Json merged_by_key =
      CallJson("PATCH", web, strategic, 200, "application/strategic-merge-patch+json");
  std::map<std::string, Json> target_ports;
  for (const Json& port : merged_by_key["spec"]["ports"]) {
    target_ports[port["name"]] = port["targetPort"];
  }
  EXPECT_EQ(target_ports, (std::map<std::string, Json>{{"tcp", 43}, {"udp", 44}}));
  Json json_patch =
      Json::array({{{"op", "replace"}, {"path", "/spec/ports/1/targetPort"}, {"value", 0}}});
  Json replaced = CallJson("PATCH", web, json_patch, 200, "application/json-patch+json");
  EXPECT_EQ(replaced["spec"]["ports"][1]["targetPort"], replaced["spec"]["ports"][1]["port"]);
  // A port that is out of range is still refused, and so is the targetPort defaulted from it.
  Json zero = Service("zero");
  zero["spec"]["ports"] = {{{"port", 0}, {"targetPort", 0}}};
  EXPECT_EQ(CallJson("POST", kServices, zero, 422)["message"],
            "Service \"zero\" is invalid: [spec.ports[0].port: Invalid value: 0: must be between "
            "1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 0: must be between 1 "
            "and 65535, inclusive]");
}

// client-go sends DeleteOptions as protobuf with every delete of a built-in kind; the server
// decodes every field (the deletes client-go sends are otherwise refused as invalid JSON).
TEST_F(ApiServerTest, DeletesWithProtobufDeleteOptions) {
  constexpr const char* kProtobuf = "application/vnd.kubernetes.protobuf";
  // The conformance suite's namespace delete, as client-go v0.32 sends it (captured).
  CallJson("POST", "/api/v1/namespaces", Json{{"metadata", {{"name", "demo"}}}}, 201);
  HttpResponse deleted = Call("DELETE", "/api/v1/namespaces/demo",
                              ReadProtobufFixture("delete_options_client_go.pb"), kProtobuf);
  ASSERT_TRUE(deleted.status == 200 || deleted.status == 202) << deleted.body;
  EXPECT_TRUE(Json::parse(deleted.body)["metadata"].contains("deletionTimestamp"));

  // Hand-made bodies: "k8s\0" + runtime.Unknown{typeMeta{v1, DeleteOptions}, raw}.
  const auto len = [](int number, const std::string& value) {
    return std::string(1, static_cast<char>(number << 3 | 2)) + static_cast<char>(value.size()) +
           value;
  };
  const auto options = [&](const std::string& raw) {
    return std::string("k8s\0", 4) + len(1, len(1, "v1") + len(2, "DeleteOptions")) + len(2, raw);
  };
  Json service = CallJson("POST", kServices, Service("web"), 201);
  const std::string web = std::string(kServices) + "/web";
  // Preconditions: a wrong uid or resourceVersion is a 409 and deletes nothing.
  HttpResponse wrong_uid = Call("DELETE", web, options(len(2, len(1, "not-the-uid"))), kProtobuf);
  EXPECT_EQ(wrong_uid.status, 409) << wrong_uid.body;
  EXPECT_NE(wrong_uid.body.find("Precondition failed: UID in precondition: not-the-uid"),
            std::string::npos)
      << wrong_uid.body;
  HttpResponse wrong_rv = Call("DELETE", web, options(len(2, len(2, "1"))), kProtobuf);
  EXPECT_EQ(wrong_rv.status, 409) << wrong_rv.body;
  // dryRun: answered, nothing deleted.
  HttpResponse dry = Call("DELETE", web, options(len(5, "All")), kProtobuf);
  EXPECT_EQ(dry.status, 200) << dry.body;
  Get(web);
  // Invalid options (upstream's validation) and bodies that do not decode delete nothing either.
  HttpResponse both =
      Call("DELETE", web, options(std::string("\x18\x01", 2) + len(4, "Orphan")), kProtobuf);
  EXPECT_EQ(both.status, 422) << both.body;
  const Json invalid = Json::parse(both.body);
  EXPECT_EQ(invalid["message"],
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: "
            "\"Orphan\": orphanDependents and deletionPropagation cannot be both set");
  // Named as kube-apiserver's errors.NewInvalid names them: group meta.k8s.io, no name.
  EXPECT_EQ(invalid["details"]["group"], "meta.k8s.io");
  EXPECT_EQ(invalid["details"]["kind"], "DeleteOptions");
  EXPECT_FALSE(invalid["details"].contains("name"));
  EXPECT_EQ(invalid["details"]["causes"].size(), 1u);
  HttpResponse garbage = Call("DELETE", web, options(len(1, "x")), kProtobuf);
  EXPECT_EQ(garbage.status, 400) << garbage.body;
  EXPECT_NE(garbage.body.find("field 1 (gracePeriodSeconds) of DeleteOptions has wire type 2"),
            std::string::npos)
      << garbage.body;
  HttpResponse cut = Call("DELETE", web, options(len(4, "Orphan")).substr(0, 29), kProtobuf);
  EXPECT_EQ(cut.status, 400) << cut.body;
  Get(web);
  // The right preconditions delete it.
  const std::string preconditions =
      len(1, service["metadata"]["uid"].get<std::string>()) +
      len(2, Get(web)["metadata"]["resourceVersion"].get<std::string>());
  HttpResponse matched = Call("DELETE", web, options(len(2, preconditions)), kProtobuf);
  EXPECT_EQ(matched.status, 200) << matched.body;
  Get(web, 404);

  // deletecollection reads the same body: a dry run deletes nothing, then a real one everything.
  CallJson("POST", kSlices, Slice("a"), 201);
  CallJson("POST", kSlices, Slice("b"), 201);
  HttpResponse dry_collection = Call("DELETE", kSlices, options(len(5, "All")), kProtobuf);
  EXPECT_EQ(dry_collection.status, 200) << dry_collection.body;
  EXPECT_EQ(Get(kSlices)["items"].size(), 2u);
  HttpResponse bad_collection = Call("DELETE", kSlices, options(len(4, "Sideways")), kProtobuf);
  EXPECT_EQ(bad_collection.status, 422) << bad_collection.body;
  EXPECT_EQ(Get(kSlices)["items"].size(), 2u);
  HttpResponse collection = Call("DELETE", kSlices, options(len(4, "Background")), kProtobuf);
  EXPECT_EQ(collection.status, 200) << collection.body;
  EXPECT_EQ(Get(kSlices)["items"].size(), 0u);
}

// dryRun=All validates and answers without storing.
TEST_F(ApiServerTest, DryRunStoresNothing) {
  Json answer = CallJson("POST", std::string(kSlices) + "?dryRun=All", Slice("dry"), 201);
  EXPECT_EQ(answer["metadata"]["name"], "dry");
  EXPECT_EQ(Call("GET", std::string(kSlices) + "/dry").status, 404);
  EXPECT_EQ(Call("POST", std::string(kSlices) + "?dryRun=Some", Slice("dry").dump()).status, 400);
}

// The deploy/ manifests' kinds (see deploy/): a Deployment with apps/v1's defaults and
// generation, a PodDisruptionBudget, and the RBAC kinds at their scopes, round-tripped.
TEST_F(ApiServerTest, DeployKindsRoundTrip) {
  const std::string deployments = "/apis/apps/v1/namespaces/kube-system/deployments";
  Json deployment = {{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"metadata", {{"name", "sw"}}},
                     {"spec",
                      {{"replicas", 2},
                       {"selector", {{"matchLabels", {{"app", "sw"}}}}},
                       {"template",
                        {{"metadata", {{"labels", {{"app", "sw"}}}}},
                         {"spec", {{"containers", {{{"name", "m"}, {"image", "sw:1"}}}}}}}}}}};
  Json created = CallJson("POST", deployments, deployment, 201);
  EXPECT_EQ(created["metadata"]["generation"], 1);
  EXPECT_EQ(created["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
  EXPECT_EQ(created["spec"]["revisionHistoryLimit"], 10);
  EXPECT_EQ(created["spec"]["template"]["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(created["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent");
  EXPECT_EQ(Get(deployments + "/sw"), created);
  EXPECT_EQ(Get("/apis/apps/v1/deployments")["items"].size(), 1u);
  // A strategic merge patch merges containers by name, and a spec change bumps the generation.
  Json patched = CallJson(
      "PATCH", deployments + "/sw",
      Json{{"spec",
            {{"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "sw:2"}}}}}}}}}}},
      200, "application/strategic-merge-patch+json");
  EXPECT_EQ(patched["spec"]["template"]["spec"]["containers"].size(), 1u);
  EXPECT_EQ(patched["spec"]["template"]["spec"]["containers"][0]["image"], "sw:2");
  EXPECT_EQ(patched["metadata"]["generation"], 2);
  // Status is written through the status subresource only.
  Json status_update = patched;
  status_update["status"] = {{"readyReplicas", 2}};
  EXPECT_EQ(CallJson("PUT", deployments + "/sw/status", status_update, 200)["status"],
            (Json{{"readyReplicas", 2}}));
  EXPECT_EQ(Get(deployments + "/sw")["metadata"]["generation"], 2);

  Json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "sw"}}},
              {"spec", {{"maxUnavailable", 1}, {"selector", {{"matchLabels", {{"app", "sw"}}}}}}}};
  const std::string pdbs = "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets";
  CallJson("POST", pdbs, pdb, 201);
  // PodDisruptionBudgetSpec.selector is patchStrategy "replace": a patch replaces it whole.
  Json replaced = CallJson("PATCH", pdbs + "/sw",
                           Json{{"spec", {{"selector", {{"matchLabels", {{"tier", "cp"}}}}}}}}, 200,
                           "application/strategic-merge-patch+json");
  EXPECT_EQ(replaced["spec"]["selector"], (Json{{"matchLabels", {{"tier", "cp"}}}}));
  EXPECT_EQ(replaced["spec"]["maxUnavailable"], 1);
  Json role = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRole"},
      {"metadata", {{"name", "sw"}}},
      {"rules", {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list"}}}}}};
  Json stored_role = CallJson("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role, 201);
  EXPECT_FALSE(stored_role["metadata"].contains("namespace"));
  Json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", "sw"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "sw"}}},
      {"subjects", {{{"kind", "ServiceAccount"}, {"name", "sw"}}}}};
  const std::string bindings =
      "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings";
  Json stored_binding = CallJson("POST", bindings, binding, 201);
  EXPECT_EQ(stored_binding["metadata"]["namespace"], "kube-system");
  // roleRef is immutable, as kube-apiserver's validation has it.
  stored_binding["roleRef"]["name"] = "other";
  Json status = CallJson("PUT", bindings + "/sw", stored_binding, 422);
  EXPECT_EQ(status["message"],
            "RoleBinding.rbac.authorization.k8s.io \"sw\" is invalid: roleRef: Invalid value: "
            "{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\","
            "\"name\":\"other\"}: cannot change roleRef");
  CallJson("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/sw", nullptr, 200);
  EXPECT_EQ(Call("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/sw").status, 404);
}

// apps/v1 ReplicaSets and StatefulSets: kube's defaults, the selector check with kube's
// messages, and the autoscaling/v1 Scale subresource `kubectl scale` reads and patches, which
// bumps the generation like any spec change.
TEST_F(ApiServerTest, WorkloadKindsDefaultValidateAndScale) {
  const Json tmpl = {{"metadata", {{"labels", {{"app", "db"}}}}},
                     {"spec", {{"containers", {{{"name", "m"}, {"image", "pg"}}}}}}};
  const std::string statefulsets = "/apis/apps/v1/namespaces/default/statefulsets";
  Json sts = {{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata", {{"name", "db"}}},
              {"spec",
               {{"serviceName", "db"},
                {"selector", {{"matchLabels", {{"app", "db"}}}}},
                {"template", tmpl}}}};
  Json created = CallJson("POST", statefulsets, sts, 201);
  EXPECT_EQ(created["spec"]["replicas"], 1);
  EXPECT_EQ(created["spec"]["revisionHistoryLimit"], 10);
  EXPECT_EQ(created["spec"]["podManagementPolicy"], "OrderedReady");
  EXPECT_EQ(created["spec"]["updateStrategy"],
            (Json{{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 0}}}}));
  EXPECT_EQ(created["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(created["metadata"]["generation"], 1);

  // GET, merge PATCH (what `kubectl scale` sends) and PUT of the Scale.
  Json scale = CallJson("GET", statefulsets + "/db/scale", nullptr, 200);
  EXPECT_EQ(scale["kind"], "Scale");
  EXPECT_EQ(scale["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(scale["spec"]["replicas"], 1);
  EXPECT_EQ(scale["status"], (Json{{"replicas", 0}, {"selector", "app=db"}}));
  scale = CallJson("PATCH", statefulsets + "/db/scale", Json{{"spec", {{"replicas", 3}}}}, 200,
                   "application/merge-patch+json");
  EXPECT_EQ(scale["spec"]["replicas"], 3);
  Json stored = Get(statefulsets + "/db");
  EXPECT_EQ(stored["spec"]["replicas"], 3);
  EXPECT_EQ(stored["metadata"]["generation"], 2);
  scale["spec"]["replicas"] = 2;
  EXPECT_EQ(CallJson("PUT", statefulsets + "/db/scale", scale, 200)["spec"]["replicas"], 2);
  // A stale resourceVersion conflicts; a negative count is invalid, naming the field.
  scale["spec"]["replicas"] = 5;
  EXPECT_EQ(CallJson("PUT", statefulsets + "/db/scale", scale, 409)["reason"], "Conflict");
  Json negative = CallJson("PATCH", statefulsets + "/db/scale", Json{{"spec", {{"replicas", -1}}}},
                           422, "application/merge-patch+json");
  EXPECT_EQ(negative["message"],
            "Scale.autoscaling \"db\" is invalid: spec.replicas: Invalid value: -1: must be "
            "greater than or equal to 0");
  EXPECT_EQ(Call("GET", statefulsets + "/nope/scale").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/pods/p/scale").status, 404);

  const std::string replicasets = "/apis/apps/v1/namespaces/default/replicasets";
  Json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "web"}}},
             {"spec", {{"selector", {{"matchLabels", {{"app", "db"}}}}}, {"template", tmpl}}}};
  EXPECT_EQ(CallJson("POST", replicasets, rs, 201)["spec"]["replicas"], 1);
  EXPECT_EQ(CallJson("GET", replicasets + "/web/scale", nullptr, 200)["spec"]["replicas"], 1);

  sts["metadata"]["name"] = "bad";
  sts["spec"]["selector"] = Json::object();
  EXPECT_EQ(CallJson("POST", statefulsets, sts, 422)["message"],
            "StatefulSet.apps \"bad\" is invalid: spec.selector: Invalid value: {}: empty "
            "selector is invalid for statefulset");
  sts["spec"]["selector"] = {{"matchLabels", {{"app", "other"}}}};
  EXPECT_EQ(CallJson("POST", statefulsets, sts, 422)["message"],
            "StatefulSet.apps \"bad\" is invalid: spec.template.metadata.labels: Invalid value: "
            "{\"app\":\"db\"}: `selector` does not match template `labels`");
}

// A namespaced deploy/ kind in a namespace that does not exist is NotFound, dry run included
// (kube-apiserver's NamespaceLifecycle admission), and nothing is stored.
TEST_F(ApiServerTest, DeployKindsNeedTheirNamespace) {
  Json role = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "Role"},
      {"metadata", {{"name", "leases"}}},
      {"rules",
       {{{"apiGroups", {"coordination.k8s.io"}}, {"resources", {"leases"}}, {"verbs", {"get"}}}}}};
  for (const char* query : {"", "?dryRun=All"}) {
    SCOPED_TRACE(query);
    Json status = CallJson(
        "POST", std::string("/apis/rbac.authorization.k8s.io/v1/namespaces/nope/roles") + query,
        role, 404);
    EXPECT_EQ(status["reason"], "NotFound");
    EXPECT_EQ(status["message"], "namespaces \"nope\" not found");
  }
  CallJson("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles?dryRun=All",
           role, 201);
  EXPECT_EQ(Get("/apis/rbac.authorization.k8s.io/v1/roles")["items"].size(), 0u);
}

// Manifest mistakes the deploy/ kinds' validation refuses with kube-apiserver's messages.
TEST_F(ApiServerTest, DeployKindsValidation) {
  struct Case {
    std::string name;
    std::string path;
    Json object;
    std::string message;
  };
  const Json pod_template = {{"metadata", {{"labels", {{"app", "other"}}}}},
                             {"spec", {{"containers", {{{"name", "m"}}}}}}};
  const Case cases[] = {
      {"deployment selector and template",
       "/apis/apps/v1/namespaces/default/deployments",
       {{"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", "d"}}},
        {"spec", {{"selector", {{"matchLabels", {{"app", "sw"}}}}}, {"template", pod_template}}}},
       "Deployment.apps \"d\" is invalid: [spec.template.metadata.labels: Invalid value: "
       "{\"app\":\"other\"}: `selector` does not match template `labels`, "
       "spec.template.spec.containers[0].image: Required value]"},
      {"deployment without selector",
       "/apis/apps/v1/namespaces/default/deployments",
       {{"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", "d"}}},
        {"spec",
         {{"replicas", -1},
          {"template", {{"spec", {{"containers", {{{"name", "m"}, {"image", "i"}}}}}}}}}}},
       "Deployment.apps \"d\" is invalid: [spec.replicas: Invalid value: -1: must be greater than "
       "or equal to 0, spec.selector: Required value]"},
      {"pdb with both budgets",
       "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
       {{"apiVersion", "policy/v1"},
        {"kind", "PodDisruptionBudget"},
        {"metadata", {{"name", "p"}}},
        {"spec", {{"minAvailable", "150%"}, {"maxUnavailable", 1}}}},
       "PodDisruptionBudget.policy \"p\" is invalid: [spec.minAvailable: Invalid value: "
       "\"150%\": must not be greater than 100%, spec: Invalid value: "
       "{\"maxUnavailable\":1,\"minAvailable\":\"150%\"}: minAvailable and maxUnavailable "
       "cannot be both set]"},
      {"cluster role rule without verbs",
       "/apis/rbac.authorization.k8s.io/v1/clusterroles",
       {{"apiVersion", "rbac.authorization.k8s.io/v1"},
        {"kind", "ClusterRole"},
        {"metadata", {{"name", "r"}}},
        {"rules", {{{"resources", {"pods"}}}}}},
       "ClusterRole.rbac.authorization.k8s.io \"r\" is invalid: [rules[0].verbs: Required value: "
       "verbs must contain at least one value, rules[0].apiGroups: Required value: resource "
       "rules must supply at least one api group]"},
      {"cluster role binding to a Role",
       "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
       {{"apiVersion", "rbac.authorization.k8s.io/v1"},
        {"kind", "ClusterRoleBinding"},
        {"metadata", {{"name", "b"}}},
        {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "r"}}},
        {"subjects", {{{"kind", "ServiceAccount"}, {"name", "sa"}}}}},
       "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: [roleRef.kind: Unsupported "
       "value: \"Role\": supported values: \"ClusterRole\", subjects[0].namespace: Required "
       "value]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json status = CallJson("POST", c.path, c.object, 422);
    EXPECT_EQ(status["reason"], "Invalid");
    EXPECT_EQ(status["message"], c.message);
  }
}

const char* kCoreEvents = "/api/v1/namespaces/default/events";
const char* kEventsV1 = "/apis/events.k8s.io/v1/namespaces/default/events";

Json CoreEvent(const std::string& name, const std::string& pod) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}}},
          {"involvedObject", {{"kind", "Pod"}, {"name", pod}, {"namespace", "default"}}},
          {"reason", "Started"},
          {"message", "started " + pod},
          {"source", {{"component", "kubelet"}}},
          {"count", 2},
          {"type", "Normal"},
          {"reportingComponent", "kubelet"},
          {"reportingInstance", "node-1"}};
}

Json EventV1(const std::string& name, const std::string& pod) {
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}}},
          {"eventTime", "2024-01-01T00:00:00.000000Z"},
          {"regarding", {{"kind", "Pod"}, {"name", pod}, {"namespace", "default"}}},
          {"reason", "Scheduled"},
          {"note", "assigned " + pod},
          {"type", "Normal"},
          {"action", "Binding"},
          {"reportingController", "default-scheduler"},
          {"reportingInstance", "scheduler-1"}};
}

// An Event created through events.k8s.io/v1 is a core Event (kube-apiserver's one storage), with
// the same uid and resourceVersion, each API showing its own field names.
TEST_F(ApiServerTest, EventsV1CreateIsSeenThroughCore) {
  Json created = CallJson("POST", kEventsV1, EventV1("sched", "web"), 201);
  EXPECT_EQ(created["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(created["note"], "assigned web");
  EXPECT_EQ(created["regarding"]["name"], "web");
  EXPECT_FALSE(created.contains("message"));
  Json core = Get(std::string(kCoreEvents) + "/sched");
  EXPECT_EQ(core["apiVersion"], "v1");
  EXPECT_EQ(core["kind"], "Event");
  EXPECT_EQ(core["involvedObject"]["name"], "web");
  EXPECT_EQ(core["message"], "assigned web");
  EXPECT_EQ(core["reportingComponent"], "default-scheduler");
  EXPECT_EQ(core["reportingInstance"], "scheduler-1");
  EXPECT_EQ(core["action"], "Binding");
  EXPECT_EQ(core["eventTime"], "2024-01-01T00:00:00.000000Z");
  EXPECT_EQ(core["metadata"]["uid"], created["metadata"]["uid"]);
  EXPECT_EQ(core["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
  Json list = Get(kCoreEvents);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0], core);
  EXPECT_EQ(Get(std::string(kEventsV1) + "/sched"), created);
  // One object, so a second create of the name through the other API conflicts.
  CallJson("POST", kCoreEvents, CoreEvent("sched", "web"), 409);
}

// A core Event is listed through events.k8s.io/v1 in that API's shape.
TEST_F(ApiServerTest, CoreEventIsSeenThroughEventsV1) {
  Json created = CallJson("POST", kCoreEvents, CoreEvent("kubelet.1", "web"), 201);
  Json list = Get(kEventsV1);
  EXPECT_EQ(list["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(list["kind"], "EventList");
  ASSERT_EQ(list["items"].size(), 1u);
  const Json& item = list["items"][0];
  EXPECT_EQ(item["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(item["regarding"]["name"], "web");
  EXPECT_EQ(item["note"], "started web");
  EXPECT_EQ(item["deprecatedSource"]["component"], "kubelet");
  EXPECT_EQ(item["deprecatedCount"], 2);
  EXPECT_EQ(item["reportingController"], "kubelet");
  EXPECT_FALSE(item.contains("involvedObject"));
  EXPECT_EQ(item["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
  EXPECT_EQ(Get(std::string(kEventsV1) + "/kubelet.1"), item);
}

// Each API's field selectors work on Events written through either API.
TEST_F(ApiServerTest, EventFieldSelectorsWorkThroughBothApis) {
  CallJson("POST", kEventsV1, EventV1("a", "pod-a"), 201);
  CallJson("POST", kCoreEvents, CoreEvent("b", "pod-b"), 201);
  struct Case {
    std::string_view path;
    std::string_view selector;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {kCoreEvents, "involvedObject.name%3Dpod-a", {"a"}},
      {kCoreEvents, "involvedObject.name%3Dpod-b", {"b"}},
      {kCoreEvents, "reportingComponent%3Ddefault-scheduler", {"a"}},
      {kCoreEvents, "reason%3DStarted,type%3DNormal", {"b"}},
      {kEventsV1, "regarding.name%3Dpod-b", {"b"}},
      {kEventsV1, "regarding.name!%3Dpod-b", {"a"}},
      {kEventsV1, "regarding.kind%3DPod", {"a", "b"}},
      {kEventsV1, "reportingController%3Dkubelet", {"b"}},
      {kEventsV1, "reason%3DScheduled", {"a"}},
      // "source" is the source component, or the reporting controller without one.
      {kCoreEvents, "source%3Dkubelet", {"b"}},
      {kCoreEvents, "source%3Ddefault-scheduler", {"a"}},
      {kEventsV1, "source%3Ddefault-scheduler", {"a"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.path) + "?" + std::string(c.selector));
    Json list = Get(std::string(c.path) + "?fieldSelector=" + std::string(c.selector));
    std::vector<std::string> names;
    for (const Json& item : list["items"]) {
      names.push_back(item["metadata"]["name"]);
    }
    EXPECT_EQ(names, c.want);
  }
  // Tables through events.k8s.io/v1 print Events written through core, and a deletecollection
  // selects with its own labels.
  HttpResponse table =
      Call("GET", std::string(kEventsV1) + "?fieldSelector=regarding.name%3Dpod-b", "",
           "application/json", {{"accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}});
  ASSERT_EQ(table.status, 200) << table.body;
  Json rows = Json::parse(table.body)["rows"];
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["cells"][3], "pod/pod-b");
  EXPECT_EQ(rows[0]["cells"][6], "started pod-b");
  Json removed = CallJson(
      "DELETE", std::string(kEventsV1) + "?fieldSelector=regarding.name%3Dpod-a", nullptr, 200);
  ASSERT_EQ(removed["items"].size(), 1u);
  EXPECT_EQ(removed["items"][0]["note"], "assigned pod-a");
  Get(std::string(kCoreEvents) + "/a", 404);
  Get(std::string(kCoreEvents) + "/b");
  // Each API accepts only its own labels, as kube-apiserver does.
  Json status = Get(std::string(kEventsV1) + "?fieldSelector=involvedObject.name%3Dpod-a", 400);
  EXPECT_EQ(status["message"], "field label not supported: involvedObject.name");
  Get(std::string(kCoreEvents) + "?fieldSelector=regarding.name%3Dpod-a", 400);
}

// Update and patches through events.k8s.io/v1 apply to its shape; delete through core removes
// the Event from both.
TEST_F(ApiServerTest, EventsV1UpdatePatchAndCoreDelete) {
  Json created = CallJson("POST", kEventsV1, EventV1("e", "web"), 201);
  Json merged = CallJson("PATCH", std::string(kEventsV1) + "/e",
                         Json{{"note", "patched"}, {"deprecatedCount", 5}}, 200,
                         "application/merge-patch+json");
  EXPECT_EQ(merged["note"], "patched");
  EXPECT_EQ(merged["deprecatedCount"], 5);
  Json json_patched =
      CallJson("PATCH", std::string(kEventsV1) + "/e",
               Json::array({{{"op", "replace"}, {"path", "/regarding/name"}, {"value", "web-2"}}}),
               200, "application/json-patch+json");
  EXPECT_EQ(json_patched["regarding"]["name"], "web-2");
  Json strategic =
      CallJson("PATCH", std::string(kEventsV1) + "/e", Json{{"series", {{"count", 2}}}}, 200,
               "application/strategic-merge-patch+json");
  EXPECT_EQ(strategic["series"]["count"], 2);
  Json core = Get(std::string(kCoreEvents) + "/e");
  EXPECT_EQ(core["message"], "patched");
  EXPECT_EQ(core["count"], 5);
  EXPECT_EQ(core["involvedObject"]["name"], "web-2");
  EXPECT_EQ(core["series"]["count"], 2);
  EXPECT_EQ(core["metadata"]["uid"], created["metadata"]["uid"]);

  Json update = strategic;
  update["type"] = "Warning";
  Json updated = CallJson("PUT", std::string(kEventsV1) + "/e", update, 200);
  EXPECT_EQ(updated["type"], "Warning");
  EXPECT_EQ(Get(std::string(kCoreEvents) + "/e")["type"], "Warning");
  // A body of the other API's version is refused by the endpoint, not converted.
  Json wrong = CallJson("PUT", std::string(kEventsV1) + "/e", core, 400);
  EXPECT_EQ(wrong["message"],
            "the API version in the data (v1) does not match the expected API version "
            "(events.k8s.io/v1)");
  // A stale resourceVersion through either API is a conflict on the one object.
  update["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"];
  CallJson("PUT", std::string(kEventsV1) + "/e", update, 409);

  // A completed deletion answers with a Status naming what went (kube's finalizeDelete).
  Json deleted = CallJson("DELETE", std::string(kCoreEvents) + "/e", nullptr, 200);
  EXPECT_EQ(deleted["kind"], "Status");
  EXPECT_EQ(deleted["status"], "Success");
  EXPECT_EQ(deleted["details"],
            (Json{{"name", "e"}, {"kind", "events"}, {"uid", created["metadata"]["uid"]}}));
  EXPECT_EQ(Get(std::string(kEventsV1) + "/e", 404)["message"],
            "events.events.k8s.io \"e\" not found");
  EXPECT_EQ(CallJson("DELETE", std::string(kEventsV1) + "/e", nullptr, 404)["message"],
            "events.events.k8s.io \"e\" not found");
  EXPECT_EQ(CallJson("PATCH", std::string(kEventsV1) + "/e", Json::object(), 404,
                     "application/merge-patch+json")["message"],
            "events.events.k8s.io \"e\" not found");
  EXPECT_EQ(Get(std::string(kCoreEvents) + "/e", 404)["message"], "events \"e\" not found");
  EXPECT_TRUE(Get(kEventsV1)["items"].empty());
  // And the other way round: delete through events.k8s.io/v1 names its group.
  CallJson("POST", kCoreEvents, CoreEvent("f", "web"), 201);
  Json gone = CallJson("DELETE", std::string(kEventsV1) + "/f", nullptr, 200);
  EXPECT_EQ(gone["details"]["group"], "events.k8s.io");
  EXPECT_EQ(gone["details"]["kind"], "events");
  Get(std::string(kCoreEvents) + "/f", 404);
}

// A watch through either API sees writes through the other, in its own shape, with the store's
// resourceVersions; bookmarks name the watched API.
TEST_F(ApiServerTest, EventWatchesSeeWritesThroughTheOtherApi) {
  const std::string from = Get(kCoreEvents)["metadata"]["resourceVersion"];
  auto watch = [&](const char* path, const std::string& query) {
    HttpResponse response =
        Call("GET", std::string(path) + "?watch=true&resourceVersion=" + from + query);
    EXPECT_EQ(response.status, 200) << response.body;
    auto sink = std::make_shared<RecordingSink>();
    response.stream->Start(sink);
    return std::make_pair(response.stream, sink);
  };
  auto [v1_stream, v1_sink] = watch(kEventsV1, "&fieldSelector=regarding.name%3Dweb");
  auto [core_stream, core_sink] = watch(kCoreEvents, "");
  Json created = CallJson("POST", kCoreEvents, CoreEvent("w", "web"), 201);
  Json patched = CallJson("PATCH", std::string(kEventsV1) + "/w", Json{{"note", "again"}}, 200,
                          "application/merge-patch+json");
  CallJson("DELETE", std::string(kCoreEvents) + "/w", nullptr, 200);
  // Init-captures: clang 14 cannot capture a structured binding.
  ASSERT_TRUE(Eventually([sink = v1_sink] { return sink->Events().size() >= 3; }));
  ASSERT_TRUE(Eventually([sink = core_sink] { return sink->Events().size() >= 3; }));
  std::vector<Json> v1 = v1_sink->Events();
  std::vector<Json> core = core_sink->Events();
  ASSERT_EQ(v1.size(), 3u);
  ASSERT_EQ(core.size(), 3u);
  const std::vector<std::string> types = {"ADDED", "MODIFIED", "DELETED"};
  // (The DELETED event carries the deletion's revision; the delete answers with a Status.)
  const std::vector<Json> answers = {created, patched};
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(v1[i]["type"], types[i]);
    EXPECT_EQ(core[i]["type"], types[i]);
    EXPECT_EQ(v1[i]["object"]["apiVersion"], "events.k8s.io/v1");
    EXPECT_EQ(core[i]["object"]["apiVersion"], "v1");
    EXPECT_EQ(v1[i]["object"]["regarding"]["name"], "web");
    EXPECT_EQ(core[i]["object"]["involvedObject"]["name"], "web");
    if (i < answers.size()) {
      EXPECT_EQ(v1[i]["object"]["metadata"]["resourceVersion"],
                answers[i]["metadata"]["resourceVersion"]);
      EXPECT_EQ(core[i]["object"]["metadata"]["resourceVersion"],
                answers[i]["metadata"]["resourceVersion"]);
    }
  }
  EXPECT_EQ(v1[1]["object"]["note"], "again");
  EXPECT_EQ(core[1]["object"]["message"], "again");
  v1_stream->Stop();
  core_stream->Stop();

  // Watch-list through events.k8s.io/v1: initial state converted, then its own bookmark.
  CallJson("POST", kCoreEvents, CoreEvent("x", "web"), 201);
  std::vector<Json> events = WatchListEvents(std::string(kEventsV1));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["object"]["note"], "started web");
  EXPECT_EQ(events[1]["type"], "BOOKMARK");
  EXPECT_EQ(events[1]["object"]["apiVersion"], "events.k8s.io/v1");
}

// events.k8s.io/v1 Events an older data dir stored apart move into the core store on start,
// keeping uid and content; unreadable rows stay where they are and other data is untouched.
TEST_F(ApiServerTest, LegacyEventsV1RowsMoveToTheCoreStore) {
  CallJson("POST", kServices, Service("web"), 201);
  auto write = [&](const std::string& key, std::string json) {
    auto render = [json = std::move(json)](std::int64_t) -> Result<RecordPtr> {
      auto record = std::make_shared<ObjectRecord>();
      record->json = json;
      return RecordPtr(std::move(record));
    };
    Result<std::int64_t> written = server_->storage().Create(key, render);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  };
  Json old = EventV1("old", "web");
  old["metadata"] = {{"name", "old"},
                     {"namespace", "default"},
                     {"uid", "uid-old"},
                     {"resourceVersion", "1"},
                     {"creationTimestamp", "2024-01-01T00:00:00Z"}};
  write("/registry/events.k8s.io/events/default/old", old.dump());
  write("/registry/events.k8s.io/events/default/broken", "not json");
  write("/registry/events.k8s.io/events/default/nameless", R"({"metadata":{"namespace":"x"}})");
  Restart();
  Json core = Get(std::string(kCoreEvents) + "/old");
  EXPECT_EQ(core["metadata"]["uid"], "uid-old");
  EXPECT_EQ(core["message"], "assigned web");
  EXPECT_EQ(core["involvedObject"]["name"], "web");
  Json v1 = Get(std::string(kEventsV1) + "/old");
  EXPECT_EQ(v1["note"], "assigned web");
  EXPECT_EQ(v1["metadata"]["resourceVersion"], core["metadata"]["resourceVersion"]);
  ASSERT_EQ(Get(kEventsV1)["items"].size(), 1u);
  EXPECT_EQ(server_->storage().Get("/registry/events.k8s.io/events/default/old").status().code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(server_->storage().Get("/registry/events.k8s.io/events/default/broken").ok());
  EXPECT_TRUE(server_->storage().Get("/registry/events.k8s.io/events/default/nameless").ok());
  Get(std::string(kServices) + "/web");
  // A second start finds nothing more to move.
  Restart();
  EXPECT_EQ(Get(std::string(kCoreEvents) + "/old")["metadata"]["resourceVersion"],
            core["metadata"]["resourceVersion"]);
}

// A namespace left terminating by a stopped server is finished by the next one: its start-up
// scan finds the deletionTimestamp in the stored object. The object is written to the database
// while no server runs, so only the start-up scan can be what finishes it (a running server's
// background work would race the check).
TEST_F(ApiServerTest, StartupFinishesANamespaceLeftTerminating) {
  const std::string key = "/registry/core/namespaces/left";
  const Json terminating = {{"apiVersion", "v1"},
                            {"kind", "Namespace"},
                            {"metadata",
                             {{"name", "left"},
                              {"uid", "uid-left"},
                              {"creationTimestamp", "2024-01-01T00:00:00Z"},
                              {"deletionTimestamp", "2024-01-02T00:00:00Z"}}},
                            {"spec", {{"finalizers", {"kubernetes"}}}},
                            {"status", {{"phase", "Terminating"}}}};
  auto render = [json = terminating.dump()](std::int64_t) -> Result<RecordPtr> {
    auto record = std::make_shared<ObjectRecord>();
    record->json = json;
    return RecordPtr(std::move(record));
  };
  server_->Stop();
  server_.reset();
  {
    SqliteStorageOptions options;
    options.path = dir_ + "/state.db";
    Result<std::unique_ptr<SqliteStorage>> storage = SqliteStorage::Open(options);
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    ASSERT_TRUE((*storage)->Create(key, render).ok());
    Result<StoredObject> stored = (*storage)->Get(key);
    ASSERT_TRUE(stored.ok());
    EXPECT_NE(stored->record->json.find("Terminating"), std::string::npos);
  }
  Open();
  EXPECT_TRUE(Eventually([&] { return Call("GET", "/api/v1/namespaces/left").status == 404; }));
}

// Discovery documents and the health endpoints answer.
TEST_F(ApiServerTest, DiscoveryAndHealth) {
  EXPECT_EQ(Call("GET", "/healthz").body, "ok");
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
  EXPECT_EQ(Get("/version")["major"], "1");
  Json core = Get("/api/v1");
  bool has_pods_status = false;
  for (const Json& resource : core["resources"]) {
    has_pods_status = has_pods_status || resource["name"] == "pods/status";
  }
  EXPECT_TRUE(has_pods_status);
  EXPECT_EQ(Get("/apis/discovery.k8s.io/v1")["groupVersion"], "discovery.k8s.io/v1");
  EXPECT_EQ(Call("GET", "/openapi/v3").status, 200);
}

// The listen address parser and the loopback rule.
TEST(ServeTest, ParsesListenAddresses) {
  auto v4 = ParseListenAddress("127.0.0.1:6443");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->first, "127.0.0.1");
  EXPECT_EQ(v4->second, 6443);
  auto v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->first, "::1");
  EXPECT_EQ(ParseListenAddress("127.0.0.1").status().message(),
            "--listen \"127.0.0.1\": want HOST:PORT or [IPv6]:PORT");
  EXPECT_EQ(ParseListenAddress("127.0.0.1:99999").status().message(),
            "--listen \"127.0.0.1:99999\": invalid port \"99999\"");
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.5"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  ServeOptions options;
  options.listen = "0.0.0.0:0";
  options.data_dir = "/tmp/unused";
  EXPECT_EQ(RunningApiServer::Start(options).status().message(),
            "--listen 0.0.0.0:0: refusing to serve a non-loopback address without --token");
}

}  // namespace
}  // namespace slicewright::apiserver
