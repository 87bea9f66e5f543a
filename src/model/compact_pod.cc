#include "slicewright/model/compact_pod.h"

#include <charconv>
#include <functional>

#include "slicewright/net/ip.h"

#include "model/compact_text.h"

namespace slicewright::model {
namespace {

using internal::FormatUuid;
using internal::HashCombine;
using internal::ParseUuid;

std::size_t HashPorts(const std::vector<model::ContainerPort>& ports) {
  std::size_t seed = ports.size();
  for (const model::ContainerPort& port : ports) {
    HashCombine(seed, std::hash<std::string>{}(port.name));
    HashCombine(seed, static_cast<std::size_t>(port.container_port));
    HashCombine(seed, std::hash<std::string>{}(port.protocol));
  }
  return seed;
}

// The condition the reconciler reads (model::IsPodReady).
constexpr std::string_view kReadyCondition = "Ready";

// A decimal resourceVersion without leading zeros (etcd's revisions); 0: keep the text.
std::uint64_t ParseRevision(std::string_view text) {
  if (text.empty() || text[0] == '0') return 0;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return 0;
  return value;
}

std::int64_t Nanos(const std::optional<model::Time>& time, std::int64_t unset) {
  return time.has_value() ? time->unix_nanos : unset;
}

std::optional<model::Time> TimeOf(std::int64_t nanos, std::int64_t unset) {
  if (nanos == unset) return std::nullopt;
  return model::Time{nanos};
}

}  // namespace

std::size_t StringMapHash::operator()(const model::StringMap& map) const {
  std::size_t seed = map.size();
  for (const auto& [key, value] : map) {
    HashCombine(seed, std::hash<std::string>{}(key));
    HashCombine(seed, std::hash<std::string>{}(value));
  }
  return seed;
}

std::size_t PodPortsHash::operator()(const PodPorts& ports) const {
  std::size_t seed = HashPorts(ports.regular);
  HashCombine(seed, HashPorts(ports.sidecar));
  return seed;
}

CompactPod CompactPod::FromPod(const model::Pod& pod, PodInterners& interners,
                               const std::vector<std::string>& kept_annotations) {
  CompactPod out;
  Rare rare;
  const model::ObjectMeta& meta = pod.metadata;
  out.name_ = meta.name;
  out.namespace_name_ = interners.namespaces.Intern(meta.namespace_);
  out.node_name_ = interners.node_names.Intern(pod.spec.node_name);
  out.labels_ = interners.label_sets.Intern(meta.labels);

  PodPorts ports;
  for (const model::Container& container : pod.spec.containers) {
    ports.regular.insert(ports.regular.end(), container.ports.begin(), container.ports.end());
  }
  for (const model::Container& container : pod.spec.init_containers) {
    if (container.restart_policy == "Always") {
      ports.sidecar.insert(ports.sidecar.end(), container.ports.begin(), container.ports.end());
    }
  }
  out.ports_ = interners.ports.Intern(std::move(ports));

  out.resource_version_ = ParseRevision(meta.resource_version);
  if (out.resource_version_ == 0) rare.resource_version = meta.resource_version;
  out.has_uid_ = ParseUuid(meta.uid, out.uid_);
  if (!out.has_uid_) rare.uid = meta.uid;
  out.creation_nanos_ = Nanos(meta.creation_timestamp, kUnsetTime);
  out.deletion_nanos_ = Nanos(meta.deletion_timestamp, kUnsetTime);
  for (const std::string& key : kept_annotations) {
    if (auto it = meta.annotations.find(key); it != meta.annotations.end()) {
      rare.annotations.insert(*it);
    }
  }
  rare.hostname = pod.spec.hostname;
  rare.subdomain = pod.spec.subdomain;

  const std::string& phase = pod.status.phase;
  if (phase.empty()) {
    out.phase_ = Phase::kEmpty;
  } else if (phase == "Pending") {
    out.phase_ = Phase::kPending;
  } else if (phase == "Running") {
    out.phase_ = Phase::kRunning;
  } else if (phase == "Succeeded") {
    out.phase_ = Phase::kSucceeded;
  } else if (phase == "Failed") {
    out.phase_ = Phase::kFailed;
  } else if (phase == "Unknown") {
    out.phase_ = Phase::kUnknown;
  } else {
    out.phase_ = Phase::kOther;
    rare.phase = phase;
  }

  if (const model::PodCondition* ready =
          model::FindPodCondition(pod.status.conditions, kReadyCondition)) {
    if (ready->status == "True") {
      out.ready_ = Ready::kTrue;
    } else if (ready->status == "False") {
      out.ready_ = Ready::kFalse;
    } else if (ready->status == "Unknown") {
      out.ready_ = Ready::kUnknown;
    } else {
      out.ready_ = Ready::kOther;
      rare.ready_status = ready->status;
    }
    out.ready_transition_nanos_ = Nanos(ready->last_transition_time, kUnsetTime);
  }

  const std::vector<std::string>& ips = pod.status.pod_ips;
  bool binary = ips.size() <= out.ips_.size() &&
                (ips.empty() ? pod.status.pod_ip.empty() : pod.status.pod_ip == ips[0]);
  for (std::size_t i = 0; binary && i < ips.size(); ++i) {
    const std::optional<net::IpAddress> address = net::ParseIpSloppy(ips[i]);
    if (!address.has_value()) {
      binary = false;
      break;
    }
    out.ips_[i] = address->bytes;
    if (address->family == net::IpFamily::kIPv6) out.ip_is_v6_ |= 1U << i;
  }
  if (binary) {
    out.ip_count_ = static_cast<std::uint8_t>(ips.size());
  } else {
    out.ips_ = {};
    out.ip_is_v6_ = 0;
    rare.pod_ip = pod.status.pod_ip;
    rare.pod_ips = ips;
  }

  if (!(rare == Rare{})) out.rare_ = std::make_shared<const Rare>(std::move(rare));
  return out;
}

std::string CompactPod::resource_version() const {
  if (resource_version_ != 0) return std::to_string(resource_version_);
  return rare_ != nullptr ? rare_->resource_version : std::string();
}

InlineString CompactPod::FormatUid(const std::array<std::uint8_t, 16>& bytes) {
  return FormatUuid(bytes);
}

InlineString CompactPod::uid() const {
  if (has_uid_) return FormatUuid(uid_);
  return rare_ != nullptr ? InlineString(rare_->uid) : InlineString();
}

std::string_view CompactPod::hostname() const {
  return rare_ != nullptr ? std::string_view(rare_->hostname) : std::string_view();
}

std::string_view CompactPod::subdomain() const {
  return rare_ != nullptr ? std::string_view(rare_->subdomain) : std::string_view();
}

std::string_view CompactPod::phase() const {
  switch (phase_) {
    case Phase::kEmpty:
      return {};
    case Phase::kPending:
      return "Pending";
    case Phase::kRunning:
      return "Running";
    case Phase::kSucceeded:
      return "Succeeded";
    case Phase::kFailed:
      return "Failed";
    case Phase::kUnknown:
      return "Unknown";
    case Phase::kOther:
      break;
  }
  return rare_->phase;
}

std::optional<Time> CompactPod::ready_transition_time() const {
  return TimeOf(ready_transition_nanos_, kUnsetTime);
}

bool CompactPod::has_pod_ip() const {
  if (ip_count_ > 0) return true;
  return rare_ != nullptr && rare_->pod_ip.has_value() &&
         (!rare_->pod_ip->empty() || !rare_->pod_ips.empty());
}

net::IpAddress CompactPod::parsed_pod_ip(std::size_t i) const {
  net::IpAddress address;
  address.family = (ip_is_v6_ & (1U << i)) != 0 ? net::IpFamily::kIPv6 : net::IpFamily::kIPv4;
  address.bytes = ips_[i];
  return address;
}

std::span<const std::string> CompactPod::text_pod_ips() const {
  if (rare_ == nullptr || !rare_->pod_ip.has_value()) return {};
  return rare_->pod_ips;
}

model::Pod CompactPod::ToPod() const {
  model::Pod pod;
  model::ObjectMeta& meta = pod.metadata;
  meta.name = name_;
  meta.namespace_ = namespace_name_.get();
  meta.uid = uid().str();
  meta.resource_version = resource_version();
  meta.labels = labels_.get();
  meta.creation_timestamp = TimeOf(creation_nanos_, kUnsetTime);
  meta.deletion_timestamp = TimeOf(deletion_nanos_, kUnsetTime);
  pod.spec.node_name = node_name_.get();

  const PodPorts& ports = ports_.get();
  if (!ports.regular.empty()) {
    model::Container& container = pod.spec.containers.emplace_back();
    container.ports = ports.regular;
  }
  if (!ports.sidecar.empty()) {
    model::Container& sidecar = pod.spec.init_containers.emplace_back();
    sidecar.restart_policy = "Always";
    sidecar.ports = ports.sidecar;
  }

  switch (phase_) {
    case Phase::kEmpty:
      break;
    case Phase::kPending:
      pod.status.phase = "Pending";
      break;
    case Phase::kRunning:
      pod.status.phase = "Running";
      break;
    case Phase::kSucceeded:
      pod.status.phase = "Succeeded";
      break;
    case Phase::kFailed:
      pod.status.phase = "Failed";
      break;
    case Phase::kUnknown:
      pod.status.phase = "Unknown";
      break;
    case Phase::kOther:
      pod.status.phase = rare_->phase;
      break;
  }
  if (ready_ != Ready::kAbsent) {
    model::PodCondition& ready = pod.status.conditions.emplace_back();
    ready.type = std::string(kReadyCondition);
    switch (ready_) {
      case Ready::kTrue:
        ready.status = "True";
        break;
      case Ready::kFalse:
        ready.status = "False";
        break;
      case Ready::kUnknown:
        ready.status = "Unknown";
        break;
      case Ready::kOther:
      case Ready::kAbsent:
        ready.status = rare_->ready_status;
        break;
    }
    ready.last_transition_time = TimeOf(ready_transition_nanos_, kUnsetTime);
  }

  if (rare_ != nullptr) {
    pod.spec.hostname = rare_->hostname;
    pod.spec.subdomain = rare_->subdomain;
    meta.annotations = rare_->annotations;
    if (rare_->pod_ip.has_value()) {
      pod.status.pod_ip = *rare_->pod_ip;
      pod.status.pod_ips = rare_->pod_ips;
    }
  }
  for (std::uint8_t i = 0; i < ip_count_; ++i) {
    pod.status.pod_ips.push_back(net::FormatIp(parsed_pod_ip(i)));
  }
  if (ip_count_ > 0) pod.status.pod_ip = pod.status.pod_ips.front();
  return pod;
}

bool operator==(const CompactPod& a, const CompactPod& b) {
  const bool rare_equal =
      a.rare_ == b.rare_ || (a.rare_ != nullptr && b.rare_ != nullptr && *a.rare_ == *b.rare_);
  return rare_equal && a.name_ == b.name_ && a.namespace_name_ == b.namespace_name_ &&
         a.node_name_ == b.node_name_ && a.labels_ == b.labels_ && a.ports_ == b.ports_ &&
         a.resource_version_ == b.resource_version_ && a.uid_ == b.uid_ &&
         a.creation_nanos_ == b.creation_nanos_ && a.deletion_nanos_ == b.deletion_nanos_ &&
         a.ready_transition_nanos_ == b.ready_transition_nanos_ && a.ips_ == b.ips_ &&
         a.ip_count_ == b.ip_count_ && a.ip_is_v6_ == b.ip_is_v6_ && a.has_uid_ == b.has_uid_ &&
         a.phase_ == b.phase_ && a.ready_ == b.ready_;
}

}  // namespace slicewright::model
