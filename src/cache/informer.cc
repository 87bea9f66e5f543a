#include "slicewright/cache/informer.h"

#include <functional>
#include <utility>

namespace slicewright::cache {
namespace {

// A kind cached as a projection of its model type (CompactPod of model::Pod): decoded as the
// model, projected item by item, the decoded model dropped at once.
template <typename Model, typename Compact>
Kind<Compact> ProjectedKind(const client::ResourceRef& resource,
                            Result<codec::ListPage<Model>> (*decode_list)(std::string_view),
                            Result<codec::WatchEvent<Model>> (*decode_event)(std::string_view),
                            std::function<Compact(const Model&)> project) {
  Kind<Compact> kind;
  kind.resource = resource;
  kind.decode_list = [decode_list,
                      project](std::string_view json) -> Result<codec::ListPage<Compact>> {
    Result<codec::ListPage<Model>> page = decode_list(json);
    if (!page.ok()) return page.status();
    codec::ListPage<Compact> out;
    out.items.reserve(page->items.size());
    for (const Model& item : page->items) out.items.push_back(project(item));
    out.resource_version = std::move(page->resource_version);
    out.continue_token = std::move(page->continue_token);
    out.remaining_item_count = page->remaining_item_count;
    out.item_errors = std::move(page->item_errors);
    return out;
  };
  kind.decode_event = [decode_model_event =
                           MakeKind(resource, decode_list, decode_event).decode_event,
                       project](std::string_view line) -> Result<DecodedEvent<Compact>> {
    Result<DecodedEvent<Model>> event = decode_model_event(line);
    if (!event.ok()) return event.status();
    DecodedEvent<Compact> out;
    out.type = event->type;
    out.error = std::move(event->error);
    out.initial_events_end = event->initial_events_end;
    out.resource_version = std::move(event->resource_version);
    if (out.type != codec::WatchEventType::kBookmark && out.type != codec::WatchEventType::kError) {
      out.object = project(event->object);
    }
    return out;
  };
  return kind;
}

}  // namespace

Kind<model::Service> ServiceKind() {
  return MakeKind(client::ServicesResource(), codec::DecodeServiceList,
                  codec::DecodeServiceWatchEvent);
}
Kind<model::Pod> PodKind() {
  return MakeKind(client::PodsResource(), codec::DecodePodList, codec::DecodePodWatchEvent);
}
Kind<model::Node> NodeKind() {
  return MakeKind(client::NodesResource(), codec::DecodeNodeList, codec::DecodeNodeWatchEvent);
}
Kind<model::Namespace> NamespaceKind() {
  return MakeKind(client::NamespacesResource(), codec::DecodeNamespaceList,
                  codec::DecodeNamespaceWatchEvent);
}
Kind<model::Endpoints> EndpointsKind() {
  return MakeKind(client::EndpointsResource(), codec::DecodeEndpointsList,
                  codec::DecodeEndpointsWatchEvent);
}
Kind<model::EndpointSlice> EndpointSliceKind() {
  return MakeKind(client::EndpointSlicesResource(), codec::DecodeEndpointSliceList,
                  codec::DecodeEndpointSliceWatchEvent);
}

Kind<model::Workload> WorkloadKind(std::string resource) {
  return MakeKind(client::ResourceRef{"apps", "v1", std::move(resource), true},
                  codec::DecodeWorkloadList, codec::DecodeWorkloadWatchEvent);
}

Kind<model::CompactPod> CompactPodKind(const std::shared_ptr<model::PodInterners>& interners,
                                       std::vector<std::string> kept_annotations) {
  auto kept = std::make_shared<const std::vector<std::string>>(std::move(kept_annotations));
  return ProjectedKind<model::Pod, model::CompactPod>(
      client::PodsResource(), codec::DecodePodList, codec::DecodePodWatchEvent,
      [interners, kept](const model::Pod& pod) {
        return model::CompactPod::FromPod(pod, *interners, *kept);
      });
}

Kind<CompactEndpointSlice> CompactEndpointSliceKind(
    const std::shared_ptr<SliceInterners>& interners) {
  return ProjectedKind<model::EndpointSlice, CompactEndpointSlice>(
      client::EndpointSlicesResource(), codec::DecodeEndpointSliceList,
      codec::DecodeEndpointSliceWatchEvent, [interners](const model::EndpointSlice& slice) {
        return CompactEndpointSlice::FromSlice(slice, *interners);
      });
}

template class Informer<model::Service>;
template class Informer<model::Pod>;
template class Informer<model::Node>;
template class Informer<model::Namespace>;
template class Informer<model::Endpoints>;
template class Informer<model::EndpointSlice>;
template class Informer<model::CompactPod>;
template class Informer<CompactEndpointSlice>;

}  // namespace slicewright::cache
