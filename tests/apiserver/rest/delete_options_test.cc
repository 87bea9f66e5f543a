#include "apiserver/rest/delete_options.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/base/status.h"

namespace slicewright::apiserver {
namespace {

constexpr std::string_view kProtobuf = "application/vnd.kubernetes.protobuf";

// A minimal protobuf writer for DeleteOptions bodies.
std::string Varint(std::uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
  return out;
}
std::string Len(std::uint32_t number, std::string_view value) {
  return Varint((std::uint64_t{number} << 3) | 2) + Varint(value.size()) + std::string(value);
}
std::string Var(std::uint32_t number, std::uint64_t value) {
  return Varint(std::uint64_t{number} << 3) + Varint(value);
}
// "k8s\0" + runtime.Unknown{typeMeta{apiVersion, DeleteOptions}, raw}.
std::string ProtobufOptions(std::string_view api_version, std::string_view raw) {
  return std::string("k8s\0", 4) + Len(1, Len(1, api_version) + Len(2, "DeleteOptions")) +
         Len(2, raw);
}

HttpRequest Delete(std::string body, std::string_view content_type = "application/json",
                   std::vector<std::pair<std::string, std::string>> query = {}) {
  HttpRequest request;
  request.method = "DELETE";
  request.path = "/api/v1/namespaces/demo";
  request.query = std::move(query);
  if (!body.empty()) {
    request.headers.emplace_back("content-type", std::string(content_type));
  }
  request.body = std::move(body);
  return request;
}

void ExpectRefused(const Result<DeleteOptions>& got, StatusCode code, std::string_view message) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), code) << got.status().ToString();
  EXPECT_NE(got.status().message().find(message), std::string_view::npos)
      << "message: " << got.status().message() << "\nwant:    " << message;
}

// What client-go v0.32 sends with every delete of a built-in kind (the mcs-api conformance
// suite's namespace delete, captured): a protobuf v1 DeleteOptions with nothing set.
TEST(DeleteOptionsTest, ClientGoProtobufBodyIsNoOptions) {
  const std::string path =
      std::string(SW_SOURCE_DIR) + "/testdata/apiserver/protobuf/delete_options_client_go.pb";
  std::string body(std::filesystem::file_size(path), '\0');
  std::ifstream(path, std::ios::binary)
      .read(body.data(), static_cast<std::streamsize>(body.size()));
  Result<DeleteOptions> got = DeleteOptionsFromRequest(Delete(body, kProtobuf));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(got->grace_period_seconds.has_value());
  EXPECT_EQ(got->propagation_policy, "");
  EXPECT_EQ(got->precondition_uid, "");
  EXPECT_EQ(got->precondition_resource_version, "");
  EXPECT_FALSE(got->dry_run);
  // Without the protobuf content type the same bytes are refused as JSON, naming the body.
  ExpectRefused(DeleteOptionsFromRequest(Delete(body)), StatusCode::kBadRequest,
                "DeleteOptions: invalid JSON");
}

// Every field, from a protobuf body and from the equivalent JSON body: the same options.
TEST(DeleteOptionsTest, ReadsEveryFieldFromProtobufAndJson) {
  const std::string raw =
      Var(1, 7) + Len(2, Len(1, "uid-1") + Len(2, "42")) + Len(4, "Foreground") + Len(5, "All");
  const std::string json = R"({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
      "gracePeriodSeconds": 7, "preconditions": {"uid": "uid-1", "resourceVersion": "42"},
      "propagationPolicy": "Foreground", "dryRun": ["All"]})";
  for (const HttpRequest& request :
       {Delete(ProtobufOptions("v1", raw), kProtobuf),
        Delete(ProtobufOptions("apps/v1", raw), "application/vnd.kubernetes.protobuf; x=y"),
        Delete(json)}) {
    SCOPED_TRACE(request.Header("content-type"));
    Result<DeleteOptions> got = DeleteOptionsFromRequest(request);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->grace_period_seconds, 7);
    EXPECT_EQ(got->precondition_uid, "uid-1");
    EXPECT_EQ(got->precondition_resource_version, "42");
    EXPECT_EQ(got->propagation_policy, "Foreground");
    EXPECT_TRUE(got->dry_run);
  }
  // orphanDependents: true is the Orphan policy; false is the default.
  Result<DeleteOptions> orphan =
      DeleteOptionsFromRequest(Delete(ProtobufOptions("v1", Var(3, 1)), kProtobuf));
  ASSERT_TRUE(orphan.ok()) << orphan.status().ToString();
  EXPECT_EQ(orphan->propagation_policy, "Orphan");
  Result<DeleteOptions> not_orphan =
      DeleteOptionsFromRequest(Delete(R"({"orphanDependents": false, "gracePeriodSeconds": 0})"));
  ASSERT_TRUE(not_orphan.ok()) << not_orphan.status().ToString();
  EXPECT_EQ(not_orphan->propagation_policy, "");
  EXPECT_EQ(not_orphan->grace_period_seconds, 0);
}

// The query parameters alone, and over a body.
TEST(DeleteOptionsTest, ReadsQueryParameters) {
  Result<DeleteOptions> got = DeleteOptionsFromRequest(Delete(
      "", "",
      {{"gracePeriodSeconds", "3"}, {"propagationPolicy", "Background"}, {"dryRun", "All"}}));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->grace_period_seconds, 3);
  EXPECT_EQ(got->propagation_policy, "Background");
  EXPECT_TRUE(got->dry_run);
  got = DeleteOptionsFromRequest(Delete("", "", {{"orphanDependents", "true"}}));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->propagation_policy, "Orphan");
  got = DeleteOptionsFromRequest(
      Delete(R"({"gracePeriodSeconds": 30})", "application/json", {{"gracePeriodSeconds", "0"}}));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->grace_period_seconds, 0);
  ExpectRefused(DeleteOptionsFromRequest(Delete("", "", {{"gracePeriodSeconds", "soon"}})),
                StatusCode::kBadRequest, "invalid gracePeriodSeconds");
}

// Upstream's ValidateDeleteOptions, with kube-apiserver's messages, whichever way the options
// came (protobuf, JSON or query).
TEST(DeleteOptionsTest, ValidatesAsKubeApiserver) {
  struct Case {
    std::string_view name;
    HttpRequest request;
    std::string_view message;
  };
  const Case cases[] = {
      {"orphanDependents and propagationPolicy (protobuf)",
       Delete(ProtobufOptions("v1", Var(3, 1) + Len(4, "Background")), kProtobuf),
       "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: "
       "\"Background\": orphanDependents and deletionPropagation cannot be both set"},
      {"orphanDependents false and propagationPolicy (JSON)",
       Delete(R"({"orphanDependents": false, "propagationPolicy": "Orphan"})"),
       "propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation "
       "cannot be both set"},
      {"orphanDependents and propagationPolicy (query)",
       Delete("", "", {{"orphanDependents", "true"}, {"propagationPolicy", "Background"}}),
       "orphanDependents and deletionPropagation cannot be both set"},
      {"unsupported propagationPolicy (protobuf)",
       Delete(ProtobufOptions("v1", Len(4, "Sideways")), kProtobuf),
       "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: "
       "\"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""},
      {"empty propagationPolicy (JSON)", Delete(R"({"propagationPolicy": ""})"),
       "propagationPolicy: Unsupported value: \"\""},
      {"unsupported propagationPolicy (query)", Delete("", "", {{"propagationPolicy", "Sideways"}}),
       "propagationPolicy: Unsupported value: \"Sideways\""},
      {"unsupported dryRun (protobuf)",
       Delete(ProtobufOptions("v1", Len(5, "All") + Len(5, "Some")), kProtobuf),
       "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"All\",\"Some\"]: "
       "supported values: \"All\""},
      {"unsupported dryRun (query)", Delete("", "", {{"dryRun", "Some"}}),
       "dryRun: Unsupported value: [\"Some\"]: supported values: \"All\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<DeleteOptions> got = DeleteOptionsFromRequest(c.request);
    ExpectRefused(got, StatusCode::kInvalid, c.message);
    if (!got.ok()) {
      EXPECT_FALSE(got.status().causes().empty());
    }
  }
}

// Bodies that do not decode are 400s naming what is wrong; a compressed protobuf body is 415.
TEST(DeleteOptionsTest, RefusesBodiesThatDoNotDecode) {
  struct Case {
    std::string_view name;
    HttpRequest request;
    StatusCode code;
    std::string_view message;
  };
  const Case cases[] = {
      {"JSON that is not JSON", Delete("{"), StatusCode::kBadRequest,
       "DeleteOptions: invalid JSON"},
      {"JSON that is not an object", Delete("[]"), StatusCode::kBadRequest,
       "DeleteOptions: must be a JSON object"},
      {"JSON of another kind", Delete(R"({"kind": "Pod", "apiVersion": "v1"})"),
       StatusCode::kBadRequest, "DeleteOptions: the body is a Pod, not DeleteOptions"},
      {"JSON field of the wrong type", Delete(R"({"gracePeriodSeconds": "5"})"),
       StatusCode::kBadRequest,
       "DeleteOptions: json: cannot unmarshal string into Go struct field "
       "DeleteOptions.gracePeriodSeconds of type int64"},
      {"protobuf of another kind",
       Delete(std::string("k8s\0", 4) + Len(1, Len(1, "v1") + Len(2, "Pod")) + Len(2, ""),
              kProtobuf),
       StatusCode::kBadRequest, "runtime.Unknown holds v1 Pod, not DeleteOptions"},
      {"protobuf without the magic bytes", Delete("{}", kProtobuf), StatusCode::kBadRequest,
       "invalid protobuf body: it does not start with the magic bytes"},
      {"protobuf field of the wrong wire type",
       Delete(ProtobufOptions("v1", Len(1, "30")), kProtobuf), StatusCode::kBadRequest,
       "field 1 (gracePeriodSeconds) of DeleteOptions has wire type 2, want 0"},
      {"truncated protobuf",
       Delete(ProtobufOptions("v1", Len(4, "Orphan")).substr(0, 30), kProtobuf),
       StatusCode::kBadRequest, "invalid protobuf body: "},
      {"compressed protobuf", Delete(ProtobufOptions("v1", "") + Len(3, "gzip"), kProtobuf),
       StatusCode::kUnsupportedMediaType, "contentEncoding \"gzip\" is not supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectRefused(DeleteOptionsFromRequest(c.request), c.code, c.message);
  }
}

}  // namespace
}  // namespace slicewright::apiserver
