// Where the MCS kinds live and how the agent's clients and informers decode them: ServiceExport and
// ServiceImport (multicluster.x-k8s.io/v1beta1), ClusterProperty (about.k8s.io/v1alpha1, cluster
// scoped) and the broker's ServiceExportRecord (mcs.slicewright.io/v1alpha1).
#pragma once

#include "slicewright/cache/informer.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/model/mcs.h"

namespace slicewright::controllers::mcs {

client::ResourceRef ServiceExportsResource();
client::ResourceRef ServiceImportsResource();
client::ResourceRef ClusterPropertiesResource();
client::ResourceRef ServiceExportRecordsResource();

client::KindCodec<model::ServiceExport> ServiceExportCodec();
client::KindCodec<model::ServiceImport> ServiceImportCodec();
client::KindCodec<model::ClusterProperty> ClusterPropertyCodec();
client::KindCodec<model::ServiceExportRecord> ServiceExportRecordCodec();

cache::Kind<model::ServiceExport> ServiceExportKind();
cache::Kind<model::ServiceImport> ServiceImportKind();
cache::Kind<model::ServiceExportRecord> ServiceExportRecordKind();

}  // namespace slicewright::controllers::mcs
