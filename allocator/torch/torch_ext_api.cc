// torch_ext_api.cc — the plugin's C functions that the PyTorch extension
// (python/ccalloc/csrc/ccalloc_ext.cpp) calls, declared in
// python/ccalloc/csrc/ccalloc_torch.h: frees by pointer alone, PyTorch's
// statistics struct, snapshots by visitor, private pools (CUDA graphs,
// MemPool), IPC and peer access. Each is a thin C wrapper over one
// DeviceAllocator call; the allocators themselves are torch_plugin.cc's.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/ipc.h"
#include "allocator/torch/plugin_internal.h"
#include "allocator/torch/source_pools.h"
#include "allocator/torch/uncached.h"
#include "ccalloc/ccalloc.h"
#include "ccalloc_torch.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "stats/tags.h"

using ccalloc::Report;

namespace ccalloc {
namespace {

// Frees on whichever allocator owns ptr (a DataPtr deleter knows only the
// pointer). InvalidArgument from an allocator means "not mine".
absl::Status FreeAnywhere(void* ptr) {
  if (ptr == nullptr) return absl::OkStatus();
  const DevicePtr p = reinterpret_cast<DevicePtr>(ptr);
  if (std::optional<absl::Status> s = uncached::FreeIfOurs(p)) return *s;
  if (std::optional<absl::Status> s = source_pools::FreeIfOurs(p)) return *s;
  absl::Status first;
  for (int d = 0; d < kMaxDevices; ++d) {
    DeviceAllocator* a = Existing(d);
    if (a == nullptr) continue;
    absl::Status status = a->Free(p);
    if (!absl::IsInvalidArgument(status)) return status;
    if (first.ok()) first = status;
  }
  return first.ok() ? absl::InvalidArgumentError(absl::StrCat(
                          "free: 0x", absl::Hex(p), " was not allocated by ccalloc"))
                    : first;
}

// The allocator that owns ptr, by asking each (BaseAllocation refuses
// foreign pointers).
absl::StatusOr<DeviceAllocator*> Owner(void* ptr) {
  const DevicePtr p = reinterpret_cast<DevicePtr>(ptr);
  for (int d = 0; d < kMaxDevices; ++d) {
    DeviceAllocator* a = Existing(d);
    if (a != nullptr && a->BaseAllocation(p).ok()) return a;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("0x", absl::Hex(p), " was not allocated by ccalloc on any device"));
}

// Adds `in` to `out`: a device's figures are its allocator's plus its
// MemPool-allocator pools' (source_pools.h). A peak so summed can exceed the
// device's true peak when the pool and the rest peaked at different moments.
void AddStat(const Stat& in, ccalloc_torch_stat& out) {
  out.current += in.current;
  out.peak += in.peak;
  out.allocated += in.allocated;
  out.freed += in.freed;
}
void AddStats(const StatArray& in, ccalloc_torch_stat* out) {
  for (std::size_t i = 0; i < in.size(); ++i) AddStat(in[i], out[i]);
}
void AddAll(const MemoryStats& s, ccalloc_torch_stats* out) {
  AddStats(s.allocation, out->allocation);
  AddStats(s.segment, out->segment);
  AddStats(s.active, out->active);
  AddStats(s.inactive_split, out->inactive_split);
  AddStats(s.allocated_bytes, out->allocated_bytes);
  AddStats(s.reserved_bytes, out->reserved_bytes);
  AddStats(s.active_bytes, out->active_bytes);
  AddStats(s.inactive_split_bytes, out->inactive_split_bytes);
  AddStats(s.requested_bytes, out->requested_bytes);
  AddStat(s.oversize_allocations, out->oversize_allocations);
  AddStat(s.oversize_segments, out->oversize_segments);
  out->num_alloc_retries += s.num_alloc_retries;
  out->num_ooms += s.num_ooms;
  out->num_sync_all_streams += s.num_sync_all_streams;
  out->num_device_alloc += s.num_device_alloc;
  out->num_device_free += s.num_device_free;
}

// One importer per device, created with the device's allocator and, like it,
// never destroyed.
std::atomic<IpcImporter*> importers[kMaxDevices];

absl::StatusOr<IpcImporter*> ImporterFor(int device) {
  absl::StatusOr<DeviceAllocator*> allocator = GetOrCreate(device);
  if (!allocator.ok()) return allocator.status();
  if (IpcImporter* i = importers[device].load(std::memory_order_acquire)) return i;
  absl::MutexLock lock(&creation_mu);
  if (IpcImporter* i = importers[device].load(std::memory_order_relaxed)) return i;
  auto* created = new IpcImporter(&(*allocator)->backend());
  importers[device].store(created, std::memory_order_release);
  return created;
}

// Runs f on the allocator of `device`, creating it: pool calls may come
// before the first allocation (a graph capture that starts the program).
template <typename F>
int OnDevice(int device, F f) {
  absl::StatusOr<DeviceAllocator*> allocator = GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  return Report(f(**allocator));
}

// Runs f on the allocator of `device` if it exists; NotFound otherwise. For
// questions about pools: asking must not create an allocator (and a CUDA
// context) on a device the program never used.
template <typename F>
int OnExisting(int device, F f) {
  if (absl::Status s = CheckDevice(device); !s.ok()) return Report(s);
  DeviceAllocator* a = Existing(device);
  if (a == nullptr) {
    return Report(absl::NotFoundError(absl::StrCat("no allocator on device ", device)));
  }
  return Report(f(*a));
}

}  // namespace
}  // namespace ccalloc

CCALLOC_TORCH_API int ccalloc_torch_free_ptr(void* ptr) {
  return Report(ccalloc::FreeAnywhere(ptr));
}

CCALLOC_TORCH_API int ccalloc_torch_get_stats(int device, ccalloc_torch_stats* out) {
  if (out == nullptr) return Report(absl::InvalidArgumentError("out is NULL"));
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) return Report(s);
  *out = ccalloc_torch_stats{};
  ccalloc::source_pools::ForEachOn(
      device, [out](ccalloc::DeviceAllocator& pool) { ccalloc::AddAll(pool.GetStats(), out); });
  ccalloc::DeviceAllocator* a = ccalloc::Existing(device);
  if (a == nullptr) return CCALLOC_OK;
  const ccalloc::MemoryStats s = a->GetStats();
  ccalloc::AddAll(s, out);
  out->max_split_size = s.max_split_size;
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_largest_free_block(int device, size_t* out) {
  if (out == nullptr) return Report(absl::InvalidArgumentError("out is NULL"));
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) return Report(s);
  ccalloc::DeviceAllocator* a = ccalloc::Existing(device);
  *out = a == nullptr ? 0 : a->Fragmentation().largest_free_block;
  return CCALLOC_OK;
}

// Batched block lookup for the profiler (DeviceAllocator::BlocksHolding).
// Any of starts/sizes/tags may be NULL when not wanted.
CCALLOC_TORCH_API int ccalloc_torch_blocks_holding(int device, const uint64_t* ptrs, size_t n,
                                                   uint64_t* starts, uint64_t* sizes,
                                                   uint32_t* tags) {
  if (n > 0 && ptrs == nullptr) return Report(absl::InvalidArgumentError("ptrs is NULL"));
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) return Report(s);
  std::vector<ccalloc::DevicePtr> p(ptrs, ptrs + n), st(n, 0);
  std::vector<std::size_t> sz(n, 0);
  std::vector<ccalloc::TagId> tg(n, ccalloc::kNoTag);
  if (ccalloc::DeviceAllocator* a = ccalloc::Existing(device); a != nullptr && n > 0) {
    a->BlocksHolding(p.data(), n, st.data(), sz.data(), tg.data());
  }
  for (size_t i = 0; i < n; ++i) {
    if (starts != nullptr) starts[i] = st[i];
    if (sizes != nullptr) sizes[i] = sz[i];
    if (tags != nullptr) tags[i] = tg[i];
  }
  return CCALLOC_OK;
}

// The name of tag id `tag` ("" for none), snprintf-like: returns the length
// of the name; writes at most capacity bytes including the terminator.
CCALLOC_TORCH_API size_t ccalloc_torch_tag_name(uint32_t tag, char* buffer, size_t capacity) {
  const std::string name = ccalloc::TagName(tag);
  if (buffer != nullptr && capacity > 0) {
    const size_t n = std::min(name.size(), capacity - 1);
    std::memcpy(buffer, name.data(), n);
    buffer[n] = '\0';
  }
  return name.size();
}

namespace {

// One segment of the visit: all of a classic segment (or of a paused
// region's, whose blocks keep their addresses over memory given back), or
// one contiguous mapped range [begin, end) of a growable one with the blocks
// over it, free blocks cut at its ends. PyTorch reports its expandable
// segments so, a segment per mapped range: memory_viz draws them, and the
// segments' total_size adds up to memory_reserved().
void VisitPart(const ccalloc::SegmentInfo& s, std::uint64_t begin, std::uint64_t end, bool whole,
               void (*on_segment)(void*, const ccalloc_torch_segment*),
               void (*on_block)(void*, const ccalloc_torch_block*), void* ctx) {
  ccalloc_torch_segment seg{};
  seg.address = begin;
  seg.total_size = end - begin;
  seg.mapped_size = whole ? s.mapped_size : end - begin;
  seg.stream = reinterpret_cast<void*>(s.stream);
  seg.pool = s.pool_id;
  seg.is_large = s.small_pool ? 0 : 1;
  seg.is_expandable = s.expandable ? 1 : 0;
  std::vector<ccalloc_torch_block> blocks;
  for (const ccalloc::BlockInfo& b : s.blocks) {
    const std::uint64_t lo = std::max(b.address, begin);
    const std::uint64_t hi = std::min(b.address + b.size, end);
    if (lo >= hi) continue;
    ccalloc_torch_block block{};
    block.address = lo;
    block.size = hi - lo;
    // (A block handed out is mapped whole, so only free blocks are cut; a
    // free one's last request goes with its first piece.)
    block.requested_size = lo == b.address ? b.requested_size : 0;
    block.allocated = b.status == ccalloc::BlockStatus::kActiveAllocated;
    block.active = b.status != ccalloc::BlockStatus::kInactive;
    if (block.allocated) {
      seg.allocated_size += block.size;
      seg.requested_size += block.requested_size;
    }
    if (block.active) seg.active_size += block.size;
    blocks.push_back(block);
  }
  if (whole) {
    seg.allocated_size = s.allocated_size;
    seg.active_size = s.active_size;
    seg.requested_size = s.requested_size;
  }
  on_segment(ctx, &seg);
  for (const ccalloc_torch_block& block : blocks) on_block(ctx, &block);
}

// Every segment of `a`, visited from a copy, so the callbacks run without
// the allocator's lock.
void VisitAllocator(ccalloc::DeviceAllocator& a,
                    void (*on_segment)(void*, const ccalloc_torch_segment*),
                    void (*on_block)(void*, const ccalloc_torch_block*), void* ctx) {
  const ccalloc::Snapshot snapshot = a.TakeSnapshot();
  for (const ccalloc::SegmentInfo& s : snapshot.segments) {
    if (!s.expandable || s.paused) {
      VisitPart(s, s.address, s.address + s.total_size, /*whole=*/true, on_segment, on_block, ctx);
      continue;
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs = s.mapped_ranges;
    std::sort(runs.begin(), runs.end());
    for (const auto& [begin, end] : runs) {
      VisitPart(s, begin, end, /*whole=*/false, on_segment, on_block, ctx);
    }
  }
}

}  // namespace

CCALLOC_TORCH_API int ccalloc_torch_visit_snapshot(
    int device, void (*on_segment)(void*, const ccalloc_torch_segment*),
    void (*on_block)(void*, const ccalloc_torch_block*), void* ctx) {
  if (on_segment == nullptr || on_block == nullptr) {
    return Report(absl::InvalidArgumentError("a visitor is NULL"));
  }
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) return Report(s);
  ccalloc::DeviceAllocator* a = ccalloc::Existing(device);
  if (a != nullptr) VisitAllocator(*a, on_segment, on_block, ctx);
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_pool_create_or_incref(int device, uint64_t pool) {
  return ccalloc::OnDevice(device,
                           [&](ccalloc::DeviceAllocator& a) { return a.CreateOrIncrefPool(pool); });
}

CCALLOC_TORCH_API int ccalloc_torch_pool_begin(int device, uint64_t pool,
                                               int (*filter)(void*, void*), void* ctx) {
  if (filter == nullptr) return Report(absl::InvalidArgumentError("filter is NULL"));
  return ccalloc::OnDevice(device, [&](ccalloc::DeviceAllocator& a) {
    return a.BeginAllocateToPool(pool, [filter, ctx](ccalloc::StreamId stream) {
      return filter(ctx, reinterpret_cast<void*>(stream)) != 0;
    });
  });
}

CCALLOC_TORCH_API int ccalloc_torch_pool_end(int device, uint64_t pool) {
  return ccalloc::OnExisting(device,
                           [&](ccalloc::DeviceAllocator& a) { return a.EndAllocateToPool(pool); });
}

CCALLOC_TORCH_API int ccalloc_torch_pool_release(int device, uint64_t pool) {
  return ccalloc::OnExisting(device,
                           [&](ccalloc::DeviceAllocator& a) { return a.ReleasePool(pool); });
}

CCALLOC_TORCH_API int ccalloc_torch_pool_use_count(int device, uint64_t pool, int* out) {
  if (out == nullptr) return Report(absl::InvalidArgumentError("out is NULL"));
  return ccalloc::OnExisting(device, [&](ccalloc::DeviceAllocator& a) -> absl::Status {
    absl::StatusOr<int> count = a.PoolUseCount(pool);
    if (!count.ok()) return count.status();
    *out = *count;
    return absl::OkStatus();
  });
}

CCALLOC_TORCH_API int ccalloc_torch_pool_set_use_on_oom(int device, uint64_t pool,
                                                         int use_on_oom) {
  return ccalloc::OnExisting(device, [&](ccalloc::DeviceAllocator& a) {
    return a.SetPoolUseOnOom(pool, use_on_oom != 0);
  });
}

CCALLOC_TORCH_API int ccalloc_torch_pool_empty_cache(int device, uint64_t pool) {
  return ccalloc::OnExisting(device,
                           [&](ccalloc::DeviceAllocator& a) { return a.EmptyCachePool(pool); });
}

CCALLOC_TORCH_API int ccalloc_torch_pool_live_blocks(
    int device, uint64_t pool, void (*on_block)(void*, void*, size_t, size_t, void*),
    void* ctx) {
  if (on_block == nullptr) return Report(absl::InvalidArgumentError("on_block is NULL"));
  return ccalloc::OnExisting(device, [&](ccalloc::DeviceAllocator& a) {
    for (const ccalloc::LiveBlock& b : a.PoolLiveBlocks(pool)) {
      on_block(ctx, reinterpret_cast<void*>(b.ptr), b.size, b.requested,
               reinterpret_cast<void*>(b.stream));
    }
    return absl::OkStatus();
  });
}

CCALLOC_TORCH_API int ccalloc_torch_allocate_at(int device, uint64_t pool, void* ptr, size_t size,
                                                size_t requested, void* stream) {
  return ccalloc::OnDevice(device, [&](ccalloc::DeviceAllocator& a) {
    return a
        .AllocateAt(pool, reinterpret_cast<ccalloc::DevicePtr>(ptr), size, requested,
                    reinterpret_cast<ccalloc::StreamId>(stream))
        .status();
  });
}

CCALLOC_TORCH_API int ccalloc_torch_source_pool_create(
    int device, void* (*alloc)(void*, size_t, void*), void (*free)(void*, void*, size_t, void*),
    void* ctx, uint64_t* handle) {
  if (handle == nullptr) return Report(absl::InvalidArgumentError("handle is NULL"));
  absl::StatusOr<std::unique_ptr<ccalloc::DeviceBackend>> events = ccalloc::NewBackend(device);
  if (!events.ok()) return Report(events.status());
  ccalloc::source_pools::Source source;
  source.alloc = alloc;
  source.free = free;
  source.ctx = ctx;
  absl::StatusOr<std::uint64_t> h =
      ccalloc::source_pools::Create(device, source, std::move(*events));
  if (!h.ok()) return Report(h.status());
  *handle = *h;
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_source_pool_malloc(uint64_t handle, size_t size,
                                                       void* stream, void** out) {
  if (out == nullptr) return Report(absl::InvalidArgumentError("out is NULL"));
  *out = nullptr;
  absl::StatusOr<ccalloc::DevicePtr> ptr = ccalloc::source_pools::Allocate(
      handle, size, reinterpret_cast<ccalloc::StreamId>(stream));
  if (!ptr.ok()) return Report(ptr.status());
  *out = reinterpret_cast<void*>(*ptr);
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_source_pool_empty_cache(uint64_t handle) {
  return Report(ccalloc::source_pools::EmptyCache(handle));
}

CCALLOC_TORCH_API int ccalloc_torch_source_pool_release(uint64_t handle) {
  return Report(ccalloc::source_pools::Release(handle));
}

CCALLOC_TORCH_API int ccalloc_torch_source_pool_visit_snapshot(
    uint64_t handle, void (*on_segment)(void*, const ccalloc_torch_segment*),
    void (*on_block)(void*, const ccalloc_torch_block*), void* ctx) {
  if (on_segment == nullptr || on_block == nullptr) {
    return Report(absl::InvalidArgumentError("a visitor is NULL"));
  }
  std::shared_ptr<ccalloc::DeviceAllocator> a = ccalloc::source_pools::Get(handle);
  if (a == nullptr) {
    return Report(absl::NotFoundError(absl::StrCat("MemPool allocator pool ", handle,
                                                   " is unknown")));
  }
  VisitAllocator(*a, on_segment, on_block, ctx);
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_base_allocation(void* ptr, void** base, size_t* size) {
  if (base == nullptr || size == nullptr) {
    return Report(absl::InvalidArgumentError("base or size is NULL"));
  }
  absl::StatusOr<ccalloc::DeviceAllocator*> owner = ccalloc::Owner(ptr);
  if (!owner.ok()) return Report(owner.status());
  absl::StatusOr<std::pair<ccalloc::DevicePtr, std::size_t>> range =
      (*owner)->BaseAllocation(reinterpret_cast<ccalloc::DevicePtr>(ptr));
  if (!range.ok()) return Report(range.status());
  *base = reinterpret_cast<void*>(range->first);
  *size = range->second;
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_ipc_export(void* ptr, char* handle, size_t capacity,
                                               size_t* length, size_t* offset) {
  if (length == nullptr || offset == nullptr) {
    return Report(absl::InvalidArgumentError("length or offset is NULL"));
  }
  absl::StatusOr<ccalloc::DeviceAllocator*> owner = ccalloc::Owner(ptr);
  if (!owner.ok()) return Report(owner.status());
  absl::StatusOr<ccalloc::DeviceAllocator::IpcExport> exported =
      (*owner)->ExportIpc(reinterpret_cast<ccalloc::DevicePtr>(ptr));
  if (!exported.ok()) return Report(exported.status());
  *length = exported->handle.size();
  *offset = exported->offset;
  if (handle != nullptr) {
    std::memcpy(handle, exported->handle.data(), std::min(capacity, exported->handle.size()));
  }
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_ipc_open(int device, const char* handle, size_t length,
                                             void** base) {
  if (handle == nullptr || base == nullptr) {
    return Report(absl::InvalidArgumentError("handle or base is NULL"));
  }
  absl::StatusOr<ccalloc::IpcImporter*> importer = ccalloc::ImporterFor(device);
  if (!importer.ok()) return Report(importer.status());
  absl::StatusOr<ccalloc::DevicePtr> opened =
      (*importer)->Open(absl::string_view(handle, length));
  if (!opened.ok()) return Report(opened.status());
  *base = reinterpret_cast<void*>(*opened);
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_ipc_close(int device, void* base) {
  absl::StatusOr<ccalloc::IpcImporter*> importer = ccalloc::ImporterFor(device);
  if (!importer.ok()) return Report(importer.status());
  return Report((*importer)->Close(reinterpret_cast<ccalloc::DevicePtr>(base)));
}

CCALLOC_TORCH_API int ccalloc_torch_add_peer_access(int device, int peer) {
  return ccalloc::OnDevice(device,
                           [&](ccalloc::DeviceAllocator& a) { return a.AddPeerAccess(peer); });
}
