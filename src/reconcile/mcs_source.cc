#include "slicewright/reconcile/mcs_source.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "slicewright/model/well_known.h"

namespace slicewright::reconcile {
namespace {

// Groups the endpoints of `slices` by address type and port set; `keep_local` keeps the fields
// that only mean something in the cluster the endpoints come from.
void AddGroups(std::span<const model::EndpointSlice> slices, bool keep_local,
               DesiredEndpoints& desired) {
  std::map<std::pair<std::string, std::string>, EndpointGroup> groups;
  for (const model::EndpointSlice& slice : slices) {
    if (slice.metadata.deletion_timestamp) continue;
    EndpointGroup& group = groups[{slice.address_type, PortMapKey(slice.ports)}];
    group.address_type = slice.address_type;
    group.ports = slice.ports;
    for (const model::Endpoint& endpoint : slice.endpoints) {
      model::Endpoint& copy = group.endpoints.emplace_back(endpoint);
      if (!keep_local) {
        copy.node_name.reset();
        copy.target_ref.reset();
        copy.hints = std::nullopt;
      }
    }
  }
  for (auto& [key, group] : groups) {
    if (std::find(desired.address_types.begin(), desired.address_types.end(), group.address_type) ==
        desired.address_types.end()) {
      desired.address_types.push_back(group.address_type);
    }
    desired.groups.push_back(std::move(group));
  }
}

// The slices' owner: the object `metadata` describes.
Owner OwnerOf(std::string_view api_version, std::string_view kind,
              const model::ObjectMeta& metadata) {
  Owner owner;
  owner.api_version = std::string(api_version);
  owner.kind = std::string(kind);
  owner.namespace_ = metadata.namespace_;
  owner.name = metadata.name;
  owner.uid = metadata.uid;
  owner.being_deleted = metadata.deletion_timestamp.has_value();
  return owner;
}

}  // namespace

DesiredEndpoints DesiredBrokerSlices(const model::ServiceExportRecord& record,
                                     std::span<const model::EndpointSlice> local_slices) {
  DesiredEndpoints desired;
  desired.owner =
      OwnerOf(model::kMcsRecordApiVersion, model::kKindServiceExportRecord, record.metadata);
  desired.labels = {
      {std::string(model::kLabelMcsServiceName), record.spec.name},
      {std::string(model::kLabelMcsSourceCluster), record.spec.cluster},
      {std::string(model::kLabelMcsServiceNamespace), record.spec.namespace_},
      {std::string(model::kLabelManagedBy), std::string(model::kManagedByMcs)},
  };
  AddGroups(local_slices, /*keep_local=*/false, desired);
  return desired;
}

DesiredEndpoints DesiredImportedSlices(const model::ServiceImport& service_import,
                                       std::string_view source_cluster,
                                       std::string_view derived_service,
                                       std::span<const model::EndpointSlice> broker_slices) {
  DesiredEndpoints desired;
  desired.owner =
      OwnerOf(model::kMcsApiVersion, model::kKindServiceImport, service_import.metadata);
  desired.labels = {
      {std::string(model::kLabelMcsServiceName), service_import.metadata.name},
      {std::string(model::kLabelMcsSourceCluster), std::string(source_cluster)},
      {std::string(model::kLabelManagedBy), std::string(model::kManagedByMcs)},
  };
  if (!derived_service.empty()) {
    desired.labels[std::string(model::kLabelServiceName)] = std::string(derived_service);
  }
  const std::vector<std::string>& families = service_import.spec.ip_families;
  if (families.empty()) {
    AddGroups(broker_slices, /*keep_local=*/true, desired);
    return desired;
  }
  std::vector<model::EndpointSlice> of_families;
  for (const model::EndpointSlice& slice : broker_slices) {
    if (std::find(families.begin(), families.end(), slice.address_type) != families.end()) {
      of_families.push_back(slice);
    }
  }
  AddGroups(of_families, /*keep_local=*/true, desired);
  return desired;
}

std::string BrokerSliceOwnerKey(const model::ObjectMeta& slice) {
  const auto label = [&slice](std::string_view key) {
    auto it = slice.labels.find(key);
    return it == slice.labels.end() ? std::string() : it->second;
  };
  return model::NamespacedName(slice.namespace_, label(model::kLabelMcsServiceName) + "." +
                                                     label(model::kLabelMcsServiceNamespace) + "." +
                                                     label(model::kLabelMcsSourceCluster));
}

std::string ImportedSliceOwnerKey(const model::ObjectMeta& slice) {
  const auto label = [&slice](std::string_view key) {
    auto it = slice.labels.find(key);
    return it == slice.labels.end() ? std::string() : it->second;
  };
  return model::NamespacedName(slice.namespace_, label(model::kLabelMcsServiceName) + "/" +
                                                     label(model::kLabelMcsSourceCluster));
}

PlanOptions McsPlanOptions(int max_endpoints_per_slice) {
  PlanOptions options;
  options.max_endpoints_per_slice = max_endpoints_per_slice;
  options.managed_by = std::string(model::kManagedByMcs);
  options.placeholder_enabled = false;
  options.ownership_enforced = true;
  // Every label is ours: a change of any (a derived Service renamed) rewrites the slice.
  options.labels_ignored_for_change = {};
  return options;
}

}  // namespace slicewright::reconcile
