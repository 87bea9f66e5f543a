// TypedClient<T>: get, list, create, update, status update, patch and delete of one modelled kind
// over a RestClient, with answers decoded by the codec into model types. Custom resources that
// are not modelled (ServiceExport, ServiceImport) use RestClient's JSON text directly: that is the
// untyped form. Thread-safe (as RestClient).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/result.h"
#include "slicewright/client/rest_client.h"
#include "slicewright/codec/json.h"
#include "slicewright/model/core.h"
#include "slicewright/model/discovery.h"
#include "slicewright/model/meta.h"

namespace slicewright::client {

// Where a kind lives and how it is encoded and decoded.
template <typename T>
struct KindCodec {
  ResourceRef resource;
  Result<T> (*decode)(std::string_view json) = nullptr;
  Result<codec::ListPage<T>> (*decode_list)(std::string_view json) = nullptr;
  std::string (*encode)(const T& object) = nullptr;
  // Only the metadata of one object, for callers that need no more of an answer; nullptr: decode
  // the whole object and keep its metadata.
  Result<model::ObjectMeta> (*decode_metadata)(std::string_view json) = nullptr;
};

KindCodec<model::Service> ServiceCodec();
KindCodec<model::Pod> PodCodec();
KindCodec<model::Node> NodeCodec();
KindCodec<model::Namespace> NamespaceCodec();
KindCodec<model::Endpoints> EndpointsCodec();
KindCodec<model::EndpointSlice> EndpointSliceCodec();
KindCodec<model::Event> EventCodec();

template <typename T>
class TypedClient final {
 public:
  TypedClient(RestClient& client, KindCodec<T> kind) : client_(client), kind_(std::move(kind)) {}

  // Errors as RestClient's; an answer that does not decode is its codec error (kBadRequest).
  Result<T> Get(std::string_view namespace_, std::string_view name) {
    return Decoded(client_.Get(kind_.resource, namespace_, name));
  }

  // One page (options.limit, options.continue_token).
  Result<codec::ListPage<T>> List(std::string_view namespace_, const ListOptions& options) {
    Result<std::string> body = client_.List(kind_.resource, namespace_, options);
    if (!body.ok()) return body.status();
    return kind_.decode_list(*body);
  }

  // Every page, concatenated; items that do not decode are in item_errors.
  Result<codec::ListPage<T>> ListAll(std::string_view namespace_, ListOptions options) {
    codec::ListPage<T> all;
    do {
      Result<codec::ListPage<T>> page = List(namespace_, options);
      if (!page.ok()) return page.status();
      all.items.insert(all.items.end(), std::make_move_iterator(page->items.begin()),
                       std::make_move_iterator(page->items.end()));
      all.item_errors.insert(all.item_errors.end(), page->item_errors.begin(),
                             page->item_errors.end());
      all.resource_version = std::move(page->resource_version);
      options.continue_token = std::move(page->continue_token);
    } while (!options.continue_token.empty());
    return all;
  }

  // Creates `object` in its metadata.namespace_.
  Result<T> Create(const T& object) { return Decoded(SendCreate(object)); }

  // PUT: metadata.resourceVersion is the precondition (kConflict when stale).
  Result<T> Update(const T& object) { return Decoded(SendUpdate(object)); }

  // Create and Update for a caller that keeps only the answer's metadata (a writer's
  // bookkeeping of uid and generation): the rest of the object is not decoded.
  Result<model::ObjectMeta> CreateForMetadata(const T& object) {
    return DecodedMetadata(SendCreate(object));
  }
  Result<model::ObjectMeta> UpdateForMetadata(const T& object) {
    return DecodedMetadata(SendUpdate(object));
  }

  Result<T> UpdateStatus(const T& object) {
    return Decoded(client_.Update(kind_.resource, object.metadata.namespace_, object.metadata.name,
                                  kind_.encode(object), "status"));
  }

  Result<T> Patch(std::string_view namespace_, std::string_view name, PatchType type,
                  std::string_view body, std::string_view subresource = {}) {
    return Decoded(
        client_.Patch(kind_.resource, namespace_, name, type, std::string(body), subresource));
  }

  Status Delete(std::string_view namespace_, std::string_view name,
                const DeleteOptions& options = {}) {
    return client_.Delete(kind_.resource, namespace_, name, options).status();
  }

  const ResourceRef& resource() const { return kind_.resource; }

 private:
  Result<std::string> SendCreate(const T& object) {
    return client_.Create(kind_.resource, object.metadata.namespace_, kind_.encode(object));
  }
  Result<std::string> SendUpdate(const T& object) {
    return client_.Update(kind_.resource, object.metadata.namespace_, object.metadata.name,
                          kind_.encode(object));
  }
  Result<T> Decoded(Result<std::string> body) {
    if (!body.ok()) return body.status();
    return kind_.decode(*body);
  }
  Result<model::ObjectMeta> DecodedMetadata(Result<std::string> body) {
    if (!body.ok()) return body.status();
    if (kind_.decode_metadata != nullptr) return kind_.decode_metadata(*body);
    Result<T> object = kind_.decode(*body);
    if (!object.ok()) return object.status();
    return std::move(object->metadata);
  }

  RestClient& client_;
  KindCodec<T> kind_;
};

// client-go's retry.RetryOnConflict with DefaultRetry: runs `attempt` (which re-reads what it
// changes) again while it fails with kConflict, at most `attempts` times in all, about 10 ms apart;
// returns the last result. Any other outcome returns at once.
Status RetryOnConflict(const std::function<Status()>& attempt, int attempts = 5,
                       Clock* clock = nullptr);

}  // namespace slicewright::client
