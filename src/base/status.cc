#include "slicewright/base/status.h"

#include <string>
#include <utility>

namespace slicewright {

std::string_view StatusCodeReason(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "";
    case StatusCode::kBadRequest:
      return "BadRequest";
    case StatusCode::kUnauthorized:
      return "Unauthorized";
    case StatusCode::kForbidden:
      return "Forbidden";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case StatusCode::kConflict:
      return "Conflict";
    case StatusCode::kExpired:
      return "Expired";
    case StatusCode::kInvalid:
      return "Invalid";
    case StatusCode::kTooManyRequests:
      return "TooManyRequests";
    case StatusCode::kInternal:
      return "InternalError";
    case StatusCode::kUnavailable:
      return "ServiceUnavailable";
    case StatusCode::kTimeout:
      return "Timeout";
    case StatusCode::kCancelled:
      return "Cancelled";
    case StatusCode::kDataLoss:
      return "DataLoss";
    case StatusCode::kMethodNotAllowed:
      return "MethodNotAllowed";
    case StatusCode::kNotAcceptable:
      return "NotAcceptable";
    case StatusCode::kRequestEntityTooLarge:
      return "RequestEntityTooLarge";
    case StatusCode::kUnsupportedMediaType:
      return "UnsupportedMediaType";
  }
  return "Unknown";
}

int StatusCodeHttp(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kBadRequest:
      return 400;
    case StatusCode::kUnauthorized:
      return 401;
    case StatusCode::kForbidden:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kExpired:
      return 410;
    case StatusCode::kInvalid:
      return 422;
    case StatusCode::kTooManyRequests:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kTimeout:
      return 504;
    case StatusCode::kInternal:
    case StatusCode::kCancelled:
    case StatusCode::kDataLoss:
      return 500;
    case StatusCode::kMethodNotAllowed:
      return 405;
    case StatusCode::kNotAcceptable:
      return 406;
    case StatusCode::kRequestEntityTooLarge:
      return 413;
    case StatusCode::kUnsupportedMediaType:
      return 415;
  }
  return 500;
}

Status::Status(StatusCode code, std::string message) {
  if (code == StatusCode::kOk) {
    return;
  }
  rep_ = std::make_unique<Rep>(Rep{code, std::move(message), {}, {}, {}});
}

Status::Status(const Status& other)
    : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  }
  return *this;
}

std::string_view Status::message() const { return rep_ ? std::string_view(rep_->message) : ""; }
std::string_view Status::object() const { return rep_ ? std::string_view(rep_->object) : ""; }
std::string_view Status::field() const { return rep_ ? std::string_view(rep_->field) : ""; }

const std::vector<StatusCause>& Status::causes() const {
  static const std::vector<StatusCause> kNone;
  return rep_ ? rep_->causes : kNone;
}

Status& Status::WithCauses(std::vector<StatusCause> causes) {
  if (rep_) {
    rep_->causes = std::move(causes);
  }
  return *this;
}

Status& Status::WithObject(std::string_view object) {
  if (rep_ && rep_->object.empty()) {
    rep_->object = std::string(object);
  }
  return *this;
}

Status& Status::WithFieldPrefix(std::string_view prefix) {
  if (rep_) {
    rep_->field.insert(0, prefix);
  }
  return *this;
}

Status& Status::WithContext(std::string_view context) {
  if (rep_) {
    std::string joined(context);
    joined += ": ";
    joined += rep_->message;
    rep_->message = std::move(joined);
  }
  return *this;
}

std::string Status::ToString() const {
  if (!rep_) {
    return "OK";
  }
  std::string out;
  if (!rep_->object.empty()) {
    out += rep_->object;
    out += ": ";
  }
  if (!rep_->field.empty()) {
    out += rep_->field;
    out += ": ";
  }
  out += rep_->message;
  return out;
}

bool operator==(const Status& a, const Status& b) {
  if (a.ok() || b.ok()) {
    return a.ok() == b.ok();
  }
  return a.rep_->code == b.rep_->code && a.rep_->message == b.rep_->message &&
         a.rep_->object == b.rep_->object && a.rep_->field == b.rep_->field &&
         a.rep_->causes == b.rep_->causes;
}

Status BadRequestError(std::string message) {
  return {StatusCode::kBadRequest, std::move(message)};
}
Status NotFoundError(std::string message) { return {StatusCode::kNotFound, std::move(message)}; }
Status AlreadyExistsError(std::string message) {
  return {StatusCode::kAlreadyExists, std::move(message)};
}
Status ConflictError(std::string message) { return {StatusCode::kConflict, std::move(message)}; }
Status InvalidError(std::string message) { return {StatusCode::kInvalid, std::move(message)}; }
Status InternalError(std::string message) { return {StatusCode::kInternal, std::move(message)}; }
Status UnavailableError(std::string message) {
  return {StatusCode::kUnavailable, std::move(message)};
}
Status DataLossError(std::string message) { return {StatusCode::kDataLoss, std::move(message)}; }

bool IsNamespaceTerminating(const Status& status) {
  if (status.code() != StatusCode::kForbidden) return false;
  for (const StatusCause& cause : status.causes()) {
    if (cause.reason == "NamespaceTerminating") return true;
  }
  return status.message().find("because it is being terminated") != std::string_view::npos;
}

bool IsRetryable(const Status& status) {
  switch (status.code()) {
    case StatusCode::kConflict:
    case StatusCode::kUnavailable:
    case StatusCode::kTooManyRequests:
    case StatusCode::kTimeout:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

}  // namespace slicewright
