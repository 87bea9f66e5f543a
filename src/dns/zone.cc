#include "dns/zone.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "slicewright/model/well_known.h"

namespace slicewright::dns {
namespace {

constexpr std::size_t kMaxLabel = 63;
constexpr std::size_t kMaxName = 253;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view LabelOf(const model::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(key);
  return it == meta.labels.end() ? std::string_view() : std::string_view(it->second);
}

// Whether every label of `name` (dot-separated) is 1..63 bytes and the whole at most 253.
bool FitsDns(std::string_view name) {
  if (name.empty() || name.size() > kMaxName) return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    const std::size_t length = dot - start;
    if (length == 0 || length > kMaxLabel) return false;
    start = dot + 1;
  }
  return true;
}

// The hostname-less endpoint's label: its address with '.' or ':' replaced by '-' (spec §9
// conformance quirk), from the canonical text so that every spelling of one address agrees.
std::string DashedIp(const net::IpAddress& address) {
  std::string text = net::FormatIp(address);
  std::replace(text.begin(), text.end(), '.', '-');
  std::replace(text.begin(), text.end(), ':', '-');
  return text;
}

// "a.b", built in one allocation.
std::string Dotted(std::string_view a, std::string_view b) {
  std::string out;
  out.reserve(a.size() + 1 + b.size());
  out.append(a).append(".").append(b);
  return out;
}

Record AddressRecord(std::string name, const net::IpAddress& address, std::uint32_t ttl) {
  Record record;
  record.name = std::move(name);
  record.type = address.family == net::IpFamily::kIPv4 ? RecordType::kA : RecordType::kAAAA;
  record.ttl = ttl;
  record.address = address;
  return record;
}

Record SrvRecord(std::string name, std::uint16_t port, std::string target, std::uint32_t ttl) {
  Record record;
  record.name = std::move(name);
  record.type = RecordType::kSRV;
  record.ttl = ttl;
  record.srv.priority = 0;
  record.srv.weight = 100;
  record.srv.port = port;
  record.srv.target = std::move(target);
  return record;
}

// "_<port name>._<protocol>" for a named port, "" for an unnamed one or a name DNS cannot carry.
std::string PortPrefix(std::string_view port_name, std::string_view protocol) {
  if (port_name.empty()) return {};
  std::string prefix = "_" + Lower(port_name) + "._" + Lower(protocol.empty() ? "TCP" : protocol);
  return FitsDns(prefix) ? prefix : std::string();
}

// Merges duplicates and orders the records of every name (a DNS RRset is a set); SRV weights are
// shared out so that each name's SRV records sum to about 100, as CoreDNS does.
void Normalize(ServiceView& view) {
  for (auto& [prefix, records] : view.names) {
    std::sort(records.begin(), records.end());
    records.erase(std::unique(records.begin(), records.end()), records.end());
    const auto srv_count = std::count_if(
        records.begin(), records.end(), [](const Record& r) { return r.type == RecordType::kSRV; });
    for (Record& record : records) {
      if (record.type == RecordType::kSRV) {
        record.srv.weight = static_cast<std::uint16_t>(std::max<long>(1, 100 / srv_count));
      }
    }
  }
}

}  // namespace

ServiceView BuildServiceView(const model::ServiceImport& service_import,
                             std::span<const model::EndpointSlice> slices,
                             const std::function<bool(std::string_view cluster_id)>& is_live,
                             const ZoneOptions& options) {
  ServiceView view;
  view.namespace_ = service_import.metadata.namespace_;
  view.name = service_import.metadata.name;
  view.headless = service_import.spec.type == model::kServiceImportHeadless;
  const std::uint32_t ttl = options.ttl;
  const std::string service_name =
      Lower(fmt::format("{}.{}.svc.{}", view.name, view.namespace_, kZoneName));
  if (!FitsDns(service_name)) return view;  // a name DNS cannot carry owns nothing

  if (!view.headless) {
    std::vector<Record>& bare = view.names[""];
    for (const std::string& ip : service_import.spec.ips) {
      if (const auto address = net::ParseIpSloppy(ip)) {
        bare.push_back(AddressRecord(service_name, *address, ttl));
      }
    }
    for (const model::McsServicePort& port : service_import.spec.ports) {
      if (port.port <= 0 || port.port > 65535) continue;
      const auto number = static_cast<std::uint16_t>(port.port);
      // The bare name: one per distinct port number (duplicates merge in Normalize).
      bare.push_back(SrvRecord(service_name, number, service_name, ttl));
      const std::string prefix = PortPrefix(port.name, port.protocol);
      if (prefix.empty()) continue;
      const std::string owner = Dotted(prefix, service_name);
      if (!FitsDns(owner)) continue;
      view.names[prefix].push_back(SrvRecord(owner, number, service_name, ttl));
    }
    Normalize(view);
    return view;
  }

  for (const model::EndpointSlice& slice : slices) {
    if (slice.metadata.namespace_ != service_import.metadata.namespace_ ||
        LabelOf(slice.metadata, model::kLabelMcsServiceName) != service_import.metadata.name ||
        slice.metadata.deletion_timestamp) {
      continue;
    }
    const std::string cluster = Lower(LabelOf(slice.metadata, model::kLabelMcsSourceCluster));
    if (cluster.empty() || !is_live(cluster)) continue;
    for (const model::Endpoint& endpoint : slice.endpoints) {
      if (endpoint.conditions.ready.has_value() && !*endpoint.conditions.ready) continue;
      for (const std::string& text : endpoint.addresses) {
        const std::optional<net::IpAddress> address = net::ParseIpSloppy(text);
        if (!address.has_value()) continue;  // an FQDN slice: nothing to answer with
        view.names[""].push_back(AddressRecord(service_name, *address, ttl));
        const std::string host =
            endpoint.hostname.has_value() ? Lower(*endpoint.hostname) : DashedIp(*address);
        const std::string prefix = Dotted(host, cluster);
        const std::string target = Dotted(prefix, service_name);
        if (!FitsDns(target) || host.find('.') != std::string::npos) continue;
        view.names[prefix].push_back(AddressRecord(target, *address, ttl));
        for (const model::EndpointPort& port : slice.ports) {
          if (!port.port.has_value() || *port.port <= 0 || *port.port > 65535) continue;
          const auto number = static_cast<std::uint16_t>(*port.port);
          view.names[""].push_back(SrvRecord(service_name, number, target, ttl));
          const std::string port_prefix =
              PortPrefix(port.name.value_or(""), port.protocol.value_or("TCP"));
          if (port_prefix.empty()) continue;
          const std::string owner = Dotted(port_prefix, service_name);
          if (!FitsDns(owner)) continue;
          view.names[port_prefix].push_back(SrvRecord(owner, number, target, ttl));
        }
      }
    }
  }
  Normalize(view);
  return view;
}

void Zone::Put(std::shared_ptr<const ServiceView> view) {
  std::string key = view->namespace_ + "/" + view->name;
  MutexLock lock(mu_);
  auto [it, inserted] = services_.insert_or_assign(std::move(key), nullptr);
  it->second = std::move(view);
  if (inserted) ++namespaces_[it->second->namespace_];
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void Zone::Remove(std::string_view namespace_, std::string_view name) {
  const std::string key = fmt::format("{}/{}", namespace_, name);
  MutexLock lock(mu_);
  auto it = services_.find(key);
  if (it == services_.end()) return;
  services_.erase(it);
  auto ns = namespaces_.find(namespace_);
  if (ns != namespaces_.end() && --ns->second <= 0) namespaces_.erase(ns);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const ServiceView> Zone::Find(std::string_view namespace_,
                                              std::string_view name) const {
  std::string key;
  key.reserve(namespace_.size() + name.size() + 1);
  key.append(namespace_).append("/").append(name);
  MutexLock lock(mu_);
  auto it = services_.find(key);
  return it == services_.end() ? nullptr : it->second;
}

bool Zone::HasNamespace(std::string_view namespace_) const {
  MutexLock lock(mu_);
  return namespaces_.find(namespace_) != namespaces_.end();
}

bool Zone::Empty() const {
  MutexLock lock(mu_);
  return services_.empty();
}

std::size_t Zone::size() const {
  MutexLock lock(mu_);
  return services_.size();
}

Record ZoneSoa(const ZoneOptions& options) {
  Record soa;
  soa.name = std::string(kZoneName);
  soa.type = RecordType::kSOA;
  soa.ttl = options.ttl;
  soa.soa.mname = fmt::format("ns.dns.{}", kZoneName);
  soa.soa.rname = fmt::format("hostmaster.{}", kZoneName);
  soa.soa.minimum = options.ttl;
  return soa;
}

namespace {

bool Matches(const Record& record, std::uint16_t qtype) {
  return qtype == static_cast<std::uint16_t>(RecordType::kANY) ||
         static_cast<std::uint16_t>(record.type) == qtype;
}

// NOERROR with the records of `records` of qtype, or NODATA.
Answer FromRecords(const std::vector<Record>& records, std::uint16_t qtype,
                   const ZoneOptions& options) {
  Answer answer;
  answer.authoritative = true;
  for (const Record& record : records) {
    if (Matches(record, qtype)) answer.answer.push_back(record);
  }
  if (answer.answer.empty()) answer.authority.push_back(ZoneSoa(options));
  return answer;
}

Answer Negative(Rcode rcode, const ZoneOptions& options) {
  Answer answer;
  answer.rcode = rcode;
  answer.authoritative = true;
  answer.authority.push_back(ZoneSoa(options));
  return answer;
}

std::vector<std::string_view> SplitLabels(std::string_view name) {
  std::vector<std::string_view> labels;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    labels.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
  return labels;
}

}  // namespace

Answer Resolve(const Zone& zone, std::string_view qname, std::uint16_t qtype,
               const ZoneOptions& options) {
  std::string name = Lower(qname);
  if (!name.empty() && name.back() == '.') name.pop_back();
  const std::string suffix = "." + std::string(kZoneName);
  const bool apex = name == kZoneName;
  if (!apex && !(name.size() > suffix.size() && name.ends_with(suffix))) {
    Answer refused;
    refused.rcode = Rcode::kRefused;
    return refused;
  }
  if (qtype == static_cast<std::uint16_t>(RecordType::kAXFR) || qtype == 251 /* IXFR */) {
    Answer refused;
    refused.rcode = Rcode::kRefused;
    return refused;
  }
  if (apex) return FromRecords({ZoneSoa(options)}, qtype, options);
  const std::string_view relative = std::string_view(name).substr(0, name.size() - suffix.size());
  if (relative == "dns-version") {
    Record txt;
    txt.name = "dns-version." + std::string(kZoneName);
    txt.type = RecordType::kTXT;
    txt.ttl = options.ttl;
    txt.text = std::string(kSchemaVersion);
    return FromRecords({txt}, qtype, options);
  }
  const std::vector<std::string_view> labels = SplitLabels(relative);
  const std::size_t n = labels.size();
  if (labels.back() != "svc") return Negative(Rcode::kNxDomain, options);
  if (n == 1) return Negative(zone.Empty() ? Rcode::kNxDomain : Rcode::kNoError, options);
  if (n == 2) {
    return Negative(zone.HasNamespace(labels[0]) ? Rcode::kNoError : Rcode::kNxDomain, options);
  }
  const std::shared_ptr<const ServiceView> view = zone.Find(labels[n - 2], labels[n - 3]);
  if (view == nullptr) return Negative(Rcode::kNxDomain, options);
  // The part before <svc>.<ns>.svc: "" for the service name itself.
  std::string_view prefix;
  if (n > 3) {
    const std::size_t end =
        static_cast<std::size_t>(labels[n - 4].data() - relative.data()) + labels[n - 4].size();
    prefix = relative.substr(0, end);
  }
  auto found = view->names.find(prefix);
  if (found == view->names.end()) {
    // An empty non-terminal (a cluster id or _proto label with names below it) exists with no
    // records: NODATA, not NXDOMAIN (RFC 8020); <cluster id>.<service name> is one (spec D9).
    const std::string below = "." + std::string(prefix);
    for (const auto& [owned, records] : view->names) {
      if (!records.empty() && (prefix.empty() || owned.ends_with(below))) {
        return Negative(Rcode::kNoError, options);
      }
    }
    return Negative(Rcode::kNxDomain, options);
  }
  Answer answer = FromRecords(found->second, qtype, options);
  // Additional section: the addresses of the SRV targets (all inside this service).
  const std::string service_suffix =
      fmt::format("{}.{}.svc.{}", view->name, view->namespace_, kZoneName);
  std::set<std::string> targets;
  for (const Record& record : answer.answer) {
    if (record.type == RecordType::kSRV) targets.insert(record.srv.target);
  }
  for (const std::string& target : targets) {
    std::string_view target_prefix;
    if (target != service_suffix) {
      if (!target.ends_with("." + service_suffix)) continue;
      target_prefix = std::string_view(target).substr(0, target.size() - service_suffix.size() - 1);
    }
    auto at = view->names.find(target_prefix);
    if (at == view->names.end()) continue;
    for (const Record& record : at->second) {
      if (record.type == RecordType::kA || record.type == RecordType::kAAAA) {
        answer.additional.push_back(record);
      }
    }
  }
  return answer;
}

namespace {

std::string RenderRecord(const Record& record) {
  switch (record.type) {
    case RecordType::kA:
      return fmt::format("{} A {}", record.name, net::FormatIp(record.address));
    case RecordType::kAAAA:
      return fmt::format("{} AAAA {}", record.name, net::FormatIp(record.address));
    case RecordType::kSRV:
      return fmt::format("{} SRV {} {} {} {}", record.name, record.srv.priority, record.srv.weight,
                         record.srv.port, record.srv.target);
    case RecordType::kTXT:
      return fmt::format("{} TXT \"{}\"", record.name, record.text);
    case RecordType::kSOA:
      return fmt::format("{} SOA {} {} {}", record.name, record.soa.mname, record.soa.rname,
                         record.soa.minimum);
    default:
      return fmt::format("{} TYPE{}", record.name, static_cast<int>(record.type));
  }
}

}  // namespace

std::string RecordText(const Record& record) {
  const std::string line = RenderRecord(record);
  return line.substr(std::min(line.size(), record.name.size() + 1));
}

namespace {

std::string_view RcodeName(Rcode rcode) {
  switch (rcode) {
    case Rcode::kNoError:
      return "NOERROR";
    case Rcode::kFormErr:
      return "FORMERR";
    case Rcode::kServFail:
      return "SERVFAIL";
    case Rcode::kNxDomain:
      return "NXDOMAIN";
    case Rcode::kNotImp:
      return "NOTIMP";
    case Rcode::kRefused:
      return "REFUSED";
    case Rcode::kBadVers:
      return "BADVERS";
  }
  return "RCODE?";
}

}  // namespace

std::string Render(const Answer& answer) {
  std::string out(RcodeName(answer.rcode));
  if (answer.authoritative) out += " aa";
  out += "\n";
  const auto section = [&out](std::string_view title, const std::vector<Record>& records) {
    std::vector<std::string> lines;
    lines.reserve(records.size());
    for (const Record& record : records) lines.push_back(RenderRecord(record));
    std::sort(lines.begin(), lines.end());
    for (const std::string& line : lines) out += fmt::format("{}: {}\n", title, line);
  };
  section("answer", answer.answer);
  section("authority", answer.authority);
  section("additional", answer.additional);
  return out;
}

}  // namespace slicewright::dns
