#include "apiserver/rest/request_info.h"

#include <string_view>

#include <gtest/gtest.h>

namespace slicewright::apiserver {
namespace {

// Paths and methods map to kube-apiserver's RequestInfo fields.
TEST(RequestInfoTest, ParsesResourcePaths) {
  struct Case {
    std::string_view name;
    std::string_view method;
    std::string_view path;
    std::string_view watch;
    std::string_view group, version, namespace_, resource, object, subresource, verb;
  };
  const Case cases[] = {
      {"core list", "GET", "/api/v1/pods", "", "", "v1", "", "pods", "", "", "list"},
      {"namespaced get", "GET", "/api/v1/namespaces/ns/pods/web", "", "", "v1", "ns", "pods", "web",
       "", "get"},
      {"status update", "PUT", "/api/v1/namespaces/ns/pods/web/status", "", "", "v1", "ns", "pods",
       "web", "status", "update"},
      {"group create", "POST", "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices", "",
       "discovery.k8s.io", "v1", "ns", "endpointslices", "", "", "create"},
      {"watch param", "GET", "/api/v1/namespaces/ns/services", "true", "", "v1", "ns", "services",
       "", "", "watch"},
      {"watch param as Python sends it", "GET", "/api/v1/namespaces/ns/services", "True", "", "v1",
       "ns", "services", "", "", "watch"},
      {"watch=false is a list", "GET", "/api/v1/namespaces/ns/services", "False", "", "v1", "ns",
       "services", "", "", "list"},
      {"watch=0 is a list", "GET", "/api/v1/namespaces/ns/services", "0", "", "v1", "ns",
       "services", "", "", "list"},
      {"legacy watch", "GET", "/api/v1/watch/namespaces/ns/pods", "", "", "v1", "ns", "pods", "",
       "", "watch"},
      {"namespace get", "GET", "/api/v1/namespaces/ns", "", "", "v1", "", "namespaces", "ns", "",
       "get"},
      {"namespace status", "PUT", "/api/v1/namespaces/ns/status", "", "", "v1", "", "namespaces",
       "ns", "status", "update"},
      {"namespace list", "GET", "/api/v1/namespaces", "", "", "v1", "", "namespaces", "", "",
       "list"},
      {"delete collection", "DELETE", "/api/v1/namespaces/ns/pods", "", "", "v1", "ns", "pods", "",
       "", "deletecollection"},
      {"cluster-scoped patch", "PATCH", "/api/v1/nodes/n1", "", "", "v1", "", "nodes", "n1", "",
       "patch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const RequestInfo info = ParseRequestInfo(c.method, c.path, c.watch);
    EXPECT_TRUE(info.is_resource_request);
    EXPECT_EQ(info.group, c.group);
    EXPECT_EQ(info.version, c.version);
    EXPECT_EQ(info.namespace_, c.namespace_);
    EXPECT_EQ(info.resource, c.resource);
    EXPECT_EQ(info.name, c.object);
    EXPECT_EQ(info.subresource, c.subresource);
    EXPECT_EQ(info.verb, c.verb);
  }
}

// Boolean query parameters decode as kube-apiserver's Convert_Slice_string_To_bool.
TEST(RequestInfoTest, QueryParameterTrue) {
  EXPECT_FALSE(QueryParameterTrue(""));
  EXPECT_FALSE(QueryParameterTrue("0"));
  EXPECT_FALSE(QueryParameterTrue("false"));
  EXPECT_FALSE(QueryParameterTrue("FALSE"));
  EXPECT_TRUE(QueryParameterTrue("true"));
  EXPECT_TRUE(QueryParameterTrue("True"));
  EXPECT_TRUE(QueryParameterTrue("1"));
  EXPECT_TRUE(QueryParameterTrue("yes"));
}

// Discovery paths are not resource requests; their depth says which document they ask for.
TEST(RequestInfoTest, RecognisesDiscoveryPaths) {
  EXPECT_EQ(ParseRequestInfo("GET", "/api", "").discovery_depth, 0);
  EXPECT_EQ(ParseRequestInfo("GET", "/apis", "").discovery_depth, 0);
  EXPECT_EQ(ParseRequestInfo("GET", "/api/v1", "").discovery_depth, 1);
  EXPECT_EQ(ParseRequestInfo("GET", "/apis/discovery.k8s.io", "").discovery_depth, 1);
  const RequestInfo group_version = ParseRequestInfo("GET", "/apis/discovery.k8s.io/v1", "");
  EXPECT_EQ(group_version.discovery_depth, 2);
  EXPECT_FALSE(group_version.is_resource_request);
  EXPECT_FALSE(ParseRequestInfo("GET", "/version", "").is_resource_request);
  EXPECT_EQ(ParseRequestInfo("GET", "/version", "").discovery_depth, -1);
}

// A path deeper than resource/name/subresource names nothing.
TEST(RequestInfoTest, TooDeepPathHasNoResource) {
  EXPECT_EQ(ParseRequestInfo("GET", "/api/v1/namespaces/ns/pods/a/status/extra", "").resource, "");
}

}  // namespace
}  // namespace slicewright::apiserver
