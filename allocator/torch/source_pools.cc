// source_pools.cc — see source_pools.h.
#include "allocator/torch/source_pools.h"

#include <atomic>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "allocator/cache/options.h"

namespace ccalloc::source_pools {
namespace {

// The stream of the request being served on this thread: PyTorch's pluggable
// allocators take one, DeviceBackend::Allocate does not.
thread_local void* serving_stream = nullptr;

// A backend whose device memory is the pool's allocator's; its events,
// device-wide waits and capture order are those of a backend of the device.
class SourceBackend final : public DeviceBackend {
 public:
  SourceBackend(const Source& source, std::unique_ptr<DeviceBackend> events)
      : source_(source), events_(std::move(events)) {}

  int device() const override { return events_->device(); }
  const char* name() const override { return "MemPool allocator"; }

  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override {
    void* ptr = source_.alloc(source_.ctx, bytes, serving_stream);
    if (ptr == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the MemPool's own allocator returned no memory for ", bytes, " bytes"));
    }
    return reinterpret_cast<DevicePtr>(ptr);
  }
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override {
    source_.free(source_.ctx, reinterpret_cast<void*>(ptr), bytes, nullptr);
    return absl::OkStatus();
  }
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo() override { return events_->MemoryInfo(); }
  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override {
    return events_->RecordEvent(stream);
  }
  absl::StatusOr<bool> QueryEvent(EventHandle event) override {
    return events_->QueryEvent(event);
  }
  absl::Status SynchronizeEvent(EventHandle event) override {
    return events_->SynchronizeEvent(event);
  }
  absl::Status StreamWaitEvent(StreamId stream, EventHandle event) override {
    return events_->StreamWaitEvent(stream, event);
  }
  void DestroyEvent(EventHandle event) override { events_->DestroyEvent(event); }
  absl::Status SynchronizeDevice() override { return events_->SynchronizeDevice(); }
  // A capture's graph is the device's, whoever allocated the memory.
  absl::StatusOr<CapturePosition> CapturePositionOf(StreamId stream) override {
    return events_->CapturePositionOf(stream);
  }
  absl::StatusOr<bool> OrderedBefore(const CapturePosition& before, StreamId stream) override {
    return events_->OrderedBefore(before, stream);
  }

 private:
  const Source source_;
  const std::unique_ptr<DeviceBackend> events_;
};

struct Pool {
  int device = 0;
  std::shared_ptr<DeviceAllocator> allocator;
  bool released = false;
  std::size_t live = 0;  // blocks handed out and not yet freed
};

absl::Mutex mu(absl::kConstInit);
// On the heap and never freed, like the plugin's allocators: tensors are
// freed during PyTorch's static destruction, after ours would have run.
absl::flat_hash_map<std::uint64_t, Pool>* pools ABSL_GUARDED_BY(mu) = nullptr;
// Every live block, by address: its pool's handle.
absl::flat_hash_map<DevicePtr, std::uint64_t>* owners ABSL_GUARDED_BY(mu) = nullptr;
std::uint64_t next_handle ABSL_GUARDED_BY(mu) = 1;
// How many blocks are live in all pools: FreeIfOurs checks it first.
std::atomic<std::size_t> live_count{0};

Pool* Find(std::uint64_t handle) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  if (pools == nullptr) return nullptr;
  auto it = pools->find(handle);
  return it == pools->end() ? nullptr : &it->second;
}

// A released pool with no live block: its memory back to its allocator, and
// the pool gone. The allocator goes once the last caller holding it is done.
absl::Status GoIfDone(std::uint64_t handle) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  Pool* pool = Find(handle);
  if (pool == nullptr || !pool->released || pool->live > 0) return absl::OkStatus();
  absl::Status s = pool->allocator->EmptyCache();
  pools->erase(handle);
  return s;
}

}  // namespace

absl::StatusOr<std::uint64_t> Create(int device, const Source& source,
                                     std::unique_ptr<DeviceBackend> events) {
  if (source.alloc == nullptr || source.free == nullptr) {
    return absl::InvalidArgumentError("a MemPool allocator needs both alloc and free");
  }
  if (events == nullptr) return absl::InvalidArgumentError("no backend for the pool's events");
  // Classic segments of PyTorch's sizes: the allocator is called per segment.
  Options options;
  options.expandable_segments = false;
  auto allocator = std::make_shared<DeviceAllocator>(
      std::make_unique<SourceBackend>(source, std::move(events)), options);
  absl::MutexLock lock(&mu);
  if (pools == nullptr) {
    pools = new absl::flat_hash_map<std::uint64_t, Pool>();
    owners = new absl::flat_hash_map<DevicePtr, std::uint64_t>();
  }
  const std::uint64_t handle = next_handle++;
  pools->emplace(handle, Pool{device, std::move(allocator), false, 0});
  return handle;
}

absl::StatusOr<DevicePtr> Allocate(std::uint64_t handle, std::size_t size, StreamId stream) {
  absl::MutexLock lock(&mu);
  Pool* pool = Find(handle);
  if (pool == nullptr) {
    return absl::NotFoundError(absl::StrCat("MemPool allocator pool ", handle, " is unknown"));
  }
  if (pool->released) {
    return absl::FailedPreconditionError(
        absl::StrCat("MemPool allocator pool ", handle, " is released"));
  }
  serving_stream = reinterpret_cast<void*>(stream);
  absl::StatusOr<DevicePtr> ptr = pool->allocator->Allocate(size, stream);
  serving_stream = nullptr;
  if (!ptr.ok() || *ptr == 0) return ptr;
  owners->emplace(*ptr, handle);
  ++pool->live;
  live_count.fetch_add(1, std::memory_order_relaxed);
  return ptr;
}

std::optional<absl::Status> FreeIfOurs(DevicePtr ptr) {
  if (live_count.load(std::memory_order_relaxed) == 0) return std::nullopt;
  absl::MutexLock lock(&mu);
  auto it = owners->find(ptr);
  if (it == owners->end()) return std::nullopt;
  const std::uint64_t handle = it->second;
  Pool* pool = Find(handle);
  if (absl::Status s = pool->allocator->Free(ptr); !s.ok()) return s;
  owners->erase(it);
  --pool->live;
  live_count.fetch_sub(1, std::memory_order_relaxed);
  return GoIfDone(handle);
}

absl::Status EmptyCache(std::uint64_t handle) {
  absl::MutexLock lock(&mu);
  Pool* pool = Find(handle);
  if (pool == nullptr) {
    return absl::NotFoundError(absl::StrCat("MemPool allocator pool ", handle, " is unknown"));
  }
  return pool->allocator->EmptyCache();
}

absl::Status Release(std::uint64_t handle) {
  absl::MutexLock lock(&mu);
  Pool* pool = Find(handle);
  if (pool == nullptr || pool->released) {
    return absl::NotFoundError(
        absl::StrCat("MemPool allocator pool ", handle, " is unknown or already released"));
  }
  pool->released = true;
  return GoIfDone(handle);
}

std::shared_ptr<DeviceAllocator> Get(std::uint64_t handle) {
  absl::MutexLock lock(&mu);
  Pool* pool = Find(handle);
  return pool == nullptr ? nullptr : pool->allocator;
}

void ForEachOn(int device, const std::function<void(DeviceAllocator&)>& f) {
  absl::MutexLock lock(&mu);
  if (pools == nullptr) return;
  for (const auto& [handle, pool] : *pools) {
    if (device < 0 || pool.device == device) f(*pool.allocator);
  }
}

}  // namespace ccalloc::source_pools
