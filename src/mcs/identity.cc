#include "slicewright/mcs/identity.h"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <openssl/evp.h>

#include "slicewright/base/check.h"
#include "slicewright/labels/validation.h"

namespace slicewright::mcs {
namespace {

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// SHA-256 through libcrypto's EVP interface (a one-shot digest cannot fail for in-memory input
// short of allocation failure, which aborts as everywhere else).
std::array<std::uint8_t, 32> Sha256(std::string_view text) {
  std::array<std::uint8_t, 32> digest{};
  unsigned int size = 0;
  const int ok = EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr);
  SW_CHECK(ok == 1 && size == digest.size());
  return digest;
}

// RFC 4648 base32hex, lower case, no padding.
std::string Base32HexLower(std::span<const std::uint8_t> bytes) {
  constexpr std::string_view kAlphabet = "0123456789abcdefghijklmnopqrstuv";
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (const std::uint8_t byte : bytes) {
    buffer = (buffer << 8U) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += kAlphabet[(buffer >> static_cast<unsigned>(bits)) & 0x1FU];
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << static_cast<unsigned>(5 - bits)) & 0x1FU];
  return out;
}

}  // namespace

Status ValidateClusterId(std::string_view id) {
  if (id.empty()) return InvalidError("cluster id is empty");
  if (id.size() > kMaxClusterIdLength) {
    return InvalidError("cluster id " + Quoted(id) + ": " +
                        labels::MaxLenError(kMaxClusterIdLength));
  }
  const std::vector<std::string> errors = labels::IsDNS1123Subdomain(id);
  if (!errors.empty()) return InvalidError("cluster id " + Quoted(id) + ": " + errors.front());
  return Status();
}

Result<std::string> ResolveClusterId(std::span<const model::ClusterProperty> properties,
                                     std::string_view flag_value) {
  for (const std::string_view name :
       {model::kClusterPropertyId, model::kClusterPropertyClusterId}) {
    for (const model::ClusterProperty& property : properties) {
      if (property.metadata.name != name) continue;
      Status status = ValidateClusterId(property.value);
      if (!status.ok()) {
        status.WithContext("ClusterProperty " + std::string(name));
        return status;
      }
      return property.value;
    }
  }
  if (flag_value.empty()) {
    return InvalidError("no cluster id: set the ClusterProperty " +
                        std::string(model::kClusterPropertyId) + " (or " +
                        std::string(model::kClusterPropertyClusterId) + ") or --cluster-id");
  }
  Status status = ValidateClusterId(flag_value);
  if (!status.ok()) {
    status.WithContext("--cluster-id");
    return status;
  }
  return std::string(flag_value);
}

std::string DerivedServiceName(std::string_view namespace_, std::string_view name) {
  std::string key(namespace_);
  key += '/';
  key += name;
  const std::array<std::uint8_t, 32> digest = Sha256(key);
  return "derived-" + Base32HexLower(digest).substr(0, 10);
}

std::string ExportRecordName(std::string_view namespace_, std::string_view name,
                             std::string_view cluster) {
  std::string out(name);
  out += '.';
  out += namespace_;
  out += '.';
  out += cluster;
  return out;
}

}  // namespace slicewright::mcs
