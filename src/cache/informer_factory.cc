#include "slicewright/cache/informer_factory.h"

#include <utility>

#include "slicewright/model/network_status.h"

namespace slicewright::cache {

InformerFactory::InformerFactory(client::RestClient& client, ReflectorOptions defaults)
    : client_(client),
      defaults_(std::move(defaults)),
      pod_interners_(std::make_shared<model::PodInterners>()),
      slice_interners_(std::make_shared<SliceInterners>()) {}

InformerFactory::~InformerFactory() { Stop(); }

Informer<model::Service>& InformerFactory::Services(const InformerFilter& filter) {
  return GetOrCreate<model::Service>("services", filter, ServiceKind);
}
Informer<model::CompactPod>& InformerFactory::Pods(const InformerFilter& filter) {
  // The multi-network controller reads Multus' network status; other annotations are dropped.
  return GetOrCreate<model::CompactPod>("pods", filter, [this] {
    return CompactPodKind(pod_interners_, {std::string(model::kAnnotationNetworkStatus)});
  });
}
Informer<model::Node>& InformerFactory::Nodes(const InformerFilter& filter) {
  return GetOrCreate<model::Node>("nodes", filter, NodeKind);
}
Informer<model::Namespace>& InformerFactory::Namespaces(const InformerFilter& filter) {
  return GetOrCreate<model::Namespace>("namespaces", filter, NamespaceKind);
}
Informer<model::Endpoints>& InformerFactory::Endpoints(const InformerFilter& filter) {
  return GetOrCreate<model::Endpoints>("endpoints", filter, EndpointsKind);
}
Informer<CompactEndpointSlice>& InformerFactory::EndpointSlices(const InformerFilter& filter) {
  return GetOrCreate<CompactEndpointSlice>(
      "endpointslices", filter, [this] { return CompactEndpointSliceKind(slice_interners_); });
}

void InformerFactory::Start() {
  MutexLock lock(mu_);
  if (started_ || stopped_) return;
  started_ = true;
  for (auto& [key, entry] : entries_) entry.start();
}

bool InformerFactory::WaitForCacheSync(Clock::Duration timeout) {
  Clock& clock = defaults_.clock != nullptr ? *defaults_.clock : SystemClock::Get();
  const Clock::TimePoint deadline = clock.Now() + timeout;
  std::vector<std::function<bool(Clock::Duration)>> waits;
  {
    MutexLock lock(mu_);
    for (auto& [key, entry] : entries_) waits.push_back(entry.wait_for_sync);
  }
  for (const auto& wait : waits) {
    const Clock::Duration left = deadline - clock.Now();
    if (!wait(left > Clock::Duration::zero() ? left : Clock::Duration::zero())) return false;
  }
  return true;
}

void InformerFactory::Stop() {
  std::vector<std::function<void()>> stops;
  {
    MutexLock lock(mu_);
    stopped_ = true;
    for (auto& [key, entry] : entries_) stops.push_back(entry.stop);
  }
  for (const auto& stop : stops) stop();
}

}  // namespace slicewright::cache
