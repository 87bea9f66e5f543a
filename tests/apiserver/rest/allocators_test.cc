#include "apiserver/rest/allocators.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace slicewright::apiserver {
namespace {

// Addresses come from the range, never twice, and a released one can be had again.
TEST(IpAllocatorTest, AllocatesDistinctAddressesInRange) {
  Result<IpAllocator> allocator = IpAllocator::Create("10.96.0.0/29");
  ASSERT_TRUE(allocator.ok()) << allocator.status().ToString();
  std::set<std::string> seen;
  // A /29 holds 8 addresses; the network and broadcast addresses are never given out.
  for (int i = 0; i < 6; ++i) {
    Result<std::string> ip = allocator->Allocate();
    ASSERT_TRUE(ip.ok());
    EXPECT_TRUE(ip->starts_with("10.96.0.")) << *ip;
    EXPECT_NE(*ip, "10.96.0.0");
    EXPECT_NE(*ip, "10.96.0.7");
    EXPECT_TRUE(seen.insert(*ip).second) << *ip;
  }
  Result<std::string> full = allocator->Allocate();
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().message(), "range is full");
  allocator->Release("10.96.0.3");
  Result<std::string> again = allocator->Allocate();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "10.96.0.3");
}

// A requested address must be in range and free.
TEST(IpAllocatorTest, AllocatesSpecificAddresses) {
  Result<IpAllocator> allocator = IpAllocator::Create("fd00:10:96::/112");
  ASSERT_TRUE(allocator.ok());
  EXPECT_TRUE(allocator->AllocateSpecific("fd00:10:96::a").ok());
  const Status twice = allocator->AllocateSpecific("fd00:10:96::a");
  EXPECT_EQ(twice.code(), StatusCode::kInvalid);
  EXPECT_EQ(twice.message(),
            "failed to allocate IP fd00:10:96::a: provided IP is already allocated");
  const Status outside = allocator->AllocateSpecific("10.0.0.1");
  EXPECT_EQ(
      outside.message(),
      "failed to allocate IP 10.0.0.1: the provided network does not match the current range");
}

// Malformed ranges are refused with the range named.
TEST(IpAllocatorTest, RejectsBadCidr) {
  EXPECT_EQ(IpAllocator::Create("10.96.0.0").status().message(),
            "invalid CIDR \"10.96.0.0\": missing prefix length");
  EXPECT_EQ(IpAllocator::Create("10.96.0.0/x").status().message(), "invalid CIDR \"10.96.0.0/x\"");
  EXPECT_EQ(IpAllocator::Create("nope/12").status().code(), StatusCode::kInvalid);
}

// Node ports stay inside the configured range.
TEST(PortAllocatorTest, AllocatesInRange) {
  PortAllocator ports(30000, 30001);
  EXPECT_EQ(*ports.Allocate(), 30000);
  EXPECT_EQ(*ports.Allocate(), 30001);
  EXPECT_FALSE(ports.Allocate().ok());
  EXPECT_EQ(ports.AllocateSpecific(40000).message(),
            "provided port is not in the valid range. The range of valid ports is 30000-30001");
}

}  // namespace
}  // namespace slicewright::apiserver
