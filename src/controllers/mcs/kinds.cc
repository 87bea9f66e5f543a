#include "controllers/mcs/kinds.h"

#include "slicewright/codec/mcs.h"

namespace slicewright::controllers::mcs {

client::ResourceRef ServiceExportsResource() {
  return {std::string(model::kMcsGroup), "v1beta1", "serviceexports", true};
}
client::ResourceRef ServiceImportsResource() {
  return {std::string(model::kMcsGroup), "v1beta1", "serviceimports", true};
}
client::ResourceRef ClusterPropertiesResource() {
  return {std::string(model::kAboutGroup), "v1alpha1", "clusterproperties", false};
}
client::ResourceRef ServiceExportRecordsResource() {
  return {std::string(model::kMcsRecordGroup), "v1alpha1", "serviceexportrecords", true};
}

client::KindCodec<model::ServiceExport> ServiceExportCodec() {
  return {ServiceExportsResource(), codec::DecodeServiceExport, codec::DecodeServiceExportList,
          codec::EncodeServiceExport};
}
client::KindCodec<model::ServiceImport> ServiceImportCodec() {
  return {ServiceImportsResource(), codec::DecodeServiceImport, codec::DecodeServiceImportList,
          codec::EncodeServiceImport};
}
client::KindCodec<model::ClusterProperty> ClusterPropertyCodec() {
  return {ClusterPropertiesResource(), codec::DecodeClusterProperty,
          codec::DecodeClusterPropertyList, codec::EncodeClusterProperty};
}
client::KindCodec<model::ServiceExportRecord> ServiceExportRecordCodec() {
  return {ServiceExportRecordsResource(), codec::DecodeServiceExportRecord,
          codec::DecodeServiceExportRecordList, codec::EncodeServiceExportRecord};
}

cache::Kind<model::ServiceExport> ServiceExportKind() {
  return cache::MakeKind(ServiceExportsResource(), codec::DecodeServiceExportList,
                         codec::DecodeServiceExportWatchEvent);
}
cache::Kind<model::ServiceImport> ServiceImportKind() {
  return cache::MakeKind(ServiceImportsResource(), codec::DecodeServiceImportList,
                         codec::DecodeServiceImportWatchEvent);
}
cache::Kind<model::ServiceExportRecord> ServiceExportRecordKind() {
  return cache::MakeKind(ServiceExportRecordsResource(), codec::DecodeServiceExportRecordList,
                         codec::DecodeServiceExportRecordWatchEvent);
}

}  // namespace slicewright::controllers::mcs
