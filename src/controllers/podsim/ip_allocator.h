// Address allocation for simulated pods: IpRange (a CIDR's usable addresses by offset),
// IpAllocator (unique addresses of one range, next-fit so a released address is reused last) and
// AddressPool (one network's IPv4 and optional IPv6 allocators, by owner). Values and
// thread-compatible classes: the simulator guards them with its mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "slicewright/base/result.h"
#include "slicewright/net/ip.h"

namespace slicewright::controllers::podsim {

// A CIDR's host addresses as offsets 1..size(): the network address (offset 0) is never handed
// out, nor an IPv4 broadcast address. IPv6 ranges are capped at 2^32 addresses.
class IpRange final {
 public:
  // "10.244.0.0/16", "fd00:10:244::/64". Host bits are masked off. kInvalid for a malformed CIDR
  // or one too small to hold an address (IPv4 /31, /32; IPv6 /127, /128).
  static Result<IpRange> Parse(std::string_view cidr);

  net::IpFamily family() const { return base_.family; }
  std::uint64_t size() const { return size_; }
  // The address at `offset` (1..size()).
  net::IpAddress At(std::uint64_t offset) const;
  // The offset of `address`, or nullopt when it is not one of the range's usable addresses.
  std::optional<std::uint64_t> OffsetOf(const net::IpAddress& address) const;
  // "10.244.0.0/16".
  std::string ToString() const;

 private:
  IpRange(net::IpAddress base, int prefix, std::uint64_t size)
      : base_(base), prefix_(prefix), size_(size) {}

  net::IpAddress base_;
  int prefix_ = 0;
  std::uint64_t size_ = 0;
};

// Unique addresses of one range, each held by an owner (a pod's UID).
class IpAllocator final {
 public:
  explicit IpAllocator(IpRange range) : range_(range) {}

  // The next free address after the last one handed out, wrapping around; nullopt when the range
  // is full.
  std::optional<net::IpAddress> Allocate(const std::string& owner);
  // Records that `owner` holds `address` (rebuilding state after a restart). OK if it already
  // does; kInvalid outside the range; kAlreadyExists when another owner holds it.
  Status Reserve(const net::IpAddress& address, const std::string& owner);
  // Frees every address of `owner`.
  void Release(const std::string& owner);
  std::vector<net::IpAddress> AddressesOf(const std::string& owner) const;
  std::size_t used() const { return owner_of_.size(); }
  const IpRange& range() const { return range_; }

 private:
  IpRange range_;
  std::unordered_map<std::uint64_t, std::string> owner_of_;
  std::unordered_map<std::string, std::vector<std::uint64_t>> held_;
  std::uint64_t last_ = 0;  // the offset handed out last
};

// One network's addresses: IPv4, and IPv6 when dual-stack, by owner.
class AddressPool final {
 public:
  AddressPool(IpRange v4, std::optional<IpRange> v6);

  // The owner's addresses, IPv4 first, allocating one per family it does not hold yet; nullopt
  // (and nothing newly allocated kept) when a family is full.
  std::optional<std::vector<std::string>> Allocate(const std::string& owner);
  // Records addresses `owner` already has; addresses outside this pool's ranges are skipped.
  // kAlreadyExists (naming the address) when another owner holds one; the others are kept.
  Status Reserve(const std::vector<std::string>& addresses, const std::string& owner);
  void Release(const std::string& owner);
  // True when `owner` holds an address of every family.
  bool Holds(const std::string& owner) const;
  std::size_t used() const;

 private:
  std::vector<IpAllocator> allocators_;  // IPv4, then IPv6
};

}  // namespace slicewright::controllers::podsim
