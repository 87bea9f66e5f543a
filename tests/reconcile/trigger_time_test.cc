#include "slicewright/reconcile/trigger_time.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slicewright/model/core.h"

namespace slicewright::reconcile {
namespace {

model::Time T(int seconds) { return model::Time::FromUnixSeconds(1'546'300'800 + seconds); }

model::Service MakeService(model::Time created) {
  model::Service service;
  service.metadata.namespace_ = "ns";
  service.metadata.name = "svc";
  service.metadata.creation_timestamp = created;
  return service;
}

model::Pod MakePod(std::string name, std::optional<model::Time> ready_at) {
  model::Pod pod;
  pod.metadata.namespace_ = "ns";
  pod.metadata.name = std::move(name);
  pod.status.conditions = {model::PodCondition{"Ready", "True", ready_at, "", ""}};
  return pod;
}

std::vector<const model::Pod*> Pointers(const std::vector<model::Pod>& pods) {
  std::vector<const model::Pod*> pointers;
  pointers.reserve(pods.size());
  for (const model::Pod& pod : pods) {
    pointers.push_back(&pod);
  }
  return pointers;
}

// Scenario 41: a new Service reports its creation time; later syncs the earliest change not yet
// reported; nothing changed (or a Service spec change only) reports zero.
TEST(TriggerTimeTest, Scenario41_ComputeTriggerTime) {
  TriggerTimeTracker tracker;
  model::Service service = MakeService(T(3));
  std::vector<model::Pod> pods = {MakePod("pod0", T(0)), MakePod("pod1", T(1)),
                                  MakePod("pod2", T(5))};
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)), T(3));

  pods[0] = MakePod("pod0", T(5));
  pods[1] = MakePod("pod1", T(4));
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)), T(4));

  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)),
            model::Time{});

  service.spec.ports.emplace_back();  // a spec change has no trigger time
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)),
            model::Time{});
}

// New pods count as changed; pods without a Ready transition time are ignored; a recreated
// Service (later creationTimestamp) counts too.
TEST(TriggerTimeTest, NewPodsAndServiceRecreation) {
  TriggerTimeTracker tracker;
  model::Service service = MakeService(T(1));
  std::vector<model::Pod> pods = {MakePod("pod0", T(2))};
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)), T(1));

  pods.push_back(MakePod("pod1", T(7)));
  pods.push_back(MakePod("no-time", std::nullopt));
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)), T(7));

  model::Pod unready = MakePod("pod2", T(9));
  unready.status.conditions.clear();
  pods.push_back(unready);
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)),
            model::Time{});

  service.metadata.creation_timestamp = T(20);
  pods[0] = MakePod("pod0", T(30));
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)), T(20));
}

// DeleteService forgets the state: the next sync is a "new Service" again. Namespaces separate.
TEST(TriggerTimeTest, DeleteServiceAndNamespaces) {
  TriggerTimeTracker tracker;
  const model::Service service = MakeService(T(1));
  const std::vector<model::Pod> pods = {MakePod("pod0", T(2))};
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)), T(1));
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)),
            model::Time{});
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("other", service, Pointers(pods)), T(1));
  tracker.DeleteService("ns", "svc");
  EXPECT_EQ(tracker.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(pods)), T(1));
}

// The incremental form agrees with the full one on random histories: pods come, go, change
// their times (later, earlier, to none), the Service is re-created, and `changed` also names pods
// that did not change (the caller marks every pod event, not only time changes).
TEST(TriggerTimeTest, ChangedPodsAgreeWithFullComputation) {
  std::mt19937 random(7);
  TriggerTimeTracker full;
  TriggerTimeTracker incremental;
  std::map<std::string, model::Time> pods;  // name -> time (zero: no Ready time)
  model::Service service = MakeService(T(0));
  const auto compute_full = [&] {
    std::vector<model::Pod> list;
    for (const auto& [name, time] : pods) {
      list.push_back(MakePod(name, time.IsZero() ? std::nullopt : std::optional(time)));
    }
    return full.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(list));
  };
  EXPECT_EQ(compute_full(), T(0));
  {
    std::vector<model::Pod> none;
    EXPECT_EQ(incremental.ComputeEndpointLastChangeTriggerTime("ns", service, Pointers(none)),
              T(0));
  }
  int nonzero_results = 0;
  for (int step = 1; step < 400; ++step) {
    std::vector<std::string> names;  // kept alive for the string_views below
    const int events = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < events; ++e) {
      const std::string name = "pod" + std::to_string(random() % 12);
      switch (random() % 4) {
        case 0:
          pods.erase(name);
          break;  // deleted
        case 1:
          pods[name] = model::Time{};
          break;  // no Ready time
        case 2:
          pods[name] = T(step - static_cast<int>(random() % 5));
          break;  // later or earlier
        default:
          break;  // an event, no change
      }
      names.push_back(name);
    }
    if (step % 97 == 0) service = MakeService(T(step));  // re-created
    std::vector<TriggerTimeTracker::PodTime> changed;
    for (const std::string& name : names) {
      const auto it = pods.find(name);
      changed.push_back({name, it == pods.end() ? model::Time{} : it->second});
    }
    const model::Time expected = compute_full();
    EXPECT_EQ(incremental.ComputeForChangedPods("ns", service, changed), expected)
        << "step " << step;
    if (!expected.IsZero()) ++nonzero_results;
  }
  EXPECT_GT(nonzero_results, 100);  // the histories do report changes
}

}  // namespace
}  // namespace slicewright::reconcile
