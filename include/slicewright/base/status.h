// Status is the error value every fallible slicewright function returns: a code named after
// Kubernetes' StatusReason, a message, and the object and field path the error is about.
// Value type; an OK Status holds no allocation. Not thread-safe for concurrent mutation.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace slicewright {

// Codes follow metav1.StatusReason so the API server can speak them and the client can map them.
enum class StatusCode {
  kOk = 0,
  kBadRequest,       // 400
  kUnauthorized,     // 401
  kForbidden,        // 403
  kNotFound,         // 404
  kAlreadyExists,    // 409
  kConflict,         // 409
  kExpired,          // 410 (Gone: a compacted resourceVersion)
  kInvalid,          // 422
  kTooManyRequests,  // 429
  kInternal,         // 500
  kUnavailable,      // 503
  kTimeout,          // 504
  kCancelled,
  kDataLoss,
  kMethodNotAllowed,       // 405
  kNotAcceptable,          // 406
  kRequestEntityTooLarge,  // 413
  kUnsupportedMediaType,   // 415
};

// The Kubernetes reason string ("NotFound", "Invalid", ...); "" for kOk.
std::string_view StatusCodeReason(StatusCode code);
// The HTTP status a Kubernetes API server answers with for this code (200 for kOk).
int StatusCodeHttp(StatusCode code);

// One field-level reason of an error, as metav1.StatusCause: reason "FieldValueInvalid", field
// "spec.ports[0].port", message "Invalid value: 0: must be between 1 and 65535, inclusive".
struct StatusCause {
  std::string reason;
  std::string message;
  std::string field;
  friend bool operator==(const StatusCause&, const StatusCause&) = default;
};

class [[nodiscard]] Status final {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status Ok() { return {}; }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // The message alone, without object or field.
  std::string_view message() const;
  // The object the error is about, as "resource/name" or "resource/namespace/name"; may be "".
  std::string_view object() const;
  // The field path inside the object, e.g. ".status.podIPs[0].ip"; may be "".
  std::string_view field() const;

  // Sets the object reference if none is set yet (the innermost caller that knows it wins).
  Status& WithObject(std::string_view object);
  // Prepends a field path segment: ".ip" with prefix ".status.podIPs[0]" reads
  // ".status.podIPs[0].ip".
  Status& WithFieldPrefix(std::string_view prefix);
  // Prepends context to the message: "decoding file a.json: " + message.
  Status& WithContext(std::string_view context);
  // The field-level causes (kInvalid answers carry one per field error); empty when none or OK.
  const std::vector<StatusCause>& causes() const;
  // Replaces the causes; no effect on an OK status.
  Status& WithCauses(std::vector<StatusCause> causes);

  // "object: field: message", omitting empty parts; "OK" for an OK status.
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b);

 private:
  struct Rep {
    StatusCode code;
    std::string message;
    std::string object;
    std::string field;
    std::vector<StatusCause> causes;
  };
  std::unique_ptr<Rep> rep_;
};

// Shorthands for the common codes.
Status BadRequestError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status ConflictError(std::string message);
Status InvalidError(std::string message);
Status InternalError(std::string message);
Status UnavailableError(std::string message);
Status DataLossError(std::string message);

// The retry policy in one place: Conflict, Unavailable, TooManyRequests, Timeout and Internal are
// retried; everything else is terminal.
bool IsRetryable(const Status& status);

// A create refused because its namespace is being deleted (kube-apiserver's NamespaceLifecycle
// admission: Forbidden with the cause "NamespaceTerminating", or, without causes, its message).
// Every retry would be refused the same way until the namespace and what it held are gone, so
// upstream's controllers drop such a write rather than retry or report it.
bool IsNamespaceTerminating(const Status& status);

}  // namespace slicewright

#define SW_STATUS_CONCAT_INNER(a, b) a##b
#define SW_STATUS_CONCAT(a, b) SW_STATUS_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define SW_RETURN_IF_ERROR(expr)               \
  do {                                         \
    ::slicewright::Status sw_status_ = (expr); \
    if (!sw_status_.ok()) return sw_status_;   \
  } while (false)
