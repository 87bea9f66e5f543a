// Standard base64 decoding as Go's encoding/json decodes a []byte field (base64.StdEncoding, with
// '\r' and '\n' ignored), for the *-data fields of a kubeconfig and an ExecCredential. Pure.
#pragma once

#include <string>
#include <string_view>

#include "slicewright/base/result.h"

namespace slicewright::client::internal {

// Decodes padded standard base64. kBadRequest "illegal base64 data at input byte N" (N counts
// from 0 and includes skipped newlines, as Go reports it). The message never quotes the input:
// it is often key material.
Result<std::string> DecodeBase64(std::string_view text);

// Encodes as padded standard base64 (for KUBERNETES_EXEC_INFO's certificate-authority-data).
std::string EncodeBase64(std::string_view bytes);

}  // namespace slicewright::client::internal
