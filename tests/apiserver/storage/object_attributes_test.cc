#include "apiserver/storage/object_attributes.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::apiserver {
namespace {

using Pairs = std::vector<std::pair<std::string_view, std::string_view>>;

ObjectAttributes Pod() {
  return ObjectAttributes::Builder()
      .AddLabel("tier", "web")
      .AddLabel("app", "shop")
      .AddLabel("tier", "front")  // the Builder keeps a repeated key's last value
      .AddField("metadata.name", "web-1")
      .AddField("metadata.namespace", "prod")
      .AddField("spec.nodeName", "")
      .SetUid("0d6c7a2e-uid")
      .AddOwnerUid("owner-a")
      .AddOwnerUid("owner-b")
      .Build();
}

TEST(ObjectAttributesTest, BuiltAttributesAnswerEveryAccessor) {
  const ObjectAttributes attributes = Pod();
  EXPECT_EQ(attributes.Label("tier"), "front");
  EXPECT_EQ(attributes.Label("app"), "shop");
  EXPECT_EQ(attributes.Label("missing"), std::nullopt);
  EXPECT_EQ(attributes.Labels(), (Pairs{{"app", "shop"}, {"tier", "front"}}));
  EXPECT_EQ(attributes.Field("metadata.name"), "web-1");
  EXPECT_EQ(attributes.Field("metadata.namespace"), "prod");
  // An empty value is present; an unknown field is not.
  EXPECT_EQ(attributes.Field("spec.nodeName"), "");
  EXPECT_EQ(attributes.Field("status.phase"), std::nullopt);
  // A label key is not a field name, nor the reverse.
  EXPECT_EQ(attributes.Field("app"), std::nullopt);
  EXPECT_EQ(attributes.Label("metadata.name"), std::nullopt);
  EXPECT_EQ(
      attributes.Fields(),
      (Pairs{{"metadata.name", "web-1"}, {"metadata.namespace", "prod"}, {"spec.nodeName", ""}}));
  EXPECT_EQ(attributes.uid(), "0d6c7a2e-uid");
  EXPECT_EQ(attributes.OwnerUids(), (std::vector<std::string_view>{"owner-a", "owner-b"}));
}

TEST(ObjectAttributesTest, DefaultIsEmpty) {
  const ObjectAttributes attributes;
  EXPECT_TRUE(attributes.Labels().empty());
  EXPECT_TRUE(attributes.Fields().empty());
  EXPECT_EQ(attributes.uid(), "");
  EXPECT_TRUE(attributes.OwnerUids().empty());
  EXPECT_EQ(attributes.Label(""), std::nullopt);
  EXPECT_EQ(attributes, ObjectAttributes::Builder().Build());
  EXPECT_EQ(ObjectAttributes::Decode(attributes.encoded()), attributes);
}

// The encoded form is what the database stores: decoding it gives the same attributes back.
TEST(ObjectAttributesTest, EncodedFormRoundTrips) {
  const ObjectAttributes attributes = Pod();
  const std::optional<ObjectAttributes> decoded = ObjectAttributes::Decode(attributes.encoded());
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, attributes);
  EXPECT_EQ(decoded->Field("metadata.namespace"), "prod");
  EXPECT_EQ(decoded->uid(), "0d6c7a2e-uid");
  EXPECT_EQ(decoded->OwnerUids(), (std::vector<std::string_view>{"owner-a", "owner-b"}));
}

// The layout is fixed (databases written by earlier builds keep loading): varint counts and
// lengths, labels, fields, uid, owners.
TEST(ObjectAttributesTest, EncodingIsTheStoredFormat) {
  const ObjectAttributes attributes =
      ObjectAttributes::Builder().AddLabel("a", "b").AddField("f", "").SetUid("u").Build();
  EXPECT_EQ(attributes.encoded(), std::string_view("\x01\x01"
                                                   "a\x01"
                                                   "b\x01\x01"
                                                   "f\x00\x01"
                                                   "u\x00",
                                                   12));
  // Lengths of 128 bytes and more take two varint bytes.
  const std::string long_value(200, 'v');
  const ObjectAttributes long_label = ObjectAttributes::Builder().AddLabel("k", long_value).Build();
  EXPECT_EQ(long_label.encoded().substr(0, 5), std::string_view("\x01\x01k\xc8\x01", 5));
  EXPECT_EQ(long_label.Label("k"), long_value);
}

// A damaged column is refused, whatever is wrong with it, and never read out of bounds.
TEST(ObjectAttributesTest, DecodeRefusesMalformedInput) {
  const std::string good(Pod().encoded());
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_EQ(ObjectAttributes::Decode(std::string_view(good).substr(0, cut)), std::nullopt)
        << "truncated to " << cut << " bytes";
  }
  EXPECT_EQ(ObjectAttributes::Decode(good + "x"), std::nullopt) << "trailing bytes";
  // A count larger than the bytes left could hold.
  EXPECT_EQ(ObjectAttributes::Decode(std::string_view("\x7f\x00\x00\x00", 4)), std::nullopt);
  // A varint that never ends.
  EXPECT_EQ(ObjectAttributes::Decode(std::string(8, '\xff')), std::nullopt);
  // A string length past the end.
  EXPECT_EQ(ObjectAttributes::Decode(std::string_view("\x01\x05"
                                                      "ab",
                                                      4)),
            std::nullopt);
}

}  // namespace
}  // namespace slicewright::apiserver
