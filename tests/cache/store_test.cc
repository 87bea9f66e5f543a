#include "slicewright/cache/store.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/discovery.h"
#include "slicewright/model/well_known.h"

namespace slicewright::cache {
namespace {

using SliceStore = Store<model::EndpointSlice>;

std::shared_ptr<const model::EndpointSlice> Slice(std::string ns, std::string name,
                                                  std::string service, std::string rv = "1") {
  model::EndpointSlice slice;
  slice.metadata.namespace_ = std::move(ns);
  slice.metadata.name = std::move(name);
  slice.metadata.resource_version = std::move(rv);
  slice.metadata.labels[std::string(model::kLabelServiceName)] = std::move(service);
  return std::make_shared<const model::EndpointSlice>(std::move(slice));
}

std::vector<std::string> Names(const std::vector<SliceStore::Ptr>& objects) {
  std::vector<std::string> names;
  for (const auto& object : objects) names.push_back(KeyOf(*object));
  std::sort(names.begin(), names.end());
  return names;
}

SliceStore::IndexFunc ByServiceName() {
  return [](const model::EndpointSlice& slice) -> std::vector<std::string> {
    auto it = slice.metadata.labels.find(model::kLabelServiceName);
    if (it == slice.metadata.labels.end()) return {};
    return {slice.metadata.namespace_ + "/" + it->second};
  };
}

TEST(StoreTest, GetListAndRemove) {
  SliceStore store;
  EXPECT_EQ(store.Upsert(Slice("a", "s1", "web")), nullptr);
  EXPECT_EQ(store.Upsert(Slice("a", "s2", "web")), nullptr);
  EXPECT_EQ(store.Upsert(Slice("b", "s1", "db")), nullptr);
  EXPECT_EQ(store.size(), 3U);
  ASSERT_NE(store.Get("a", "s1"), nullptr);
  EXPECT_EQ(store.Get("a", "s1")->metadata.name, "s1");
  EXPECT_EQ(store.GetByKey("b/s1")->metadata.namespace_, "b");
  EXPECT_EQ(store.Get("c", "s1"), nullptr);
  EXPECT_EQ(Names(store.List()), (std::vector<std::string>{"a/s1", "a/s2", "b/s1"}));
  EXPECT_EQ(Names(store.ListNamespace("a")), (std::vector<std::string>{"a/s1", "a/s2"}));
  EXPECT_EQ(
      Names(store.ListNamespace(
          "a", [](const model::EndpointSlice& slice) { return slice.metadata.name == "s2"; })),
      (std::vector<std::string>{"a/s2"}));

  const auto replaced = store.Upsert(Slice("a", "s1", "web", "2"));
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(replaced->metadata.resource_version, "1");
  EXPECT_EQ(store.Get("a", "s1")->metadata.resource_version, "2");
  EXPECT_EQ(store.size(), 3U);

  EXPECT_NE(store.Remove("b", "s1"), nullptr);
  EXPECT_EQ(store.Remove("b", "s1"), nullptr);
  EXPECT_TRUE(store.ListNamespace("b").empty());
  EXPECT_EQ(store.size(), 2U);
}

TEST(StoreTest, ReadersKeepTheirSnapshot) {
  SliceStore store;
  store.Upsert(Slice("a", "s1", "web", "1"));
  const SliceStore::Ptr snapshot = store.Get("a", "s1");
  store.Upsert(Slice("a", "s1", "web", "2"));
  store.Remove("a", "s1");
  EXPECT_EQ(snapshot->metadata.resource_version, "1");
}

TEST(StoreTest, IndexesFollowUpdatesAndDeletes) {
  SliceStore store;
  store.AddIndex("service", ByServiceName());
  store.Upsert(Slice("a", "web-1", "web"));
  store.Upsert(Slice("a", "web-2", "web"));
  store.Upsert(Slice("b", "web-1", "web"));
  EXPECT_EQ(Names(store.ByIndex("service", "a/web")),
            (std::vector<std::string>{"a/web-1", "a/web-2"}));
  // Relabelled: moves to the other index value.
  store.Upsert(Slice("a", "web-2", "api", "2"));
  EXPECT_EQ(Names(store.ByIndex("service", "a/web")), (std::vector<std::string>{"a/web-1"}));
  EXPECT_EQ(Names(store.ByIndex("service", "a/api")), (std::vector<std::string>{"a/web-2"}));
  store.Remove("a", "web-1");
  EXPECT_TRUE(store.ByIndex("service", "a/web").empty());
  EXPECT_TRUE(store.ByIndex("no-such-index", "a/api").empty());
}

// Controllers that share an informer each register the index they need (one name, one function:
// controllers/common/slice_index.h); a second registration of a name keeps the first.
TEST(StoreTest, ASecondIndexOfOneNameKeepsTheFirst) {
  SliceStore store;
  store.AddIndex("service", ByServiceName());
  store.AddIndex("service", [](const auto&) { return std::vector<std::string>{"other"}; });
  store.Upsert(Slice("a", "web-1", "web"));
  EXPECT_EQ(Names(store.ByIndex("service", "a/web")), (std::vector<std::string>{"a/web-1"}));
  EXPECT_TRUE(store.ByIndex("service", "other").empty());
}

// An index added to a filled store (a controller built after its shared informer started)
// covers the objects already there, and follows later writes.
TEST(StoreTest, AnIndexAddedLateCoversWhatIsStored) {
  SliceStore store;
  store.Upsert(Slice("a", "web-1", "web"));
  store.Upsert(Slice("b", "web-1", "web"));
  store.Upsert(Slice("a", "api-1", "api"));
  store.AddIndex("service", ByServiceName());
  EXPECT_EQ(Names(store.ByIndex("service", "a/web")), (std::vector<std::string>{"a/web-1"}));
  EXPECT_EQ(Names(store.ByIndex("service", "b/web")), (std::vector<std::string>{"b/web-1"}));
  store.Upsert(Slice("a", "web-2", "web"));
  store.Remove("a", "api-1");
  EXPECT_EQ(Names(store.ByIndex("service", "a/web")),
            (std::vector<std::string>{"a/web-1", "a/web-2"}));
  EXPECT_TRUE(store.ByIndex("service", "a/api").empty());
}

TEST(StoreTest, ReplaceReportsTheDifference) {
  SliceStore store;
  store.AddIndex("service", ByServiceName());
  store.Upsert(Slice("a", "same", "web", "1"));
  store.Upsert(Slice("a", "changed", "web", "1"));
  store.Upsert(Slice("a", "gone", "web", "1"));
  store.Upsert(Slice("z", "gone-too", "web", "1"));
  const SliceStore::ReplaceResult result = store.Replace({
      Slice("a", "same", "web", "1"),
      Slice("a", "changed", "web", "5"),
      Slice("b", "new", "db", "6"),
  });
  EXPECT_EQ(Names(result.added), (std::vector<std::string>{"b/new"}));
  ASSERT_EQ(result.updated.size(), 1U);
  EXPECT_EQ(result.updated[0].first->metadata.resource_version, "1");
  EXPECT_EQ(result.updated[0].second->metadata.resource_version, "5");
  EXPECT_EQ(Names(result.deleted), (std::vector<std::string>{"a/gone", "z/gone-too"}));
  EXPECT_EQ(Names(store.List()), (std::vector<std::string>{"a/changed", "a/same", "b/new"}));
  EXPECT_EQ(Names(store.ByIndex("service", "a/web")),
            (std::vector<std::string>{"a/changed", "a/same"}));
  EXPECT_EQ(Names(store.ByIndex("service", "b/db")), (std::vector<std::string>{"b/new"}));
}

TEST(StoreTest, ClusterScopedObjectsHaveNoNamespace) {
  Store<model::Node> nodes;
  model::Node node;
  node.metadata.name = "node-1";
  nodes.Upsert(std::make_shared<const model::Node>(node));
  EXPECT_NE(nodes.GetByKey("node-1"), nullptr);
  EXPECT_EQ(KeyOf(*nodes.GetByKey("node-1")), "node-1");
}

TEST(StoreTest, ConcurrentReadersAndOneWriter) {
  SliceStore store;
  store.AddIndex("service", ByServiceName());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 5000; ++i) {
      const std::string name = "s" + std::to_string(i % 50);
      if (i % 7 == 0) {
        store.Remove("a", name);
      } else {
        store.Upsert(Slice("a", name, i % 2 == 0 ? "web" : "api", std::to_string(i)));
      }
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done) {
        for (const auto& slice : store.ByIndex("service", "a/web")) {
          EXPECT_EQ(slice->metadata.labels.at(std::string(model::kLabelServiceName)), "web");
        }
        EXPECT_LE(store.ListNamespace("a").size(), 50U);
        static_cast<void>(store.Get("a", "s3"));
      }
    });
  }
  writer.join();
  for (std::thread& reader : readers) reader.join();
  EXPECT_LE(store.size(), 50U);
}

}  // namespace
}  // namespace slicewright::cache
