#include "slicewright/client/typed_client.h"

#include <algorithm>
#include <chrono>

namespace slicewright::client {

KindCodec<model::Service> ServiceCodec() {
  return {ServicesResource(), codec::DecodeService, codec::DecodeServiceList, codec::EncodeService};
}
KindCodec<model::Pod> PodCodec() {
  return {PodsResource(), codec::DecodePod, codec::DecodePodList, codec::EncodePod};
}
KindCodec<model::Node> NodeCodec() {
  return {NodesResource(), codec::DecodeNode, codec::DecodeNodeList, codec::EncodeNode};
}
KindCodec<model::Namespace> NamespaceCodec() {
  return {NamespacesResource(), codec::DecodeNamespace, codec::DecodeNamespaceList,
          codec::EncodeNamespace};
}
KindCodec<model::Endpoints> EndpointsCodec() {
  return {EndpointsResource(), codec::DecodeEndpoints, codec::DecodeEndpointsList,
          codec::EncodeEndpoints};
}
KindCodec<model::EndpointSlice> EndpointSliceCodec() {
  return {EndpointSlicesResource(), codec::DecodeEndpointSlice, codec::DecodeEndpointSliceList,
          codec::EncodeEndpointSlice, codec::DecodeEndpointSliceMetadata};
}
KindCodec<model::Event> EventCodec() {
  return {EventsResource(), codec::DecodeEvent, codec::DecodeEventList, codec::EncodeEvent};
}

Status RetryOnConflict(const std::function<Status()>& attempt, int attempts, Clock* clock) {
  Clock& time = clock != nullptr ? *clock : SystemClock::Get();
  Status status;
  for (int i = 0; i < std::max(1, attempts); ++i) {
    if (i > 0) time.SleepUntil(time.Now() + std::chrono::milliseconds(10));
    status = attempt();
    if (status.code() != StatusCode::kConflict) return status;
  }
  return status;
}

}  // namespace slicewright::client
