// Per-kind rules the REST layer applies to objects before they are stored, as kube-apiserver's
// registry strategies do: defaulting, validation with upstream's field-error messages, the
// spec/status split, generation bumps, and the attributes selectors match on. Pure functions over
// JSON documents; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/status.h"

#include "apiserver/api/resources.h"
#include "apiserver/rest/json_util.h"
#include "apiserver/storage/storage.h"

namespace slicewright::apiserver {

// Collects field errors and renders them as kube-apiserver does:
// `Service "web" is invalid: spec.ports: Required value` or `... is invalid: [a, b]`, with one
// metav1.StatusCause per error so kubectl can list them.
class FieldErrors final {
 public:
  void Required(std::string_view field, std::string_view detail = "");
  // `value` is shown as Go's %#v would: strings quoted, numbers bare.
  void Invalid(std::string_view field, const Json& value, std::string_view detail);
  void Forbidden(std::string_view field, std::string_view detail);
  void NotSupported(std::string_view field, const Json& value,
                    const std::vector<std::string_view>& supported);
  void Duplicate(std::string_view field, const Json& value);
  void TooMany(std::string_view field, std::size_t actual, std::size_t max);
  void TooLong(std::string_view field, std::size_t max_bytes);
  // `other`'s errors with `prefix` put before each field ("spec.template." + "spec.containers").
  void AddPrefixed(std::string_view prefix, const FieldErrors& other);
  // Errors found elsewhere, already in metav1.StatusCause form (a custom resource's schema
  // errors, apiserver/api/schema_validation.h).
  void Add(const std::vector<StatusCause>& causes);

  bool empty() const { return errors_.empty(); }
  // Each error as "field: body", in the order found.
  std::vector<std::string> errors() const;
  // kInvalid with the aggregated message and one cause per error; OK when there are no errors.
  Status ToStatus(std::string_view kind, std::string_view name) const;

 private:
  void Push(std::string_view reason, std::string_view field, std::string body);

  // reason: the metav1.CauseType ("FieldValueInvalid"); message: the error body after the field.
  std::vector<StatusCause> errors_;
};

// The Go-%#v-like rendering FieldErrors uses for values.
std::string GoValue(const Json& value);

// Validates metadata.name (or generateName), labels and annotations with the name rule of the
// resource (DNS-1123 label for namespaces, DNS-1035 label for services, a path segment for
// events and the RBAC kinds, DNS-1123 subdomain otherwise).
void ValidateObjectMeta(const ResourceInfo& info, const Json& object, bool is_create,
                        FieldErrors& errors);

// Kind-specific defaults kube-apiserver applies on create (and on update for the fields it
// defaults there too): Service ports' protocol and targetPort, Pod restartPolicy, ...
void ApplyDefaults(const ResourceInfo& info, Json& object);

// Kind-specific validation of a new object (`old` null) or an update (`old` the stored version).
void ValidateKind(const ResourceInfo& info, const Json& object, const Json* old,
                  FieldErrors& errors);

// For an update of the main resource of a kind with a status subresource: the stored status is
// kept. For an update of the status subresource: everything but status is kept from `old`.
void ApplyStatusSplit(const ResourceInfo& info, bool status_subresource, const Json& old,
                      Json& updated);

// True when `updated` differs from `old` in what bumps metadata.generation: everything but
// metadata (and status for kinds with a status subresource).
bool GenerationChanged(const ResourceInfo& info, const Json& old, const Json& updated);
// Whether the resource maintains metadata.generation.
bool TracksGeneration(const ResourceInfo& info);

// Labels, selectable fields, uid and owner uids of an object, for selectors and the collector.
ObjectAttributes ComputeAttributes(const ResourceInfo& info, const Json& object);

// The dotted-path value of an object as a field selector sees it ("" when absent; numbers and
// booleans as text).
std::string FieldValue(const Json& object, std::string_view dotted_path);

}  // namespace slicewright::apiserver
