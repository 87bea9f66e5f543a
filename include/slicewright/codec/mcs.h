// JSON for the Multi-Cluster Services kinds: ServiceExport and ServiceImport
// (multicluster.x-k8s.io), ClusterProperty (about.k8s.io) and the broker's ServiceExportRecord
// (mcs.slicewright.io). Decoded with simdjson, encoded as plain strings. Reentrant.
#pragma once

#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/mcs.h"

namespace slicewright::codec {

// Single objects, list pages and watch event lines, with the contracts of json.h's decoders:
// apiVersion and kind may be omitted but must match when present (ServiceExport and ServiceImport
// accept v1beta1 and v1alpha1; ClusterProperty any version of about.k8s.io); unknown fields are
// ignored and null reads as unset. Malformed input is kBadRequest naming the object and field:
//   "serviceexportrecords/slicewright-mcs/hello.demo.cluster-1: .spec.ports[1].port: expected
//   int32"
// A ServiceExportRecord is also checked against its CRD's schema (required fields, enums), so a
// hand-written record that would not have passed the broker's validation is refused here too:
//   "...: .spec.type: expected ClusterSetIP or Headless, got \"NodePort\"".
// A ServiceImport's status.endpointSliceObjects other than Present/Absent is refused likewise.
// Lists put an item that does not decode into item_errors, as json.h's lists do.
Result<model::ServiceExport> DecodeServiceExport(std::string_view json);
Result<ListPage<model::ServiceExport>> DecodeServiceExportList(std::string_view json);
Result<WatchEvent<model::ServiceExport>> DecodeServiceExportWatchEvent(std::string_view line);

Result<model::ServiceImport> DecodeServiceImport(std::string_view json);
Result<ListPage<model::ServiceImport>> DecodeServiceImportList(std::string_view json);
Result<WatchEvent<model::ServiceImport>> DecodeServiceImportWatchEvent(std::string_view line);

Result<model::ClusterProperty> DecodeClusterProperty(std::string_view json);
Result<ListPage<model::ClusterProperty>> DecodeClusterPropertyList(std::string_view json);
Result<WatchEvent<model::ClusterProperty>> DecodeClusterPropertyWatchEvent(std::string_view line);

Result<model::ServiceExportRecord> DecodeServiceExportRecord(std::string_view json);
Result<ListPage<model::ServiceExportRecord>> DecodeServiceExportRecordList(std::string_view json);
Result<WatchEvent<model::ServiceExportRecord>> DecodeServiceExportRecordWatchEvent(
    std::string_view line);

// Full objects for create and update (PUT): compact JSON with apiVersion (v1beta1, about.k8s.io/
// v1alpha1, mcs.slicewright.io/v1alpha1) and kind, metadata as json.h's encoders write it, empty
// optional fields omitted, keys in the Go structs' order. ServiceExport and ServiceImport include
// their status, so the same body also serves a PUT of the /status subresource. Conditions are
// written as metav1.Condition marshals (lastTransitionTime whole seconds; omitted when unset,
// which a CRD's validation refuses: set it with mcs::SetCondition). ServiceImport ports always
// carry their protocol; spec.ports and spec.type are always written (the CRD requires them).
// decode(encode(x)) == x for objects whose times are whole seconds. Never fails.
std::string EncodeServiceExport(const model::ServiceExport& service_export);
std::string EncodeServiceImport(const model::ServiceImport& service_import);
std::string EncodeClusterProperty(const model::ClusterProperty& property);
std::string EncodeServiceExportRecord(const model::ServiceExportRecord& record);

// Merge patches of the /status subresource: {"status":{...}} with every field the status has
// replaced whole (conditions and clusters as complete lists, an unset endpointSliceObjects as
// null, which removes it).
std::string EncodeServiceExportStatusPatch(const model::ServiceExportStatus& status);
std::string EncodeServiceImportStatusPatch(const model::ServiceImportStatus& status);

}  // namespace slicewright::codec
