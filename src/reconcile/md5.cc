#include "reconcile/md5.h"

#include <openssl/evp.h>

#include "slicewright/base/check.h"

namespace slicewright::reconcile::internal {

// A one-shot digest cannot fail for in-memory input short of allocation failure, which aborts as
// everywhere else (mcs's SHA-256 does the same).
Md5Digest Md5(std::string_view data) {
  Md5Digest digest{};
  unsigned int size = 0;
  const int ok = EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_md5(), nullptr);
  SW_CHECK(ok == 1 && size == digest.size());
  return digest;
}

}  // namespace slicewright::reconcile::internal
