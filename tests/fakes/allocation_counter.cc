#include "fakes/allocation_counter.h"

#include <cstdlib>
#include <new>

namespace {

thread_local std::int64_t t_allocations = 0;

// The whole non-aligned family is replaced so that every new pairs with our delete (a sanitizer
// runtime would otherwise supply the nothrow and array forms). Out of line: once inlined, g++ -O1
// misreads free() of operator-new memory as a mismatch.
[[gnu::noinline]] void* CountedAllocate(std::size_t size) {
  ++t_allocations;
  void* memory = std::malloc(size == 0 ? 1 : size);
  if (memory == nullptr) {
    std::abort();  // tests and benchmarks only; our code throws nothing
  }
  return memory;
}
[[gnu::noinline]] void CountedFree(void* memory) noexcept { std::free(memory); }

}  // namespace

namespace slicewright::fakes {
std::int64_t AllocationCount() { return t_allocations; }
}  // namespace slicewright::fakes

void* operator new(std::size_t size) { return CountedAllocate(size); }
void* operator new[](std::size_t size) { return CountedAllocate(size); }
void* operator new(std::size_t size, const std::nothrow_t& /*tag*/) noexcept {
  return CountedAllocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t& /*tag*/) noexcept {
  return CountedAllocate(size);
}
void operator delete(void* memory) noexcept { CountedFree(memory); }
void operator delete[](void* memory) noexcept { CountedFree(memory); }
void operator delete(void* memory, std::size_t /*size*/) noexcept { CountedFree(memory); }
void operator delete[](void* memory, std::size_t /*size*/) noexcept { CountedFree(memory); }
void operator delete(void* memory, const std::nothrow_t& /*tag*/) noexcept { CountedFree(memory); }
void operator delete[](void* memory, const std::nothrow_t& /*tag*/) noexcept {
  CountedFree(memory);
}
