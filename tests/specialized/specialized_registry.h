#pragma once
// The specialized sources compiled for the emulator, by case (specialized_cases.h) and family.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "engine/src/emu_network.h"
#include "engine/src/fused_plan.h"

namespace mlpcore::test {

struct SpecializedRegistration {
  ops::TileFamily family;
  bool f16_accumulation;
  detail::EmulatedKernel kernel;
  // An emulated network running `kernel` (with the registered tile) for a model and its plan.
  std::function<std::unique_ptr<detail::BackendNetwork>(const Model&, const detail::FusedPlan&, detail::EmulatedKernel)> make;
};

class SpecializedRegistry {
 public:
  void add(std::size_t index, SpecializedRegistration r) { entries_.push_back({index, std::move(r)}); }
  // Case `index`'s registration for the family and accumulation, or nullptr.
  const SpecializedRegistration* find(std::size_t index, ops::TileFamily family, bool f16_accumulation) const {
    for (const auto& [i, r] : entries_)
      if (i == index && r.family == family && r.f16_accumulation == f16_accumulation) return &r;
    return nullptr;
  }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::size_t, SpecializedRegistration>> entries_;
};

inline SpecializedRegistry& specialized_registry() {
  static SpecializedRegistry r;
  return r;
}

}  // namespace mlpcore::test
