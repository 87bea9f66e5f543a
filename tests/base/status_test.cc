#include "slicewright/base/status.h"

#include <string_view>

#include <gtest/gtest.h>

#include "slicewright/base/result.h"

namespace slicewright {
namespace {

// An OK status carries nothing and prints "OK".
TEST(StatusTest, OkIsEmpty) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.ToString(), "OK");
}

// Object and field path compose as the decoders build them, innermost field first.
TEST(StatusTest, ComposesObjectAndFieldPath) {
  Status status = InvalidError("expected string");
  status.WithFieldPrefix(".ip").WithFieldPrefix(".status.podIPs[0]").WithObject("pods/web-1");
  status.WithObject("pods/other");  // the first object set wins
  EXPECT_EQ(status.ToString(), "pods/web-1: .status.podIPs[0].ip: expected string");
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(StatusCodeReason(status.code()), "Invalid");
  EXPECT_EQ(StatusCodeHttp(status.code()), 422);
}

// Copies are deep and compare equal.
// Every code maps to the reason and HTTP status kube-apiserver uses for it.
TEST(StatusTest, ReasonsAndHttpCodes) {
  struct Case {
    StatusCode code;
    std::string_view reason;
    int http;
  };
  const Case cases[] = {
      {StatusCode::kBadRequest, "BadRequest", 400},
      {StatusCode::kNotFound, "NotFound", 404},
      {StatusCode::kConflict, "Conflict", 409},
      {StatusCode::kExpired, "Expired", 410},
      {StatusCode::kMethodNotAllowed, "MethodNotAllowed", 405},
      {StatusCode::kNotAcceptable, "NotAcceptable", 406},
      {StatusCode::kRequestEntityTooLarge, "RequestEntityTooLarge", 413},
      {StatusCode::kUnsupportedMediaType, "UnsupportedMediaType", 415},
      {StatusCode::kTimeout, "Timeout", 504},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    EXPECT_EQ(StatusCodeReason(c.code), c.reason);
    EXPECT_EQ(StatusCodeHttp(c.code), c.http);
  }
}

TEST(StatusTest, CopiesAreIndependent) {
  Status a = NotFoundError("gone");
  Status b = a;
  b.WithContext("listing pods");
  EXPECT_EQ(a.ToString(), "gone");
  EXPECT_EQ(b.ToString(), "listing pods: gone");
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a == Status(a));
}

TEST(StatusTest, CausesTravelWithCopiesAndCount) {
  EXPECT_TRUE(Status::Ok().causes().empty());
  Status ok;
  ok.WithCauses({{"FieldValueRequired", "Required value", "spec.ports"}});
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(ok.causes().empty());

  Status invalid = InvalidError("Service \"web\" is invalid: spec.ports: Required value");
  invalid.WithCauses({{"FieldValueRequired", "Required value", "spec.ports"}});
  const Status copy = invalid;
  ASSERT_EQ(copy.causes().size(), 1U);
  EXPECT_EQ(copy.causes()[0].reason, "FieldValueRequired");
  EXPECT_EQ(copy.causes()[0].field, "spec.ports");
  EXPECT_EQ(copy.causes()[0].message, "Required value");
  EXPECT_TRUE(copy == invalid);
  Status other = invalid;
  other.WithCauses({});
  EXPECT_FALSE(other == invalid);
}

// The retry policy: conflicts and server trouble retry, bad input does not.
TEST(StatusTest, RetryPolicy) {
  EXPECT_TRUE(IsRetryable(ConflictError("x")));
  EXPECT_TRUE(IsRetryable(UnavailableError("x")));
  EXPECT_TRUE(IsRetryable(InternalError("x")));
  EXPECT_FALSE(IsRetryable(InvalidError("x")));
  EXPECT_FALSE(IsRetryable(BadRequestError("x")));
  EXPECT_FALSE(IsRetryable(Status()));
}

Result<int> Half(int value) {
  if (value % 2 != 0) return InvalidError("odd");
  return value / 2;
}

// NamespaceLifecycle's refusal is recognised by its cause (kube-apiserver's) or, from a server
// that sends none, its message; nothing else is.
TEST(StatusTest, NamespaceTerminatingRefusal) {
  Status by_cause(StatusCode::kForbidden, "services \"x\" is forbidden: anything");
  by_cause.WithCauses({StatusCause{"NamespaceTerminating", "namespace a is being terminated",
                                   "metadata.namespace"}});
  EXPECT_TRUE(IsNamespaceTerminating(by_cause));
  EXPECT_TRUE(
      IsNamespaceTerminating(Status(StatusCode::kForbidden,
                                    "services \"x\" is forbidden: unable to create new content "
                                    "in namespace a because it is being terminated")));
  EXPECT_FALSE(IsNamespaceTerminating(Status(StatusCode::kForbidden, "RBAC: access denied")));
  Status invalid(StatusCode::kInvalid, "because it is being terminated");
  invalid.WithCauses({StatusCause{"NamespaceTerminating", "", ""}});
  EXPECT_FALSE(IsNamespaceTerminating(invalid));
  EXPECT_FALSE(IsNamespaceTerminating(Status()));
}

Result<int> Quarter(int value) {
  SW_ASSIGN_OR_RETURN(int half, Half(value));
  return Half(half);
}

// Result carries a value or an error, and the macros propagate errors.
TEST(ResultTest, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> odd = Quarter(6);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "odd");
  EXPECT_EQ(odd.value_or(-1), -1);
  Result<std::string> text = std::string("abc");
  EXPECT_EQ(text->size(), 3U);
}

}  // namespace
}  // namespace slicewright
