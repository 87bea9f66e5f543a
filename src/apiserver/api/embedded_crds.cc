// The MCS CRDs compiled in, and CRD manifest parsing; see embedded_crds.h.
#include "apiserver/api/embedded_crds.h"

#include <nlohmann/json.hpp>

#include "slicewright/codec/yaml.h"

namespace slicewright::apiserver {
namespace {

struct Embedded {
  const char* name;
  const char* text;
};

// Generated at configure time from deploy/mcs/crds (src/apiserver/CMakeLists.txt).
constexpr Embedded kMcsCrds[] = {
#include "apiserver/api/embedded_crds.inc"
};

}  // namespace

std::vector<CrdManifest> McsCrdManifests() {
  std::vector<CrdManifest> out;
  for (const Embedded& crd : kMcsCrds) {
    out.push_back(CrdManifest{std::string("deploy/mcs/crds/") + crd.name, crd.text});
  }
  return out;
}

Result<std::vector<std::string>> CrdDocuments(const CrdManifest& manifest) {
  SW_ASSIGN_OR_RETURN(std::vector<std::string> documents,
                      codec::YamlToJson(manifest.text, manifest.name));
  for (std::size_t i = 0; i < documents.size(); ++i) {
    const nlohmann::json document = nlohmann::json::parse(documents[i], nullptr, false);
    const auto text = [&](const char* key) {
      auto it = document.is_object() ? document.find(key) : document.end();
      return it != document.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (text("apiVersion") != "apiextensions.k8s.io/v1" ||
        text("kind") != "CustomResourceDefinition") {
      const std::string kind = text("kind").empty() ? "an object without a kind" : text("kind");
      return BadRequestError(manifest.name + ": document " + std::to_string(i + 1) + " is " +
                             (text("kind").empty() ? kind : "a " + kind) +
                             ", not an apiextensions.k8s.io/v1 CustomResourceDefinition");
    }
  }
  return documents;
}

}  // namespace slicewright::apiserver
