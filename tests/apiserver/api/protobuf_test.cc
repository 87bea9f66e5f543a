#include "apiserver/api/protobuf.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slicewright/base/status.h"

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

// The kubectl v1.32 `create` commands captured in testdata/apiserver/protobuf: each <name>.pb is
// the POST body kubectl sent, each <name>.json what the same command prints with
// `--dry-run=client -o json`.
constexpr std::string_view kFixtures[] = {
    "namespace",             // create namespace demo
    "configmap",             // create configmap cm --from-literal=a=b --from-literal=empty=
                             //   --from-file=bin=<3 non-UTF-8 bytes + "binary">
    "secret_generic",        // create secret generic s --from-literal=k=v --type=Opaque
    "secret_tls",            // create secret tls t --cert=... --key=... (a throwaway key)
    "secret_docker",         // create secret docker-registry d --docker-server=r.example.com ...
    "service_clusterip",     // create service clusterip web --tcp=80:8080 --tcp=443:https
    "service_headless",      // create service clusterip hl --clusterip=None
    "service_nodeport",      // create service nodeport np --tcp=80:8080 --node-port=30080
    "service_loadbalancer",  // create service loadbalancer lb --tcp=80:8080
    "service_externalname",  // create service externalname ex --external-name=db.example.com
    "serviceaccount",        // create serviceaccount sa
    "quota",                // create quota q --hard=cpu=1500m,memory=1Gi,pods=2 --scopes=BestEffort
    "deployment",           // create deployment dep --image=nginx
    "deployment_replicas",  // create deployment web --image=nginx --replicas=3 (captured through
                            //   a logging proxy in front of `slicewright apiserver`)
};

std::string ReadFixture(std::string_view name) {
  const std::string path =
      std::string(SW_SOURCE_DIR) + "/testdata/apiserver/protobuf/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A minimal protobuf writer for hand-made bodies.
std::string Varint(std::uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
  return out;
}
std::string Key(std::uint32_t number, int wire_type) {
  return Varint((std::uint64_t{number} << 3) | static_cast<std::uint64_t>(wire_type));
}
std::string Len(std::uint32_t number, std::string_view value) {
  return Key(number, 2) + Varint(value.size()) + std::string(value);
}
std::string Var(std::uint32_t number, std::uint64_t value) {
  return Key(number, 0) + Varint(value);
}

const std::string kMagic("k8s\0", 4);

// "k8s\0" + runtime.Unknown{typeMeta{apiVersion, kind}, raw}.
std::string Body(std::string_view api_version, std::string_view kind, std::string_view raw) {
  return kMagic + Len(1, Len(1, api_version) + Len(2, kind)) + Len(2, raw);
}

Result<json> DecodeObject(std::string_view kind, std::string_view raw) {
  return DecodeKubernetesProtobuf(Body("v1", kind, raw));
}

// Asserts `result` failed with `code` and a message containing `text`.
void ExpectError(const Result<json>& result, StatusCode code, std::string_view text) {
  ASSERT_FALSE(result.ok()) << result->dump();
  EXPECT_EQ(result.status().code(), code) << result.status().ToString();
  EXPECT_NE(result.status().message().find(text), std::string_view::npos)
      << "message: " << result.status().message() << "\nwant: " << text;
}

// Each body kubectl sends decodes to exactly the object kubectl prints for the same command.
TEST(ProtobufTest, DecodesKubectlCreateBodiesAsKubectlPrintsThem) {
  for (std::string_view name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string body = ReadFixture(std::string(name) + ".pb");
    const json want = json::parse(ReadFixture(std::string(name) + ".json"));
    Result<json> got = DecodeKubernetesProtobuf(body);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, want) << "got:  " << got->dump() << "\nwant: " << want.dump();
  }
}

// A kind that is not built in (a custom resource) is 415 naming it.
TEST(ProtobufTest, RejectsOtherKindsAsUnsupportedMediaType) {
  ExpectError(DecodeKubernetesProtobuf(Body("example.com/v1", "Widget", "")),
              StatusCode::kUnsupportedMediaType,
              "protobuf request bodies are supported only for built-in kinds, not example.com/v1 "
              "Widget; send Widget as application/json");
  // The group version matters: a ConfigMap under another apiVersion is not ours.
  ExpectError(DecodeKubernetesProtobuf(Body("v2", "ConfigMap", "")),
              StatusCode::kUnsupportedMediaType, "not v2 ConfigMap");
  ExpectError(DecodeKubernetesProtobuf(Body("", "Pod", "")), StatusCode::kUnsupportedMediaType,
              "not <no apiVersion> Pod");
}

// The envelope's own failures: magic, no kind, compressed or non-protobuf raw content.
TEST(ProtobufTest, RejectsBadEnvelopes) {
  ExpectError(DecodeKubernetesProtobuf(""), StatusCode::kBadRequest,
              "invalid protobuf body: it does not start with the magic bytes \"k8s\\x00\" at "
              "byte 0");
  ExpectError(DecodeKubernetesProtobuf("{\"kind\":\"Namespace\"}"), StatusCode::kBadRequest,
              "magic bytes");
  ExpectError(DecodeKubernetesProtobuf(std::string("k8s\1", 4)), StatusCode::kBadRequest,
              "magic bytes");
  ExpectError(DecodeKubernetesProtobuf(kMagic), StatusCode::kBadRequest,
              "invalid protobuf body: runtime.Unknown names no kind");
  // A body cut right after typeMeta must not pass as an empty object.
  ExpectError(DecodeKubernetesProtobuf(kMagic + Len(1, Len(1, "v1") + Len(2, "Namespace"))),
              StatusCode::kBadRequest,
              "invalid protobuf body: runtime.Unknown carries no raw object");
  ExpectError(DecodeKubernetesProtobuf(Body("v1", "Namespace", "") + Len(3, "gzip")),
              StatusCode::kUnsupportedMediaType,
              "protobuf body with contentEncoding \"gzip\" is not supported");
  ExpectError(DecodeKubernetesProtobuf(Body("v1", "Namespace", "") + Len(4, "application/json")),
              StatusCode::kUnsupportedMediaType,
              "protobuf body whose raw object has contentType \"application/json\" is not "
              "supported");
  // The explicit protobuf content type and an empty encoding are fine.
  EXPECT_TRUE(DecodeKubernetesProtobuf(Body("v1", "Namespace", "") + Len(3, "") +
                                       Len(4, "application/vnd.kubernetes.protobuf"))
                  .ok());
}

// Each wire-level failure is a 400 naming what failed, the byte offset and the field path.
TEST(ProtobufTest, ReportsMalformedWireDataWithOffsetAndPath) {
  struct Case {
    std::string_view name;
    std::string body;
    std::string_view message;
  };
  const Case cases[] = {
      {"truncated key", kMagic + "\x8a",
       "truncated varint (field key) at byte 4 (in runtime.Unknown)"},
      {"truncated length", kMagic + "\x0a",
       "truncated varint (length of field 1) at byte 5 (in runtime.Unknown)"},
      {"length past the end", kMagic + "\x0a\x05" + "ab",
       "length 5 of field 1 runs past the end (byte 8) at byte 5 (in runtime.Unknown)"},
      {"varint longer than 10 bytes", kMagic + "\x18" + std::string(10, '\xff') + "\x01",
       "varint longer than 10 bytes (varint of field 3) at byte 5 (in runtime.Unknown)"},
      {"field number 0", kMagic + std::string("\x02\x00", 2), "invalid field number 0 at byte 4"},
      {"group wire type", kMagic + "\x0b", "unsupported wire type 3 of field 1 at byte 4"},
      {"wire type 7", kMagic + "\x0f", "unsupported wire type 7 of field 1 at byte 4"},
      {"truncated fixed64", kMagic + "\x29" + "1234567",
       "truncated 64-bit value of field 5 at byte 5"},
      {"truncated fixed32", kMagic + "\x2d" + "123", "truncated 32-bit value of field 5 at byte 5"},
      {"envelope field of the wrong wire type", kMagic + "\x10\x01",
       "field 2 (raw) of runtime.Unknown has wire type 0, want 2 at byte 4"},
      {"typeMeta truncated inside", kMagic + Len(1, "\x0a\x09v1"),
       "length 9 of field 1 runs past the end (byte 10) at byte 7 (in runtime.Unknown.typeMeta)"},
      // The nested message's length is checked against its parent, not the whole body.
      {"nested length past its parent",
       Body("v1", "Namespace",
            "\x0a\x05"
            "\x0a\x07"
            "abc") +
           Len(3, ""),
       "length 7 of field 1 runs past the end (byte 30) at byte 26 (in Namespace.metadata)"},
      {"wrong wire type for a known field", Body("v1", "Namespace", Var(1, 5)),
       "field 1 (metadata) of Namespace has wire type 0, want 2 at byte 23 (in Namespace)"},
      {"string field not UTF-8", Body("v1", "Namespace", Len(1, Len(1, "a\xff"))),
       "field 1 (name) of ObjectMeta is not valid UTF-8 at byte 27 (in Namespace.metadata)"},
      {"overlong UTF-8", Body("v1", "ConfigMap", Len(2, Len(1, "k") + Len(2, "\xc0\xaf"))),
       "field 2 (value) of MapEntry is not valid UTF-8 at byte 30 (in ConfigMap.data)"},
      {"surrogate in UTF-8", Body("v1", "Namespace", Len(1, Len(1, "\xed\xa0\x80"))),
       "is not valid UTF-8"},
      {"IntOrString type 2",
       Body("v1", "Service", Len(2, Len(1, Var(3, 80) + Len(4, Var(1, 2) + Var(2, 1))))),
       "IntOrString type 2 is neither 0 nor 1 at byte 29 (in Service.spec.ports[0].targetPort)"},
      {"second element's error names its index",
       Body("v1", "Service", Len(2, Len(1, Var(3, 80)) + Len(1, Len(1, "\xff")))),
       "(in Service.spec.ports[1])"},
      {"timestamp out of range",
       Body("v1", "Namespace", Len(1, Len(8, Var(1, std::uint64_t{1} << 40)))),
       "timestamp 1099511627776 s is out of range at byte 27 (in "
       "Namespace.metadata.creationTimestamp)"},
      {"fieldsV1 not JSON",
       Body("v1", "Namespace", Len(1, Len(17, Len(7, Len(1, "{\"f:metadata\":"))))),
       "fieldsV1 is not JSON at byte 30 (in Namespace.metadata.managedFields[0].fieldsV1)"},
      {"fieldsV1 too deep",
       Body("v1", "Namespace",
            Len(1, Len(17, Len(7, Len(1, std::string(101, '[') + std::string(101, ']')))))),
       "fieldsV1 nests deeper than 100"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectError(DecodeKubernetesProtobuf(c.body), StatusCode::kBadRequest, c.message);
  }
}

// Every prefix of every fixture fails cleanly, except cuts among the empty trailing envelope
// fields (contentEncoding, contentType), which decode to the whole object.
TEST(ProtobufTest, EveryTruncationFailsCleanly) {
  for (std::string_view name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string body = ReadFixture(std::string(name) + ".pb");
    Result<json> full = DecodeKubernetesProtobuf(body);
    ASSERT_TRUE(full.ok());
    int decoded = 0;
    for (std::size_t size = 0; size < body.size(); ++size) {
      // A fresh copy, so ASan sees a read past the prefix.
      const std::string prefix = body.substr(0, size);
      Result<json> got = DecodeKubernetesProtobuf(prefix);
      if (got.ok()) {
        ++decoded;
        EXPECT_EQ(*got, *full) << "prefix of " << size << " bytes";
        continue;
      }
      EXPECT_EQ(got.status().code(), StatusCode::kBadRequest) << got.status().ToString();
      EXPECT_TRUE(got.status().message().starts_with("invalid protobuf body: "))
          << got.status().message();
    }
    // kubectl writes contentEncoding and contentType as two empty fields of 2 bytes each.
    EXPECT_LE(decoded, 4);
  }
}

// Truncating the object inside a well-formed envelope never crashes; errors are 400s.
TEST(ProtobufTest, EveryTruncationOfTheObjectFailsCleanly) {
  for (std::string_view name : kFixtures) {
    SCOPED_TRACE(name);
    Result<json> full = DecodeKubernetesProtobuf(ReadFixture(std::string(name) + ".pb"));
    ASSERT_TRUE(full.ok());
    // Re-encode: the fixtures' raw starts after typeMeta; find it by decoding the envelope here.
    const std::string body = ReadFixture(std::string(name) + ".pb");
    const std::size_t type_meta_length = static_cast<unsigned char>(body[5]);
    std::size_t pos = 6 + type_meta_length;
    ASSERT_EQ(body[pos], '\x12');  // raw, field 2
    ++pos;
    std::uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      const auto byte = static_cast<unsigned char>(body[pos++]);
      length |= std::uint64_t{byte & 0x7Fu} << shift;
      if (byte < 0x80) {
        break;
      }
    }
    const std::string raw = body.substr(pos, length);
    const std::string api_version = (*full)["apiVersion"].get<std::string>();
    const std::string kind = (*full)["kind"].get<std::string>();
    for (std::size_t size = 0; size <= raw.size(); ++size) {
      Result<json> got = DecodeKubernetesProtobuf(Body(api_version, kind, raw.substr(0, size)));
      if (size == raw.size()) {
        ASSERT_TRUE(got.ok());
        EXPECT_EQ(*got, *full);
      } else if (!got.ok()) {
        EXPECT_EQ(got.status().code(), StatusCode::kBadRequest) << got.status().ToString();
      }
    }
  }
}

// Random byte flips never crash or read out of bounds (run under ASan); failures are 400 or 415.
TEST(ProtobufTest, RandomByteFlipsNeverCrash) {
  const std::uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (std::string_view name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string body = ReadFixture(std::string(name) + ".pb");
    for (int round = 0; round < 2000; ++round) {
      std::string mutated = body;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < flips; ++i) {
        const std::size_t at = 4 + rng() % (mutated.size() - 4);
        mutated[at] = static_cast<char>(rng() % 2 == 0 ? mutated[at] ^ (1 << (rng() % 8))
                                                       : static_cast<char>(rng()));
      }
      Result<json> got = DecodeKubernetesProtobuf(mutated);
      if (!got.ok()) {
        EXPECT_TRUE(got.status().code() == StatusCode::kBadRequest ||
                    got.status().code() == StatusCode::kUnsupportedMediaType)
            << got.status().ToString();
      } else {
        // Whatever decoded must serialize (strings are valid UTF-8).
        EXPECT_FALSE(got->dump().empty());
      }
    }
  }
}

// Unknown field numbers of every wire type are skipped, at the top and inside nested messages.
TEST(ProtobufTest, SkipsUnknownFields) {
  const std::string unknown = Var(99, 7) + Key(98, 1) + "12345678" + Key(97, 5) + "1234" +
                              Len(96, "whatever") + Len(1000000, Len(1, "x"));
  Result<json> got =
      DecodeObject("ConfigMap", unknown + Len(1, unknown + Len(1, "cm") + unknown) +
                                    Len(2, Len(1, "a") + unknown + Len(2, "b")) + unknown);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, json::parse(R"({"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "cm", "creationTimestamp": null}, "data": {"a": "b"}})"));
  // And in the envelope.
  got = DecodeKubernetesProtobuf(kMagic + unknown +
                                 Len(1, unknown + Len(2, "Namespace") + Len(1, "v1")) + Len(2, "") +
                                 unknown);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["kind"], "Namespace");
}

// Go's JSON of the decoded struct: omitempty zeros vanish, pointers keep zeros that were sent,
// non-omitempty fields and struct values appear even when absent.
TEST(ProtobufTest, FollowsGoPresenceRules) {
  struct Case {
    std::string_view name;
    std::string_view kind;
    std::string raw;
    std::string_view want;
  };
  const Case cases[] = {
      {"nothing sent: struct values and creationTimestamp still appear", "Service", "",
       R"({"metadata": {"creationTimestamp": null}, "spec": {},
           "status": {"loadBalancer": {}}})"},
      {"omitempty zeros are dropped, pointer zeros kept", "Service",
       Len(2, Len(3, "") + Var(12, 0) + Var(13, 0) + Var(20, 0) + Len(21, "") +
                  Len(14, Len(1, Var(1, 0)))),
       R"({"metadata": {"creationTimestamp": null},
           "spec": {"allocateLoadBalancerNodePorts": false, "loadBalancerClass": "",
                    "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}}},
           "status": {"loadBalancer": {}}})"},
      {"non-omitempty port and struct targetPort appear when absent", "Service",
       Len(2, Len(1, Len(1, "p"))),
       R"({"metadata": {"creationTimestamp": null},
           "spec": {"ports": [{"name": "p", "port": 0, "targetPort": 0}]},
           "status": {"loadBalancer": {}}})"},
      {"immutable=false is sent and kept", "Secret", Var(5, 0) + Len(3, "Opaque"),
       R"({"metadata": {"creationTimestamp": null}, "immutable": false, "type": "Opaque"})"},
      {"a later zero overrides an earlier value", "Secret", Len(3, "Opaque") + Len(3, ""),
       R"({"metadata": {"creationTimestamp": null}})"},
      {"negative int32 and int64 as ten-byte varints", "Namespace",
       Len(1, Var(7, static_cast<std::uint64_t>(std::int64_t{-2})) +
                  Var(10, static_cast<std::uint64_t>(std::int64_t{-1}))),
       R"({"metadata": {"generation": -2, "deletionGracePeriodSeconds": -1,
                        "creationTimestamp": null}, "spec": {}, "status": {}})"},
      {"a message sent twice is merged", "Namespace",
       Len(1, Len(1, "a") + Len(11, Len(1, "x") + Len(2, "1"))) +
           Len(1, Len(11, Len(1, "y") + Len(2, "2")) + Len(14, "f")) + Len(2, Len(1, "k")),
       R"({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}, "finalizers": ["f"],
                        "creationTimestamp": null},
           "spec": {"finalizers": ["k"]}, "status": {}})"},
      {"a map key sent twice keeps the last value", "ConfigMap",
       Len(2, Len(1, "k") + Len(2, "1")) + Len(2, Len(1, "k") + Len(2, "2")) +
           Len(2, Len(2, "no key")) + Len(3, Len(1, "b")),
       R"({"metadata": {"creationTimestamp": null}, "data": {"k": "2", "": "no key"},
           "binaryData": {"b": ""}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<json> got = DecodeObject(c.kind, c.raw);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    json want = json::parse(c.want);
    want["apiVersion"] = "v1";
    want["kind"] = c.kind;
    EXPECT_EQ(*got, want) << "got:  " << got->dump() << "\nwant: " << want.dump();
  }
}

// Every ObjectMeta field, with owner references, times and managed fields.
TEST(ProtobufTest, DecodesAllObjectMetaFields) {
  const std::string time = Var(1, 1704164645) + Var(2, 500);  // 2024-01-02T03:04:05.0000005Z
  const std::string owner = Len(5, "apps/v1") + Len(1, "ReplicaSet") + Len(3, "web-1") +
                            Len(4, "u-1") + Var(6, 1) + Var(7, 0);
  const std::string managed =
      Len(1, "kubectl") + Len(2, "Update") + Len(3, "v1") + Len(4, time) + Len(6, "FieldsV1") +
      Len(7, Len(1, R"({"f:metadata":{"f:labels":{}}})")) + Len(8, "status");
  const std::string meta =
      Len(1, "web") + Len(2, "web-") + Len(3, "default") + Len(4, "/api/v1/x") + Len(5, "uid-1") +
      Len(6, "42") + Var(7, 3) + Len(8, time) + Len(9, "") + Var(10, 30) +
      Len(11, Len(1, "app") + Len(2, "web")) + Len(12, Len(1, "note") + Len(2, "")) +
      Len(13, owner) + Len(13, Len(1, "Node")) + Len(14, "a/b") + Len(14, "c/d") + Len(17, managed);
  Result<json> got =
      DecodeObject("ServiceAccount", Len(1, meta) + Len(2, Len(1, "Secret") + Len(3, "tok")) +
                                         Len(3, Len(1, "regcred")) + Var(4, 0));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, json::parse(R"({
    "apiVersion": "v1", "kind": "ServiceAccount",
    "metadata": {
      "name": "web", "generateName": "web-", "namespace": "default", "selfLink": "/api/v1/x",
      "uid": "uid-1", "resourceVersion": "42", "generation": 3,
      "creationTimestamp": "2024-01-02T03:04:05Z", "deletionTimestamp": null,
      "deletionGracePeriodSeconds": 30,
      "labels": {"app": "web"}, "annotations": {"note": ""},
      "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u-1",
         "controller": true, "blockOwnerDeletion": false},
        {"apiVersion": "", "kind": "Node", "name": "", "uid": ""}],
      "finalizers": ["a/b", "c/d"],
      "managedFields": [
        {"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
         "time": "2024-01-02T03:04:05Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:labels": {}}}, "subresource": "status"}]},
    "secrets": [{"kind": "Secret", "name": "tok"}],
    "imagePullSecrets": [{"name": "regcred"}],
    "automountServiceAccountToken": false})"))
      << got->dump();
}

// Service status and namespace conditions, including a negative (pre-1970) timestamp.
TEST(ProtobufTest, DecodesStatusesAndConditions) {
  Result<json> got = DecodeObject(
      "Service",
      Len(3, Len(1, Len(1, Len(1, "1.2.3.4") + Len(3, "VIP") +
                               Len(4, Var(1, 80) + Len(2, "TCP") + Len(3, "")))) +
                 Len(2, Len(1, "Ready") + Len(2, "True") + Var(3, 2) +
                            Len(4, Var(1, static_cast<std::uint64_t>(std::int64_t{-1}))) +
                            Len(5, "Ok"))));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["status"], json::parse(R"({
    "loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ipMode": "VIP",
                                  "ports": [{"port": 80, "protocol": "TCP", "error": ""}]}]},
    "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2,
                    "lastTransitionTime": "1969-12-31T23:59:59Z", "reason": "Ok",
                    "message": ""}]})"));
  got = DecodeObject("Namespace", Len(3, Len(1, "Terminating") +
                                             Len(2, Len(1, "NamespaceDeletionDiscoveryFailure") +
                                                        Len(2, "False"))));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["status"], json::parse(R"({"phase": "Terminating", "conditions": [
    {"type": "NamespaceDeletionDiscoveryFailure", "status": "False",
     "lastTransitionTime": null}]})"));
}

// Bytes are standard base64 with padding, for every remainder length.
TEST(ProtobufTest, EncodesBytesAsPaddedBase64) {
  Result<json> got = DecodeObject(
      "Secret", Len(2, Len(1, "0") + Len(2, "")) + Len(2, Len(1, "1") + Len(2, "f")) +
                    Len(2, Len(1, "2") + Len(2, "fo")) + Len(2, Len(1, "3") + Len(2, "foo")) +
                    Len(2, Len(1, "4") + Len(2, std::string("\xff\xfe\x00\x01", 4))));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["data"],
            json::parse(R"({"0": "", "1": "Zg==", "2": "Zm8=", "3": "Zm9v", "4": "//4AAQ=="})"));
}

// The media type matches without parameters and regardless of case.
TEST(ProtobufTest, RecognizesTheContentType) {
  EXPECT_TRUE(IsKubernetesProtobuf("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(IsKubernetesProtobuf("Application/VND.Kubernetes.Protobuf ; charset=x"));
  EXPECT_TRUE(IsKubernetesProtobuf(" application/vnd.kubernetes.protobuf;stream=watch"));
  EXPECT_FALSE(IsKubernetesProtobuf("application/json"));
  EXPECT_FALSE(IsKubernetesProtobuf(""));
  EXPECT_FALSE(IsKubernetesProtobuf("application/vnd.kubernetes.protobuf+x"));
}

// The generated tables reach every built-in group: inline structs, MicroTime, nil slices, doubles
// and the recursive, custom-encoded JSONSchemaProps.
TEST(ProtobufTest, DecodesKindsOfEveryGroup) {
  struct Case {
    std::string_view name;
    std::string_view api_version;
    std::string_view kind;
    std::string raw;
    std::string_view want;
  };
  std::string two_and_a_half = Key(9, 1);
  for (const unsigned char byte : {0, 0, 0, 0, 0, 0, 4, 0x40}) {  // 2.5, little-endian
    two_and_a_half += static_cast<char>(byte);
  }
  const Case cases[] = {
      {"MicroTime keeps six fraction digits in UTC", "coordination.k8s.io/v1", "Lease",
       Len(2, Len(1, "me") + Len(4, Var(1, 1704164645) + Var(2, 123456789))),
       R"({"metadata": {"creationTimestamp": null},
           "spec": {"holderIdentity": "me", "renewTime": "2024-01-02T03:04:05.123456Z"}})"},
      {"an inline struct's fields are the parent's", "v1", "Pod",
       Len(2, Len(1, Len(1, "data") + Len(2, Len(2, Len(1, "Memory"))))),
       R"({"metadata": {"creationTimestamp": null},
           "spec": {"volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}],
                    "containers": null},
           "status": {}})"},
      {"a slice without omitempty is null when empty", "discovery.k8s.io/v1", "EndpointSlice",
       Len(4, "IPv4"),
       R"({"metadata": {"creationTimestamp": null}, "addressType": "IPv4",
           "endpoints": null, "ports": null})"},
      {"JSONSchemaProps: doubles, schema-or-bool, recursive properties", "apiextensions.k8s.io/v1",
       "CustomResourceDefinition",
       Len(2,
           Len(1, "example.com") +
               Len(7, Len(1, "v1") + Var(2, 1) + Var(3, 1) +
                          Len(4, Len(1, Len(5, "object") + Len(30, Var(1, 1)) +
                                            Len(29, Len(1, "n") + Len(2, Len(5, "number") +
                                                                             two_and_a_half)))))),
       R"({"metadata": {"creationTimestamp": null},
           "spec": {"group": "example.com", "names": {"plural": "", "kind": ""}, "scope": "",
                    "versions": [{"name": "v1", "served": true, "storage": true,
                                  "schema": {"openAPIV3Schema": {
                                      "type": "object", "additionalProperties": true,
                                      "properties": {"n": {"type": "number",
                                                           "maximum": 2.5}}}}}]},
           "status": {"acceptedNames": {"plural": "", "kind": ""}, "conditions": null,
                      "storedVersions": null}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<json> got = DecodeKubernetesProtobuf(Body(c.api_version, c.kind, c.raw));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    json want = json::parse(c.want);
    want["apiVersion"] = c.api_version;
    want["kind"] = c.kind;
    EXPECT_EQ(*got, want) << "got:  " << got->dump() << "\nwant: " << want.dump();
  }
}

// --- DeleteOptions ------------------------------------------------------------------------------

// A Service as client-go v0.32 sends it (captured from the mcs-api conformance suite's `hello`):
// targetPort left unset is the zero IntOrString, on the wire {type: 0, intVal: 0, strVal: ""},
// so it decodes as 0 (the REST layer defaults it to the port, as kube-apiserver does).
TEST(ProtobufTest, DecodesClientGoServiceWithUnsetTargetPortAsZero) {
  Result<json> got = DecodeKubernetesProtobuf(ReadFixture("service_client_go.pb"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["metadata"]["name"], "hello");
  ASSERT_EQ((*got)["spec"]["ports"].size(), 2u);
  for (const json& port : (*got)["spec"]["ports"]) {
    EXPECT_EQ(port["port"], 42);
    EXPECT_EQ(port["targetPort"], 0);
  }
  EXPECT_EQ((*got)["spec"]["ipFamilyPolicy"], "PreferDualStack");
}

// metav1.DeleteOptions, raw: gracePeriodSeconds=1, preconditions=2 {uid=1, resourceVersion=2},
// orphanDependents=3, propagationPolicy=4, dryRun=5,
// ignoreStoreReadErrorWithClusterBreakingPotential=6.
std::string DeleteBody(std::string_view api_version, std::string_view raw) {
  return Body(api_version, "DeleteOptions", raw);
}

// The body client-go v0.32 sends with every delete of a built-in kind (captured from the mcs-api
// conformance suite's namespace delete): v1 DeleteOptions with an empty raw and empty
// contentEncoding and contentType fields. No options set.
TEST(ProtobufTest, DecodesClientGoDeleteOptions) {
  const std::string body = ReadFixture("delete_options_client_go.pb");
  Result<json> got = DecodeDeleteOptionsProtobuf(body);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, json::object());
  // The same body is not an object to create.
  ExpectError(DecodeKubernetesProtobuf(body), StatusCode::kUnsupportedMediaType,
              "not v1 DeleteOptions");
}

// Every field, each present exactly when sent (they are Go pointers, so zeros are kept).
TEST(ProtobufTest, DecodesEveryDeleteOptionsField) {
  const std::string all = Var(1, 30) + Len(2, Len(1, "uid-1") + Len(2, "42")) + Var(3, 1) +
                          Len(4, "Foreground") + Len(5, "All") + Len(5, "All") + Var(6, 0);
  Result<json> got = DecodeDeleteOptionsProtobuf(DeleteBody("v1", all));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, json::parse(R"({"gracePeriodSeconds": 30,
      "preconditions": {"uid": "uid-1", "resourceVersion": "42"}, "orphanDependents": true,
      "propagationPolicy": "Foreground", "dryRun": ["All", "All"],
      "ignoreStoreReadErrorWithClusterBreakingPotential": false})"));
  // Zeros that were sent stay (gracePeriodSeconds 0 deletes at once; orphanDependents false).
  got = DecodeDeleteOptionsProtobuf(
      DeleteBody("v1", Var(1, 0) + Var(3, 0) + Len(4, "") + Len(2, Len(1, ""))));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, json::parse(R"({"gracePeriodSeconds": 0, "orphanDependents": false,
      "propagationPolicy": "", "preconditions": {"uid": ""}})"));
  // A negative grace period is a ten-byte varint.
  got = DecodeDeleteOptionsProtobuf(
      DeleteBody("v1", Var(1, static_cast<std::uint64_t>(std::int64_t{-5}))));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["gracePeriodSeconds"], -5);
}

// kube-apiserver decodes DeleteOptions under any group version (client-go sends its client's)
// and a typeMeta without a kind as DeleteOptions; no raw object is no options.
TEST(ProtobufTest, DecodesDeleteOptionsOfAnyGroupVersion) {
  const std::string raw = Len(4, "Orphan");
  for (std::string_view api_version :
       {"v1", "apps/v1", "discovery.k8s.io/v1", "meta.k8s.io/v1", "example.com/v1", ""}) {
    SCOPED_TRACE(api_version);
    Result<json> got = DecodeDeleteOptionsProtobuf(DeleteBody(api_version, raw));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, json::parse(R"({"propagationPolicy": "Orphan"})"));
  }
  Result<json> no_kind = DecodeDeleteOptionsProtobuf(Body("v1", "", raw));
  ASSERT_TRUE(no_kind.ok()) << no_kind.status().ToString();
  EXPECT_EQ((*no_kind)["propagationPolicy"], "Orphan");
  Result<json> no_raw =
      DecodeDeleteOptionsProtobuf(kMagic + Len(1, Len(1, "v1") + Len(2, "DeleteOptions")));
  ASSERT_TRUE(no_raw.ok()) << no_raw.status().ToString();
  EXPECT_EQ(*no_raw, json::object());
}

// Bad DeleteOptions bodies are 400s naming what is wrong (415 for a compressed raw object).
TEST(ProtobufTest, RejectsMalformedDeleteOptions) {
  struct Case {
    std::string_view name;
    std::string body;
    StatusCode code;
    std::string_view message;
  };
  const Case cases[] = {
      {"JSON sent as protobuf", "{}", StatusCode::kBadRequest,
       "invalid protobuf body: it does not start with the magic bytes"},
      {"another kind", Body("v1", "Pod", ""), StatusCode::kBadRequest,
       "invalid protobuf body: runtime.Unknown holds v1 Pod, not DeleteOptions"},
      {"another kind without apiVersion", Body("", "Status", ""), StatusCode::kBadRequest,
       "runtime.Unknown holds <no apiVersion> Status, not DeleteOptions"},
      {"truncated envelope", kMagic + "\x0a\x13\x0a\x02v1", StatusCode::kBadRequest,
       "length 19 of field 1 runs past the end (byte 10) at byte 5 (in runtime.Unknown)"},
      {"gracePeriodSeconds of the wrong wire type", DeleteBody("v1", Len(1, "30")),
       StatusCode::kBadRequest,
       "field 1 (gracePeriodSeconds) of DeleteOptions has wire type 2, want 0 at byte 27 (in "
       "DeleteOptions)"},
      {"truncated gracePeriodSeconds", DeleteBody("v1", "\x08\xff"), StatusCode::kBadRequest,
       "truncated varint (varint of field 1) at byte 28 (in DeleteOptions)"},
      {"preconditions of the wrong wire type", DeleteBody("v1", Var(2, 1)), StatusCode::kBadRequest,
       "field 2 (preconditions) of DeleteOptions has wire type 0"},
      {"uid not UTF-8", DeleteBody("v1", Len(2, Len(1, "\xff\xfe"))), StatusCode::kBadRequest,
       "field 1 (uid) of Preconditions is not valid UTF-8 at byte 31 (in "
       "DeleteOptions.preconditions)"},
      {"propagationPolicy not UTF-8", DeleteBody("v1", Len(4, "\xc0\xaf")), StatusCode::kBadRequest,
       "field 4 (propagationPolicy) of DeleteOptions is not valid UTF-8"},
      {"orphanDependents of the wrong wire type", DeleteBody("v1", Len(3, "")),
       StatusCode::kBadRequest, "field 3 (orphanDependents) of DeleteOptions has wire type 2"},
      {"dryRun length past the end",
       DeleteBody("v1",
                  "\x2a\x09"
                  "All"),
       StatusCode::kBadRequest, "length 9 of field 5 runs past the end"},
      {"compressed", DeleteBody("v1", "") + Len(3, "gzip"), StatusCode::kUnsupportedMediaType,
       "protobuf body with contentEncoding \"gzip\" is not supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<json> got = DecodeDeleteOptionsProtobuf(c.body);
    ASSERT_FALSE(got.ok()) << got->dump();
    EXPECT_EQ(got.status().code(), c.code) << got.status().ToString();
    EXPECT_NE(got.status().message().find(c.message), std::string_view::npos)
        << "message: " << got.status().message() << "\nwant: " << c.message;
  }
}

// Every prefix and random byte flips of a full DeleteOptions body never crash or read out of
// bounds (run under ASan): each decodes, or fails as a 400 (415 for a contentEncoding).
TEST(ProtobufTest, MangledDeleteOptionsNeverCrash) {
  const std::string body =
      DeleteBody("apps/v1", Var(1, 30) + Len(2, Len(1, "uid-1") + Len(2, "42")) + Var(3, 0) +
                                Len(4, "Background") + Len(5, "All")) +
      Len(3, "") + Len(4, "");
  ASSERT_TRUE(DecodeDeleteOptionsProtobuf(body).ok());
  for (std::size_t size = 0; size < body.size(); ++size) {
    const std::string prefix = body.substr(0, size);  // a fresh copy: ASan sees a read past it
    Result<json> got = DecodeDeleteOptionsProtobuf(prefix);
    if (!got.ok()) {
      EXPECT_EQ(got.status().code(), StatusCode::kBadRequest) << got.status().ToString();
    }
  }
  const std::uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int round = 0; round < 2000; ++round) {
    std::string mutated = body;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < flips; ++i) {
      const std::size_t at = 4 + rng() % (mutated.size() - 4);
      mutated[at] = static_cast<char>(rng() % 2 == 0 ? mutated[at] ^ (1 << (rng() % 8))
                                                     : static_cast<char>(rng()));
    }
    Result<json> got = DecodeDeleteOptionsProtobuf(mutated);
    if (!got.ok()) {
      EXPECT_TRUE(got.status().code() == StatusCode::kBadRequest ||
                  got.status().code() == StatusCode::kUnsupportedMediaType)
          << got.status().ToString();
    } else {
      EXPECT_TRUE(got->is_object());
      EXPECT_FALSE(got->dump().empty());
    }
  }
}

}  // namespace
}  // namespace slicewright::apiserver
