#include "apiserver/rest/allocators.h"

#include <charconv>
#include <string>

namespace slicewright::apiserver {

Result<IpAllocator> IpAllocator::Create(std::string_view cidr) {
  const std::size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) {
    return InvalidError("invalid CIDR \"" + std::string(cidr) + "\": missing prefix length");
  }
  const auto base = net::ParseIpSloppy(cidr.substr(0, slash));
  int bits = -1;
  const std::string_view bits_text = cidr.substr(slash + 1);
  const auto [end, error] =
      std::from_chars(bits_text.data(), bits_text.data() + bits_text.size(), bits);
  if (error != std::errc() || end != bits_text.data() + bits_text.size()) {
    bits = -1;
  }
  const int width = base && base->family == net::IpFamily::kIPv4 ? 32 : 128;
  if (!base || bits < 0 || bits > width || width - bits > 62 || width - bits < 2) {
    return InvalidError("invalid CIDR \"" + std::string(cidr) + "\"");
  }
  return IpAllocator(*base, bits);
}

IpAllocator::IpAllocator(net::IpAddress base, int prefix_bits) : base_(base) {
  const int width = base.family == net::IpFamily::kIPv4 ? 32 : 128;
  size_ = std::uint64_t{1} << (width - prefix_bits);
}

IpAllocator::IpAllocator(const IpAllocator& other) : base_(other.base_), size_(other.size_) {
  std::lock_guard lock(other.mu_);
  used_ = other.used_;
  cursor_ = other.cursor_;
}

std::optional<std::uint64_t> IpAllocator::OffsetOf(std::string_view ip) const {
  const auto address = net::ParseIpSloppy(ip);
  if (!address || address->family != base_.family) {
    return std::nullopt;
  }
  const int length = base_.family == net::IpFamily::kIPv4 ? 4 : 16;
  // Everything above the low 8 bytes must equal the base; the offset lives in the low bytes.
  std::uint64_t offset = 0;
  std::uint64_t base_low = 0;
  for (int i = 0; i < length; ++i) {
    const std::size_t at = static_cast<std::size_t>(i);
    if (length - i > 8) {
      if (address->bytes[at] != base_.bytes[at]) {
        return std::nullopt;
      }
      continue;
    }
    offset = (offset << 8) | address->bytes[at];
    base_low = (base_low << 8) | base_.bytes[at];
  }
  if (offset < base_low || offset - base_low >= size_) {
    return std::nullopt;
  }
  return offset - base_low;
}

std::string IpAllocator::AddressAt(std::uint64_t offset) const {
  net::IpAddress address = base_;
  const int length = base_.family == net::IpFamily::kIPv4 ? 4 : 16;
  std::uint64_t carry = offset;
  for (int i = length - 1; i >= 0 && carry > 0; --i) {
    const std::size_t at = static_cast<std::size_t>(i);
    const std::uint64_t sum = address.bytes[at] + (carry & 0xff);
    address.bytes[at] = static_cast<std::uint8_t>(sum & 0xff);
    carry = (carry >> 8) + (sum >> 8);
  }
  return net::FormatIp(address);
}

Result<std::string> IpAllocator::Allocate() {
  MutexLock lock(mu_);
  // Offset 0 is the network address and the last one the broadcast address of IPv4.
  const std::uint64_t usable = size_ - 1;
  for (std::uint64_t tried = 0; tried < usable; ++tried) {
    if (cursor_ >= usable || cursor_ == 0) {
      cursor_ = 1;
    }
    const std::uint64_t candidate = cursor_++;
    if (used_.insert(candidate).second) {
      return AddressAt(candidate);
    }
  }
  return InvalidError("range is full");
}

Status IpAllocator::AllocateSpecific(std::string_view ip) {
  const auto offset = OffsetOf(ip);
  if (!offset) {
    // kube-apiserver 1.34's (ServiceCIDR allocator) words for an address outside the range.
    return InvalidError("failed to allocate IP " + std::string(ip) +
                        ": the provided network does not match the current range");
  }
  MutexLock lock(mu_);
  if (!used_.insert(*offset).second) {
    return InvalidError("failed to allocate IP " + std::string(ip) +
                        ": provided IP is already allocated");
  }
  return Status::Ok();
}

void IpAllocator::MarkUsed(std::string_view ip) {
  if (const auto offset = OffsetOf(ip)) {
    MutexLock lock(mu_);
    used_.insert(*offset);
  }
}

void IpAllocator::Release(std::string_view ip) {
  if (const auto offset = OffsetOf(ip)) {
    MutexLock lock(mu_);
    used_.erase(*offset);
  }
}

Result<int> PortAllocator::Allocate() {
  MutexLock lock(mu_);
  for (int tried = 0; tried <= max_ - min_; ++tried) {
    if (cursor_ > max_ || cursor_ < min_) {
      cursor_ = min_;
    }
    const int candidate = cursor_++;
    if (used_.insert(candidate).second) {
      return candidate;
    }
  }
  return InvalidError("range is full");
}

Status PortAllocator::AllocateSpecific(int port) {
  if (port < min_ || port > max_) {
    return InvalidError("provided port is not in the valid range. The range of valid ports is " +
                        std::to_string(min_) + "-" + std::to_string(max_));
  }
  MutexLock lock(mu_);
  if (!used_.insert(port).second) {
    return InvalidError("provided port is already allocated");
  }
  return Status::Ok();
}

void PortAllocator::MarkUsed(int port) {
  MutexLock lock(mu_);
  used_.insert(port);
}

void PortAllocator::Release(int port) {
  MutexLock lock(mu_);
  used_.erase(port);
}

}  // namespace slicewright::apiserver
