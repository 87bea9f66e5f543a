// A CRD version's structural schema applied to custom resources as kube-apiserver applies it:
// pruning of unknown fields, defaults, and validation with kube's field-error messages. Compiled
// once per CRD version; a CompiledSchema is immutable and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slicewright/base/result.h"
#include "slicewright/base/status.h"

namespace slicewright::apiserver {

namespace internal {
struct SchemaNode;
}  // namespace internal

class CompiledSchema final {
 public:
  // Compiles `schema` (an openAPIV3Schema object). Malformed keywords are refused rather than
  // ignored: the causes name them under `path` ("spec.versions[0].schema.openAPIV3Schema" +
  // ".properties[spec].maxLength") with kube's wording where it has one (an unknown `type` is
  // `Unsupported value`, a pattern that does not compile `must be a valid regular expression`).
  // kInvalid with one cause per problem. Never throws, whatever the input.
  static Result<std::shared_ptr<const CompiledSchema>> Compile(const nlohmann::json& schema,
                                                               std::string_view path);
  ~CompiledSchema();
  CompiledSchema(const CompiledSchema&) = delete;
  CompiledSchema& operator=(const CompiledSchema&) = delete;

  // Drops what the schema does not declare, as kube-apiserver's decoder does for a resource root:
  // object fields that are neither a property nor allowed by additionalProperties, except under
  // x-kubernetes-preserve-unknown-fields and except apiVersion, kind and metadata at the root (and
  // in x-kubernetes-embedded-resource objects); then nulls where the schema is not nullable and has
  // no default. Returns the dropped fields' paths, sorted, as kube reports them with
  // fieldValidation=Strict or Warn: "spec.foo", "spec.ports[0].bar".
  std::vector<std::string> Prune(nlohmann::json& object) const;

  // Fills in `default`s for missing fields (and non-nullable nulls), deep-copied, top down.
  void ApplyDefaults(nlohmann::json& object) const;

  // Validates a whole object against the schema: type (and nullable), enum, required,
  // minimum/maximum (exclusive), multipleOf, minLength/maxLength (code points), pattern
  // (ECMAScript), format date-time/date/uuid/byte/ipv4/ipv6 on strings and int32/int64/float
  // ranges on numbers, minItems/maxItems, minProperties/maxProperties, additionalProperties; then
  // x-kubernetes-list-type set/map uniqueness. Causes as kube's field.Error: field
  // "spec.ips", message "Too many: 3: must have at most 2 items" (reason FieldValueTooMany).
  std::vector<StatusCause> Validate(const nlohmann::json& object) const;

  // As Validate, for a write to the status subresource: only `status` (when present) against the
  // schema's properties.status, its fields named "status.…", and list types over the whole object.
  std::vector<StatusCause> ValidateStatus(const nlohmann::json& object) const;

  // The x-kubernetes-list-type checks alone: a set without duplicates, a map without two items of
  // the same x-kubernetes-list-map-keys ("spec.conditions[1]: Duplicate value: map[string]
  // interface {}{\"type\":\"Ready\"}").
  std::vector<StatusCause> ValidateListTypes(const nlohmann::json& object) const;

 private:
  explicit CompiledSchema(std::unique_ptr<internal::SchemaNode> root);
  std::unique_ptr<internal::SchemaNode> root_;
};

// The schema errors of a write, as kube-apiserver's custom resource strategy finds them: for a
// create (`old` null) or update of the main resource, Validate (with the list types); for the
// status subresource ValidateStatus. On update, kube's ratcheting: an error about a value the
// stored `old` holds unchanged at the same path is dropped (a missing required field is judged on
// its parent), and list-type errors count only when `old`'s list types were valid.
std::vector<StatusCause> ValidateCustomResource(const CompiledSchema& schema,
                                                const nlohmann::json& object,
                                                const nlohmann::json* old, bool status_subresource);

}  // namespace slicewright::apiserver
