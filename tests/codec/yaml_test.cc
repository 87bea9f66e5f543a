#include "slicewright/codec/yaml.h"

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/codec/json.h"

#include "codec/codec_test_util.h"
#include "codec/internal.h"

namespace slicewright::codec {
namespace {

using testing::ErrorOf;
using testing::ReadTestdata;

ObjectSet MustDecodeYaml(std::string_view text, std::string_view name = "test.yaml") {
  Result<ObjectSet> result = DecodeYamlDocuments(text, name);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ObjectSet{};
}

ObjectSet MustDecodeJson(std::string_view text) {
  Result<ObjectSet> result = DecodeJsonDocument(text, "test.json");
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ObjectSet{};
}

void ExpectSameObjects(const ObjectSet& a, const ObjectSet& b) {
  EXPECT_EQ(a.services, b.services);
  EXPECT_EQ(a.pods, b.pods);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.endpoint_slices, b.endpoint_slices);
  EXPECT_EQ(a.endpoints, b.endpoints);
  EXPECT_EQ(a.namespaces, b.namespaces);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.skipped_kinds, b.skipped_kinds);
}

// `kubectl get -o yaml` of a mixed List decodes to exactly what its JSON form decodes to.
TEST(YamlDecodeTest, DecodesKubectlListLikeItsJson) {
  const ObjectSet yaml = MustDecodeYaml(ReadTestdata("list.yaml"), "list.yaml");
  ExpectSameObjects(yaml, MustDecodeJson(ReadTestdata("list.json")));
  EXPECT_EQ(yaml.endpoints.size(), 1u);
}

// A multi-document stream (leading "---", comments, an empty document, a literal block, `~`)
// decodes to the same Services as the JSON List.
TEST(YamlDecodeTest, DecodesMultiDocumentStream) {
  const ObjectSet yaml = MustDecodeYaml(ReadTestdata("services.yaml"), "services.yaml");
  ASSERT_EQ(yaml.services.size(), 6u);
  ExpectSameObjects(yaml, MustDecodeJson(ReadTestdata("services.json")));
}

// Streams with no object in them are empty, not errors.
TEST(YamlDecodeTest, SkipsEmptyDocuments) {
  for (std::string_view text :
       {"", "\n", "# only a comment\n", "---\n", "---\n---\n...\n", "~\n"}) {
    SCOPED_TRACE(text);
    const ObjectSet set = MustDecodeYaml(text);
    EXPECT_TRUE(set.pods.empty());
    EXPECT_TRUE(set.skipped_kinds.empty());
  }
}

// Plain scalars resolve as kubectl's YAML reader (go-yaml v2) resolves them; quoted ones are
// always strings.
TEST(YamlDecodeTest, ResolvesPlainScalarsLikeKubectl) {
  using internal::PlainScalarKind;
  struct Case {
    std::string_view text;
    PlainScalarKind kind;
    std::string_view number;
  };
  const Case cases[] = {
      {"80", PlainScalarKind::kInt, "80"},
      {"-7", PlainScalarKind::kInt, "-7"},
      {"+7", PlainScalarKind::kInt, "7"},
      {"0", PlainScalarKind::kInt, "0"},
      {"0x1F", PlainScalarKind::kInt, "31"},
      {"0o17", PlainScalarKind::kInt, "15"},
      {"0b101", PlainScalarKind::kInt, "5"},
      {"0755", PlainScalarKind::kInt, "493"},
      {"1_000", PlainScalarKind::kInt, "1000"},
      {"9223372036854775808", PlainScalarKind::kInt, "9223372036854775808"},
      {"-9223372036854775808", PlainScalarKind::kInt, "-9223372036854775808"},
      {"08", PlainScalarKind::kFloat, "8"},
      {"1.5", PlainScalarKind::kFloat, "1.5"},
      {"80.0", PlainScalarKind::kFloat, "80"},
      {".5", PlainScalarKind::kFloat, "0.5"},
      {"1e3", PlainScalarKind::kFloat, "1000"},
      {"-2.5E-7", PlainScalarKind::kFloat, "-2.5e-07"},
      {"1e30", PlainScalarKind::kFloat, "1e+30"},
      {".inf", PlainScalarKind::kFloat, ""},
      {"-.Inf", PlainScalarKind::kFloat, ""},
      {".NaN", PlainScalarKind::kFloat, ""},
      {"true", PlainScalarKind::kBool, ""},
      {"False", PlainScalarKind::kBool, ""},
      {"yes", PlainScalarKind::kBool, ""},
      {"OFF", PlainScalarKind::kBool, ""},
      {"y", PlainScalarKind::kBool, ""},
      {"~", PlainScalarKind::kNull, ""},
      {"null", PlainScalarKind::kNull, ""},
      {"NULL", PlainScalarKind::kNull, ""},
      {"", PlainScalarKind::kNull, ""},
      {"nginx:1.25", PlainScalarKind::kString, ""},
      {"10.244.1.7", PlainScalarKind::kString, ""},
      {"fd00::1", PlainScalarKind::kString, ""},
      {"2024-05-14T09:30:19Z", PlainScalarKind::kString, ""},
      {"1.2.3", PlainScalarKind::kString, ""},
      {"0x", PlainScalarKind::kString, ""},
      {"12:30", PlainScalarKind::kString, ""},
      {"nullable", PlainScalarKind::kString, ""},
      {"yess", PlainScalarKind::kString, ""},
      {"3500m", PlainScalarKind::kString, ""},
      {"-", PlainScalarKind::kString, ""},
      {".", PlainScalarKind::kString, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const internal::PlainScalar scalar = internal::ResolvePlainScalar(c.text);
    EXPECT_EQ(scalar.kind, c.kind);
    if (c.kind == PlainScalarKind::kInt || c.kind == PlainScalarKind::kFloat) {
      EXPECT_EQ(scalar.number, c.number);
    }
  }
  EXPECT_TRUE(internal::ResolvePlainScalar("Yes").bool_value);
  EXPECT_FALSE(internal::ResolvePlainScalar("no").bool_value);
}

// Scalars reach the model with their YAML types: `80` and `0x50` are integers, `80.0` too (as
// with kubectl), `"80"` is a string, explicit !!str forces a string.
TEST(YamlDecodeTest, ConvertsScalarTypes) {
  const ObjectSet set = MustDecodeYaml(R"(apiVersion: v1
kind: Service
metadata:
  name: web
  labels: {version: !!str 1.10, quoted: "true", single: 'null', plain: hello world}
spec:
  selector: {}
  publishNotReadyAddresses: yes
  ports:
  - {port: 80, targetPort: "8080", name: a}
  - {port: 0x50, targetPort: 8080.0, name: b}
  - port: 80.0
    nodePort: 3_0080
    targetPort: http
)");
  ASSERT_EQ(set.services.size(), 1u);
  const model::Service& service = set.services[0];
  EXPECT_EQ(
      service.metadata.labels,
      (model::StringMap{
          {"plain", "hello world"}, {"quoted", "true"}, {"single", "null"}, {"version", "1.10"}}));
  ASSERT_TRUE(service.spec.selector.has_value());
  EXPECT_TRUE(service.spec.publish_not_ready_addresses);
  ASSERT_EQ(service.spec.ports.size(), 3u);
  EXPECT_EQ(service.spec.ports[0].target_port, model::IntOrString::FromString("8080"));
  EXPECT_EQ(service.spec.ports[1].port, 80);
  EXPECT_EQ(service.spec.ports[1].target_port, model::IntOrString::FromInt(8080));
  EXPECT_EQ(service.spec.ports[2].port, 80);
  EXPECT_EQ(service.spec.ports[2].node_port, 30080);
}

// Anchors and aliases expand as YAML defines them; keys that look like numbers become strings.
TEST(YamlDecodeTest, ExpandsAliases) {
  const ObjectSet set = MustDecodeYaml(R"(apiVersion: v1
kind: Service
metadata:
  name: &name web
  labels: &labels
    app: *name
    80: port
spec:
  selector: *labels
)");
  ASSERT_EQ(set.services.size(), 1u);
  const model::StringMap labels{{"80", "port"}, {"app", "web"}};
  EXPECT_EQ(set.services[0].metadata.labels, labels);
  EXPECT_EQ(set.services[0].spec.selector, labels);
}

// Every bad YAML input is kBadRequest naming the document, its 1-based index and, when known, the
// line (and column for syntax errors); decode errors carry the object and field path too.
TEST(YamlDecodeTest, RejectsBadInputWithFullMessages) {
  struct Case {
    std::string_view name;
    std::string text;
    std::string_view want;
  };
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    const char prev = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + "]\n";
  }
  const Case cases[] = {
      {"type error with line",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: Pod\n"
       "metadata:\n  name: web-1\n  namespace: default\nstatus:\n  podIPs:\n  - ip: 10.0.0.1\n"
       "  - ip: 7\n",
       "pods.yaml: document 2, line 14: pods/default/web-1: .status.podIPs[1].ip: expected string"},
      {"type error inside a List",
       "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n"
       "    name: s\n    namespace: d\n  spec:\n    ports:\n    - port: \"80\"\n",
       "pods.yaml: document 1, line 11: services/d/s: .spec.ports[0].port: expected integer"},
      {"bool where a string is expected",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n  labels:\n    enabled: yes\n",
       "pods.yaml: document 1, line 6: nodes/node-1: .metadata.labels[enabled]: expected string"},
      {"list item of the wrong kind", "apiVersion: v1\nkind: PodList\nitems:\n- kind: Service\n",
       "pods.yaml: document 1, line 4: items[0]: .kind: expected Pod in a v1 PodList, got Service"},
      {"syntax error", "apiVersion: v1\nkind: Pod\n---\nmetadata:\n  name: a: b\n",
       "pods.yaml: document 2, line 5, column 10: malformed YAML: illegal map value"},
      {"unclosed flow", "a: [1, 2\n",
       "pods.yaml: document 1, line 2, column 1: malformed YAML: end of sequence flow not found"},
      {"stray comma", "apiVersion: v1\nkind: Pod\n---\n,\n",
       "pods.yaml: document 3, line 4, column 1: malformed YAML: unexpected ','"},
      {"leading comma", ",\"96\"[4f",
       "pods.yaml: document 1, line 1, column 1: malformed YAML: unexpected ','"},
      {"scalar document", "just text\n",
       "pods.yaml: document 1: expected a JSON object at the top level"},
      {"infinity", "apiVersion: v1\nkind: Event\ncount: .inf\n",
       "pods.yaml: document 1, line 3: .inf cannot be represented in JSON"},
      {"wrong explicit tag", "apiVersion: v1\nkind: Event\ncount: !!int abc\n",
       "pods.yaml: document 1, line 3: invalid !!int value"},
      {"recursive alias", "apiVersion: v1\nkind: Pod\nx: &x [*x]\n",
       "pods.yaml: document 1, line 3: alias refers to an unknown or enclosing anchor"},
      {"merge key", "base: &b {app: web}\nmetadata:\n  labels:\n    <<: *b\n",
       "pods.yaml: document 1, line 4: YAML merge keys (<<) are not supported"},
      {"complex key", "? [a]\n: 1\n",
       "pods.yaml: document 1, line 1: mapping keys must be scalars"},
      {"alias bomb", bomb, "pods.yaml: document 1, line 8: aliases expand beyond 67108864 bytes"},
      {"deep nesting", std::string(300, '[') + std::string(300, ']'),
       "pods.yaml: document 1, line 1: YAML nests deeper than 256 levels"},
      {"invalid UTF-8", "apiVersion: v1\nkind: Pod\nmetadata: {name: \"\xC3\x28\"}\n",
       "pods.yaml: malformed YAML: not valid UTF-8"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Status status = ErrorOf(DecodeYamlDocuments(c.text, "pods.yaml"));
    EXPECT_EQ(status.code(), StatusCode::kBadRequest);
    EXPECT_EQ(status.ToString(), c.want);
  }
}

// yaml-cpp's own recursion guard stops nesting far beyond ours, without exhausting the stack.
TEST(YamlDecodeTest, SurvivesVeryDeepNesting) {
  const Status status = ErrorOf(DecodeYamlDocuments(std::string(100000, '['), "deep.yaml"));
  EXPECT_EQ(status.code(), StatusCode::kBadRequest);
  EXPECT_EQ(status.ToString(),
            "deep.yaml: document 1, line 1, column 1: malformed YAML: nesting too deep");
}

// JsonToYaml prints block YAML as kubectl does: keys in JSON order, sequences under a key not
// indented, strings quoted only when they would read back as something else.
TEST(JsonToYamlTest, PrintsKubectlStyle) {
  const Result<std::string> yaml = JsonToYaml(R"({"apiVersion":"v1","kind":"Service",
    "metadata":{"name":"web","labels":{"version":"1.10","enabled":"true","empty":"",
    "when":"2024-05-14T09:30:19Z","ip":"10.0.0.1","star":"*","colon":"a: b","dash":"-c",
    "yes":"yes","null":null,"lead":" x","tab":"a\tb","quote":"it's","80":"port"},
    "annotations":{"last-applied":"{\"a\":1}\n","two":"line1\nline2","keep":"x\n\n"}},
    "spec":{"ports":[{"name":"http","port":80,"targetPort":"8080"},{"port":53.5}],
    "selector":{},"ipFamilies":[],"nested":[[1,2],[]],"flag":false,"items":[{}]}})");
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  EXPECT_EQ(*yaml, R"(apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    version: "1.10"
    enabled: "true"
    empty: ""
    when: "2024-05-14T09:30:19Z"
    ip: 10.0.0.1
    star: '*'
    colon: 'a: b'
    dash: -c
    "yes": "yes"
    "null": null
    lead: ' x'
    tab: "a\tb"
    quote: it's
    "80": port
  annotations:
    last-applied: |
      {"a":1}
    two: |-
      line1
      line2
    keep: |+
      x

spec:
  ports:
  - name: http
    port: 80
    targetPort: "8080"
  - port: 53.5
  selector: {}
  ipFamilies: []
  nested:
  - - 1
    - 2
  - []
  flag: false
  items:
  - {}
)");
}

// JSON that is not a document, or nests too deep, is an error rather than partial output.
TEST(JsonToYamlTest, RejectsBadJson) {
  EXPECT_EQ(ErrorOf(JsonToYaml(R"({"a":[1,}])")).ToString(), "malformed JSON at byte 8");
  EXPECT_EQ(ErrorOf(JsonToYaml("")).code(), StatusCode::kBadRequest);
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_EQ(ErrorOf(JsonToYaml(deep)).ToString(), "JSON nests deeper than 256 levels");
  const Result<std::string> scalar = JsonToYaml(R"("80")");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(*scalar, "\"80\"\n");
}

// Printing every testdata document as YAML and reading it back gives the same objects.
TEST(JsonToYamlTest, RoundTripsTestdata) {
  for (std::string_view file :
       {"pods.json", "services.json", "nodes.json", "endpointslices.json", "list.json"}) {
    SCOPED_TRACE(file);
    const std::string json = ReadTestdata(file);
    const Result<std::string> yaml = JsonToYaml(json);
    ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
    ExpectSameObjects(MustDecodeYaml(*yaml, file), MustDecodeJson(json));
  }
}

// Random strings, rich in YAML indicators, numbers and breaks, survive JSON -> YAML -> model
// unchanged: the quoting rules and the reader agree.
TEST(JsonToYamlTest, RoundTripsRandomStrings) {
  const unsigned seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           "0",
                                           "1",
                                           "9",
                                           ".",
                                           "-",
                                           "+",
                                           "_",
                                           ":",
                                           ": ",
                                           " #",
                                           "#",
                                           "'",
                                           "\"",
                                           "\\",
                                           "\n",
                                           "\t",
                                           " ",
                                           "*",
                                           "&",
                                           "!",
                                           "|",
                                           ">",
                                           "%",
                                           "@",
                                           "`",
                                           "?",
                                           ",",
                                           "[",
                                           "]",
                                           "{",
                                           "}",
                                           "~",
                                           "e",
                                           "x",
                                           "0x",
                                           "yes",
                                           "null",
                                           "true",
                                           "2024-",
                                           "é",
                                           "\xE2\x80\xA8",
                                           "\xC2\x85",
                                           "---",
                                           "...",
                                           "\r",
                                           "\x01",
                                           "=",
                                           "<<"};
  for (int i = 0; i < 3000; ++i) {
    std::string value;
    const int count = static_cast<int>(rng() % 6);
    for (int p = 0; p < count; ++p) value += pieces[rng() % pieces.size()];
    std::string json = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n",)";
    json += R"("labels":{)";
    internal::AppendJsonString(json, value);
    json += ":";
    internal::AppendJsonString(json, value);
    json += "}}}";
    const Result<std::string> yaml = JsonToYaml(json);
    ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
    const Result<ObjectSet> set = DecodeYamlDocuments(*yaml, "random.yaml");
    ASSERT_TRUE(set.ok()) << set.status().ToString() << "\n" << *yaml;
    ASSERT_EQ(set->namespaces.size(), 1u) << *yaml;
    EXPECT_EQ(set->namespaces[0].metadata.labels, (model::StringMap{{value, value}})) << *yaml;
  }
}

// Random bytes never crash the YAML reader (the ASan build runs this too).
TEST(YamlDecodeTest, RandomInputNeverCrashes) {
  const unsigned seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::string corpus = ReadTestdata("list.yaml");
  const std::string_view alphabet = "-:?|>&*!'\"[]{},#%@ \n\t0123456789abc~.";
  for (int i = 0; i < 1500; ++i) {
    std::string text = corpus;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.insert(at, std::string(1 + rng() % 4, alphabet[rng() % alphabet.size()]));
          break;
        default:
          text.erase(at, rng() % 32);
          break;
      }
      if (text.empty()) text = "-";
    }
    const Result<ObjectSet> set = DecodeYamlDocuments(text, "fuzz.yaml");
    if (!set.ok()) {
      EXPECT_EQ(set.status().code(), StatusCode::kBadRequest) << text;
    }
  }
}

// YamlToJson converts each non-empty document with go-yaml's scalar rules and skips empty ones.
TEST(YamlToJsonTest, ConvertsDocumentsAndSkipsEmptyOnes) {
  const Result<std::vector<std::string>> out =
      YamlToJson("a: 1\nb: \"2\"\nc: yes\nd: [x, ~]\n---\n---\n~\n---\ne: {}\n", "cfg");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2U);
  EXPECT_EQ((*out)[0], R"({"a":1,"b":"2","c":true,"d":["x",null]})");
  EXPECT_EQ((*out)[1], R"({"e":{}})");
}

// An empty file is no documents, not an error (an empty kubeconfig is valid).
TEST(YamlToJsonTest, EmptyTextIsNoDocuments) {
  const Result<std::vector<std::string>> out = YamlToJson("", "cfg");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(out->empty());
}

// Malformed YAML is kBadRequest naming the document and line.
TEST(YamlToJsonTest, MalformedYamlNamesTheLocation) {
  const Result<std::vector<std::string>> out = YamlToJson("a: [1, 2\nb: c\n", "cfg");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kBadRequest);
  EXPECT_TRUE(out.status().object().starts_with("cfg: document 1, line "))
      << out.status().ToString();
  EXPECT_TRUE(out.status().message().starts_with("malformed YAML: ")) << out.status().ToString();
}

}  // namespace
}  // namespace slicewright::codec
