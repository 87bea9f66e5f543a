// MD5 of a byte string, through libcrypto's EVP interface. Not for security: upstream Kubernetes
// orders the subsets and ports of an Endpoints by the MD5 of their printout (pkg/api/v1/endpoints),
// and writing them in the same order is what lets its controller and ours take each other's
// objects over unchanged. Pure and reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace slicewright::reconcile::internal {

using Md5Digest = std::array<std::uint8_t, 16>;

Md5Digest Md5(std::string_view data);

}  // namespace slicewright::reconcile::internal
