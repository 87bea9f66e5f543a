// Tests for the core/v1 <-> events.k8s.io/v1 Event conversion and field label mapping.
#include "apiserver/api/event_conversion.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace slicewright::apiserver {
namespace {

using nlohmann::json;

json CoreEvent() {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", "web.1"}, {"namespace", "default"}, {"resourceVersion", "7"}}},
          {"involvedObject", {{"kind", "Pod"}, {"name", "web"}, {"namespace", "default"}}},
          {"reason", "Scheduled"},
          {"message", "assigned default/web to node-1"},
          {"source", {{"component", "default-scheduler"}}},
          {"firstTimestamp", "2024-01-01T00:00:00Z"},
          {"lastTimestamp", "2024-01-01T00:01:00Z"},
          {"count", 3},
          {"type", "Normal"},
          {"eventTime", "2024-01-01T00:00:00.000000Z"},
          {"series", {{"count", 2}, {"lastObservedTime", "2024-01-01T00:01:00.000000Z"}}},
          {"action", "Binding"},
          {"related", {{"kind", "Node"}, {"name", "node-1"}}},
          {"reportingComponent", "default-scheduler"},
          {"reportingInstance", "scheduler-1"}};
}

// Every core field lands on its events.k8s.io/v1 name, as upstream's conversion maps it.
TEST(EventConversionTest, CoreToV1RenamesEveryField) {
  const json want = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", "web.1"}, {"namespace", "default"}, {"resourceVersion", "7"}}},
      {"regarding", {{"kind", "Pod"}, {"name", "web"}, {"namespace", "default"}}},
      {"reason", "Scheduled"},
      {"note", "assigned default/web to node-1"},
      {"deprecatedSource", {{"component", "default-scheduler"}}},
      {"deprecatedFirstTimestamp", "2024-01-01T00:00:00Z"},
      {"deprecatedLastTimestamp", "2024-01-01T00:01:00Z"},
      {"deprecatedCount", 3},
      {"type", "Normal"},
      {"eventTime", "2024-01-01T00:00:00.000000Z"},
      {"series", {{"count", 2}, {"lastObservedTime", "2024-01-01T00:01:00.000000Z"}}},
      {"action", "Binding"},
      {"related", {{"kind", "Node"}, {"name", "node-1"}}},
      {"reportingController", "default-scheduler"},
      {"reportingInstance", "scheduler-1"}};
  EXPECT_EQ(CoreEventToV1(CoreEvent()), want);
}

// Converting to events.k8s.io/v1 and back gives the core Event again.
TEST(EventConversionTest, RoundTrips) {
  EXPECT_EQ(V1EventToCore(CoreEventToV1(CoreEvent())), CoreEvent());
}

// Zero values appear as upstream's typed structs print them; fields the target version does not
// have are dropped.
TEST(EventConversionTest, FillsZeroValuesAndDropsForeignFields) {
  const json v1 = {{"apiVersion", "events.k8s.io/v1"},
                   {"kind", "Event"},
                   {"metadata", {{"name", "a"}}},
                   {"note", "hello"},
                   {"message", "a core field sent to the wrong API"}};
  const json core = V1EventToCore(v1);
  EXPECT_EQ(core, json({{"apiVersion", "v1"},
                        {"kind", "Event"},
                        {"metadata", {{"name", "a"}}},
                        {"message", "hello"},
                        {"involvedObject", json::object()},
                        {"source", json::object()},
                        {"firstTimestamp", nullptr},
                        {"lastTimestamp", nullptr},
                        {"eventTime", nullptr},
                        {"reportingComponent", ""},
                        {"reportingInstance", ""}}));
  const json back = CoreEventToV1({{"metadata", {{"name", "a"}}}, {"count", 1}});
  EXPECT_EQ(back, json({{"apiVersion", "events.k8s.io/v1"},
                        {"kind", "Event"},
                        {"metadata", {{"name", "a"}}},
                        {"deprecatedCount", 1},
                        {"eventTime", nullptr},
                        {"regarding", json::object()},
                        {"deprecatedSource", json::object()},
                        {"deprecatedFirstTimestamp", nullptr},
                        {"deprecatedLastTimestamp", nullptr}}));
}

// events.k8s.io/v1 field selector labels name the stored core Event's attributes.
TEST(EventConversionTest, FieldLabels) {
  EXPECT_EQ(V1EventFieldToCore("regarding.name"), "involvedObject.name");
  EXPECT_EQ(V1EventFieldToCore("regarding.fieldPath"), "involvedObject.fieldPath");
  EXPECT_EQ(V1EventFieldToCore("reportingController"), "reportingComponent");
  EXPECT_EQ(V1EventFieldToCore("reason"), "reason");
  EXPECT_EQ(V1EventFieldToCore("type"), "type");
  EXPECT_EQ(V1EventFieldToCore("metadata.name"), "metadata.name");
}

// Only the built-in events.k8s.io/v1 resource is a converted view, and it keeps the core store.
TEST(EventConversionTest, EventsV1SharesTheCoreStore) {
  ResourceRegistry registry;
  ResourcePtr v1 = registry.Find("events.k8s.io", "v1", "events");
  ResourcePtr core = registry.Find("", "v1", "events");
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(core, nullptr);
  EXPECT_TRUE(IsEventsV1(*v1));
  EXPECT_FALSE(IsEventsV1(*core));
  EXPECT_EQ(v1->KeyPrefix(), "/registry/core/events/");
  EXPECT_EQ(v1->Key("default", "a"), core->Key("default", "a"));
  EXPECT_NE(v1->KeyPrefix(), kLegacyEventsV1Prefix);
}

}  // namespace
}  // namespace slicewright::apiserver
