// Allocators for Service cluster IPs (one per family) and node ports, as kube-apiserver's
// --service-cluster-ip-range and --service-node-port-range give them out. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "slicewright/base/mutex.h"
#include "slicewright/base/result.h"
#include "slicewright/net/ip.h"

namespace slicewright::apiserver {

class IpAllocator final {
 public:
  // `cidr` like "10.96.0.0/12"; kInvalid when it does not parse.
  static Result<IpAllocator> Create(std::string_view cidr);
  IpAllocator(const IpAllocator& other);
  IpAllocator& operator=(const IpAllocator&) = delete;

  net::IpFamily family() const { return base_.family; }
  // The next free address, or kInvalid "range is full".
  Result<std::string> Allocate();
  // Marks a specific address used: kInvalid when outside the range or already allocated.
  Status AllocateSpecific(std::string_view ip);
  // Marks an address used without checks (loading stored Services).
  void MarkUsed(std::string_view ip);
  void Release(std::string_view ip);

 private:
  IpAllocator(net::IpAddress base, int prefix_bits);
  std::optional<std::uint64_t> OffsetOf(std::string_view ip) const;
  std::string AddressAt(std::uint64_t offset) const;

  net::IpAddress base_;
  std::uint64_t size_ = 0;
  mutable Mutex mu_;
  std::set<std::uint64_t> used_ SW_GUARDED_BY(mu_);
  std::uint64_t cursor_ SW_GUARDED_BY(mu_) = 1;
};

class PortAllocator final {
 public:
  PortAllocator(int min, int max) : min_(min), max_(max), cursor_(min) {}
  Result<int> Allocate();
  Status AllocateSpecific(int port);
  void MarkUsed(int port);
  void Release(int port);

 private:
  int min_;
  int max_;
  Mutex mu_;
  std::set<int> used_ SW_GUARDED_BY(mu_);
  int cursor_ SW_GUARDED_BY(mu_);
};

}  // namespace slicewright::apiserver
