// Decoding Kubernetes objects from JSON (simdjson) exactly as an API server or `kubectl get -o
// json` writes them, and encoding the objects the controllers write (nlohmann). Reentrant.
// Errors name the document, the object and the field path:
//   "pods.json: pods/default/web-1: .status.podIPs[0].ip: expected string".
#pragma once

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
// items may mix kinds. `document_name` prefixes errors. Unknown fields are ignored; a wrong type
// or malformed text is an error (kBadRequest) naming the field path.
Result<ObjectSet> DecodeJsonDocument(std::string_view text, std::string_view document_name);

// Decodes one or more YAML documents separated by "---" (as `kubectl get -o yaml` writes them);
// each document is a single object or a List. Errors name the document and its index.
Result<ObjectSet> DecodeYamlDocuments(std::string_view text, std::string_view document_name);

// JSON if the first non-blank character is '{' (or '['), YAML otherwise.
Result<ObjectSet> DecodeDocuments(std::string_view text, std::string_view document_name);

// Single-object decoders for the API client. The JSON must be one object of that kind.
Result<model::Service> DecodeService(std::string_view json);
Result<model::Pod> DecodePod(std::string_view json);
Result<model::Node> DecodeNode(std::string_view json);
Result<model::EndpointSlice> DecodeEndpointSlice(std::string_view json);
Result<model::Endpoints> DecodeEndpoints(std::string_view json);
Result<model::Namespace> DecodeNamespace(std::string_view json);
Result<model::Event> DecodeEvent(std::string_view json);

// Encoders: compact JSON a real API server accepts, with apiVersion and kind set, empty optional
// fields omitted, and keys in a fixed order.
std::string EncodeEndpointSlice(const model::EndpointSlice& slice);
std::string EncodeEndpoints(const model::Endpoints& endpoints);
std::string EncodeService(const model::Service& service);
std::string EncodePod(const model::Pod& pod);
std::string EncodeNode(const model::Node& node);
std::string EncodeNamespace(const model::Namespace& ns);
std::string EncodeEvent(const model::Event& event);

// Converts a JSON document to YAML text (for `-o yaml` output). The JSON must be valid.
Result<std::string> JsonToYaml(std::string_view json);

}  // namespace slicewright::codec
