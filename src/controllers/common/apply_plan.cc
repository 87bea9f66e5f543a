#include "controllers/common/apply_plan.h"

#include <string>

namespace slicewright::controllers {
namespace {

std::string SliceName(const model::EndpointSlice& slice) {
  const std::string& name =
      slice.metadata.name.empty() ? slice.metadata.generate_name + "*" : slice.metadata.name;
  return "endpointslices/" + slice.metadata.namespace_ + "/" + name;
}

}  // namespace

Status ApplyPlan(const reconcile::Plan& plan, client::TypedClient<model::EndpointSlice>& slices,
                 reconcile::EndpointSliceTracker& tracker, ApplyCounts* counts) {
  ApplyCounts done;
  Status first_failure;
  const auto fail = [&first_failure](Status status, const model::EndpointSlice& slice,
                                     std::string_view operation) {
    if (!first_failure.ok()) return;
    status.WithObject(SliceName(slice));
    status.WithContext(std::string(operation) + " failed");
    first_failure = std::move(status);
  };
  for (const reconcile::SliceAction& action : plan.actions) {
    switch (action.operation) {
      case reconcile::Operation::kCreate: {
        Result<model::ObjectMeta> created = slices.CreateForMetadata(action.slice);
        if (created.ok()) {
          tracker.Update(*created);
          ++done.created;
        } else if (!IsNamespaceTerminating(created.status())) {
          // A namespace being deleted refuses every create until it is gone, with its slices:
          // upstream's reconciler drops such a create, and so do we.
          fail(created.status(), action.slice, "create");
        }
        break;
      }
      case reconcile::Operation::kUpdate: {
        Result<model::ObjectMeta> updated = slices.UpdateForMetadata(action.slice);
        if (updated.ok()) {
          tracker.Update(*updated);
          ++done.updated;
        } else if (updated.status().code() == StatusCode::kNotFound) {
          // Deleted since the cache saw it: a stale read, like a Conflict. Retried, the sync
          // plans again once the informer has seen the delete (upstream retries every error).
          fail(ConflictError("the slice is gone from the API server (" +
                             std::string(updated.status().message()) + ")"),
               action.slice, "update");
        } else {
          fail(updated.status(), action.slice, "update");
        }
        break;
      }
      case reconcile::Operation::kDelete: {
        client::DeleteOptions options;
        options.precondition_uid = action.slice.metadata.uid;
        const Status deleted =
            slices.Delete(action.slice.metadata.namespace_, action.slice.metadata.name, options);
        if (deleted.ok() || deleted.code() == StatusCode::kNotFound) {
          tracker.ExpectDeletion(action.slice);
          ++done.deleted;
        } else {
          fail(deleted, action.slice, "delete");
        }
        break;
      }
    }
  }
  if (counts != nullptr) *counts = done;
  return first_failure;
}

}  // namespace slicewright::controllers
