#include "apiserver/api/strict_json.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

// Bodies kube-apiserver (v1.32) refuses, with the message it gives: Go's encoding/json
// UnmarshalTypeError, time.ParseError, wrapped by the handlers' transformDecodeError.
TEST(StrictJsonTest, RefusesWhatGoCannotDecode) {
  struct Case {
    std::string_view name;
    std::string_view api_version;
    std::string_view kind;
    std::string_view body;
    std::string_view message;
  };
  const Case cases[] = {
      {"string into int32", "v1", "Service", R"({"spec": {"ports": [{"port": "abc"}]}})",
       "Service in version \"v1\" cannot be handled as a Service: json: cannot unmarshal string "
       "into Go struct field ServicePort.spec.ports.port of type int32"},
      {"fraction into int32", "v1", "Service", R"({"spec": {"ports": [{"port": 1.5}]}})",
       "json: cannot unmarshal number 1.5 into Go struct field ServicePort.spec.ports.port of "
       "type int32"},
      {"int32 overflow", "apps/v1", "Deployment", R"({"spec": {"replicas": 3000000000}})",
       "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal "
       "number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32"},
      {"string where a slice stands", "v1", "Service", R"({"spec": {"ports": "80"}})",
       "json: cannot unmarshal string into Go struct field ServiceSpec.spec.ports of type "
       "[]v1.ServicePort"},
      {"string where a struct element stands", "v1", "Service", R"({"spec": {"ports": ["80"]}})",
       "json: cannot unmarshal string into Go struct field ServiceSpec.spec.ports of type "
       "v1.ServicePort"},
      {"number into a named string", "v1", "Service", R"({"spec": {"type": 5}})",
       "json: cannot unmarshal number into Go struct field ServiceSpec.spec.type of type "
       "v1.ServiceType"},
      {"bool into a map value", "v1", "ConfigMap", R"({"metadata": {"labels": {"a": true}}})",
       "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type "
       "string"},
      {"array into a struct", "v1", "Pod", R"({"spec": []})",
       "json: cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec"},
      {"object into a map-typed field", "v1", "ResourceQuota", R"({"spec": {"hard": []}})",
       "json: cannot unmarshal array into Go struct field ResourceQuotaSpec.spec.hard of type "
       "v1.ResourceList"},
      {"inline struct field keeps the outer struct", "v1", "Pod",
       R"({"spec": {"volumes": [{"name": "v", "emptyDir": "x"}]}})",
       "json: cannot unmarshal string into Go struct field Volume.spec.volumes.emptyDir of type "
       "v1.EmptyDirVolumeSource"},
      {"Lease renewTime garbage", "coordination.k8s.io/v1", "Lease",
       R"({"spec": {"renewTime": "garbage"}})",
       "Lease in version \"v1\" cannot be handled as a Lease: parsing time \"garbage\" as "
       "\"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"garbage\" as \"2006\""},
      {"MicroTime needs six fraction digits", "coordination.k8s.io/v1", "Lease",
       R"({"spec": {"acquireTime": "2024-01-02T03:04:05Z"}})",
       "parsing time \"2024-01-02T03:04:05Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot "
       "parse \"Z\" as \".000000\""},
      {"creationTimestamp garbage", "v1", "ConfigMap",
       R"({"metadata": {"creationTimestamp": "garbage"}})",
       "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: parsing time \"garbage\" as "
       "\"2006-01-02T15:04:05Z07:00\": cannot parse \"garbage\" as \"2006\""},
      {"startTime garbage", "v1", "Pod", R"({"status": {"startTime": "garbage"}})",
       "cannot parse \"garbage\" as \"2006\""},
      {"month out of range", "v1", "Pod", R"({"status": {"startTime": "2024-13-01T00:00:00Z"}})",
       "Pod in version \"v1\" cannot be handled as a Pod: parsing time \"2024-13-01T00:00:00Z\": "
       "month out of range"},
      {"day out of range", "v1", "Pod", R"({"status": {"startTime": "2023-02-29T00:00:00Z"}})",
       "parsing time \"2023-02-29T00:00:00Z\": day out of range"},
      {"hour out of range", "v1", "Pod", R"({"status": {"startTime": "2024-01-01T24:00:00Z"}})",
       "parsing time \"2024-01-01T24:00:00Z\": hour out of range"},
      {"missing T", "v1", "Pod", R"({"status": {"startTime": "2024-01-01 00:00:00Z"}})",
       "parsing time \"2024-01-01 00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" "
       "00:00:00Z\" as \"T\""},
      {"no zone", "v1", "Pod", R"({"status": {"startTime": "2024-01-01T00:00:00"}})",
       "parsing time \"2024-01-01T00:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" "
       "as \"Z07:00\""},
      {"extra text", "v1", "Pod", R"({"status": {"startTime": "2024-01-01T00:00:00Zjunk"}})",
       "parsing time \"2024-01-01T00:00:00Zjunk\": extra text: \"junk\""},
      {"time as a number", "v1", "Pod", R"({"status": {"startTime": 5}})",
       "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go "
       "value of type string"},
      {"IntOrString as a bool", "v1", "Service", R"({"spec": {"ports": [{"targetPort": true}]}})",
       "json: cannot unmarshal bool into Go value of type int32"},
      {"IntOrString fraction", "v1", "Service", R"({"spec": {"ports": [{"targetPort": 1.5}]}})",
       "json: cannot unmarshal number 1.5 into Go value of type int32"},
      {"bad base64", "v1", "Secret", R"({"data": {"k": "a$b="}})",
       "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input "
       "byte 1"},
      {"quantity as a bool", "v1", "ResourceQuota", R"({"spec": {"hard": {"cpu": true}}})",
       "quantities must match the regular expression"},
      {"quantity garbage", "v1", "ResourceQuota", R"({"spec": {"hard": {"cpu": "lots"}}})",
       "ResourceQuota in version \"v1\" cannot be handled as a ResourceQuota: quantities must "
       "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {"quantity suffix", "v1", "ResourceQuota", R"({"spec": {"hard": {"memory": "1Ki-x"}}})",
       "quantities must match the regular expression"},
      {"quantity unknown suffix", "v1", "ResourceQuota", R"({"spec": {"hard": {"memory": "1KM"}}})",
       "unable to parse quantity's suffix"},
      {"scale subresource body", "autoscaling/v1", "Scale", R"({"spec": {"replicas": "3"}})",
       "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal string into "
       "Go struct field ScaleSpec.spec.replicas of type int32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json body = json::parse(c.body);
    const Status status = DecodeStrictJson(c.api_version, c.kind, body);
    ASSERT_FALSE(status.ok()) << body.dump();
    EXPECT_EQ(status.code(), StatusCode::kBadRequest);
    EXPECT_NE(status.message().find(c.message), std::string_view::npos)
        << "message: " << status.message() << "\nwant:    " << c.message;
  }
}

// Bodies Go decodes: nulls anywhere, unknown fields, custom resources, int64 ranges, raw JSON.
TEST(StrictJsonTest, AcceptsWhatGoDecodes) {
  const std::string_view bodies[] = {
      R"({"metadata": {"name": "a", "labels": null, "creationTimestamp": null},
          "spec": {"ports": [{"port": 80, "targetPort": "http", "nodePort": null}],
                   "unknownField": {"x": 1}}})",
      R"({"spec": {"ports": [{"port": -2147483648, "targetPort": 8080}]}})",
      R"({"metadata": {"generation": 9223372036854775807}})",
      R"({"spec": {"ports": [{"port": 80}]}, "status": {"loadBalancer": {}}})",
  };
  for (std::string_view text : bodies) {
    SCOPED_TRACE(text);
    json body = json::parse(text);
    EXPECT_TRUE(DecodeStrictJson("v1", "Service", body).ok());
  }
  json quota = json::parse(R"({"spec": {"hard": {"cpu": "1500m", "memory": "1Gi", "pods": 2,
      "storage": "1e3", "x": " 0.5 ", "y": "-1.5E-3", "z": "0", "w": ".5k"}}})");
  EXPECT_TRUE(DecodeStrictJson("v1", "ResourceQuota", quota).ok());
  json custom = json::parse(R"({"spec": {"replicas": "many"}})");
  EXPECT_TRUE(DecodeStrictJson("example.com/v1", "Widget", custom).ok());
  json crd = json::parse(R"({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema":
      {"type": "object", "additionalProperties": true, "default": {"a": [1]}}}}]}})");
  EXPECT_TRUE(DecodeStrictJson("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd).ok());
}

// A DELETE's JSON body against metav1.DeleteOptions: kube-apiserver (v1.34) answers Go's error
// for a field of the wrong type (as a 500; we answer 400), and decodes nulls and unknown fields.
TEST(StrictJsonTest, ChecksDeleteOptionsBodies) {
  struct Case {
    std::string_view body;
    std::string_view message;
  };
  const Case refused[] = {
      {R"({"gracePeriodSeconds": "5"})",
       "DeleteOptions: json: cannot unmarshal string into Go struct field "
       "DeleteOptions.gracePeriodSeconds of type int64"},
      {R"({"orphanDependents": "true"})",
       "cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool"},
      {R"({"propagationPolicy": 1})",
       "cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type "
       "v1.DeletionPropagation"},
      {R"({"preconditions": {"uid": 7}})",
       "cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type "
       "types.UID"},
      {R"({"dryRun": "All"})",
       "cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string"},
      {R"({"gracePeriodSeconds": 1.5})",
       "cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of "
       "type int64"},
  };
  for (const Case& c : refused) {
    SCOPED_TRACE(c.body);
    json body = json::parse(c.body);
    const Status status = DecodeStrictDeleteOptions(body);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kBadRequest);
    EXPECT_NE(status.message().find(c.message), std::string_view::npos)
        << "message: " << status.message() << "\nwant:    " << c.message;
  }
  for (std::string_view text :
       {R"({})", R"({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
            "preconditions": {"uid": "u", "resourceVersion": "1"}, "orphanDependents": false,
            "propagationPolicy": "Foreground", "dryRun": ["All"], "unknown": {"x": 1}})",
        R"({"gracePeriodSeconds": null, "preconditions": null, "dryRun": null})"}) {
    SCOPED_TRACE(text);
    json body = json::parse(text);
    EXPECT_TRUE(DecodeStrictDeleteOptions(body).ok());
  }
}

// Times come back as Go re-encodes them: UTC, Time in whole seconds, MicroTime with six digits,
// Go's zero time as null.
TEST(StrictJsonTest, NormalisesTimes) {
  json lease = json::parse(R"({"spec": {"renewTime": "2024-01-02T05:04:05.123456+02:00",
                                        "acquireTime": "2024-12-31T23:59:59.999999-01:30"}})");
  ASSERT_TRUE(DecodeStrictJson("coordination.k8s.io/v1", "Lease", lease).ok());
  EXPECT_EQ(lease["spec"]["renewTime"], "2024-01-02T03:04:05.123456Z");
  EXPECT_EQ(lease["spec"]["acquireTime"], "2025-01-01T01:29:59.999999Z");

  json pod = json::parse(R"({"metadata": {"creationTimestamp": "2024-03-01T00:30:00.75+01:00"},
      "status": {"startTime": "0001-01-01T00:00:00Z",
                 "conditions": [{"type": "Ready", "lastTransitionTime": "2024-02-29T10:00:00Z"}]}})");
  ASSERT_TRUE(DecodeStrictJson("v1", "Pod", pod).ok());
  EXPECT_EQ(pod["metadata"]["creationTimestamp"], "2024-02-29T23:30:00Z");
  EXPECT_TRUE(pod["status"]["startTime"].is_null());
  EXPECT_EQ(pod["status"]["conditions"][0]["lastTransitionTime"], "2024-02-29T10:00:00Z");
}

// Go's time.Parse error texts for the two layouts, including range errors and quoting.
TEST(StrictJsonTest, ParsesTimesAsGoDoes) {
  struct Case {
    std::string_view layout;
    std::string_view value;
    std::string_view want;  // formatted, or the error
  };
  const Case cases[] = {
      {kRfc3339Layout, "2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"},
      {kRfc3339Layout, "2024-01-02T03:04:05,5Z", "2024-01-02T03:04:05Z"},
      {kRfc3339Layout, "2024-1-02T03:04:05Z",
       R"(parsing time "2024-1-02T03:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-02T03:04:05Z" as "01")"},
      {kRfc3339Layout, "2024-01-02T03:04:60Z",
       R"(parsing time "2024-01-02T03:04:60Z": second out of range)"},
      {kRfc3339Layout, "2024-01-02T03:04:05+25:00",
       R"(parsing time "2024-01-02T03:04:05+25:00": time zone offset hour out of range)"},
      {kRfc3339Layout, "2024-01-02T03:04:05z",
       R"(parsing time "2024-01-02T03:04:05z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00")"},
      {kRfc3339Layout, "caf\xc3\xa9\"",
       R"(parsing time "caf\xc3\xa9\"" as "2006-01-02T15:04:05Z07:00": cannot parse "caf\xc3\xa9\"" as "2006")"},
      {kRfc3339MicroLayout, "2024-01-02T03:04:05.1234567Z",
       R"(parsing time "2024-01-02T03:04:05.1234567Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "7Z" as "Z07:00")"},
      {kRfc3339MicroLayout, "2024-01-02T03:04:05.000001Z", "2024-01-02T03:04:05.000001Z"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    std::string formatted;
    std::string error;
    if (ParseGoTime(c.layout, c.value, formatted, error)) {
      EXPECT_EQ(formatted, c.want);
    } else {
      EXPECT_EQ(error, c.want);
    }
  }
}

// Fields the Go type lacks are pruned and named as the strict decoder names them, list indices
// included, when asked for (fieldValidation); fields of the served version's types stay
// (EndpointSlice hints.forNodes, in k8s.io/api since 1.33).
TEST(StrictJsonTest, PrunesAndNamesUnknownFields) {
  json service = json::parse(R"({"apiVersion":"v1","kind":"Service","foo":"bar",
      "metadata":{"name":"s","bogus":1},
      "spec":{"frob":true,"ports":[{"port":80},{"port":81,"bogus":1}]}})");
  std::vector<std::string> unknown;
  ASSERT_TRUE(DecodeStrictJson("v1", "Service", service, &unknown).ok());
  EXPECT_EQ(unknown, (std::vector<std::string>{"foo", "metadata.bogus", "spec.frob",
                                               "spec.ports[1].bogus"}));
  EXPECT_EQ(service, json::parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},
      "spec":{"ports":[{"port":80},{"port":81}]}})"));
  // Without the list, unknown fields are left alone.
  json kept = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","foo":"bar"})");
  ASSERT_TRUE(DecodeStrictJson("v1", "ConfigMap", kept).ok());
  EXPECT_EQ(kept["foo"], "bar");
  json slice = json::parse(R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
      "addressType":"IPv4","endpoints":[{"addresses":["10.0.0.1"],
      "hints":{"forZones":[{"name":"a"}],"forNodes":[{"name":"n1"}]}}]})");
  unknown.clear();
  ASSERT_TRUE(DecodeStrictJson("discovery.k8s.io/v1", "EndpointSlice", slice, &unknown).ok());
  EXPECT_TRUE(unknown.empty());
  EXPECT_EQ(slice["endpoints"][0]["hints"]["forNodes"][0]["name"], "n1");
}

}  // namespace
}  // namespace slicewright::apiserver
