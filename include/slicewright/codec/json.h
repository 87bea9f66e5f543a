// Decoding Kubernetes objects from JSON (simdjson) exactly as an API server or `kubectl get -o
// json` writes them, and encoding the objects the controllers write (nlohmann). Reentrant.
// Errors name the document, the object and the field path:
//   "pods.json: pods/default/web-1: .status.podIPs[0].ip: expected string".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"

namespace slicewright::codec {

// Every object found in one or more documents, by kind, in input order. Kinds slicewright does not
// model are counted in `skipped_kinds` and otherwise ignored.
struct ObjectSet {
  std::vector<model::Service> services;
  std::vector<model::Pod> pods;
  std::vector<model::Node> nodes;
  std::vector<model::EndpointSlice> endpoint_slices;
  std::vector<model::Endpoints> endpoints;
  std::vector<model::Namespace> namespaces;
  std::vector<model::Event> events;
  std::vector<std::string> skipped_kinds;  // "apps/v1 Deployment", once per object

  // Moves every object of `other` to the end of this set.
  void Append(ObjectSet&& other);
};

// Decodes one JSON document: a single object, or a `List` / `*List` (e.g. ServiceList) whose
// items may mix kinds; items of a typed list may omit apiVersion and kind. `document_name`
// prefixes errors. Unknown fields are ignored; null anywhere decodes as Go's encoding/json does
// (the zero value: absent field, empty list, "" map value); the API server's defaults that the
// model relies on are applied (ServicePort.targetPort = port, protocol TCP). A wrong type,
// malformed text or a list item of the wrong kind is kBadRequest; ToString() reads
//   "pods.json: pods/default/web-1: .status.podIPs[0].ip: expected string"
//   "pods.json: items[3]: .kind: expected Pod in a v1 PodList, got Service"
//   "pods.json: malformed JSON at byte 57: <simdjson's message>"
// object() holds "pods.json: pods/default/web-1" ("resource/name" for cluster-scoped kinds,
// "items[i]" when the name is unreadable), field() the path, message() the rest.
Result<ObjectSet> DecodeJsonDocument(std::string_view text, std::string_view document_name);

// Decodes one or more YAML documents separated by "---" (as `kubectl get -o yaml` writes them);
// each document is a single object or a List; empty documents are skipped. Plain scalars resolve
// as kubectl's reader (go-yaml v2) resolves them: `80` is an integer, `"80"` a string, `yes`/`on`
// booleans, `~`/`null` null; aliases are expanded (bounded). Errors name the document, its 1-based
// index and, when known, the line: "pods.yaml: document 2, line 14: pods/default/web-1:
// .status.podIPs[0].ip: expected string", "pods.yaml: document 1, line 5, column 10: malformed
// YAML: illegal map value".
Result<ObjectSet> DecodeYamlDocuments(std::string_view text, std::string_view document_name);

// JSON if the first non-blank character is '{' (or '['), YAML otherwise.
Result<ObjectSet> DecodeDocuments(std::string_view text, std::string_view document_name);

// Single-object decoders for the API client. The JSON must be one object of that kind; its
// apiVersion and kind may be omitted but must match when present. Errors as above, without a
// document name ("pods/default/web-1: .spec.nodeName: expected string").
Result<model::Service> DecodeService(std::string_view json);
Result<model::Pod> DecodePod(std::string_view json);
Result<model::Node> DecodeNode(std::string_view json);
Result<model::EndpointSlice> DecodeEndpointSlice(std::string_view json);
// Only the metadata of one EndpointSlice, the rest parsed but not read: what a writer needs of the
// object an API server answers a create or update with. Errors as DecodeEndpointSlice's.
Result<model::ObjectMeta> DecodeEndpointSliceMetadata(std::string_view json);
Result<model::Endpoints> DecodeEndpoints(std::string_view json);
Result<model::Namespace> DecodeNamespace(std::string_view json);
Result<model::Event> DecodeEvent(std::string_view json);

// One event of a watch stream: a line `{"type":"ADDED","object":{...}}` as kube-apiserver writes
// it (one per line with `application/json;stream=watch`).
enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
template <typename T>
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  // The object for ADDED, MODIFIED and DELETED (a DELETED object is its last state); for
  // BOOKMARK the object as sent: only metadata.resourceVersion (and annotations) set.
  T object;
  // For ERROR: the metav1.Status the server sent as a Status (kExpired for 410 Gone: relist).
  Status error;
};

// Decodes one watch event line in a single parse. The object must be of the kind decoded (its
// apiVersion and kind may be omitted). Errors as the single-object decoders, prefixed with
// "watch event": "watch event: .type: unknown watch event type \"FOO\"", "watch event:
// pods/default/web-1: .spec.nodeName: expected string". A malformed line never crashes.
Result<WatchEvent<model::Service>> DecodeServiceWatchEvent(std::string_view line);
Result<WatchEvent<model::Pod>> DecodePodWatchEvent(std::string_view line);
Result<WatchEvent<model::Node>> DecodeNodeWatchEvent(std::string_view line);
Result<WatchEvent<model::EndpointSlice>> DecodeEndpointSliceWatchEvent(std::string_view line);
Result<WatchEvent<model::Endpoints>> DecodeEndpointsWatchEvent(std::string_view line);
Result<WatchEvent<model::Namespace>> DecodeNamespaceWatchEvent(std::string_view line);
Result<WatchEvent<model::Event>> DecodeEventWatchEvent(std::string_view line);

// One page of a LIST answer as an API server writes it (a PodList, ServiceList...): its items and
// the list metadata a reflector needs.
template <typename T>
struct ListPage {
  std::vector<T> items;
  std::string resource_version;  // metadata.resourceVersion: where a watch continues from
  std::string continue_token;    // metadata.continue: "" on the last page
  std::optional<std::int64_t> remaining_item_count;  // metadata.remainingItemCount
  // Items that could not be decoded, left out of `items` so one bad object does not stop a cache
  // from syncing; each error names the item as below.
  std::vector<Status> item_errors;
};

// Decodes a typed list ("PodList", apiVersion "v1") or a "List" whose items are all of the kind
// decoded; items may omit apiVersion and kind but must match when present; null items are skipped.
// Malformed text or a list of another kind fails ("list: .kind: expected PodList, got
// ServiceList"); an item that does not decode goes to item_errors ("list: pods/default/web-1:
// .spec.nodeName: expected string", "list: items[3]: expected v1 Pod, got v1 Service").
Result<ListPage<model::Service>> DecodeServiceList(std::string_view json);
Result<ListPage<model::Pod>> DecodePodList(std::string_view json);
Result<ListPage<model::Node>> DecodeNodeList(std::string_view json);
Result<ListPage<model::EndpointSlice>> DecodeEndpointSliceList(std::string_view json);
Result<ListPage<model::Endpoints>> DecodeEndpointsList(std::string_view json);
Result<ListPage<model::Namespace>> DecodeNamespaceList(std::string_view json);
Result<ListPage<model::Event>> DecodeEventList(std::string_view json);

// The error an API server answered with: its metav1.Status body (`reason`, `code`, `message`)
// as a Status with the matching code (by reason, else by HTTP status: 410 is kExpired); a body
// that is not a Status gives the HTTP status's code and "the server answered HTTP <n>: <the
// first 200 bytes of the body>". Never fails and never returns OK.
Status DecodeStatusResponse(std::string_view body, int http_status);

// Encoders: compact JSON a real API server accepts, with apiVersion and kind set, empty optional
// fields omitted (Go's omitempty; fields Go always writes, such as EndpointSlice endpoints and
// ports, are written as []), and keys in the Go structs' order. Times are whole-second RFC 3339, as
// metav1.Time marshals, so decode(encode(x)) == x for objects whose times are whole seconds.
// Invalid UTF-8 in a string is replaced by U+FFFD. Never fails.
std::string EncodeEndpointSlice(const model::EndpointSlice& slice);
std::string EncodeEndpoints(const model::Endpoints& endpoints);
std::string EncodeService(const model::Service& service);
std::string EncodePod(const model::Pod& pod);
std::string EncodeNode(const model::Node& node);
std::string EncodeNamespace(const model::Namespace& ns);
std::string EncodeEvent(const model::Event& event);

// `text` as a JSON string literal, quotes included (invalid UTF-8 replaced by U+FFFD), for the
// layers above that write small JSON documents of their own without a JSON library.
std::string QuoteJsonString(std::string_view text);

// Converts a JSON document to block YAML (for `-o yaml` output) laid out as kubectl prints it:
// keys in the JSON's order, a sequence under a key not indented, strings quoted only when they
// would read back as another type or are not valid plain scalars, multi-line strings as literal
// blocks. kBadRequest for malformed JSON or nesting deeper than 256 levels.
Result<std::string> JsonToYaml(std::string_view json);

}  // namespace slicewright::codec
