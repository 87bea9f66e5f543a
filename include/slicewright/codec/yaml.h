// YAML text to JSON text, for readers of YAML that are not Kubernetes object documents (the
// client's kubeconfig loader). yaml-cpp stays inside src/codec; callers parse the JSON with their
// own reader. Pure and reentrant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/result.h"

namespace slicewright::codec {

// Converts each YAML document of `text` ("---"-separated) to compact JSON text, in input order;
// empty and null documents are left out, so an empty file yields an empty vector. Scalars resolve
// as in DecodeYamlDocuments (go-yaml v2: `true`/`yes` booleans, `80` an integer, `"80"` a string)
// and aliases are expanded (bounded). Malformed YAML or invalid UTF-8 is kBadRequest named like
// "config: document 1, line 5, column 10: malformed YAML: ..." (object() holds the location).
Result<std::vector<std::string>> YamlToJson(std::string_view text, std::string_view document_name);

}  // namespace slicewright::codec
