#!/usr/bin/env bash
# Checks the layer order of style §6.1 on every include in include/ and src/, and where the heavy
# third-party libraries may be included (§6.9, §6.13). Exits 1 naming each offending file, line and
# include; prints one OK line otherwise. Needs only bash, find, sort and awk.
#
# Layers, lowest first (a file may include its own layer or a lower one):
#   base < net < model < labels < reconcile | mcs < codec < client < cache < runtime | dns
#        < apiserver | controllers < cli
# model, labels and net are siblings above base; of them net includes only base, model may include
# net, and labels may include model (and net). apiserver and controllers never include each other.
# reconcile never includes codec (already implied by the order; named in the message). mcs (the
# Multi-Cluster Services aggregation, pure like reconcile) sits at reconcile's rank: the two are
# siblings, and neither includes codec. dns (the clusterset.local responder) sits at runtime's
# rank: it reads the caches, and the MCS agent (controllers) runs it.
#
# What counts as an include of layer X:
#   "slicewright/X/..." or <slicewright/X/...>   a public header (include/slicewright/X/)
#   "X/..." when src/X/... exists                 a private header of src/X/
# Any other include (the standard library, third-party, a header beside the file) is not a layer
# include. A file must itself live in a known layer folder: include/slicewright/X/ or src/X/.
#
# Usage: scripts/check-layers.sh [ROOT]   (default: the repository holding this script)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"

dirs=()
for d in include src; do
  [[ -d $d ]] && dirs+=("$d")
done
if ((${#dirs[@]} == 0)); then
  echo "check-layers: no include/ or src/ under $root" >&2
  exit 1
fi

mapfile -t files < <(find "${dirs[@]}" -type f \
  \( -name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' -o -name '*.inc' \) |
  LC_ALL=C sort)
if ((${#files[@]} == 0)); then
  echo "check-layers: OK (no sources yet)"
  exit 0
fi

# The first input is the list of files under src/ (to recognise private includes); then the sources.
awk '
BEGIN {
  n = split("base net model labels reconcile mcs codec client cache runtime dns apiserver controllers cli", names, " ")
  for (i = 1; i <= n; i++) known[names[i]] = 1
  rank["base"] = 0; rank["net"] = 1; rank["model"] = 2; rank["labels"] = 3; rank["reconcile"] = 4; rank["mcs"] = 4
  rank["codec"] = 5; rank["client"] = 6; rank["cache"] = 7; rank["runtime"] = 8; rank["dns"] = 8
  rank["apiserver"] = 9; rank["controllers"] = 9; rank["cli"] = 10

  # Third-party headers: include-path prefix -> layers whose src/ files may include it. Public
  # headers (include/) may include none of them.
  lib_prefix[1] = "simdjson";      lib_name[1] = "simdjson";   lib_where[1] = "codec"
  lib_prefix[2] = "nlohmann/";     lib_name[2] = "nlohmann";   lib_where[2] = "codec client apiserver"
  lib_prefix[3] = "yaml-cpp/";     lib_name[3] = "yaml-cpp";   lib_where[3] = "codec"
  # runtime: the HTTP endpoint serving /metrics and the probes (http_endpoint.cc).
  lib_prefix[4] = "boost/beast";   lib_name[4] = "Beast";      lib_where[4] = "client runtime apiserver"
  # dns: the UDP and TCP server of the clusterset.local responder (server.cc).
  lib_prefix[5] = "boost/asio";    lib_name[5] = "Boost.Asio"; lib_where[5] = "client runtime apiserver dns"
  # mcs: SHA-256 (the EVP interface of libcrypto) for the derived Service name, spec section 11.
  lib_prefix[6] = "openssl/";      lib_name[6] = "OpenSSL";    lib_where[6] = "client apiserver mcs reconcile"
  lib_prefix[7] = "sqlite3";       lib_name[7] = "SQLite";     lib_where[7] = "apiserver"
  lib_prefix[8] = "CLI/";          lib_name[8] = "CLI11";      lib_where[8] = "cli"
  # dns: the DNS wire format, behind the one adapter src/dns/wire.cc.
  lib_prefix[9] = "ldns/";         lib_name[9] = "libldns";    lib_where[9] = "dns"
  nlibs = 9
  errors = 0
}

FILENAME == ARGV[1] { src_files[$0] = 1; next }

FNR == 1 {
  nfiles++
  file = FILENAME
  nparts = split(file, parts, "/")
  public = 0
  if (parts[1] == "include") {
    public = 1
    layer = (parts[2] == "slicewright" && nparts >= 4) ? parts[3] : ""
  } else {
    layer = (nparts >= 3) ? parts[2] : ""
  }
  if (!(layer in known)) {
    printf "%s: not in a layer folder (include/slicewright/<layer>/ or src/<layer>/, layers: base net model labels reconcile mcs codec client cache runtime dns apiserver controllers cli)\n", file
    errors++
    layer = ""
  }
}

/^[ \t]*#[ \t]*include[ \t]*["<]/ {
  if (layer == "") next
  line = $0
  sub(/^[ \t]*#[ \t]*include[ \t]*/, "", line)
  quoted = (substr(line, 1, 1) == "\"")
  close_char = quoted ? "\"" : ">"
  path = substr(line, 2)
  end = index(path, close_char)
  if (end == 0) next
  path = substr(path, 1, end - 1)
  shown = quoted ? "\"" path "\"" : "<" path ">"

  target = ""
  np = split(path, pp, "/")
  if (pp[1] == "slicewright" && np >= 3) {
    target = pp[2]
    if (!(target in known)) {
      printf "%s:%d: includes %s: unknown layer \"%s\"\n", file, FNR, shown, target
      errors++
      next
    }
  } else if (quoted && np >= 2 && (pp[1] in known) && (("src/" path) in src_files)) {
    target = pp[1]
  }

  if (target != "" && target != layer) {
    why = ""
    if ((layer == "reconcile" || layer == "mcs") && target == "codec") {
      why = " (" layer " never includes codec: the pure core does not know about wire formats)"
    } else if (rank[target] > rank[layer]) {
      why = " (" target " is above " layer " in the layer order)"
    } else if (rank[target] == rank[layer]) {
      why = " (" layer " and " target " are siblings and may not include each other)"
    }
    if (why != "") {
      printf "%s:%d: includes %s: layer %s may not include layer %s%s\n", file, FNR, shown, layer, target, why
      errors++
    }
  }

  if (!quoted || target == "") {
    for (i = 1; i <= nlibs; i++) {
      if (index(path, lib_prefix[i]) != 1) continue
      if (public) {
        printf "%s:%d: includes %s: public headers never include %s (keep it in the .cc files of: %s)\n", file, FNR, shown, lib_name[i], lib_where[i]
        errors++
      } else if (index(" " lib_where[i] " ", " " layer " ") == 0) {
        printf "%s:%d: includes %s: %s is used only in src/ of: %s\n", file, FNR, shown, lib_name[i], lib_where[i]
        errors++
      }
    }
  }

  if ((layer == "reconcile" || layer == "mcs") && (index(path, "spdlog/") == 1 || path == "slicewright/base/log.h")) {
    printf "%s:%d: includes %s: %s does no logging (problems go into its results)\n", file, FNR, shown, layer
    errors++
  }
}

END {
  if (errors > 0) {
    printf "check-layers: %d violation(s); the layer order is in docs/design.md and style section 6.1\n", errors
    exit 1
  }
  printf "check-layers: OK (%d files)\n", nfiles
}
' <(find src -type f 2>/dev/null || true) "${files[@]}"
