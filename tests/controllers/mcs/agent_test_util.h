// Reads of the MCS objects the agent writes, for the agent's tests: a ServiceImport or
// ServiceExport as the member's API server holds it now, nullopt when it does not (or cannot) say.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "slicewright/client/rest_client.h"
#include "slicewright/client/typed_client.h"
#include "slicewright/model/mcs.h"

#include "controllers/mcs/kinds.h"

namespace slicewright::controllers::mcs {

inline std::optional<model::ServiceImport> GetServiceImport(client::RestClient& member,
                                                            std::string_view ns,
                                                            std::string_view name) {
  Result<model::ServiceImport> got =
      client::TypedClient<model::ServiceImport>(member, ServiceImportCodec()).Get(ns, name);
  if (!got.ok()) return std::nullopt;
  return std::move(got).value();
}

inline std::optional<model::ServiceExport> GetServiceExport(client::RestClient& member,
                                                            std::string_view ns,
                                                            std::string_view name) {
  Result<model::ServiceExport> got =
      client::TypedClient<model::ServiceExport>(member, ServiceExportCodec()).Get(ns, name);
  if (!got.ok()) return std::nullopt;
  return std::move(got).value();
}

}  // namespace slicewright::controllers::mcs
