// InformerFactory hands out one shared Informer per resource and filter, as client-go's
// SharedInformerFactory: the controllers of one process that watch Pods share one Pod cache and
// one watch. Informers created before Start() start with it; ones created later start at once.
// Thread-safe; informers live as long as the factory.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "slicewright/base/clock.h"
#include "slicewright/base/mutex.h"
#include "slicewright/cache/informer.h"
#include "slicewright/client/rest_client.h"

namespace slicewright::cache {

// The filter part of ReflectorOptions that makes two informers of one kind different.
struct InformerFilter {
  std::string namespace_;
  std::string label_selector;
  std::string field_selector;
};

class InformerFactory final {
 public:
  // `defaults` applies to every informer (page size, WatchList, backoff, clock); the filter fields
  // in it are ignored.
  InformerFactory(client::RestClient& client, ReflectorOptions defaults = {});
  InformerFactory(const InformerFactory&) = delete;
  InformerFactory& operator=(const InformerFactory&) = delete;
  ~InformerFactory();

  Informer<model::Service>& Services(const InformerFilter& filter = {});
  Informer<model::CompactPod>& Pods(const InformerFilter& filter = {});
  Informer<model::Node>& Nodes(const InformerFilter& filter = {});
  Informer<model::Namespace>& Namespaces(const InformerFilter& filter = {});
  Informer<model::Endpoints>& Endpoints(const InformerFilter& filter = {});
  // EndpointSlices as CompactEndpointSlice (the planner reads ToSlice()).
  Informer<CompactEndpointSlice>& EndpointSlices(const InformerFilter& filter = {});
  // The shared informer of any other kind, custom resources included (`kind` made with
  // MakeKind), keyed by its resource and the filter.
  template <typename T>
  Informer<T>& For(const Kind<T>& kind, const InformerFilter& filter = {}) {
    const client::ResourceRef& r = kind.resource;
    return GetOrCreate<T>(r.group.empty() ? r.resource : r.resource + "." + r.group, filter,
                          [&kind] { return kind; });
  }

  // The pools every CompactPod of Pods() is interned into.
  const std::shared_ptr<model::PodInterners>& pod_interners() const { return pod_interners_; }
  // The pools every CompactEndpointSlice of EndpointSlices() is interned into.
  const std::shared_ptr<SliceInterners>& slice_interners() const { return slice_interners_; }

  void Start();
  // True once every informer created so far has synced; false after `timeout` or Stop().
  bool WaitForCacheSync(Clock::Duration timeout);
  // Stops every informer. Idempotent.
  void Stop();

 private:
  struct Entry {
    std::shared_ptr<void> informer;  // an Informer<T>
    std::function<void()> start;
    std::function<void()> stop;
    std::function<bool(Clock::Duration)> wait_for_sync;
  };

  template <typename T>
  Informer<T>& GetOrCreate(const std::string& kind_name, const InformerFilter& filter,
                           const std::function<Kind<T>()>& make_kind);

  client::RestClient& client_;
  const ReflectorOptions defaults_;
  const std::shared_ptr<model::PodInterners> pod_interners_;
  const std::shared_ptr<SliceInterners> slice_interners_;
  Mutex mu_;
  std::map<std::string, Entry> entries_ SW_GUARDED_BY(mu_);  // key: kind + filter
  bool started_ SW_GUARDED_BY(mu_) = false;
  bool stopped_ SW_GUARDED_BY(mu_) = false;
};

template <typename T>
Informer<T>& InformerFactory::GetOrCreate(const std::string& kind_name,
                                          const InformerFilter& filter,
                                          const std::function<Kind<T>()>& make_kind) {
  const std::string key = kind_name + "\n" + filter.namespace_ + "\n" + filter.label_selector +
                          "\n" + filter.field_selector;
  MutexLock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ReflectorOptions options = defaults_;
    options.namespace_ = filter.namespace_;
    options.label_selector = filter.label_selector;
    options.field_selector = filter.field_selector;
    options.name = kind_name;
    if (!filter.label_selector.empty()) options.name += " (" + filter.label_selector + ")";
    auto informer = std::make_shared<Informer<T>>(client_, make_kind(), std::move(options));
    Entry entry;
    entry.informer = informer;
    Informer<T>* raw = informer.get();
    entry.start = [raw] { raw->Start(); };
    entry.stop = [raw] { raw->Stop(); };
    entry.wait_for_sync = [raw](Clock::Duration timeout) { return raw->WaitForSync(timeout); };
    if (started_ && !stopped_) raw->Start();
    it = entries_.emplace(key, std::move(entry)).first;
  }
  return *static_cast<Informer<T>*>(it->second.informer.get());
}

// An index function filing an object under the value of one of its labels (none when absent):
// e.g. EndpointSlices by kubernetes.io/service-name.
template <typename T>
typename Store<T>::IndexFunc LabelValueIndex(std::string label_key) {
  return [key = std::move(label_key)](const T& object) -> std::vector<std::string> {
    const model::StringMap& labels = ObjectAccess<T>::Labels(object);
    auto it = labels.find(key);
    if (it == labels.end()) return {};
    return {ObjectAccess<T>::Namespace(object) + "/" + it->second};
  };
}

}  // namespace slicewright::cache
