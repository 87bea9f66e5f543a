#include "apiserver/rest/delete_options.h"

#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/status.h"

#include "apiserver/api/protobuf.h"
#include "apiserver/api/strict_json.h"
#include "apiserver/rest/json_util.h"
#include "apiserver/rest/objects.h"
#include "apiserver/rest/request_info.h"

namespace slicewright::apiserver {
namespace {

// What the options name as their kind in an Invalid answer, as kube-apiserver does.
constexpr std::string_view kOptionsKind = "DeleteOptions.meta.k8s.io";

// The options as sent, before they are merged and validated: each field set or not, as the Go
// struct's pointers are.
struct SentOptions {
  std::optional<std::int64_t> grace_period_seconds;
  std::optional<bool> orphan_dependents;
  std::optional<std::string> propagation_policy;
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::vector<Json> dry_run;  // as sent; each must be "All"
};

// The body as DeleteOptions JSON: a protobuf body decoded, a JSON body parsed and type-checked.
Result<Json> BodyOptions(const HttpRequest& request) {
  if (IsKubernetesProtobuf(request.Header("content-type"))) {
    return DecodeDeleteOptionsProtobuf(request.body);
  }
  SW_ASSIGN_OR_RETURN(Json body, ParseJson(request.body, "DeleteOptions"));
  if (!body.is_object()) {
    return BadRequestError("DeleteOptions: must be a JSON object");
  }
  if (const std::string* kind = StringField(body, "kind");
      kind != nullptr && !kind->empty() && *kind != "DeleteOptions") {
    return BadRequestError("DeleteOptions: the body is a " + *kind + ", not DeleteOptions");
  }
  SW_RETURN_IF_ERROR(DecodeStrictDeleteOptions(body));
  return body;
}

// The fields of a decoded body. Types were checked (a null is an unset field, as in Go).
SentOptions FromBody(const Json& body) {
  SentOptions sent;
  sent.grace_period_seconds = IntField(body, "gracePeriodSeconds");
  if (auto it = body.find("orphanDependents"); it != body.end() && it->is_boolean()) {
    sent.orphan_dependents = it->get<bool>();
  }
  if (const std::string* policy = StringField(body, "propagationPolicy")) {
    sent.propagation_policy = *policy;
  }
  if (const Json* preconditions = ObjectField(body, "preconditions")) {
    sent.precondition_uid = StringOr(*preconditions, "uid");
    sent.precondition_resource_version = StringOr(*preconditions, "resourceVersion");
  }
  if (const Json* dry_run = ArrayField(body, "dryRun")) {
    sent.dry_run.assign(dry_run->begin(), dry_run->end());
  }
  return sent;
}

// The query parameters, over what the body set.
Status AddQuery(const HttpRequest& request, SentOptions& sent) {
  if (request.HasQuery("gracePeriodSeconds")) {
    const std::string_view text = request.Query("gracePeriodSeconds");
    std::int64_t grace = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), grace);
    if (error != std::errc() || end != text.data() + text.size() || grace < 0) {
      return BadRequestError("invalid gracePeriodSeconds");
    }
    sent.grace_period_seconds = grace;
  }
  if (request.HasQuery("propagationPolicy")) {
    sent.propagation_policy = std::string(request.Query("propagationPolicy"));
  }
  if (request.HasQuery("orphanDependents")) {
    sent.orphan_dependents = QueryParameterTrue(request.Query("orphanDependents"));
  }
  for (const auto& [name, value] : request.query) {
    if (name == "dryRun") {
      sent.dry_run.emplace_back(value);
    }
  }
  return Status::Ok();
}

// k8s.io/apimachinery/pkg/apis/meta/v1/validation: ValidateDeleteOptions.
Status Validate(const SentOptions& sent) {
  FieldErrors errors;
  if (sent.orphan_dependents && sent.propagation_policy) {
    errors.Invalid("propagationPolicy", Json(*sent.propagation_policy),
                   "orphanDependents and deletionPropagation cannot be both set");
  }
  if (sent.propagation_policy && *sent.propagation_policy != "Foreground" &&
      *sent.propagation_policy != "Background" && *sent.propagation_policy != "Orphan") {
    errors.NotSupported("propagationPolicy", Json(*sent.propagation_policy),
                        {"Foreground", "Background", "Orphan", "nil"});
  }
  for (const Json& value : sent.dry_run) {
    if (value != "All") {
      errors.NotSupported("dryRun", Json(sent.dry_run), {"All"});
      break;
    }
  }
  return errors.ToStatus(kOptionsKind, "");
}

}  // namespace

Result<DeleteOptions> DeleteOptionsFromRequest(const HttpRequest& request) {
  SentOptions sent;
  if (!request.body.empty()) {
    SW_ASSIGN_OR_RETURN(Json body, BodyOptions(request));
    sent = FromBody(body);
  }
  SW_RETURN_IF_ERROR(AddQuery(request, sent));
  SW_RETURN_IF_ERROR(Validate(sent));
  DeleteOptions options;
  options.grace_period_seconds = sent.grace_period_seconds;
  if (sent.propagation_policy) {
    options.propagation_policy = *sent.propagation_policy;
  } else if (sent.orphan_dependents.value_or(false)) {
    options.propagation_policy = "Orphan";  // the deprecated spelling of Orphan
  }
  options.precondition_uid = std::move(sent.precondition_uid);
  options.precondition_resource_version = std::move(sent.precondition_resource_version);
  options.dry_run = !sent.dry_run.empty();
  return options;
}

}  // namespace slicewright::apiserver
