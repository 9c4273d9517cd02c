// own_pools.h — the extension's MemPools with an allocator of their own.
//
// MemPool(allocator=CUDAPluggableAllocator(...)) (vLLM's sleep mode, NCCL's
// symmetric memory) asks that the pool's memory come from that allocator. The
// plugin serves such a pool with a cache of its own whose segments come from
// callbacks into the allocator (allocator/torch/source_pools.h); this unit
// keeps PyTorch's side of it: which MemPool id is which plugin pool, the use
// counts PyTorch reads, the routings begun into these pools, and the
// allocators themselves, kept alive while the plugin may still call them.
// ccalloc_ext.cpp asks it first wherever a pool id arrives and falls through
// to ccalloc's own pools when it answers "not mine".
//
// Locking: mu_ guards the tables and is never held while a routing's filter
// or a pool's allocator runs (either may call back into PyTorch). std::mutex:
// this file is built by PyTorch's toolchain, where Abseil is not available.
#pragma once

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ccalloc_torch.h"

namespace ccalloc_ext {

class OwnPools {
 public:
  using Id = c10::cuda::MempoolId_t;
  using Filter = std::function<bool(cudaStream_t)>;
  struct Pool {
    c10::DeviceIndex device;
    uint64_t handle;  // the plugin's pool
    int uses;
  };

  // Whether a routing into one of these pools is active: the hot path's one
  // check before it asks Malloc.
  bool routing() const { return routing_.load(std::memory_order_acquire); }

  // A new pool for `id` served by `allocator`, or one more use of it.
  void CreateOrIncref(c10::DeviceIndex device, const Id& id,
                      std::shared_ptr<c10::cuda::CUDACachingAllocator::CUDAAllocator> allocator) {
    std::lock_guard<std::mutex> lock(mu_);
    auto own = pools_.find(id);
    if (own != pools_.end()) {
      ++own->second.uses;
      return;
    }
    uint64_t handle = 0;
    TORCH_CHECK(ccalloc_torch_source_pool_create(device, &Alloc, &Free, allocator.get(),
                                                 &handle) == 0,
                "ccalloc: createOrIncrefPool failed: ", ccalloc_torch_last_error());
    keep_alive_.push_back(std::move(allocator));
    pools_[id] = Pool{device, handle, 1};
  }

  // Begins routing `filter`'s streams into `id`; false when `id` is not one
  // of these pools. As PyTorch's, a routing holds a use of the pool, which
  // the releasePool after endAllocateToPool gives back.
  bool Begin(c10::DeviceIndex device, const Id& id, Filter* filter) {
    std::lock_guard<std::mutex> lock(mu_);
    auto own = pools_.find(id);
    if (own == pools_.end()) return false;
    ++own->second.uses;
    routes_.push_back(Route{device, id, std::move(*filter), own->second.handle});
    routing_.store(true, std::memory_order_release);
    return true;
  }

  // Ends the routing into `id`; false when there is none.
  bool End(c10::DeviceIndex device, const Id& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(routes_.begin(), routes_.end(), [&](const Route& r) {
      return r.device == device && r.id == id;
    });
    if (it == routes_.end()) return false;
    routes_.erase(it);
    routing_.store(!routes_.empty(), std::memory_order_release);
    return true;
  }

  // Gives back one use of `id`; false when `id` is not one of these pools.
  // At the last use the plugin's pool is released: it keeps its blocks (and
  // so needs the allocator, in keep_alive_) until the last is freed. The
  // release may call the allocator, so it is made outside mu_. Called from
  // destructors: never throws.
  bool Release(const Id& id) {
    uint64_t gone = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto own = pools_.find(id);
      if (own == pools_.end()) return false;
      if (--own->second.uses <= 0) {
        gone = own->second.handle;
        pools_.erase(own);
      }
    }
    if (gone != 0 && ccalloc_torch_source_pool_release(gone) != 0) {
      std::fprintf(stderr, "ccalloc: %s\n", ccalloc_torch_last_error());
    }
    return true;
  }

  // The use count of `id`, or -1 when `id` is not one of these pools.
  int UseCount(const Id& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto own = pools_.find(id);
    return own == pools_.end() ? -1 : own->second.uses;
  }

  // The plugin's pool of `id`, or 0.
  uint64_t Handle(const Id& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto own = pools_.find(id);
    return own == pools_.end() ? 0 : own->second.handle;
  }

  // The pools a snapshot shows: all, or only `id` when `only` is set.
  std::vector<std::pair<Id, Pool>> List(bool only, const Id& id) {
    std::vector<std::pair<Id, Pool>> out;
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [pool_id, p] : pools_) {
      if (!only || pool_id == id) out.emplace_back(pool_id, p);
    }
    return out;
  }

  // Serves a request from the routing whose filter takes `stream`; false
  // when none does. Throws PyTorch's OutOfMemoryError when the pool's
  // allocator is out, c10::Error on other failures.
  bool Malloc(size_t size, c10::DeviceIndex device, cudaStream_t stream, void** out) {
    std::vector<Route> routes;
    {
      std::lock_guard<std::mutex> lock(mu_);
      routes = routes_;
    }
    for (const Route& r : routes) {
      if (r.device != device || !r.filter(stream)) continue;
      const int rc = ccalloc_torch_source_pool_malloc(r.handle, size, stream, out);
      if (rc != 0) {
        std::string message = ccalloc_torch_last_error();
        if (rc == kOutOfMemory) TORCH_CHECK_WITH(OutOfMemoryError, false, message);
        TORCH_CHECK(false, message);
      }
      return true;
    }
    return false;
  }

 private:
  static constexpr int kOutOfMemory = 1;  // ccalloc_torch.h's code for it

  struct Route {
    c10::DeviceIndex device;
    Id id;
    Filter filter;
    uint64_t handle;
  };

  // The plugin's callbacks into a pool's allocator (ctx: the CUDAAllocator,
  // kept alive by keep_alive_). Nothing may unwind into C.
  static void* Alloc(void* ctx, size_t bytes, void* stream) {
    try {
      return static_cast<c10::cuda::CUDACachingAllocator::CUDAAllocator*>(ctx)
          ->raw_alloc_with_stream(bytes, static_cast<cudaStream_t>(stream));
    } catch (...) {
      return nullptr;
    }
  }
  static void Free(void* ctx, void* ptr, size_t, void*) {
    try {
      static_cast<c10::cuda::CUDACachingAllocator::CUDAAllocator*>(ctx)->raw_delete(ptr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ccalloc: a MemPool's own allocator failed to free %p: %s\n", ptr,
                   e.what());
    } catch (...) {
    }
  }

  std::mutex mu_;
  std::map<Id, Pool> pools_;
  std::vector<Route> routes_;
  std::atomic<bool> routing_{false};
  // Every allocator ever given: the plugin's pool calls it until its last
  // block is freed, which may be after the MemPool and the user's reference
  // are gone (PyTorch's test_tensor_delete_after_allocator_delete).
  std::vector<std::shared_ptr<c10::cuda::CUDACachingAllocator::CUDAAllocator>> keep_alive_;
};

}  // namespace ccalloc_ext
