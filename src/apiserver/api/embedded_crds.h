// CustomResourceDefinition manifests the API server installs at startup: the Multi-Cluster
// Services CRDs of deploy/mcs/crds, compiled into the binary, and the parsing of any CRD manifest
// (YAML or JSON, several documents) into the JSON documents the server creates. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"

namespace slicewright::apiserver {

// A manifest file's name (for errors) and text.
struct CrdManifest {
  std::string name;
  std::string text;
};

// deploy/mcs/crds as built into the binary: ServiceExport and ServiceImport
// (multicluster.x-k8s.io, mcs-api v0.5.2 with status.endpointSliceObjects), ClusterProperty
// (about.k8s.io) and the broker's ServiceExportRecord (mcs.slicewright.io), in that order.
std::vector<CrdManifest> McsCrdManifests();

// Each document of `manifest` as compact JSON, in order; empty documents are skipped.
// kBadRequest naming the manifest for malformed YAML, and for a document that is not an
// apiextensions.k8s.io/v1 CustomResourceDefinition ("crds.yaml: document 2 is a ConfigMap, not
// an apiextensions.k8s.io/v1 CustomResourceDefinition").
Result<std::vector<std::string>> CrdDocuments(const CrdManifest& manifest);

}  // namespace slicewright::apiserver
