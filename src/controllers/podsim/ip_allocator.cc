#include "controllers/podsim/ip_allocator.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/status.h"

namespace slicewright::controllers::podsim {
namespace {

std::size_t LengthOf(net::IpFamily family) { return family == net::IpFamily::kIPv4 ? 4 : 16; }

// The bits of byte `index` that belong to the prefix.
std::uint8_t PrefixMask(std::size_t index, int prefix) {
  const int bits = std::clamp(prefix - static_cast<int>(index) * 8, 0, 8);
  return static_cast<std::uint8_t>(0xFF00U >> bits);
}

constexpr std::uint64_t kMaxV6Addresses = std::uint64_t{1} << 32;

}  // namespace

Result<IpRange> IpRange::Parse(std::string_view cidr) {
  const std::size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) {
    return InvalidError("CIDR \"" + std::string(cidr) + "\": missing /prefix");
  }
  const std::optional<net::IpAddress> address = net::ParseIpSloppy(cidr.substr(0, slash));
  const std::string_view prefix_text = cidr.substr(slash + 1);
  int prefix = -1;
  const auto [end, error] =
      std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), prefix);
  const std::size_t length = address ? LengthOf(address->family) : 4;
  if (!address || error != std::errc() || end != prefix_text.data() + prefix_text.size() ||
      prefix < 0 || prefix > static_cast<int>(length * 8)) {
    return InvalidError("CIDR \"" + std::string(cidr) + "\": not an address/prefix");
  }
  const int host_bits = static_cast<int>(length * 8) - prefix;
  // An IPv4 range gives up its network and broadcast addresses, an IPv6 one its network address.
  const bool v4 = address->family == net::IpFamily::kIPv4;
  if (host_bits < 2) {
    return InvalidError("CIDR \"" + std::string(cidr) + "\": too small to hold an address");
  }
  std::uint64_t size = kMaxV6Addresses;
  if (host_bits < 33) size = (std::uint64_t{1} << host_bits) - (v4 ? 2 : 1);
  net::IpAddress base = *address;
  for (std::size_t i = 0; i < length; ++i) base.bytes[i] &= PrefixMask(i, prefix);
  return IpRange(base, prefix, size);
}

net::IpAddress IpRange::At(std::uint64_t offset) const {
  net::IpAddress out = base_;
  std::uint64_t carry = offset;
  for (std::size_t i = LengthOf(base_.family); i-- > 0 && carry != 0;) {
    const std::uint64_t sum = out.bytes[i] + (carry & 0xFFU);
    out.bytes[i] = static_cast<std::uint8_t>(sum & 0xFFU);
    carry = (carry >> 8) + (sum >> 8);
  }
  return out;
}

std::optional<std::uint64_t> IpRange::OffsetOf(const net::IpAddress& address) const {
  if (address.family != base_.family) return std::nullopt;
  const std::size_t length = LengthOf(base_.family);
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < length; ++i) {
    const std::uint8_t mask = PrefixMask(i, prefix_);
    if ((address.bytes[i] & mask) != base_.bytes[i]) return std::nullopt;
    const auto host = static_cast<std::uint8_t>(address.bytes[i] & ~mask);
    // Offsets fit in 64 bits: host bits above them mean an address past the range's cap.
    if (length - i > 8) {
      if (host != 0) return std::nullopt;
      continue;
    }
    offset = (offset << 8) | host;
  }
  if (offset < 1 || offset > size_) return std::nullopt;
  return offset;
}

std::string IpRange::ToString() const {
  return net::FormatIp(base_) + "/" + std::to_string(prefix_);
}

std::optional<net::IpAddress> IpAllocator::Allocate(const std::string& owner) {
  const std::uint64_t size = range_.size();
  if (owner_of_.size() >= size) return std::nullopt;
  // At most used() + 1 candidates are looked at before a free one.
  std::uint64_t offset = last_;
  for (std::size_t tried = 0; tried <= owner_of_.size(); ++tried) {
    offset = offset >= size ? 1 : offset + 1;
    if (owner_of_.contains(offset)) continue;
    owner_of_.emplace(offset, owner);
    held_[owner].push_back(offset);
    last_ = offset;
    return range_.At(offset);
  }
  return std::nullopt;
}

Status IpAllocator::Reserve(const net::IpAddress& address, const std::string& owner) {
  const std::optional<std::uint64_t> offset = range_.OffsetOf(address);
  if (!offset) {
    return InvalidError(net::FormatIp(address) + " is outside " + range_.ToString());
  }
  auto [it, inserted] = owner_of_.emplace(*offset, owner);
  if (!inserted) {
    if (it->second == owner) return Status();
    return AlreadyExistsError(net::FormatIp(address) + " is already held by " + it->second);
  }
  held_[owner].push_back(*offset);
  return Status();
}

void IpAllocator::Release(const std::string& owner) {
  auto it = held_.find(owner);
  if (it == held_.end()) return;
  for (const std::uint64_t offset : it->second) owner_of_.erase(offset);
  held_.erase(it);
}

std::vector<net::IpAddress> IpAllocator::AddressesOf(const std::string& owner) const {
  std::vector<net::IpAddress> out;
  if (auto it = held_.find(owner); it != held_.end()) {
    for (const std::uint64_t offset : it->second) out.push_back(range_.At(offset));
  }
  return out;
}

AddressPool::AddressPool(IpRange v4, std::optional<IpRange> v6) {
  allocators_.emplace_back(v4);
  if (v6) allocators_.emplace_back(*v6);
}

std::optional<std::vector<std::string>> AddressPool::Allocate(const std::string& owner) {
  std::vector<std::string> out;
  std::vector<IpAllocator*> allocated;
  for (IpAllocator& allocator : allocators_) {
    std::vector<net::IpAddress> held = allocator.AddressesOf(owner);
    if (held.empty()) {
      std::optional<net::IpAddress> address = allocator.Allocate(owner);
      if (!address) {
        // All or nothing: a pod without an address of every family cannot start.
        for (IpAllocator* undo : allocated) undo->Release(owner);
        return std::nullopt;
      }
      allocated.push_back(&allocator);
      held.push_back(*address);
    }
    out.push_back(net::FormatIp(held.front()));
  }
  return out;
}

Status AddressPool::Reserve(const std::vector<std::string>& addresses, const std::string& owner) {
  Status first_error;
  for (const std::string& text : addresses) {
    const std::optional<net::IpAddress> address = net::ParseIpSloppy(text);
    if (!address) continue;
    for (IpAllocator& allocator : allocators_) {
      if (!allocator.range().OffsetOf(*address)) continue;
      Status status = allocator.Reserve(*address, owner);
      if (!status.ok() && first_error.ok()) first_error = std::move(status);
    }
  }
  return first_error;
}

void AddressPool::Release(const std::string& owner) {
  for (IpAllocator& allocator : allocators_) allocator.Release(owner);
}

bool AddressPool::Holds(const std::string& owner) const {
  return std::all_of(allocators_.begin(), allocators_.end(), [&](const IpAllocator& allocator) {
    return !allocator.AddressesOf(owner).empty();
  });
}

std::size_t AddressPool::used() const {
  std::size_t total = 0;
  for (const IpAllocator& allocator : allocators_) total += allocator.used();
  return total;
}

}  // namespace slicewright::controllers::podsim
