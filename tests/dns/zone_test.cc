// Tests the clusterset.local answer rules (spec §9, §12.2 T22-T27, §15.6 D1-D9) on zones built
// from ServiceImports and MCS EndpointSlices, printed with Render().
#include "dns/zone.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/well_known.h"

namespace slicewright::dns {
namespace {

constexpr std::uint16_t kA = 1;
constexpr std::uint16_t kTxt = 16;
constexpr std::uint16_t kAaaa = 28;
constexpr std::uint16_t kSrv = 33;
constexpr std::uint16_t kSoa = 6;
constexpr std::uint16_t kMx = 15;
constexpr std::uint16_t kAny = 255;

model::ServiceImport Import(std::string name, std::string type, std::vector<std::string> ips,
                            std::vector<model::McsServicePort> ports) {
  model::ServiceImport si;
  si.metadata.namespace_ = "ns";
  si.metadata.name = std::move(name);
  si.spec.type = std::move(type);
  si.spec.ips = std::move(ips);
  si.spec.ports = std::move(ports);
  return si;
}

model::McsServicePort Port(std::string name, std::string protocol, int port) {
  model::McsServicePort p;
  p.name = std::move(name);
  p.protocol = std::move(protocol);
  p.port = port;
  return p;
}

struct Ep {
  std::string address;
  std::string hostname;  // "" = none
  std::optional<bool> ready = true;
};

model::EndpointSlice Slice(std::string service, std::string cluster, std::string address_type,
                           std::vector<Ep> endpoints,
                           std::vector<std::pair<std::string, int>> ports = {{"tcp", 42}}) {
  model::EndpointSlice slice;
  slice.metadata.namespace_ = "ns";
  slice.metadata.name = service + "-" + cluster + "-" + address_type;
  slice.metadata.labels[std::string(model::kLabelMcsServiceName)] = service;
  slice.metadata.labels[std::string(model::kLabelMcsSourceCluster)] = cluster;
  slice.metadata.labels[std::string(model::kLabelManagedBy)] = std::string(model::kManagedByMcs);
  slice.address_type = std::move(address_type);
  for (const Ep& e : endpoints) {
    model::Endpoint& endpoint = slice.endpoints.emplace_back();
    endpoint.addresses.push_back(e.address);
    if (!e.hostname.empty()) endpoint.hostname = e.hostname;
    endpoint.conditions.ready = e.ready;
  }
  for (const auto& [name, number] : ports) {
    model::EndpointPort& port = slice.ports.emplace_back();
    if (!name.empty()) port.name = name;
    port.protocol = "TCP";
    port.port = number;
  }
  return slice;
}

class ZoneTest : public ::testing::Test {
 protected:
  void Add(const model::ServiceImport& si, const std::vector<model::EndpointSlice>& slices = {}) {
    zone_.Put(std::make_shared<const ServiceView>(BuildServiceView(
        si, slices, [this](std::string_view c) { return !dead_.contains(std::string(c)); },
        options_)));
  }
  std::string Ask(std::string_view name, std::uint16_t type) {
    return Render(Resolve(zone_, name, type, options_));
  }
  // The answer section only, as "TYPE data" lines.
  std::multiset<std::string> Answers(std::string_view name, std::uint16_t type) {
    std::multiset<std::string> out;
    for (const Record& r : Resolve(zone_, name, type, options_).answer) {
      Answer one;
      one.answer.push_back(r);
      std::string line = Render(one);
      line = line.substr(line.find(": ") + 2);
      line = line.substr(line.find(' ') + 1);
      line.pop_back();
      out.insert(line);
    }
    return out;
  }

  Zone zone_;
  ZoneOptions options_;
  std::set<std::string> dead_;
};

constexpr std::string_view kSoaLine =
    "authority: clusterset.local SOA ns.dns.clusterset.local hostmaster.clusterset.local 5\n";

// D1/T22: a ClusterSetIP name answers A and AAAA with the import's IPs, per family.
TEST_F(ZoneTest, ClusterSetIpAnswersEachFamily) {
  Add(Import("hello", "ClusterSetIP", {"10.96.0.10", "fd00:96::a"},
             {Port("tcp", "TCP", 42), Port("udp", "UDP", 42)}));
  EXPECT_EQ(Ask("hello.ns.svc.clusterset.local.", kA),
            "NOERROR aa\nanswer: hello.ns.svc.clusterset.local A 10.96.0.10\n");
  EXPECT_EQ(Ask("HELLO.ns.svc.clusterset.local", kAaaa),
            "NOERROR aa\nanswer: hello.ns.svc.clusterset.local AAAA fd00:96::a\n");
}

// D2/T23: the bare-name SRV has one answer per distinct port number (tcp/42 and udp/42 are one),
// target the service name, with its addresses in the additional section.
TEST_F(ZoneTest, ClusterSetIpBareSrvDeduplicatesPortAndTarget) {
  Add(Import("hello", "ClusterSetIP", {"10.96.0.10"},
             {Port("tcp", "TCP", 42), Port("udp", "UDP", 42), Port("", "TCP", 80)}));
  EXPECT_EQ(Ask("hello.ns.svc.clusterset.local", kSrv),
            "NOERROR aa\n"
            "answer: hello.ns.svc.clusterset.local SRV 0 50 42 hello.ns.svc.clusterset.local\n"
            "answer: hello.ns.svc.clusterset.local SRV 0 50 80 hello.ns.svc.clusterset.local\n"
            "additional: hello.ns.svc.clusterset.local A 10.96.0.10\n");
}

// D3: _<port>._<proto> SRV for each named port, none for an unnamed one.
TEST_F(ZoneTest, ClusterSetIpNamedPortSrv) {
  Add(Import("hello", "ClusterSetIP", {"10.96.0.10"},
             {Port("tcp", "TCP", 42), Port("udp", "UDP", 42), Port("", "TCP", 80)}));
  EXPECT_EQ(Answers("_tcp._tcp.hello.ns.svc.clusterset.local", kSrv),
            (std::multiset<std::string>{"SRV 0 100 42 hello.ns.svc.clusterset.local"}));
  EXPECT_EQ(Answers("_udp._udp.hello.ns.svc.clusterset.local", kSrv),
            (std::multiset<std::string>{"SRV 0 100 42 hello.ns.svc.clusterset.local"}));
  // The protocol label is an empty non-terminal; a wrong pairing does not exist.
  EXPECT_EQ(Ask("_udp.hello.ns.svc.clusterset.local", kSrv),
            "NOERROR aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("_tcp._udp.hello.ns.svc.clusterset.local", kSrv),
            "NXDOMAIN aa\n" + std::string(kSoaLine));
}

// A ClusterSetIP name without that family (or whose IP is not allocated yet) is NODATA.
TEST_F(ZoneTest, ClusterSetIpMissingFamilyIsNodata) {
  Add(Import("v4", "ClusterSetIP", {"10.96.0.10"}, {Port("tcp", "TCP", 42)}));
  Add(Import("pending", "ClusterSetIP", {}, {}));
  EXPECT_EQ(Ask("v4.ns.svc.clusterset.local", kAaaa), "NOERROR aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("pending.ns.svc.clusterset.local", kA), "NOERROR aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("v4.ns.svc.clusterset.local", kMx), "NOERROR aa\n" + std::string(kSoaLine));
}

// D5/T25: a headless name answers the ready addresses of every live cluster, the same subset for
// both families; unready endpoints and expired clusters are left out.
TEST_F(ZoneTest, HeadlessAnswersReadyAddressesOfLiveClusters) {
  dead_.insert("cluster-c");
  Add(Import("db", "Headless", {}, {Port("tcp", "TCP", 42)}),
      {Slice("db", "cluster-a", "IPv4",
             {{"10.244.0.1", ""}, {"10.244.0.2", "", false}, {"10.244.0.3", "", std::nullopt}}),
       Slice("db", "cluster-a", "IPv6", {{"fd00::1", ""}, {"fd00::2", "", false}}),
       Slice("db", "cluster-b", "IPv4", {{"10.245.0.1", ""}}),
       Slice("db", "cluster-c", "IPv4", {{"10.246.0.1", ""}}),
       Slice("other", "cluster-a", "IPv4", {{"10.244.9.9", ""}})});
  EXPECT_EQ(Answers("db.ns.svc.clusterset.local", kA),
            (std::multiset<std::string>{"A 10.244.0.1", "A 10.244.0.3", "A 10.245.0.1"}));
  EXPECT_EQ(Answers("db.ns.svc.clusterset.local", kAaaa),
            (std::multiset<std::string>{"AAAA fd00::1"}));
}

// D9: a headless import without ready endpoints owns no name: NXDOMAIN for every type.
TEST_F(ZoneTest, HeadlessWithoutReadyEndpointsIsNxdomain) {
  Add(Import("db", "Headless", {}, {Port("tcp", "TCP", 42)}),
      {Slice("db", "cluster-a", "IPv4", {{"10.244.0.1", "", false}})});
  EXPECT_EQ(Ask("db.ns.svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("db.ns.svc.clusterset.local", kSrv), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("_tcp._tcp.db.ns.svc.clusterset.local", kSrv),
            "NXDOMAIN aa\n" + std::string(kSoaLine));
}

// D6/T26: <hostname>.<cluster id>.<svc> answers that endpoint's addresses (both families);
// <cluster id>.<svc> has no records (D9) but names exist below it.
TEST_F(ZoneTest, HeadlessPerEndpointNames) {
  Add(Import("hello", "Headless", {}, {Port("tcp", "TCP", 42)}),
      {Slice("hello", "cluster-a", "IPv4",
             {{"10.244.0.1", "hello-ss-0"}, {"10.244.0.2", "hello-ss-1"}}),
       Slice("hello", "cluster-a", "IPv6", {{"fd00::1", "hello-ss-0"}}),
       Slice("hello", "cluster-b", "IPv4", {{"10.245.0.1", "hello-ss-0"}})});
  EXPECT_EQ(Answers("hello-ss-0.cluster-a.hello.ns.svc.clusterset.local", kA),
            (std::multiset<std::string>{"A 10.244.0.1"}));
  EXPECT_EQ(Answers("hello-ss-0.cluster-a.hello.ns.svc.clusterset.local", kAaaa),
            (std::multiset<std::string>{"AAAA fd00::1"}));
  EXPECT_EQ(Answers("hello-ss-0.cluster-b.hello.ns.svc.clusterset.local", kA),
            (std::multiset<std::string>{"A 10.245.0.1"}));
  EXPECT_EQ(Answers("hello-ss-1.cluster-a.hello.ns.svc.clusterset.local", kAaaa),
            (std::multiset<std::string>{}));
  EXPECT_EQ(Ask("cluster-a.hello.ns.svc.clusterset.local", kA),
            "NOERROR aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("hello-ss-1.cluster-b.hello.ns.svc.clusterset.local", kA),
            "NXDOMAIN aa\n" + std::string(kSoaLine));
}

// A cluster id of two labels (<name>.<extra>, KEP-1645) works in per-endpoint names.
TEST_F(ZoneTest, TwoLabelClusterId) {
  Add(Import("hello", "Headless", {}, {}),
      {Slice("hello", "east.example", "IPv4", {{"10.244.0.1", "web-0"}})});
  EXPECT_EQ(Answers("web-0.east.example.hello.ns.svc.clusterset.local", kA),
            (std::multiset<std::string>{"A 10.244.0.1"}));
  EXPECT_EQ(Ask("example.hello.ns.svc.clusterset.local", kA),
            "NOERROR aa\n" + std::string(kSoaLine));
}

// T27/D7: hostname-less endpoints are named by their dashed address; the bare-name SRV has one
// answer per endpoint address (tcp/42 and udp/42 merge), the named-port SRV one per endpoint.
TEST_F(ZoneTest, HeadlessSrvAndDashedNames) {
  Add(Import("hello", "Headless", {}, {}),
      {Slice("hello", "cluster-a", "IPv4", {{"10.244.0.1", ""}, {"10.244.0.2", ""}},
             {{"tcp", 42}, {"udp", 42}}),
       Slice("hello", "cluster-a", "IPv6", {{"fd00::1", ""}}, {{"tcp", 42}, {"udp", 42}})});
  EXPECT_EQ(
      Answers("hello.ns.svc.clusterset.local", kSrv),
      (std::multiset<std::string>{"SRV 0 33 42 10-244-0-1.cluster-a.hello.ns.svc.clusterset.local",
                                  "SRV 0 33 42 10-244-0-2.cluster-a.hello.ns.svc.clusterset.local",
                                  "SRV 0 33 42 fd00--1.cluster-a.hello.ns.svc.clusterset.local"}));
  EXPECT_EQ(Answers("_tcp._tcp.hello.ns.svc.clusterset.local", kSrv).size(), 3U);
  EXPECT_EQ(Answers("10-244-0-2.cluster-a.hello.ns.svc.clusterset.local", kA),
            (std::multiset<std::string>{"A 10.244.0.2"}));
  EXPECT_EQ(Answers("fd00--1.cluster-a.hello.ns.svc.clusterset.local", kAaaa),
            (std::multiset<std::string>{"AAAA fd00::1"}));
  // The additional section carries the targets' addresses.
  const Answer srv = Resolve(zone_, "_tcp._tcp.hello.ns.svc.clusterset.local", kSrv, options_);
  EXPECT_EQ(srv.additional.size(), 3U);
}

// A StatefulSet pod with both families has one SRV target (same hostname) per port.
TEST_F(ZoneTest, HeadlessSrvOneTargetPerHostname) {
  Add(Import("hello", "Headless", {}, {}),
      {Slice("hello", "cluster-a", "IPv4", {{"10.244.0.1", "web-0"}}),
       Slice("hello", "cluster-a", "IPv6", {{"fd00::1", "web-0"}})});
  EXPECT_EQ(
      Answers("hello.ns.svc.clusterset.local", kSrv),
      (std::multiset<std::string>{"SRV 0 100 42 web-0.cluster-a.hello.ns.svc.clusterset.local"}));
}

// D8: the schema version record; the apex answers SOA.
TEST_F(ZoneTest, VersionRecordAndApex) {
  EXPECT_EQ(Ask("dns-version.clusterset.local", kTxt),
            "NOERROR aa\nanswer: dns-version.clusterset.local TXT \"1.0.0\"\n");
  EXPECT_EQ(Ask("dns-version.clusterset.local", kA), "NOERROR aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("clusterset.local.", kSoa),
            "NOERROR aa\nanswer: clusterset.local SOA ns.dns.clusterset.local "
            "hostmaster.clusterset.local 5\n");
}

// Names that do not exist are NXDOMAIN; existing empty non-terminals are NODATA; other zones and
// zone transfers are REFUSED (not authoritative).
TEST_F(ZoneTest, NegativeAnswers) {
  Add(Import("hello", "ClusterSetIP", {"10.96.0.10"}, {}));
  EXPECT_EQ(Ask("nothere.ns.svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("hello.other.svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("x.hello.ns.svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("hello.ns.pod.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("ns.svc.clusterset.local", kA), "NOERROR aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("svc.clusterset.local", kA), "NOERROR aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("hello.ns.svc.cluster.local", kA), "REFUSED\n");
  EXPECT_EQ(Ask("example.com", kA), "REFUSED\n");
  EXPECT_EQ(Ask("xclusterset.local", kA), "REFUSED\n");
  EXPECT_EQ(Ask("clusterset.local", 252), "REFUSED\n");
  zone_.Remove("ns", "hello");
  EXPECT_EQ(Ask("hello.ns.svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("ns.svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
  EXPECT_EQ(Ask("svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
}

// ANY returns every record of the name; the TTL comes from the options.
TEST_F(ZoneTest, AnyAndTtl) {
  options_.ttl = 30;
  Add(Import("hello", "ClusterSetIP", {"10.96.0.10", "fd00::a"}, {Port("tcp", "TCP", 42)}));
  const Answer any = Resolve(zone_, "hello.ns.svc.clusterset.local", kAny, options_);
  ASSERT_EQ(any.answer.size(), 3U);
  for (const Record& r : any.answer) EXPECT_EQ(r.ttl, 30U);
  EXPECT_EQ(
      Resolve(zone_, "nothere.ns.svc.clusterset.local", kA, options_).authority[0].soa.minimum,
      30U);
}

// Names DNS cannot carry (a label over 63 bytes) are left out instead of breaking the encoder.
TEST_F(ZoneTest, OverlongNamesLeftOut) {
  const std::string long_host(64, 'a');
  Add(Import("hello", "Headless", {}, {}),
      {Slice("hello", "cluster-a", "IPv4", {{"10.244.0.1", long_host}, {"10.244.0.2", "ok"}})});
  EXPECT_EQ(Answers("hello.ns.svc.clusterset.local", kA),
            (std::multiset<std::string>{"A 10.244.0.1", "A 10.244.0.2"}));
  EXPECT_EQ(
      Answers("hello.ns.svc.clusterset.local", kSrv),
      (std::multiset<std::string>{"SRV 0 100 42 ok.cluster-a.hello.ns.svc.clusterset.local"}));
}

// Deleted and foreign slices (another import's, another namespace's) are ignored; the answer
// follows a rebuilt view at once (an endpoint turning unready).
TEST_F(ZoneTest, RebuiltViewReplacesAnswers) {
  const model::ServiceImport si = Import("hello", "Headless", {}, {});
  Add(si, {Slice("hello", "cluster-a", "IPv4", {{"10.244.0.1", ""}, {"10.244.0.2", ""}})});
  EXPECT_EQ(Answers("hello.ns.svc.clusterset.local", kA).size(), 2U);
  Add(si, {Slice("hello", "cluster-a", "IPv4", {{"10.244.0.1", ""}, {"10.244.0.2", "", false}})});
  EXPECT_EQ(Answers("hello.ns.svc.clusterset.local", kA),
            (std::multiset<std::string>{"A 10.244.0.1"}));
  model::EndpointSlice elsewhere = Slice("hello", "cluster-a", "IPv4", {{"10.244.0.7", ""}});
  elsewhere.metadata.namespace_ = "other";
  Add(si, {elsewhere});
  EXPECT_EQ(Ask("hello.ns.svc.clusterset.local", kA), "NXDOMAIN aa\n" + std::string(kSoaLine));
}

}  // namespace
}  // namespace slicewright::dns
