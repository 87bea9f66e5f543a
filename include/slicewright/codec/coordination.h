// JSON for coordination.k8s.io/v1 Lease, the lock object of leader election: decoded with simdjson
// and encoded as a real API server accepts it, MicroTime fields with six fractional digits.
// Reentrant.
#pragma once

#include <string>
#include <string_view>

#include "slicewright/base/result.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/coordination.h"

namespace slicewright::codec {

// One Lease object; apiVersion and kind may be omitted but must match when present. Unknown fields
// are ignored and null reads as unset. Errors as the other single-object decoders (json.h):
// "leases/kube-system/lock: .spec.leaseDurationSeconds: expected integer" (kBadRequest).
Result<model::Lease> DecodeLease(std::string_view json);

// A LeaseList (or "List" of Leases) page and one watch event line, for a Lease informer
// (cache::MakeKind). As json.h's list and watch decoders: an item that cannot be decoded goes to
// item_errors; an ERROR event carries the server's Status in `error`.
Result<ListPage<model::Lease>> DecodeLeaseList(std::string_view json);
Result<WatchEvent<model::Lease>> DecodeLeaseWatchEvent(std::string_view line);

// Compact JSON with apiVersion and kind set; unset spec fields are omitted, set ones written even
// when empty (holderIdentity "" of a released lease), acquireTime and renewTime as MicroTime
// ("2026-12-03T04:32:01.123456Z"). decode(encode(x)) == x for times in whole microseconds.
std::string EncodeLease(const model::Lease& lease);

}  // namespace slicewright::codec
