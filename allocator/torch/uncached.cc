// uncached.cc — see uncached.h.
#include "allocator/torch/uncached.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace ccalloc::uncached {
namespace {

// PyTorch reads the variable with c10::utils::check_env: these mean true.
bool ForcedByEnvironment() {
  const char* value = std::getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
  if (value == nullptr) return false;
  const std::string v = absl::AsciiStrToLower(value);
  return v == "1" || v == "true" || v == "on" || v == "yes" || v == "y";
}

// -1 until the first question: then the environment's answer, until set.
std::atomic<int> caching{-1};

struct Live {
  DeviceBackend* backend;
  std::size_t size;
};
absl::Mutex mu(absl::kConstInit);
// On the heap and never freed, like the plugin's allocators: tensors are
// freed during PyTorch's static destruction, after ours would have run.
absl::flat_hash_map<DevicePtr, Live>* live ABSL_GUARDED_BY(mu) = nullptr;
// How many are live: free checks it before taking the lock.
std::atomic<std::size_t> live_count{0};

}  // namespace

bool CachingEnabled() {
  int now = caching.load(std::memory_order_relaxed);
  if (now < 0) {
    int expected = -1;
    caching.compare_exchange_strong(expected, ForcedByEnvironment() ? 0 : 1);
    now = caching.load(std::memory_order_relaxed);
  }
  return now == 1;
}

void SetCachingEnabled(bool enabled) { caching.store(enabled ? 1 : 0); }

absl::StatusOr<DevicePtr> Allocate(DeviceBackend& backend, std::size_t size) {
  absl::StatusOr<DevicePtr> ptr = backend.Allocate(size);
  if (!ptr.ok()) return ptr.status();
  absl::MutexLock lock(&mu);
  if (live == nullptr) live = new absl::flat_hash_map<DevicePtr, Live>();
  live->emplace(*ptr, Live{&backend, size});
  live_count.fetch_add(1);
  return ptr;
}

std::optional<absl::Status> FreeIfOurs(DevicePtr ptr) {
  if (live_count.load(std::memory_order_acquire) == 0) return std::nullopt;
  Live entry{};
  {
    absl::MutexLock lock(&mu);
    auto it = live->find(ptr);
    if (it == live->end()) return std::nullopt;
    entry = it->second;
    live->erase(it);
  }
  absl::Status status = entry.backend->Deallocate(ptr, entry.size);
  if (!status.ok()) {
    // Still allocated: it stays ours, for a later free to try again.
    absl::MutexLock lock(&mu);
    live->emplace(ptr, entry);
    return status;
  }
  live_count.fetch_sub(1);
  return status;
}

}  // namespace ccalloc::uncached
