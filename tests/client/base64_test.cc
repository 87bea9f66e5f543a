#include "client/base64.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace slicewright::client::internal {
namespace {

// Decoding round-trips every tail length and ignores line breaks, as Go's StdEncoding does.
TEST(Base64Test, RoundTripsAndIgnoresNewlines) {
  for (const std::string_view plain : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    const std::string encoded = EncodeBase64(plain);
    const Result<std::string> decoded = DecodeBase64(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded << ": " << decoded.status().ToString();
    EXPECT_EQ(*decoded, plain);
  }
  EXPECT_EQ(EncodeBase64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  const Result<std::string> wrapped = DecodeBase64("Zm9v\nYmFy\r\n");
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(*wrapped, "foobar");
  const std::string binary("\x00\xff\x10\x80", 4);
  EXPECT_EQ(*DecodeBase64(EncodeBase64(binary)), binary);
}

// Bad input names the byte offset as Go does and never quotes the input.
TEST(Base64Test, RejectsBadInputWithOffset) {
  struct Case {
    std::string_view input;
    std::string_view message;
  };
  for (const Case& c : {Case{"Zm9v!mFy", "illegal base64 data at input byte 4"},
                        Case{"Zm9", "illegal base64 data at input byte 3"},
                        Case{"Z===", "illegal base64 data at input byte 1"},
                        Case{"Zm8=Zm8=", "illegal base64 data at input byte 4"},
                        Case{"Zm==x", "illegal base64 data at input byte 4"}}) {
    SCOPED_TRACE(c.input);
    const Result<std::string> decoded = DecodeBase64(c.input);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), StatusCode::kBadRequest);
    EXPECT_EQ(decoded.status().message(), c.message);
  }
}

}  // namespace
}  // namespace slicewright::client::internal
