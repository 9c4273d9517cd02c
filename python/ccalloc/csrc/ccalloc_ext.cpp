// ccalloc_ext.cpp — ccalloc as PyTorch's whole CUDA allocator.
//
// CUDAPluggableAllocator gives PyTorch a malloc and a free and nothing else:
// CUDA graphs, torch.compile's cudagraph trees, cudnn benchmark mode (which
// sizes its workspace with cacheInfo), IPC of CUDA tensors, memory history and
// the statistics all stop at "does not yet support". This file implements
// PyTorch's CUDAAllocator interface (c10/cuda/CUDACachingAllocator.h) over
// libccalloc_torch.so's C functions (ccalloc_torch.h) and installs it with
// torch's own changeCurrentAllocator(), so every torch.cuda function reaches
// ccalloc with no monkey-patching.
//
// It is compiled against the installed PyTorch on first use (python/ccalloc/
// _ext.py; then cached) because PyTorch's C++ ABI changes between releases;
// the allocator itself lives in the plugin, built once with CMake. The split
// keeps this side small: it owns only what is PyTorch's own vocabulary —
// MempoolId_t pairs (mapped to ccalloc pool numbers), DataPtrs and their
// deleter, memory-history contexts (Python frames that only PyTorch can
// gather), trace entries, OOM observers — and no allocator state.
//
// Locking: the plugin has its own lock per device. mu_ here guards the
// PyTorch-side tables and is never held while calling PyTorch's context
// recorder (which takes the GIL) or the plugin's filter callbacks. std::mutex,
// not absl::Mutex: this file is built by PyTorch's toolchain, where Abseil is
// not available.
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/cuda/CUDAPluggableAllocator.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ccalloc_torch.h"
#include "mapped_ranges.h"
#include "own_pools.h"

namespace ccalloc_ext {
namespace {

namespace cca = c10::cuda::CUDACachingAllocator;
namespace cda = c10::CachingDeviceAllocator;
using c10::cuda::MempoolId_t;

constexpr int kOk = 0;
constexpr int kOutOfMemory = 1;

// Throws c10::Error (a Python RuntimeError) carrying the plugin's message.
void Check(int rc, const char* what) {
  TORCH_CHECK(rc == kOk, "ccalloc: ", what, " failed: ", ccalloc_torch_last_error());
}

void Deleter(void* ptr);

// Pool state captured by getCheckpointState: the live blocks, by address.
struct PoolCheckpoint final : cca::AllocatorState {
  struct Live {
    void* ptr;
    size_t size;
    size_t requested;
    void* stream;
  };
  c10::DeviceIndex device = 0;
  uint64_t pool = 0;
  MempoolId_t id{0, 0};
  std::vector<Live> blocks;
};

class CcallocAllocator final : public cca::CUDAAllocator {
 public:
  // --- allocation -----------------------------------------------------------
  c10::DataPtr allocate(size_t size) override {
    c10::DeviceIndex device = 0;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    void* ptr = Malloc(size, device, c10::cuda::getCurrentCUDAStream(device).stream());
    return {ptr, ptr, &Deleter, c10::Device(c10::DeviceType::CUDA, device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &Deleter; }
  void* raw_alloc(size_t size) override {
    c10::DeviceIndex device = 0;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    return Malloc(size, device, c10::cuda::getCurrentCUDAStream(device).stream());
  }
  void* raw_alloc_with_stream(size_t size, cudaStream_t stream) override {
    c10::DeviceIndex device = 0;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    return Malloc(size, device, stream);
  }
  void raw_delete(void* ptr) override { Free(ptr); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    C10_CUDA_CHECK(cudaMemcpy(dest, src, count, cudaMemcpyDeviceToDevice));
  }

  void* Malloc(size_t size, c10::DeviceIndex device, cudaStream_t stream) {
    if (C10_UNLIKELY(own_.routing())) {
      void* ptr = nullptr;
      if (own_.Malloc(size, device, stream, &ptr)) return ptr;
    }
    std::shared_ptr<c10::GatheredContext> context;
    int64_t reserved_before = -1;
    if (recording_.load(std::memory_order_relaxed)) {
      context = Gather(cda::RecordContext::STATE);
      // A trace tracker alone gets no segment entries (see Record).
      if (history_on_.load(std::memory_order_relaxed)) {
        std::vector<MappedRange> gone;
        reserved_before = taken_.Before(device, &gone);
        RecordRanges(device, gone, /*taken=*/false, nullptr);
      }
    }
    void* ptr = nullptr;
    int rc = ccalloc_torch_try_malloc(size, device, stream, &ptr);
    if (rc != kOk) {
      std::string message = ccalloc_torch_last_error();
      if (rc == kOutOfMemory) {
        ReportOutOfMemory(device, stream);
        TORCH_CHECK_WITH(OutOfMemoryError, false, message);
      }
      TORCH_CHECK(false, message);
    }
    if (ptr == nullptr) return nullptr;
    if (recording_.load(std::memory_order_relaxed)) {
      // The allocating thread's ccalloc tag (phase/module under the
      // profiler) travels in the entry's compile_context, which PyTorch's
      // snapshot keeps per trace entry; ccalloc.torch.snapshot() turns it
      // into a first frame that memory_viz shows.
      if (reserved_before >= 0) RecordTaken(device, context, reserved_before);
      Record(cda::TraceEntry::ALLOC, device, ptr, size, stream, std::move(context), true,
             TagName(ccalloc_torch_current_tag()));
    }
    if (C10_UNLIKELY(c10::memoryProfilingEnabled())) ReportToProfiler(ptr, size, device, true);
    return ptr;
  }

  void Free(void* ptr) {
    if (ptr == nullptr) return;
    if (recording_.load(std::memory_order_relaxed)) {
      RecordFree(ptr);
    } else if (C10_UNLIKELY(live_kept_.load(std::memory_order_relaxed))) {
      ForgetLive(ptr);
    }
    if (C10_UNLIKELY(c10::memoryProfilingEnabled())) ReportFreeToProfiler(ptr);
    // Deleters run inside destructors: never throw.
    if (ccalloc_torch_free_ptr(ptr) != kOk) {
      std::fprintf(stderr, "ccalloc: %s\n", ccalloc_torch_last_error());
    }
  }

  // --- set-up and settings --------------------------------------------------
  void init(int device_count) override {
    device_count_.store(device_count);
    initialized_.store(true);
  }
  bool initialized() override { return initialized_.load(); }
  double getMemoryFraction(c10::DeviceIndex device) override {
    double fraction = 1.0;
    Check(ccalloc_torch_memory_fraction(device, &fraction), "getMemoryFraction");
    return fraction;
  }
  void setMemoryFraction(double fraction, c10::DeviceIndex device) override {
    Check(ccalloc_torch_set_memory_fraction(device, fraction), "setMemoryFraction");
  }
  std::vector<cca::StreamSegmentSize> getExpandableSegmentSizes(c10::DeviceIndex) override {
    // PyTorch asks this only of its own expandable segments, to pre-size
    // them; ccalloc's growable ranges need no hint.
    return {};
  }
  // torch.cuda.caching_allocator_enable(False): requests bypass the cache,
  // as with PyTorch's allocator (allocator/torch/uncached.h).
  void enable(bool value) override { Check(ccalloc_torch_set_caching(value ? 1 : 0), "enable"); }
  bool isEnabled() const override { return ccalloc_torch_caching_enabled() != 0; }
  std::string name() override { return "ccalloc"; }

  // --- cache ----------------------------------------------------------------
  void emptyCache(MempoolId_t mempool_id) override {
    if (IsDefault(mempool_id)) {
      // As PyTorch's: what empty_cache gives back is in the history, a
      // segment_free (classic) or segment_unmap (growable) entry per range,
      // with the caller's stack when context="all".
      const bool history = recording_.load(std::memory_order_relaxed);
      std::vector<Range> before;
      if (history) before = Ranges();
      Check(ccalloc_torch_empty_cache(-1), "emptyCache");
      if (history) RecordGone(before);
      taken_.Clear();  // its entries are written: the next request reads afresh
      return;
    }
    if (uint64_t own = own_.Handle(mempool_id); own != 0) {
      Check(ccalloc_torch_source_pool_empty_cache(own), "emptyCache(pool)");
      return;
    }
    uint64_t pool = 0;
    if (!FindPool(mempool_id, &pool)) return;
    for (int d = 0; d < device_count_.load(); ++d) {
      // MemPool's destructor empties its pool right after releasing it, and
      // a released pool that owned nothing is gone by then: nothing to do
      // (and nothing may throw there).
      if (!PoolExists(d, pool)) continue;
      Check(ccalloc_torch_pool_empty_cache(d, pool), "emptyCache(pool)");
    }
  }
  void cacheInfo(c10::DeviceIndex device, size_t* largest) override {
    // Like PyTorch's own: a zero guess starts from what the device has free,
    // since a growable range can map all of it into one block.
    if (*largest == 0) {
      size_t free_bytes = 0, total = 0;
      Check(ccalloc_torch_device_memory(device, &free_bytes, &total), "cacheInfo");
      *largest = free_bytes;
    }
    size_t cached = 0;
    Check(ccalloc_torch_largest_free_block(device, &cached), "cacheInfo");
    if (cached > *largest) *largest = cached;
  }
  void* getBaseAllocation(void* ptr, size_t* size) override {
    void* base = nullptr;
    size_t bytes = 0;
    Check(ccalloc_torch_base_allocation(ptr, &base, &bytes), "getBaseAllocation");
    if (size != nullptr) *size = bytes;
    return base;
  }
  void recordStream(const c10::DataPtr& ptr, c10::cuda::CUDAStream stream) override {
    // A tensor whose memory is not ours (from_blob, IPC) needs nothing.
    if (ptr.get_deleter() != &Deleter || ptr.get() == nullptr) return;
    Check(ccalloc_torch_record_stream(ptr.get(), stream.stream()), "recordStream");
  }

  // --- statistics -----------------------------------------------------------
  cda::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    ccalloc_torch_stats s{};
    Check(ccalloc_torch_get_stats(device, &s), "getDeviceStats");
    cda::DeviceStats out;
    Copy(s.allocation, out.allocation);
    Copy(s.segment, out.segment);
    Copy(s.active, out.active);
    Copy(s.inactive_split, out.inactive_split);
    Copy(s.allocated_bytes, out.allocated_bytes);
    Copy(s.reserved_bytes, out.reserved_bytes);
    Copy(s.active_bytes, out.active_bytes);
    Copy(s.inactive_split_bytes, out.inactive_split_bytes);
    Copy(s.requested_bytes, out.requested_bytes);
    Copy(s.oversize_allocations, out.oversize_allocations);
    Copy(s.oversize_segments, out.oversize_segments);
    out.num_alloc_retries = s.num_alloc_retries;
    out.num_ooms = s.num_ooms;
    out.num_sync_all_streams = s.num_sync_all_streams;
    out.num_device_alloc = s.num_device_alloc;
    out.num_device_free = s.num_device_free;
    out.max_split_size = s.max_split_size;
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    Check(ccalloc_torch_reset_accumulated_stats(device), "resetAccumulatedStats");
  }
  void resetPeakStats(c10::DeviceIndex device) override {
    Check(ccalloc_torch_reset_peak_stats(device), "resetPeakStats");
  }

  // --- snapshots and memory history ----------------------------------------
  cca::SnapshotInfo snapshot(MempoolId_t mempool_id, bool include_traces) override {
    cca::SnapshotInfo info;
    uint64_t only_pool = 0;
    const bool filter = !IsDefault(mempool_id);
    std::vector<uint64_t> addresses;  // of every block, in visiting order
    // MemPools with an allocator of their own: the plugin's pools apart.
    const auto own = own_.List(filter, mempool_id);
    for (const auto& [id, p] : own) {
      SnapshotVisitor visitor{this, p.device, false, 0, &info, &addresses};
      visitor.own_id = &id;
      Check(ccalloc_torch_source_pool_visit_snapshot(p.handle, &SnapshotVisitor::OnSegment,
                                                     &SnapshotVisitor::OnBlock, &visitor),
            "snapshot");
    }
    const bool own_only = filter && !own.empty();
    if (!own_only && filter && !FindPool(mempool_id, &only_pool)) return info;
    for (int d = 0; d < device_count_.load() && !own_only; ++d) {
      SnapshotVisitor visitor{this, static_cast<c10::DeviceIndex>(d), filter, only_pool, &info,
                              &addresses};
      Check(ccalloc_torch_visit_snapshot(d, &SnapshotVisitor::OnSegment,
                                         &SnapshotVisitor::OnBlock, &visitor),
            "snapshot");
    }
    std::lock_guard<std::mutex> lock(mu_);
    AttachContexts(addresses, &info);
    if (include_traces) {
      auto to_ns = clock_.makeConverter();
      info.device_traces.resize(device_count_.load());
      for (size_t d = 0; d < traces_.size() && d < info.device_traces.size(); ++d) {
        for (const auto& entry : traces_[d]) {
          info.device_traces[d].push_back(entry);
          auto& t = info.device_traces[d].back().time_;
          t.t_ = to_ns(t.approx_t_) / 1000;
        }
      }
      info.external_annotations.assign(annotations_.begin(), annotations_.end());
      auto& notes = info.external_annotations;
      for (auto& a : notes) a.time_.t_ = to_ns(a.time_.approx_t_) / 1000;
    }
    for (const auto& segment : info.segments) {
      if (segment.is_expandable) info.config_metadata.expandable_segments = true;
    }
    info.config_metadata.last_allocator_settings = "ccalloc";
    return info;
  }

  bool isHistoryEnabled() override { return recording_.load(); }
  void recordHistory(bool enabled, cda::CreateContextFn context_recorder,
                     size_t alloc_trace_max_entries, cda::RecordContext when,
                     bool clear_history, const std::vector<std::string>& skip_actions) override {
    std::lock_guard<std::mutex> lock(mu_);
    record_context_ = enabled ? when : cda::RecordContext::NEVER;
    context_recorder_ = context_recorder;
    max_entries_ = alloc_trace_max_entries > 0 ? alloc_trace_max_entries : 1;
    skip_.clear();
    for (const std::string& action : skip_actions) skip_.insert(action);
    // As PyTorch's: turning history off (`_record_memory_history(None)`)
    // drops the trace too; the live blocks' frames go only when asked.
    if (!enabled || clear_history) traces_.clear();
    // PyTorch empties its annotations at every call, turning history on
    // as well as off: a snapshot shows only the current recording's.
    annotations_.clear();
    if (clear_history) {
      live_.clear();
      live_kept_.store(false, std::memory_order_relaxed);
    }
    // What was mapped is read again at the next request (mapped_ranges.h).
    taken_.Clear();
    history_on_ = enabled;
    recording_.store(history_on_ || !trackers_.empty());
  }
  void recordAnnotation(const std::vector<std::pair<std::string, std::string>>& md) override {
    if (!history_on_) return;
    c10::DeviceIndex device = 0;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    cda::AnnotationEntry entry(device, c10::getApproximateTime());
    for (const auto& [name, value] : md) entry.recordUserMetadata(name, value);
    std::lock_guard<std::mutex> lock(mu_);
    // Bounded as the trace is (PyTorch's ring holds as many).
    if (annotations_.size() >= max_entries_) annotations_.pop_front();
    annotations_.push_back(std::move(entry));
  }
  // torch.compile's regions (_record_memory_history(compile_context=True)):
  // the innermost names each trace entry, "N/A" outside any, as PyTorch's.
  void pushCompileContext(std::string& md) override {
    std::lock_guard<std::mutex> lock(mu_);
    compile_context_.push_back(md);
  }
  void popCompileContext() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!compile_context_.empty()) compile_context_.pop_back();
  }
  void setUserMetadata(const std::string& metadata) override {
    std::lock_guard<std::mutex> lock(mu_);
    user_metadata_ = metadata;
  }
  std::string getUserMetadata() override {
    std::lock_guard<std::mutex> lock(mu_);
    return user_metadata_;
  }
  void attachOutOfMemoryObserver(cca::OutOfMemoryObserver observer) override {
    std::lock_guard<std::mutex> lock(mu_);
    oom_observers_.push_back(std::move(observer));
  }
  void attachAllocatorTraceTracker(cda::AllocatorTraceTracker tracker) override {
    std::lock_guard<std::mutex> lock(mu_);
    trackers_.push_back(std::move(tracker));
    recording_.store(true);
  }

  // --- private pools: CUDA graphs, MemPool, cudagraph trees -----------------
  void beginAllocateToPool(c10::DeviceIndex device, MempoolId_t mempool_id,
                           std::function<bool(cudaStream_t)> filter) override {
    // A MemPool with an allocator of its own: its requests go to the
    // plugin's pool whose segments come from that allocator.
    if (own_.Begin(device, mempool_id, &filter)) return;
    const uint64_t pool = PoolFor(mempool_id);
    auto holder = std::make_unique<std::function<bool(cudaStream_t)>>(std::move(filter));
    Check(ccalloc_torch_pool_begin(device, pool, &Filter, holder.get()), "beginAllocateToPool");
    std::lock_guard<std::mutex> lock(mu_);
    filters_[{device, pool}] = std::move(holder);
  }
  void endAllocateToPool(c10::DeviceIndex device, MempoolId_t mempool_id) override {
    if (own_.End(device, mempool_id)) return;
    uint64_t pool = 0;
    TORCH_CHECK(FindPool(mempool_id, &pool), "ccalloc: endAllocateToPool: unknown pool (",
                mempool_id.first, ", ", mempool_id.second, ")");
    Check(ccalloc_torch_pool_end(device, pool), "endAllocateToPool");
    // The plugin no longer calls the filter: it can go.
    std::lock_guard<std::mutex> lock(mu_);
    filters_.erase({device, pool});
  }
  void releasePool(c10::DeviceIndex device, MempoolId_t mempool_id) override {
    if (own_.Release(mempool_id)) return;
    uint64_t pool = 0;
    // Called from destructors (CUDAGraph, MemPool): an unknown pool is no error.
    if (!FindPool(mempool_id, &pool) || !PoolExists(device, pool)) return;
    Check(ccalloc_torch_pool_release(device, pool), "releasePool");
  }
  void createOrIncrefPool(c10::DeviceIndex device, MempoolId_t mempool_id,
                          std::shared_ptr<cca::CUDAAllocator> allocator) override {
    if (allocator != nullptr && allocator.get() != this) {
      // A MemPool with an allocator of its own: a pool of the plugin whose
      // segments come from that allocator (allocator/torch/source_pools.h).
      own_.CreateOrIncref(device, mempool_id, std::move(allocator));
      return;
    }
    Check(ccalloc_torch_pool_create_or_incref(device, PoolFor(mempool_id)), "createOrIncrefPool");
  }
  // MemPool(use_on_oom=True): other allocations take the pool's free memory
  // when the device is out, as in PyTorch (DeviceAllocator::SetPoolUseOnOom).
  // A pool with an allocator of its own keeps its memory (a clear error in
  // the constructor's call). false is what MemPool's destructor sets, when
  // the pool may be gone already: it must never raise.
  void setUseOnOOM(c10::DeviceIndex device, MempoolId_t mempool_id, bool use_on_oom) override {
    if (own_.Handle(mempool_id) != 0) {
      TORCH_CHECK(!use_on_oom,
                  "ccalloc: MemPool(allocator=..., use_on_oom=True) is not supported: a pool "
                  "with an allocator of its own lends no memory to allocations outside it");
      return;
    }
    if (!use_on_oom) {
      uint64_t pool = 0;
      if (FindPool(mempool_id, &pool)) (void)ccalloc_torch_pool_set_use_on_oom(device, pool, 0);
      return;
    }
    Check(ccalloc_torch_pool_set_use_on_oom(device, PoolFor(mempool_id), 1), "setUseOnOOM");
  }
  int getPoolUseCount(c10::DeviceIndex device, MempoolId_t mempool_id) override {
    if (int uses = own_.UseCount(mempool_id); uses >= 0) return uses;
    uint64_t pool = 0;
    if (!FindPool(mempool_id, &pool)) return 0;
    int count = 0;
    if (ccalloc_torch_pool_use_count(device, pool, &count) != kOk) return 0;
    return count;
  }
  bool checkPoolLiveAllocations(c10::DeviceIndex device, MempoolId_t mempool_id,
                                const std::unordered_set<void*>& expected) override {
    uint64_t pool = 0;
    if (!FindPool(mempool_id, &pool) || !PoolExists(device, pool)) return expected.empty();
    std::vector<PoolCheckpoint::Live> live = LiveBlocks(device, pool);
    if (live.size() != expected.size()) return false;
    for (const auto& block : live) {
      if (expected.count(block.ptr) == 0) return false;
    }
    return true;
  }
  std::shared_ptr<cca::AllocatorState> getCheckpointState(c10::DeviceIndex device,
                                                          MempoolId_t id) override {
    auto state = std::make_shared<PoolCheckpoint>();
    state->device = device;
    state->id = id;
    TORCH_CHECK(FindPool(id, &state->pool), "ccalloc: getCheckpointState: unknown pool");
    state->blocks = LiveBlocks(device, state->pool);
    return state;
  }
  // Makes the pool's live blocks exactly those of the checkpoint, at the same
  // addresses: every block live now is freed (ptrs_freed; PyTorch swaps the
  // deleters of the storages that still point at them), then every
  // checkpointed block is allocated again (dataptrs_allocd). A pointer may be
  // in both.
  cca::CheckpointDelta setCheckpointPoolState(
      c10::DeviceIndex device, std::shared_ptr<cca::AllocatorState> state) override {
    auto* checkpoint = dynamic_cast<PoolCheckpoint*>(state.get());
    TORCH_CHECK(checkpoint != nullptr && checkpoint->device == device,
                "ccalloc: setCheckpointPoolState: not a ccalloc checkpoint of this device");
    cca::CheckpointDelta delta;
    for (const auto& block : LiveBlocks(device, checkpoint->pool)) {
      if (recording_.load()) {
        RecordFree(block.ptr);
      } else if (live_kept_.load(std::memory_order_relaxed)) {
        ForgetLive(block.ptr);
      }
      Check(ccalloc_torch_free_ptr(block.ptr), "setCheckpointPoolState (free)");
      delta.ptrs_freed.push_back(block.ptr);
    }
    for (const auto& block : checkpoint->blocks) {
      Check(ccalloc_torch_allocate_at(device, checkpoint->pool, block.ptr, block.size,
                                      block.requested, block.stream),
            "setCheckpointPoolState (allocate)");
      if (recording_.load()) {
        Record(cda::TraceEntry::ALLOC, device, block.ptr, block.requested,
               static_cast<cudaStream_t>(block.stream), nullptr, true);
      }
      delta.dataptrs_allocd.emplace_back(block.ptr, block.ptr, &Deleter,
                                         c10::Device(c10::DeviceType::CUDA, device));
    }
    return delta;
  }

  // --- IPC and peers --------------------------------------------------------
  cca::ShareableHandle shareIpcHandle(void* ptr) override {
    std::string handle(256, '\0');
    size_t length = 0, offset = 0;
    Check(ccalloc_torch_ipc_export(ptr, handle.data(), handle.size(), &length, &offset),
          "shareIpcHandle");
    if (length > handle.size()) {
      handle.resize(length);
      Check(ccalloc_torch_ipc_export(ptr, handle.data(), handle.size(), &length, &offset),
            "shareIpcHandle");
    }
    handle.resize(length);
    return {static_cast<ptrdiff_t>(offset), std::move(handle)};
  }
  std::shared_ptr<void> getIpcDevPtr(std::string handle) override {
    c10::DeviceIndex device = 0;
    C10_CUDA_CHECK(c10::cuda::GetDevice(&device));
    // CUDA refuses to open one IPC handle twice in a process, and one storage
    // can arrive several times: hand out the open mapping while it lives.
    std::lock_guard<std::mutex> lock(ipc_mu_);
    auto key = std::make_pair(static_cast<int>(device), handle);
    if (auto it = ipc_open_.find(key); it != ipc_open_.end()) {
      if (std::shared_ptr<void> open = it->second.lock()) return open;
    }
    void* base = nullptr;
    Check(ccalloc_torch_ipc_open(device, handle.data(), handle.size(), &base), "getIpcDevPtr");
    std::shared_ptr<void> mapping(base, [device](void* p) {
      if (ccalloc_torch_ipc_close(device, p) != kOk) {
        std::fprintf(stderr, "ccalloc: %s\n", ccalloc_torch_last_error());
      }
    });
    ipc_open_[key] = mapping;
    return mapping;
  }
  void enablePeerAccess(c10::DeviceIndex dev, c10::DeviceIndex dev_to_access) override {
    c10::cuda::CUDAGuard guard(dev);
    cudaError_t err = cudaDeviceEnablePeerAccess(dev_to_access, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
    } else {
      C10_CUDA_CHECK(err);
    }
    // Memory of dev_to_access mapped through the VMM API needs access granted
    // to dev explicitly; classic allocations are covered by the call above.
    Check(ccalloc_torch_add_peer_access(dev_to_access, dev), "enablePeerAccess");
  }
  cudaError_t memcpyAsync(void* dst, int dst_device, const void* src, int src_device,
                          size_t count, cudaStream_t stream, bool p2p_enabled) override {
    if (p2p_enabled || dst_device == src_device) {
      return cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToDevice, stream);
    }
    return cudaMemcpyPeerAsync(dst, dst_device, src, src_device, count, stream);
  }

 private:
  struct LiveInfo {
    std::shared_ptr<c10::GatheredContext> context;
    size_t size;
    c10::DeviceIndex device;
    cudaStream_t stream;
  };

  struct SnapshotVisitor {
    CcallocAllocator* self;
    c10::DeviceIndex device;
    bool filter;
    uint64_t only_pool;
    cca::SnapshotInfo* info;
    std::vector<uint64_t>* addresses;
    bool skipping = false;
    const MempoolId_t* own_id = nullptr;  // a MemPool-allocator pool's segments

    static void OnSegment(void* ctx, const ccalloc_torch_segment* s) {
      auto* v = static_cast<SnapshotVisitor*>(ctx);
      v->skipping = v->filter && s->pool != v->only_pool;
      if (v->skipping) return;
      cda::SegmentInfo seg;
      seg.device = v->device;
      seg.address = s->address;
      seg.total_size = s->total_size;
      seg.requested_size = s->requested_size;
      seg.allocated_size = s->allocated_size;
      seg.active_size = s->active_size;
      seg.stream = s->stream;
      seg.is_large = s->is_large != 0;
      seg.is_expandable = s->is_expandable != 0;
      seg.owner_private_pool_id = v->own_id != nullptr ? *v->own_id : v->self->IdOf(s->pool);
      v->info->segments.push_back(std::move(seg));
    }
    static void OnBlock(void* ctx, const ccalloc_torch_block* b) {
      auto* v = static_cast<SnapshotVisitor*>(ctx);
      if (v->skipping || v->info->segments.empty()) return;
      cda::BlockInfo block;
      block.size = b->size;
      block.requested_size = b->requested_size;
      block.allocated = b->allocated != 0;
      block.active = b->active != 0;
      v->info->segments.back().blocks.push_back(std::move(block));
      v->addresses->push_back(b->address);
    }
  };

  static bool IsDefault(const MempoolId_t& id) { return id.first == 0 && id.second == 0; }

  static void Copy(const ccalloc_torch_stat* in, cda::StatArray& out) {
    for (size_t i = 0; i < out.size(); ++i) Copy(in[i], out[i]);
  }
  static void Copy(const ccalloc_torch_stat& in, cda::Stat& out) {
    out.current = in.current;
    out.peak = in.peak;
    out.allocated = in.allocated;
    out.freed = in.freed;
  }

  static int Filter(void* ctx, void* stream) {
    try {
      auto* f = static_cast<std::function<bool(cudaStream_t)>*>(ctx);
      return (*f)(static_cast<cudaStream_t>(stream)) ? 1 : 0;
    } catch (...) {
      // The plugin calls this through C: nothing may unwind into it.
      return 0;
    }
  }

  // ccalloc's pool number for a PyTorch pool id, created on first sight.
  uint64_t PoolFor(const MempoolId_t& id) {
    if (IsDefault(id)) return 0;
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = pools_.emplace(id, next_pool_);
    if (inserted) {
      ids_[next_pool_] = id;
      ++next_pool_;
    }
    return it->second;
  }
  bool FindPool(const MempoolId_t& id, uint64_t* pool) {
    if (IsDefault(id)) {
      *pool = 0;
      return true;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pools_.find(id);
    if (it == pools_.end()) return false;
    *pool = it->second;
    return true;
  }
  // Called from the snapshot visitor, which runs without mu_.
  MempoolId_t IdOf(uint64_t pool) {
    if (pool == 0) return {0, 0};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ids_.find(pool);
    return it == ids_.end() ? MempoolId_t{0, 0} : it->second;
  }

  static bool PoolExists(int device, uint64_t pool) {
    int count = 0;
    return ccalloc_torch_pool_use_count(device, pool, &count) == kOk;
  }

  std::vector<PoolCheckpoint::Live> LiveBlocks(c10::DeviceIndex device, uint64_t pool) {
    std::vector<PoolCheckpoint::Live> live;
    Check(ccalloc_torch_pool_live_blocks(
              device, pool,
              [](void* ctx, void* ptr, size_t size, size_t requested, void* stream) {
                static_cast<std::vector<PoolCheckpoint::Live>*>(ctx)->push_back(
                    {ptr, size, requested, stream});
              },
              &live),
          "pool live blocks");
    return live;
  }

  std::shared_ptr<c10::GatheredContext> Gather(cda::RecordContext level) {
    cda::CreateContextFn recorder = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!history_on_ || record_context_ < level) return nullptr;
      recorder = context_recorder_;
    }
    // Outside mu_: the recorder takes the GIL.
    return recorder != nullptr ? recorder() : nullptr;
  }

  static const char* ActionName(cda::TraceEntry::Action action) {
    switch (action) {
      case cda::TraceEntry::ALLOC: return "alloc";
      case cda::TraceEntry::FREE_REQUESTED: return "free_requested";
      case cda::TraceEntry::FREE_COMPLETED: return "free_completed";
      case cda::TraceEntry::SEGMENT_ALLOC: return "segment_alloc";
      case cda::TraceEntry::SEGMENT_FREE: return "segment_free";
      case cda::TraceEntry::SEGMENT_MAP: return "segment_map";
      case cda::TraceEntry::SEGMENT_UNMAP: return "segment_unmap";
      case cda::TraceEntry::OOM: return "oom";
      default: return "";
    }
  }

  // PyTorch's compile_context of a trace entry ("N/A" or the innermost
  // compiled region), then ccalloc's tag where there is one (mu_ held).
  std::string CompileString(const std::string& tag) const {
    std::string out = compile_context_.empty() ? "N/A" : compile_context_.back();
    if (!tag.empty()) out += "; ccalloc tag: " + tag;
    return out;
  }

  // A segment as the snapshot shows it (a growable one: each mapped range).
  struct Range {
    c10::DeviceIndex device;
    uint64_t address, size;
    cudaStream_t stream;
    bool expandable;
    bool operator<(const Range& o) const {
      return std::tie(device, address, size) < std::tie(o.device, o.address, o.size);
    }
  };
  std::vector<Range> Ranges() {
    std::vector<Range> out;
    for (int d = 0; d < device_count_.load(); ++d) {
      const auto device = static_cast<c10::DeviceIndex>(d);
      for (const MappedRange& r : RangesOf(device)) {
        out.push_back(Range{device, r.address, r.size, static_cast<cudaStream_t>(r.stream),
                            r.expandable});
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  struct RangeVisitor {  // collects a device's Ranges as MappedRanges
    static void OnSegment(void* ctx, const ccalloc_torch_segment* s) {
      static_cast<std::vector<MappedRange>*>(ctx)->push_back(
          MappedRange{s->address, s->total_size, s->stream, s->is_expandable != 0});
    }
    static void OnBlock(void*, const ccalloc_torch_block*) {}
  };
  std::vector<MappedRange> RangesOf(c10::DeviceIndex device) {
    std::vector<MappedRange> out;
    Check(VisitRanges(device, &out), "memory history (segments)");
    return out;
  }
  static int VisitRanges(int device, std::vector<MappedRange>* out) {
    out->clear();
    return ccalloc_torch_visit_snapshot(device, &RangeVisitor::OnSegment, &RangeVisitor::OnBlock,
                                        out);
  }
  // History on, as PyTorch's: segment_alloc (classic) or segment_map
  // (growable) entries for what a request took, with its context, before its
  // alloc entry (test_memory_plots finds its frames there once
  // trace_plot(filter_freed=True) has dropped the rest); segment_free or
  // segment_unmap, with no stack, for what ccalloc gave back in the background
  // since the request before. Not to trace trackers: they would miss what
  // went while history was off (NCCL's hook registers memory from them).
  void RecordTaken(c10::DeviceIndex device, const std::shared_ptr<c10::GatheredContext>& context,
                   int64_t reserved_before) {
    RecordRanges(device, taken_.After(device, reserved_before), /*taken=*/true, context);
  }
  void RecordRanges(c10::DeviceIndex device, const std::vector<MappedRange>& ranges, bool taken,
                    const std::shared_ptr<c10::GatheredContext>& context) {
    for (const MappedRange& r : ranges) {
      const auto action = taken ? (r.expandable ? cda::TraceEntry::SEGMENT_MAP
                                                : cda::TraceEntry::SEGMENT_ALLOC)
                                : (r.expandable ? cda::TraceEntry::SEGMENT_UNMAP
                                                : cda::TraceEntry::SEGMENT_FREE);
      Record(action, device, reinterpret_cast<void*>(r.address), r.size,
             static_cast<cudaStream_t>(r.stream), context, false, "", false);
    }
  }
  // TakenRanges' reads of the plugin. They never throw: the request has its
  // memory by then.
  static int64_t ReservedOf(int device) {
    ccalloc_torch_stats s{};
    if (ccalloc_torch_get_stats(device, &s) != kOk) return -1;
    return s.reserved_bytes[0].current;
  }
  static bool RangesOfDevice(int device, std::vector<MappedRange>* out) {
    return VisitRanges(device, out) == kOk;
  }
  // Records the ranges of `before` that are gone now, with the stack of the
  // call that gave them back when context="all".
  void RecordGone(const std::vector<Range>& before) {
    const std::vector<Range> after = Ranges();
    std::vector<Range> gone;
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                        std::back_inserter(gone));
    if (gone.empty()) return;
    auto context = Gather(cda::RecordContext::ALL);
    for (const Range& r : gone) {
      Record(r.expandable ? cda::TraceEntry::SEGMENT_UNMAP : cda::TraceEntry::SEGMENT_FREE,
             r.device, reinterpret_cast<void*>(r.address), r.size, r.stream, context, false);
    }
  }

  // Appends a trace entry (history on) and tells the trackers. For ALLOC with
  // `track_live`, remembers the context for snapshots and the free's entry.
  void Record(cda::TraceEntry::Action action, c10::DeviceIndex device, void* ptr, size_t size,
              cudaStream_t stream, std::shared_ptr<c10::GatheredContext> context,
              bool track_live, std::string tag = "", bool tell_trackers = true) {
    std::vector<cda::AllocatorTraceTracker> trackers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (track_live && history_on_) {
        live_[ptr] = LiveInfo{context, size, device, stream};
        live_kept_.store(true, std::memory_order_relaxed);
      }
      cda::TraceEntry entry(action, device, reinterpret_cast<size_t>(ptr), size, stream,
                            MempoolId_t{0, 0}, c10::getApproximateTime(),
                            record_context_ >= cda::RecordContext::ALLOC ? context : nullptr,
                            CompileString(tag), user_metadata_);
      if (history_on_ && skip_.count(ActionName(action)) == 0) {
        if (traces_.size() <= static_cast<size_t>(device)) traces_.resize(device + 1);
        auto& ring = traces_[device];
        if (ring.size() >= max_entries_) ring.pop_front();
        ring.push_back(entry);
      }
      if (trackers_.empty() || !tell_trackers) return;
      trackers = trackers_;
      for (const auto& t : trackers) t(entry);
    }
  }

  // Names of tags, cached: the registry takes a lock, history is on.
  std::string TagName(uint32_t tag) {
    if (tag == 0) return "";
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = tag_names_.find(tag); it != tag_names_.end()) return it->second;
    }
    std::string name(ccalloc_torch_tag_name(tag, nullptr, 0), '\0');
    ccalloc_torch_tag_name(tag, name.data(), name.size() + 1);
    std::lock_guard<std::mutex> lock(mu_);
    tag_names_[tag] = name;
    return name;
  }

  // A block freed while history is off loses its frames, as PyTorch's does:
  // else a block allocated later at its address, with history off or
  // recorded without context, would show them (a test's name where none
  // was recorded: test_memory_plots after the tests before it).
  void ForgetLive(void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    (void)EraseLive(ptr, nullptr);
  }

  // Drops ptr's frames, into *info when given; mu_ held. False when it had
  // none. The last one gone, the free path stops looking (live_kept_).
  bool EraseLive(void* ptr, LiveInfo* info) {
    auto it = live_.find(ptr);
    if (it == live_.end()) return false;
    if (info != nullptr) *info = it->second;
    live_.erase(it);
    if (live_.empty()) live_kept_.store(false, std::memory_order_relaxed);
    return true;
  }

  void RecordFree(void* ptr) {
    auto context = Gather(cda::RecordContext::ALL);
    LiveInfo info{nullptr, 0, 0, nullptr};
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!EraseLive(ptr, &info) && trackers_.empty()) return;  // allocated before history began
    }
    Record(cda::TraceEntry::FREE_REQUESTED, info.device, ptr, info.size, info.stream, context,
           false);
    // ccalloc completes the free at once (a block waiting for other streams
    // is not reusable, but it is free from the program's point of view).
    Record(cda::TraceEntry::FREE_COMPLETED, info.device, ptr, info.size, info.stream, context,
           false);
  }

  // The context each live block was allocated under (history on), by the
  // block addresses the visitor collected in the same order.
  void AttachContexts(const std::vector<uint64_t>& addresses, cca::SnapshotInfo* info) {
    size_t i = 0;
    for (auto& segment : info->segments) {
      for (auto& block : segment.blocks) {
        const uint64_t address = addresses[i++];
        if (!block.allocated) continue;
        auto it = live_.find(reinterpret_cast<void*>(address));
        if (it != live_.end()) block.context_when_allocated = it->second.context;
      }
    }
  }

  void ReportOutOfMemory(c10::DeviceIndex device, cudaStream_t stream) {
    size_t free_bytes = 0, total = 0;
    (void)ccalloc_torch_device_memory(device, &free_bytes, &total);
    ccalloc_torch_stats s{};
    (void)ccalloc_torch_get_stats(device, &s);
    if (recording_.load()) {
      Record(cda::TraceEntry::OOM, device, reinterpret_cast<void*>(free_bytes), 0, stream,
             nullptr, false);
    }
    std::vector<cca::OutOfMemoryObserver> observers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      observers = oom_observers_;
    }
    for (const auto& observer : observers) {
      observer(device, static_cast<size_t>(s.allocated_bytes[0].current), total, free_bytes);
    }
  }

  void ReportToProfiler(void* ptr, size_t size, c10::DeviceIndex device, bool remember) {
    ccalloc_torch_stats s{};
    if (ccalloc_torch_get_stats(device, &s) != kOk) return;
    if (remember) {
      std::lock_guard<std::mutex> lock(mu_);
      profiled_[ptr] = {size, device};
    }
    c10::reportMemoryUsageToProfiler(ptr, static_cast<int64_t>(size),
                                     static_cast<size_t>(s.allocated_bytes[0].current),
                                     static_cast<size_t>(s.reserved_bytes[0].current),
                                     c10::Device(c10::DeviceType::CUDA, device));
  }
  void ReportFreeToProfiler(void* ptr) {
    std::pair<size_t, c10::DeviceIndex> known{0, 0};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = profiled_.find(ptr);
      // Allocated before profiling began: the profiler never saw it either.
      if (it == profiled_.end()) return;
      known = it->second;
      profiled_.erase(it);
    }
    ccalloc_torch_stats s{};
    if (ccalloc_torch_get_stats(known.second, &s) != kOk) return;
    c10::reportMemoryUsageToProfiler(
        ptr, -static_cast<int64_t>(known.first),
        static_cast<size_t>(s.allocated_bytes[0].current - static_cast<int64_t>(known.first)),
        static_cast<size_t>(s.reserved_bytes[0].current),
        c10::Device(c10::DeviceType::CUDA, known.second));
  }

  std::atomic<int> device_count_{0};
  std::atomic<bool> initialized_{false};
  // History on, or a trace tracker attached: the hot path's one check.
  std::atomic<bool> recording_{false};
  // The memory each request takes while history is on (its segment entries).
  TakenRanges taken_{&ReservedOf, &RangesOfDevice};

  std::mutex mu_;
  std::map<MempoolId_t, uint64_t> pools_;
  std::unordered_map<uint64_t, MempoolId_t> ids_;
  uint64_t next_pool_ = 1;
  std::map<std::pair<int, uint64_t>, std::unique_ptr<std::function<bool(cudaStream_t)>>>
      filters_;
  // Written under mu_; atomic because Malloc and recordAnnotation read it
  // without mu_.
  std::atomic<bool> history_on_{false};
  cda::RecordContext record_context_ = cda::RecordContext::NEVER;
  cda::CreateContextFn context_recorder_ = nullptr;
  size_t max_entries_ = 1;
  std::unordered_set<std::string> skip_;
  std::vector<std::deque<cda::TraceEntry>> traces_;
  std::deque<cda::AnnotationEntry> annotations_;
  std::unordered_map<void*, LiveInfo> live_;
  // live_ holds an entry: frees look it up even with history off.
  std::atomic<bool> live_kept_{false};
  std::unordered_map<uint32_t, std::string> tag_names_;
  std::unordered_map<void*, std::pair<size_t, c10::DeviceIndex>> profiled_;
  std::string user_metadata_;
  std::vector<std::string> compile_context_;
  OwnPools own_;  // MemPools with an allocator of their own
  std::vector<cca::OutOfMemoryObserver> oom_observers_;
  std::vector<cda::AllocatorTraceTracker> trackers_;
  c10::ApproximateClockToUnixTimeConverter clock_;

  std::mutex ipc_mu_;
  std::map<std::pair<int, std::string>, std::weak_ptr<void>> ipc_open_;
};

// Deliberately leaked: tensors are freed during PyTorch's own static
// destruction, after any destructor of ours would have run.
CcallocAllocator* const instance = new CcallocAllocator();

void Deleter(void* ptr) { instance->Free(ptr); }

void Install() {
  std::shared_ptr<cca::CUDAAllocator> shared(instance, [](cca::CUDAAllocator*) {});
  torch::cuda::CUDAPluggableAllocator::changeCurrentAllocator(shared);
  // changeCurrentAllocator swaps only the allocator torch.cuda asks; the
  // device-type registry that torch.accelerator (memory_stats,
  // memory_allocated, empty_cache, ...) and c10::GetAllocator(kCUDA) ask
  // would still name PyTorch's own, uninitialised one, and report nothing.
  c10::SetAllocator(c10::DeviceType::CUDA, instance, std::numeric_limits<uint8_t>::max());
}

bool Installed() { return cca::get() == instance; }

}  // namespace
}  // namespace ccalloc_ext

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "ccalloc as PyTorch's CUDA allocator (CUDAAllocator over libccalloc_torch.so)";
  m.def("install", &ccalloc_ext::Install,
        "Makes ccalloc PyTorch's CUDA allocator; CUDA must not be initialised yet.");
  m.def("installed", &ccalloc_ext::Installed, "True when ccalloc is PyTorch's CUDA allocator.");
}
