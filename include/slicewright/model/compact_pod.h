// CompactPod: what the endpoint controllers' Pod caches keep of a Pod (issue #4: at most 400 bytes
// per cached Pod). Values many pods share (namespace, node, label set, the template's ports) are
// interned; IPs, times and the phase are stored in binary. ToPod() gives back a model::Pod with
// every field the reconciler reads (reconcile/pod_source.h), equal to the original there.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slicewright/model/core.h"
#include "slicewright/model/inline_string.h"
#include "slicewright/model/interned.h"
#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"
#include "slicewright/net/ip.h"

namespace slicewright::model {

// The container ports a pod template declares, which every pod of a ReplicaSet shares: regular
// containers' ports in order, then sidecars' (init containers with restartPolicy Always). Other
// init containers never serve a Service port (spec §3.5), so they are left out.
struct PodPorts {
  std::vector<model::ContainerPort> regular;
  std::vector<model::ContainerPort> sidecar;
  friend bool operator==(const PodPorts&, const PodPorts&) = default;
};

struct StringMapHash {
  std::size_t operator()(const model::StringMap& map) const;
};
struct PodPortsHash {
  std::size_t operator()(const PodPorts& ports) const;
};

// The pools one Pod cache interns into. Shared by every CompactPod made from it; thread-safe.
struct PodInterners {
  Interner<std::string> namespaces;
  Interner<std::string> node_names;
  Interner<model::StringMap, StringMapHash> label_sets;
  Interner<PodPorts, PodPortsHash> ports;
};

class CompactPod final {
 public:
  // Inline up to 36 characters: a Deployment's pod names ("<deployment>-<10>-<5>") outgrow the 15
  // std::string keeps, and the reconciler's endpoint pass, which visits pods at random, would
  // then miss twice per pod (the pod, then the name's block on the heap).
  using Name = BasicInlineString<36>;

  // `kept_annotations`: annotation keys to keep (the multi-network controller keeps
  // k8s.v1.cni.cncf.io/network-status); every other annotation is dropped.
  static CompactPod FromPod(const model::Pod& pod, PodInterners& interners,
                            const std::vector<std::string>& kept_annotations = {});

  // The Pod as the reconciler reads it: metadata (name, namespace, uid, resourceVersion, labels,
  // kept annotations, creation and deletion timestamps), spec.nodeName/hostname/subdomain, the
  // container ports (regular ones in one container, sidecar ones in one restartable init
  // container), status.phase, podIP and podIPs (canonical text), and the Ready condition (status
  // and lastTransitionTime).
  model::Pod ToPod() const;

  std::string_view name() const { return name_.view(); }
  const std::string& namespace_() const { return namespace_name_.get(); }
  std::string resource_version() const;
  InlineString uid() const;
  // The UID's 16 bytes when it is a UUID (almost always), else nullptr (read uid()). A reader that
  // visits pods twice copies these in its first visit and formats them (FormatUid) in its second
  // without reading the pod again.
  const std::array<std::uint8_t, 16>* binary_uid() const { return has_uid_ ? &uid_ : nullptr; }
  static InlineString FormatUid(const std::array<std::uint8_t, 16>& bytes);
  const model::StringMap& labels() const { return labels_.get(); }
  const std::string& node_name() const { return node_name_.get(); }
  bool terminating() const { return deletion_nanos_ != kUnsetTime; }

  // What the reconciler reads, without building a model::Pod (reconcile/pod_source.h).
  std::string_view hostname() const;
  std::string_view subdomain() const;
  std::string_view phase() const;
  // model::IsPodReady: the Ready condition's status is "True".
  bool ready() const { return ready_ == Ready::kTrue; }
  // The Ready condition's lastTransitionTime; nullopt without one.
  std::optional<Time> ready_transition_time() const;
  const PodPorts& ports() const { return ports_.get(); }
  // status.podIP or status.podIPs is set.
  bool has_pod_ip() const;
  // status.podIPs. Most pods keep them parsed (text_pod_ips() empty): the i-th is
  // parsed_pod_ip(i), whose canonical text is net::FormatIp of it. The others (an invalid address,
  // more than two, or a podIP other than podIPs[0]) keep them as text, unparsed.
  std::size_t parsed_pod_ip_count() const { return ip_count_; }
  net::IpAddress parsed_pod_ip(std::size_t i) const;
  std::span<const std::string> text_pod_ips() const;

  friend bool operator==(const CompactPod& a, const CompactPod& b);

 private:
  static constexpr std::int64_t kUnsetTime = INT64_MIN;
  enum class Phase : std::uint8_t {
    kEmpty,
    kPending,
    kRunning,
    kSucceeded,
    kFailed,
    kUnknown,
    kOther
  };
  enum class Ready : std::uint8_t { kAbsent, kTrue, kFalse, kUnknown, kOther };

  // Fields most pods leave empty or that did not fit the binary form; null when unused.
  struct Rare {
    std::string hostname;
    std::string subdomain;
    std::string uid;               // when not a UUID
    std::string resource_version;  // when not a decimal number
    std::string phase;             // Phase::kOther
    std::string ready_status;      // Ready::kOther
    // Set when the IPs are not up to two valid addresses with podIP == podIPs[0].
    std::optional<std::string> pod_ip;
    std::vector<std::string> pod_ips;
    model::StringMap annotations;
    friend bool operator==(const Rare&, const Rare&) = default;
  };

  // First: the reconciler's endpoint pass reads only the name of a pod, and fetches sizeof(Name)
  // bytes ahead (reconcile/pod_source.cc).
  Name name_;
  Interned<std::string> namespace_name_;
  Interned<std::string> node_name_;
  Interned<model::StringMap> labels_;
  Interned<PodPorts> ports_;
  std::shared_ptr<const Rare> rare_;
  std::uint64_t resource_version_ = 0;  // used when rare_->resource_version is empty
  std::array<std::uint8_t, 16> uid_{};  // used when rare_->uid is empty
  std::int64_t creation_nanos_ = kUnsetTime;
  std::int64_t deletion_nanos_ = kUnsetTime;
  std::int64_t ready_transition_nanos_ = kUnsetTime;
  std::array<std::array<std::uint8_t, 16>, 2> ips_{};
  std::uint8_t ip_count_ = 0;
  std::uint8_t ip_is_v6_ = 0;  // bit i: ips_[i] is IPv6
  bool has_uid_ = false;
  Phase phase_ = Phase::kEmpty;
  Ready ready_ = Ready::kAbsent;
};

}  // namespace slicewright::model
