#include "slicewright/codec/coordination.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "slicewright/codec/patch.h"
#include "slicewright/model/coordination.h"
#include "slicewright/model/time.h"

// Lease JSON (MicroTime with microseconds, empty vs unset holder) and the event count patch.
namespace slicewright::codec {
namespace {

model::Time T(std::string_view text) { return model::ParseRfc3339(text).value_or(model::Time{}); }

TEST(LeaseCodecTest, DecodesAsKubeApiserverWritesIt) {
  const Result<model::Lease> lease = DecodeLease(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "kube-controller-manager", "namespace": "kube-system",
                 "resourceVersion": "512", "uid": "u-1", "creationTimestamp": "2026-12-03T04:00:00Z"},
    "spec": {"holderIdentity": "node-a_0f3c2e1d", "leaseDurationSeconds": 15,
             "acquireTime": "2026-12-03T04:32:01.123456Z", "renewTime": "2026-12-03T04:33:11.000001Z",
             "leaseTransitions": 3, "strategy": "OldestEmulationVersion"}})");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->metadata.name, "kube-controller-manager");
  EXPECT_EQ(lease->metadata.namespace_, "kube-system");
  EXPECT_EQ(lease->metadata.resource_version, "512");
  EXPECT_EQ(lease->spec.holder_identity, "node-a_0f3c2e1d");
  EXPECT_EQ(lease->spec.lease_duration_seconds, 15);
  EXPECT_EQ(lease->spec.acquire_time, T("2026-12-03T04:32:01.123456Z"));
  EXPECT_EQ(lease->spec.renew_time->unix_nanos % 1'000'000'000, 1'000);
  EXPECT_EQ(lease->spec.lease_transitions, 3);
}

TEST(LeaseCodecTest, NullAndAbsentAreUnset) {
  const Result<model::Lease> lease =
      DecodeLease(R"({"metadata":{"name":"l"},"spec":{"holderIdentity":null}})");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->spec, model::LeaseSpec{});
  EXPECT_TRUE(DecodeLease(R"({"metadata":{"name":"l"},"spec":null})").ok());
}

TEST(LeaseCodecTest, ErrorsNameTheObjectAndField) {
  Result<model::Lease> lease = DecodeLease(
      R"({"metadata":{"name":"l","namespace":"ns"},"spec":{"leaseDurationSeconds":"15"}})");
  EXPECT_EQ(lease.status().ToString(), "leases/ns/l: .spec.leaseDurationSeconds: expected integer");
  lease = DecodeLease(R"({"metadata":{"name":"l"},"spec":{"renewTime":"yesterday"}})");
  EXPECT_EQ(lease.status().ToString(), "leases/l: .spec.renewTime: expected RFC 3339 time");
  lease = DecodeLease(R"({"metadata":{"name":"l"},"spec":{"leaseTransitions":4294967296}})");
  EXPECT_EQ(lease.status().ToString(), "leases/l: .spec.leaseTransitions: integer out of range");
  lease = DecodeLease(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})");
  EXPECT_EQ(lease.status().message(), "expected coordination.k8s.io/v1 Lease, got v1 Pod");
  lease = DecodeLease(R"({"metadata":)");
  EXPECT_EQ(lease.status().code(), StatusCode::kBadRequest);
  lease = DecodeLease("[]");
  EXPECT_EQ(lease.status().code(), StatusCode::kBadRequest);
}

TEST(LeaseCodecTest, EncodesMicroTimeAndEmptyHolder) {
  model::Lease lease;
  lease.metadata.name = "lock";
  lease.metadata.namespace_ = "kube-system";
  lease.metadata.resource_version = "7";
  lease.spec.holder_identity = "";
  lease.spec.lease_duration_seconds = 1;
  lease.spec.acquire_time = T("2026-12-03T04:32:01.123456Z");
  lease.spec.renew_time = T("2026-12-03T04:32:02Z");
  lease.spec.lease_transitions = 2;
  const std::string json = EncodeLease(lease);
  EXPECT_EQ(json,
            R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lock",)"
            R"("namespace":"kube-system","resourceVersion":"7"},"spec":{"holderIdentity":"",)"
            R"("leaseDurationSeconds":1,"acquireTime":"2026-12-03T04:32:01.123456Z",)"
            R"("renewTime":"2026-12-03T04:32:02.000000Z","leaseTransitions":2}})");
  const Result<model::Lease> back = DecodeLease(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, lease);

  model::Lease empty;
  empty.metadata.name = "x";
  EXPECT_EQ(EncodeLease(empty),
            R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x"},)"
            R"("spec":{}})");
}

TEST(LeaseCodecTest, DecodesAListKeepingBadItemsAside) {
  const Result<ListPage<model::Lease>> page = DecodeLeaseList(R"({
    "kind": "LeaseList", "apiVersion": "coordination.k8s.io/v1",
    "metadata": {"resourceVersion": "77", "continue": "next"},
    "items": [
      {"metadata": {"name": "mcs-a", "namespace": "broker"},
       "spec": {"holderIdentity": "h", "leaseDurationSeconds": 30,
                "renewTime": "2026-12-03T04:33:11.000001Z"}},
      null,
      {"metadata": {"name": "mcs-b", "namespace": "broker"}, "spec": {"leaseDurationSeconds": "x"}},
      7]})");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->resource_version, "77");
  EXPECT_EQ(page->continue_token, "next");
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].metadata.name, "mcs-a");
  EXPECT_EQ(page->items[0].spec.renew_time, T("2026-12-03T04:33:11.000001Z"));
  ASSERT_EQ(page->item_errors.size(), 2u);
  EXPECT_NE(page->item_errors[0].ToString().find("leases/broker/mcs-b"), std::string::npos)
      << page->item_errors[0].ToString();
  EXPECT_NE(page->item_errors[0].ToString().find(".spec.leaseDurationSeconds"), std::string::npos)
      << page->item_errors[0].ToString();
  EXPECT_NE(page->item_errors[1].ToString().find("items[3]"), std::string::npos)
      << page->item_errors[1].ToString();

  EXPECT_EQ(DecodeLeaseList(R"({"kind":"PodList","items":[]})").status().code(),
            StatusCode::kBadRequest);
  EXPECT_EQ(DecodeLeaseList("{").status().code(), StatusCode::kBadRequest);
  EXPECT_TRUE(DecodeLeaseList(R"({"kind":"List","items":null})").ok());
}

TEST(LeaseCodecTest, DecodesWatchEvents) {
  const Result<WatchEvent<model::Lease>> modified = DecodeLeaseWatchEvent(
      R"({"type":"MODIFIED","object":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",)"
      R"("metadata":{"name":"mcs-a","namespace":"broker","resourceVersion":"9"},)"
      R"("spec":{"holderIdentity":"h"}}})");
  ASSERT_TRUE(modified.ok()) << modified.status().ToString();
  EXPECT_EQ(modified->type, WatchEventType::kModified);
  EXPECT_EQ(modified->object.metadata.resource_version, "9");
  EXPECT_EQ(modified->object.spec.holder_identity, "h");

  const Result<WatchEvent<model::Lease>> bookmark = DecodeLeaseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",)"
      R"("metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}})");
  ASSERT_TRUE(bookmark.ok()) << bookmark.status().ToString();
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->object.metadata.annotations.at("k8s.io/initial-events-end"), "true");

  const Result<WatchEvent<model::Lease>> gone = DecodeLeaseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
      R"("message":"too old resource version","reason":"Expired","code":410}})");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(gone->type, WatchEventType::kError);
  EXPECT_EQ(gone->error.code(), StatusCode::kExpired);

  const Status unknown = DecodeLeaseWatchEvent(R"({"type":"FOO","object":{}})").status();
  EXPECT_EQ(unknown.code(), StatusCode::kBadRequest);
  EXPECT_NE(unknown.ToString().find("unknown watch event type"), std::string::npos);
  const Status other_kind =
      DecodeLeaseWatchEvent(R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1"}})")
          .status();
  EXPECT_EQ(other_kind.code(), StatusCode::kBadRequest);
  EXPECT_NE(other_kind.ToString().find("expected coordination.k8s.io/v1 Lease, got v1 Pod"),
            std::string::npos)
      << other_kind.ToString();
}

TEST(EventPatchTest, CountTimestampAndEscapedMessage) {
  EXPECT_EQ(EncodeEventCountPatch(3, T("2026-12-03T04:32:01.9Z"), "said \"hi\"\n"),
            R"({"count":3,"lastTimestamp":"2026-12-03T04:32:01Z","message":"said \"hi\"\n"})");
  // Invalid UTF-8 becomes U+FFFD; valid multi-byte characters around it stay.
  EXPECT_EQ(EncodeEventCountPatch(2, T("2026-12-03T04:32:01Z"), "zon\xC3\xA9 \xFF!"),
            "{\"count\":2,\"lastTimestamp\":\"2026-12-03T04:32:01Z\",\"message\":\"zon\xC3\xA9 "
            "\xEF\xBF\xBD!\"}");
}

}  // namespace
}  // namespace slicewright::codec
