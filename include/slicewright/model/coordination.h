// coordination.k8s.io/v1 Lease: the object leader election locks on (client-go's LeaseLock).
// Copyable aggregates with defaulted equality; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"

namespace slicewright::model {

// Every field is a pointer in Go, so "unset" and "empty" differ on the wire: a released lease
// carries holderIdentity "" (not absent). std::optional keeps that distinction.
// preferredHolder and strategy (coordinated leader election) are not modelled.
struct LeaseSpec {
  std::optional<std::string> holder_identity;
  std::optional<std::int32_t> lease_duration_seconds;
  std::optional<Time> acquire_time;  // metav1.MicroTime: microseconds on the wire
  std::optional<Time> renew_time;    // metav1.MicroTime
  std::optional<std::int32_t> lease_transitions;
  friend bool operator==(const LeaseSpec&, const LeaseSpec&) = default;
};

struct Lease {
  ObjectMeta metadata;
  LeaseSpec spec;
  friend bool operator==(const Lease&, const Lease&) = default;
};

}  // namespace slicewright::model
