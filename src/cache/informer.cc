#include "slicewright/cache/informer.h"

#include <utility>

namespace slicewright::cache {
namespace {

constexpr std::string_view kInitialEventsEnd = "k8s.io/initial-events-end";

template <typename T>
Result<DecodedEvent<T>> FromCodec(Result<codec::WatchEvent<T>> decoded) {
  if (!decoded.ok()) return decoded.status();
  DecodedEvent<T> out;
  out.type = decoded->type;
  out.error = std::move(decoded->error);
  const model::ObjectMeta& meta = decoded->object.metadata;
  out.resource_version = meta.resource_version;
  if (out.type == codec::WatchEventType::kBookmark) {
    auto it = meta.annotations.find(kInitialEventsEnd);
    out.initial_events_end = it != meta.annotations.end() && it->second == "true";
  }
  out.object = std::move(decoded->object);
  return out;
}

template <typename T>
Kind<T> ModelKind(client::ResourceRef resource,
                  Result<codec::ListPage<T>> (*decode_list)(std::string_view),
                  Result<codec::WatchEvent<T>> (*decode_event)(std::string_view)) {
  return Kind<T>{std::move(resource), decode_list,
                 [decode_event](std::string_view line) { return FromCodec(decode_event(line)); }};
}

}  // namespace

Kind<model::Service> ServiceKind() {
  return ModelKind(client::ServicesResource(), codec::DecodeServiceList,
                   codec::DecodeServiceWatchEvent);
}
Kind<model::Pod> PodKind() {
  return ModelKind(client::PodsResource(), codec::DecodePodList, codec::DecodePodWatchEvent);
}
Kind<model::Node> NodeKind() {
  return ModelKind(client::NodesResource(), codec::DecodeNodeList, codec::DecodeNodeWatchEvent);
}
Kind<model::Namespace> NamespaceKind() {
  return ModelKind(client::NamespacesResource(), codec::DecodeNamespaceList,
                   codec::DecodeNamespaceWatchEvent);
}
Kind<model::Endpoints> EndpointsKind() {
  return ModelKind(client::EndpointsResource(), codec::DecodeEndpointsList,
                   codec::DecodeEndpointsWatchEvent);
}
Kind<model::EndpointSlice> EndpointSliceKind() {
  return ModelKind(client::EndpointSlicesResource(), codec::DecodeEndpointSliceList,
                   codec::DecodeEndpointSliceWatchEvent);
}

Kind<CompactPod> CompactPodKind(const std::shared_ptr<PodInterners>& interners,
                                std::vector<std::string> kept_annotations) {
  auto kept = std::make_shared<const std::vector<std::string>>(std::move(kept_annotations));
  Kind<CompactPod> kind;
  kind.resource = client::PodsResource();
  kind.decode_list = [interners,
                      kept](std::string_view json) -> Result<codec::ListPage<CompactPod>> {
    Result<codec::ListPage<model::Pod>> page = codec::DecodePodList(json);
    if (!page.ok()) return page.status();
    codec::ListPage<CompactPod> out;
    out.items.reserve(page->items.size());
    for (const model::Pod& pod : page->items) {
      out.items.push_back(CompactPod::FromPod(pod, *interners, *kept));
    }
    out.resource_version = std::move(page->resource_version);
    out.continue_token = std::move(page->continue_token);
    out.remaining_item_count = page->remaining_item_count;
    out.item_errors = std::move(page->item_errors);
    return out;
  };
  kind.decode_event = [interners, kept](std::string_view line) -> Result<DecodedEvent<CompactPod>> {
    Result<DecodedEvent<model::Pod>> event = FromCodec(codec::DecodePodWatchEvent(line));
    if (!event.ok()) return event.status();
    DecodedEvent<CompactPod> out;
    out.type = event->type;
    out.error = std::move(event->error);
    out.initial_events_end = event->initial_events_end;
    out.resource_version = std::move(event->resource_version);
    if (out.type != codec::WatchEventType::kBookmark && out.type != codec::WatchEventType::kError) {
      out.object = CompactPod::FromPod(event->object, *interners, *kept);
    }
    return out;
  };
  return kind;
}

template class Informer<model::Service>;
template class Informer<model::Pod>;
template class Informer<model::Node>;
template class Informer<model::Namespace>;
template class Informer<model::Endpoints>;
template class Informer<model::EndpointSlice>;
template class Informer<CompactPod>;

}  // namespace slicewright::cache
