#include "reconcile/reference_planner.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "slicewright/model/meta.h"
#include "slicewright/model/time.h"
#include "slicewright/model/well_known.h"
#include "slicewright/reconcile/endpoints_builder.h"

namespace slicewright::reconcile::testing {
namespace {

using model::Endpoint;
using model::EndpointSlice;

// §3.7 identity: sorted addresses, hostname, targetRef namespace, targetRef name ("" when nil).
using Identity = std::tuple<std::vector<std::string>, std::string, std::string, std::string>;

Identity IdentityOf(const Endpoint& endpoint) {
  std::vector<std::string> addresses(endpoint.addresses.begin(), endpoint.addresses.end());
  std::sort(addresses.begin(), addresses.end());
  std::string ns;
  std::string name;
  if (endpoint.target_ref) {
    ns = endpoint.target_ref->namespace_;
    name = endpoint.target_ref->name.str();
  }
  return {addresses, endpoint.hostname ? *endpoint.hostname : "", ns, name};
}

// §3.7 EqualBeyondHash: nodeName, zone, the conditions (nil differs from set) and targetRef
// ignoring resourceVersion. Hints are not compared.
bool EqualBeyondHash(const Endpoint& a, const Endpoint& b) {
  std::optional<model::ObjectReference> ref_a = a.target_ref;
  if (ref_a && b.target_ref) {
    ref_a->resource_version = b.target_ref->resource_version;
  }
  return a.node_name == b.node_name && a.zone == b.zone && a.conditions == b.conditions &&
         ref_a == b.target_ref;
}

// §4.2 step 1: an ownerReference with the owner's UID, kind and apiVersion.
bool Owned(const EndpointSlice& slice, const Owner& owner) {
  for (const model::OwnerReference& ref : slice.metadata.owner_references) {
    if (ref.uid == owner.uid && ref.kind == owner.kind && ref.api_version == owner.api_version) {
      return true;
    }
  }
  return false;
}

model::StringMap Without(model::StringMap map, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    map.erase(key);
  }
  return map;
}

bool Ready(const Endpoint& endpoint) { return endpoint.conditions.ready.value_or(false); }

bool AnyHint(const EndpointSlice& slice) {
  return std::any_of(slice.endpoints.begin(), slice.endpoints.end(),
                     [](const Endpoint& e) { return e.hints.has_value(); });
}

void ClearHints(EndpointSlice& slice) {
  for (Endpoint& endpoint : slice.endpoints) {
    endpoint.hints = std::nullopt;
  }
}

// §6.2 prefer-close: the hints a ready endpoint should carry, or nullopt for none.
std::optional<model::EndpointHints> PreferCloseHints(const Endpoint& endpoint, bool node_hints) {
  model::EndpointHints hints;
  if (endpoint.zone) {
    hints.for_zones.push_back(*endpoint.zone);
  }
  if (node_hints && endpoint.node_name) {
    hints.for_nodes.push_back(endpoint.node_name->str());
  }
  if (hints.for_zones.empty() && hints.for_nodes.empty()) {
    return std::nullopt;
  }
  return hints;
}

// §6.2 needsUpdate, literally: a ready endpoint's zone hint (and node hint under PreferSameNode)
// is not exactly its own, or it carries one it should not have.
bool PreferCloseNeedsUpdate(const EndpointSlice& slice, bool node_hints) {
  for (const Endpoint& endpoint : slice.endpoints) {
    if (!Ready(endpoint)) {
      continue;
    }
    const std::vector<std::string> no_hints;
    const auto& zones = endpoint.hints ? (*endpoint.hints).for_zones : no_hints;
    const auto& nodes = endpoint.hints ? (*endpoint.hints).for_nodes : no_hints;
    if (endpoint.zone ? zones != std::vector<std::string>{*endpoint.zone} : !zones.empty()) {
      return true;
    }
    const bool wants_node = node_hints && endpoint.node_name;
    if (wants_node ? nodes != std::vector<std::string>{endpoint.node_name->str()}
                   : !nodes.empty()) {
      return true;
    }
  }
  return false;
}

class Reference {
 public:
  Reference(const DesiredEndpoints& desired, const PlanOptions& options)
      : desired_(desired),
        options_(options),
        max_(static_cast<std::size_t>(options.max_endpoints_per_slice)) {}

  // §4.1.
  Plan Run(std::span<const EndpointSlice> existing) {
    if (options_.topology != nullptr) {
      std::abort();  // not modelled (see the header)
    }
    std::vector<std::string> types = desired_.address_types;
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    for (const std::string& type : types) {
      std::vector<const EndpointSlice*> of_type;
      for (const EndpointSlice& slice : existing) {
        if (slice.address_type == type) {
          of_type.push_back(&slice);
        }
      }
      PlanAddressType(type, of_type);
    }
    // Step 3: slices of unsupported address types are deleted last, in list order.
    for (const EndpointSlice& slice : existing) {
      if (std::find(types.begin(), types.end(), slice.address_type) == types.end()) {
        plan_.actions.push_back(SliceAction{Operation::kDelete, slice});
      }
    }
    plan_.diagnostics = desired_.diagnostics;
    plan_.stats.topology_label = "Disabled";
    if (desired_.traffic_distribution && ValidTrafficDistribution() &&
        !desired_.topology_hints_requested) {
      plan_.stats.traffic_distribution_label = *desired_.traffic_distribution;
    }
    return std::move(plan_);
  }

 private:
  enum class Fate { kUnchanged, kUpdate, kDelete };
  // One existing slice of a group, with what happens to it. `copy` is valid for kUpdate.
  struct Entry {
    const EndpointSlice* stored;
    Fate fate = Fate::kUnchanged;
    EndpointSlice copy;
  };
  // One address type's working lists (upstream's slicesToCreate/Update/Delete).
  struct Work {
    std::vector<EndpointSlice> creates;
    std::vector<EndpointSlice> updates;
    std::vector<const EndpointSlice*> deletes;
    std::vector<const EndpointSlice*> unchanged;
    std::int64_t added = 0;
    std::int64_t removed = 0;
  };

  bool ValidTrafficDistribution() const {
    const std::string& td = *desired_.traffic_distribution;
    return td == model::kTrafficDistributionPreferClose ||
           (options_.prefer_same_traffic_distribution &&
            (td == model::kTrafficDistributionPreferSameZone ||
             td == model::kTrafficDistributionPreferSameNode));
  }

  // §1.3: a new slice of this owner.
  EndpointSlice NewSlice(const std::string& type, const std::vector<model::EndpointPort>& ports) {
    EndpointSlice slice;
    slice.metadata.generate_name = SliceGenerateName(desired_.owner.name);
    slice.metadata.namespace_ = desired_.owner.namespace_;
    slice.metadata.owner_references.push_back(
        model::OwnerReference{desired_.owner.api_version, desired_.owner.kind, desired_.owner.name,
                              desired_.owner.uid, true, true});
    slice.metadata.labels = desired_.labels;
    slice.address_type = type;
    slice.ports = ports;
    return slice;
  }

  // §5 "changed" (reserved keys ignored on both sides), plus annotations when mirroring
  // compares them (the stored trigger time and last-applied configuration ignored).
  bool MetadataChanged(const EndpointSlice& stored) const {
    const auto& ignored = options_.labels_ignored_for_change;
    if (Without(stored.metadata.labels, ignored) != Without(desired_.labels, ignored)) {
      return true;
    }
    const std::vector<std::string> stored_only = {
        std::string(model::kAnnotationLastChangeTriggerTime),
        std::string(model::kAnnotationLastAppliedConfig), std::string(kAnnotationWrittenSubsets)};
    return options_.compare_annotations &&
           Without(stored.metadata.annotations, stored_only) != desired_.annotations;
  }

  // §4.2.
  void PlanAddressType(const std::string& type, const std::vector<const EndpointSlice*>& slices) {
    Work work;
    // Step 1: owned slices by port map key (keys in first-seen order, slices by name); the
    // others are deleted.
    std::vector<std::pair<std::string, std::vector<const EndpointSlice*>>> by_key;
    for (const EndpointSlice* slice : slices) {
      if (options_.ownership_enforced && !Owned(*slice, desired_.owner)) {
        work.deletes.push_back(slice);
        continue;
      }
      const std::string key = PortMapKey(slice->ports);
      auto it = std::find_if(by_key.begin(), by_key.end(),
                             [&](const auto& entry) { return entry.first == key; });
      if (it == by_key.end()) {
        by_key.emplace_back(key, std::vector<const EndpointSlice*>{});
        it = by_key.end() - 1;
      }
      it->second.push_back(slice);
    }
    for (auto& [key, group] : by_key) {
      std::stable_sort(group.begin(), group.end(), [](const auto* a, const auto* b) {
        return a->metadata.name < b->metadata.name;
      });
    }
    // Steps 2-3: each desired group of this type, in port key order (the first of equal keys).
    std::map<std::string, const EndpointGroup*> groups;
    for (const EndpointGroup& group : desired_.groups) {
      if (group.address_type == type) {
        groups.emplace(PortMapKey(group.ports), &group);
      }
    }
    for (const auto& [key, group] : groups) {
      std::vector<const EndpointSlice*> owned;
      for (const auto& [slice_key, slices_of_key] : by_key) {
        if (slice_key == key) {
          owned = slices_of_key;
        }
      }
      PlanGroup(*group, key, owned, work);
    }
    // Step 4: port sets no longer desired.
    for (const auto& [key, slices_of_key] : by_key) {
      if (!groups.contains(key)) {
        work.deletes.insert(work.deletes.end(), slices_of_key.begin(), slices_of_key.end());
      }
    }
    // Step 5, §4.4: the placeholder, or the one existing slice equal to it kept.
    if (options_.placeholder_enabled && work.deletes.size() == slices.size() &&
        work.creates.empty()) {
      const EndpointSlice* only = work.deletes.size() == 1 ? work.deletes[0] : nullptr;
      if (only != nullptr && only->metadata.namespace_ == desired_.owner.namespace_ &&
          only->metadata.labels == desired_.labels && only->address_type == type &&
          only->ports.empty() && only->endpoints.empty() && Owned(*only, desired_.owner)) {
        work.unchanged.push_back(only);
        work.deletes.clear();
      } else {
        work.creates.push_back(NewSlice(type, {}));
      }
      // It counts as {0 endpoints, 1 slice} under the empty port key.
      auto stats = std::find_if(
          plan_.stats.groups.begin(), plan_.stats.groups.end(),
          [&](const GroupStats& s) { return s.address_type == type && s.port_key.empty(); });
      if (stats == plan_.stats.groups.end()) {
        plan_.stats.groups.push_back(GroupStats{type, "", 0, 1});
      } else {
        *stats = GroupStats{type, "", 0, 1};
      }
    }
    // Step 6.
    plan_.stats.per_address_type.push_back(AddressTypeStats{type, work.added, work.removed});
    // Step 7.
    Hints(work);
    // Step 8.
    Finalize(work);
  }

  // §4.3.
  void PlanGroup(const EndpointGroup& group, const std::string& key,
                 const std::vector<const EndpointSlice*>& slices, Work& work) {
    // D, in identity order (§15.1); a later endpoint of equal identity replaces an earlier one.
    std::map<Identity, Endpoint> desired;
    for (std::size_t i = 0; i < group.endpoint_count(); ++i) {
      desired.insert_or_assign(IdentityOf(group.endpoint_at(i)), group.endpoint_at(i));
    }
    const std::size_t desired_count = desired.size();

    // Step 1: keep the desired form of every stored endpoint still desired; drop the rest.
    std::vector<Entry> entries;
    for (const EndpointSlice* stored : slices) {
      Entry entry{stored, Fate::kUnchanged, {}};
      std::vector<Endpoint> kept;
      bool endpoint_updated = false;
      for (const Endpoint& endpoint : stored->endpoints) {
        auto it = desired.find(IdentityOf(endpoint));
        if (it == desired.end()) {
          continue;
        }
        endpoint_updated = endpoint_updated || !EqualBeyondHash(it->second, endpoint);
        kept.push_back(it->second);
        desired.erase(it);
      }
      if (endpoint_updated || kept.size() != stored->endpoints.size()) {
        work.removed += static_cast<std::int64_t>(stored->endpoints.size() - kept.size());
        if (kept.empty()) {
          entry.fate = Fate::kDelete;
        } else {
          entry.fate = Fate::kUpdate;
          entry.copy = *stored;
          entry.copy.endpoints = std::move(kept);
        }
      } else if (MetadataChanged(*stored)) {
        entry.fate = Fate::kUpdate;
        entry.copy = *stored;
      }
      entries.push_back(std::move(entry));
    }
    work.added += static_cast<std::int64_t>(desired.size());
    const auto take_into = [&](EndpointSlice& slice) {
      while (!desired.empty() && slice.endpoints.size() < max_) {
        slice.endpoints.push_back(desired.begin()->second);
        desired.erase(desired.begin());
      }
    };

    // Step 2: top up slices being updated anyway, fullest first (ties in name order).
    std::vector<Entry*> updating;
    for (Entry& entry : entries) {
      if (entry.fate == Fate::kUpdate) {
        updating.push_back(&entry);
      }
    }
    std::stable_sort(updating.begin(), updating.end(), [](const Entry* a, const Entry* b) {
      return a->copy.endpoints.size() > b->copy.endpoints.size();
    });
    for (Entry* entry : updating) {
      take_into(entry->copy);
    }

    // Step 3: a remainder below max into the unchanged slice it leaves closest to full (the
    // first exact fit wins), everything else into new slices.
    std::vector<EndpointSlice> creates;
    while (!desired.empty()) {
      Entry* fill = nullptr;
      if (desired.size() < max_) {
        std::size_t best = max_;
        for (Entry& entry : entries) {
          const std::size_t size = entry.stored->endpoints.size() + desired.size();
          if (entry.fate == Fate::kUnchanged && size <= max_ && max_ - size < best) {
            best = max_ - size;
            fill = &entry;
          }
        }
      }
      if (fill != nullptr) {
        fill->fate = Fate::kUpdate;
        fill->copy = *fill->stored;
        take_into(fill->copy);
      } else {
        creates.push_back(NewSlice(group.address_type, group.ports));
        take_into(creates.back());
      }
    }

    // The group's results, existing slices in name order.
    auto slices_after = static_cast<std::int64_t>(slices.size() + creates.size());
    for (Entry& entry : entries) {
      if (entry.fate == Fate::kUnchanged) {
        work.unchanged.push_back(entry.stored);
      } else if (entry.fate == Fate::kUpdate) {
        work.updates.push_back(std::move(entry.copy));
      } else {
        work.deletes.push_back(entry.stored);
        --slices_after;
      }
    }
    for (EndpointSlice& slice : creates) {
      work.creates.push_back(std::move(slice));
    }
    plan_.stats.groups.push_back(GroupStats{
        group.address_type, key, static_cast<std::int64_t>(desired_count), slices_after});
  }

  // §6.1 without a topology cache: trafficDistribution hints when valid and topology hints are
  // not requested, else every hint removed. Unchanged slices that need new hints become updates.
  void Hints(Work& work) {
    const bool use_td = desired_.traffic_distribution && ValidTrafficDistribution() &&
                        !desired_.topology_hints_requested;
    const bool node_hints =
        use_td && *desired_.traffic_distribution == model::kTrafficDistributionPreferSameNode;
    std::vector<const EndpointSlice*> still_unchanged;
    for (const EndpointSlice* slice : work.unchanged) {
      if (use_td ? PreferCloseNeedsUpdate(*slice, node_hints) : AnyHint(*slice)) {
        work.updates.push_back(*slice);
      } else {
        still_unchanged.push_back(slice);
      }
    }
    work.unchanged = std::move(still_unchanged);
    for (auto* written : {&work.creates, &work.updates}) {
      for (EndpointSlice& slice : *written) {
        if (!use_td) {
          ClearHints(slice);
          continue;
        }
        for (Endpoint& endpoint : slice.endpoints) {
          if (!Ready(endpoint)) {
            continue;  // non-ready endpoints are left untouched
          }
          if (auto hints = PreferCloseHints(endpoint, node_hints)) {
            endpoint.hints = *hints;
          } else {
            endpoint.hints = std::nullopt;
          }
        }
      }
    }
  }

  // §4.5.
  void Finalize(Work& work) {
    // Step 1: each delete in order meets the last create; an owned one of the same type is
    // recycled into an update that keeps its name and (§15.6) its resourceVersion.
    std::vector<const EndpointSlice*> deletes;
    for (const EndpointSlice* doomed : work.deletes) {
      const bool owned = !options_.ownership_enforced || Owned(*doomed, desired_.owner);
      if (!work.creates.empty() && owned &&
          doomed->address_type == work.creates.back().address_type) {
        EndpointSlice recycled = std::move(work.creates.back());
        work.creates.pop_back();
        recycled.metadata.name = doomed->metadata.name;
        recycled.metadata.resource_version = doomed->metadata.resource_version;
        recycled.metadata.uid = doomed->metadata.uid;
        recycled.metadata.generation = doomed->metadata.generation;
        recycled.metadata.creation_timestamp = doomed->metadata.creation_timestamp;
        work.updates.push_back(std::move(recycled));
      } else {
        deletes.push_back(doomed);
      }
    }
    // Step 2: an owner being deleted gets no creates.
    if (desired_.owner.being_deleted) {
      work.creates.clear();
    }
    // Steps 2-4: every written slice carries the desired labels (and annotations when compared)
    // and the trigger time, or none when it is zero.
    for (auto [operation, written] : {std::pair{Operation::kCreate, &work.creates},
                                      std::pair{Operation::kUpdate, &work.updates}}) {
      for (EndpointSlice& slice : *written) {
        slice.metadata.labels = desired_.labels;
        if (options_.compare_annotations) {
          slice.metadata.annotations = desired_.annotations;
        }
        const std::string trigger(model::kAnnotationLastChangeTriggerTime);
        if (desired_.trigger_time.IsZero()) {
          slice.metadata.annotations.erase(trigger);
        } else {
          slice.metadata.annotations[trigger] = model::FormatRfc3339Nano(desired_.trigger_time);
        }
        plan_.actions.push_back(SliceAction{operation, std::move(slice)});
      }
    }
    for (const EndpointSlice* slice : deletes) {
      plan_.actions.push_back(SliceAction{Operation::kDelete, *slice});
    }
    for (const EndpointSlice* slice : work.unchanged) {
      plan_.unchanged.push_back(slice->metadata.name);
    }
  }

  const DesiredEndpoints& desired_;
  const PlanOptions& options_;
  const std::size_t max_;
  Plan plan_;
};

}  // namespace

Plan ReferencePlan(const DesiredEndpoints& desired, std::span<const EndpointSlice> existing,
                   const PlanOptions& options) {
  return Reference(desired, options).Run(existing);
}

}  // namespace slicewright::reconcile::testing
