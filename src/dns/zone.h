// The clusterset.local zone as the MCS DNS specification (schema 1.0.0, spec §9) defines it: the
// records of each ServiceImport, built from the import and this cluster's MCS EndpointSlices, and
// the answer to a question. Pure: no I/O, no clock, no logging. BuildServiceView and Resolve are
// reentrant; Zone is thread-safe (readers get immutable snapshots of one service at a time).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/base/mutex.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/mcs.h"
#include "slicewright/net/ip.h"

namespace slicewright::dns {

inline constexpr std::string_view kZoneName = "clusterset.local";
// The schema version record (spec §9): dns-version.clusterset.local TXT "1.0.0".
inline constexpr std::string_view kSchemaVersion = "1.0.0";

// RR types and classes we answer (RFC 1035, 3596, 2782, 6891).
enum class RecordType : std::uint16_t {
  kA = 1,
  kNS = 2,
  kSOA = 6,
  kTXT = 16,
  kAAAA = 28,
  kSRV = 33,
  kOPT = 41,
  kAXFR = 252,
  kANY = 255,
};
inline constexpr std::uint16_t kClassIN = 1;
inline constexpr std::uint16_t kClassANY = 255;

enum class Rcode : std::uint8_t {
  kNoError = 0,
  kFormErr = 1,
  kServFail = 2,
  kNxDomain = 3,
  kNotImp = 4,
  kRefused = 5,
  kBadVers = 16,  // extended (EDNS): needs an OPT record
};

struct SrvData {
  std::uint16_t priority = 0;
  std::uint16_t weight = 0;
  std::uint16_t port = 0;
  std::string target;  // absolute, without the trailing dot
  friend auto operator<=>(const SrvData&, const SrvData&) = default;
};

struct SoaData {
  std::string mname;
  std::string rname;
  std::uint32_t serial = 1;
  std::uint32_t refresh = 7200;
  std::uint32_t retry = 1800;
  std::uint32_t expire = 86400;
  std::uint32_t minimum = 5;
  friend auto operator<=>(const SoaData&, const SoaData&) = default;
};

// One resource record. `name` is absolute, lower case, without the trailing dot; the data field of
// its type is set (address for A/AAAA, srv, text for TXT, soa).
struct Record {
  std::string name;
  RecordType type = RecordType::kA;
  std::uint32_t ttl = 0;
  net::IpAddress address;
  SrvData srv;
  std::string text;
  SoaData soa;
  friend auto operator<=>(const Record&, const Record&) = default;
};

// A response's content: rcode, the AA bit and its sections (the question is the query's).
struct Answer {
  Rcode rcode = Rcode::kNoError;
  bool authoritative = false;
  std::vector<Record> answer;
  std::vector<Record> authority;
  std::vector<Record> additional;
};

// Every name one ServiceImport owns below <svc>.<ns>.svc.clusterset.local, keyed by the part
// before it ("" is the service name itself; "_tcp._tcp"; "web-0.cluster-a"; "10-0-0-1.cluster-a"),
// each with its records (possibly none: a ClusterSetIP import whose IPs are not allocated yet).
struct ServiceView {
  std::string namespace_;
  std::string name;
  bool headless = false;
  std::map<std::string, std::vector<Record>, std::less<>> names;
};

struct ZoneOptions {
  std::uint32_t ttl = 5;  // --mcs-dns-ttl: every record's, and the negative answers' (SOA minimum)
};

// Builds the records of `service_import` (spec §9) from `slices`: this cluster's MCS EndpointSlices
// of that import (multicluster.kubernetes.io/service-name = its name, in its namespace; others are
// ignored). A slice counts when its multicluster.kubernetes.io/source-cluster label names a
// cluster for which `is_live` is true; an endpoint when it is ready (unset means ready).
//
// ClusterSetIP: A/AAAA of spec.ips at the service name; one SRV per distinct port number there
// (the conformance suite's bare-name query, spec §12.2 T23), target the service name; an SRV at
// _<port>._<proto>.<service name> per named port.
// Headless: A/AAAA of every ready address at the service name; A/AAAA at
// <hostname>.<cluster id>.<service name> per ready endpoint, the hostname being the endpoint's or,
// without one, its address with '.' or ':' replaced by '-' (one name per address then); SRV per
// (ready endpoint x slice port) at the service name (every port, one per distinct (port, target):
// T27) and at _<port>._<proto>.<service name> (named ports). No ready endpoint: the import owns
// no name (NXDOMAIN). Never <cluster id>.<service name> records (D9). Names past DNS limits (a
// label over 63 bytes, a name over 253) are left out. Duplicate records are merged.
ServiceView BuildServiceView(const model::ServiceImport& service_import,
                             std::span<const model::EndpointSlice> slices,
                             const std::function<bool(std::string_view cluster_id)>& is_live,
                             const ZoneOptions& options);

// The services of the zone, each an immutable snapshot replaced whole. Thread-safe.
class Zone final {
 public:
  void Put(std::shared_ptr<const ServiceView> view);
  void Remove(std::string_view namespace_, std::string_view name);
  std::shared_ptr<const ServiceView> Find(std::string_view namespace_, std::string_view name) const;
  bool HasNamespace(std::string_view namespace_) const;
  bool Empty() const;
  std::size_t size() const;
  // Changes with every Put() and Remove(): an answer computed at one generation is current while
  // the generation is the same (the responder's cache relies on it).
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::uint64_t> generation_{0};
  mutable Mutex mu_;
  // "namespace/name" -> view; namespace -> how many services it holds.
  std::map<std::string, std::shared_ptr<const ServiceView>, std::less<>> services_
      SW_GUARDED_BY(mu_);
  std::map<std::string, int, std::less<>> namespaces_ SW_GUARDED_BY(mu_);
};

// The zone's SOA record (the apex's, and the negative answers' authority).
Record ZoneSoa(const ZoneOptions& options);

// Answers (qname, qtype) of class IN from `zone`:
// - outside clusterset.local: REFUSED, not authoritative;
// - a name that exists with records of qtype (ANY: every type): NOERROR and those records, with
//   the A/AAAA of SRV targets in the additional section;
// - a name that exists without that type (including empty non-terminals such as
//   <ns>.svc.clusterset.local): NODATA (NOERROR, no answer, the SOA in the authority section);
// - any other name: NXDOMAIN with the SOA.
// The apex answers SOA; dns-version.clusterset.local TXT "1.0.0". Names are matched without
// regard to case; `qname` may end with a dot. AXFR and IXFR are REFUSED.
Answer Resolve(const Zone& zone, std::string_view qname, std::uint16_t qtype,
               const ZoneOptions& options);

// One record's type and data as text: "A 10.0.0.1", "SRV 0 100 42 web.ns.svc.clusterset.local",
// "TXT \"1.0.0\"".
std::string RecordText(const Record& record);

// The text form of an answer, one record a line ("NXDOMAIN", "A 10.0.0.1", "SRV 0 100 42
// web.ns.svc.clusterset.local", ...), sorted within each section: for tests and `explain`.
std::string Render(const Answer& answer);

}  // namespace slicewright::dns
