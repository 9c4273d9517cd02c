/* ccalloc_torch.h — the C functions of libccalloc_torch.so that the PyTorch
 * extension (ccalloc_ext.cpp) calls.
 *
 * The plugin is built once with CMake and knows nothing of PyTorch; the
 * extension is built against the installed PyTorch and knows nothing of
 * ccalloc's C++ types. This header is the whole contract between them, in C,
 * so that neither side depends on the other's compiler, standard library or
 * Abseil. Every int-returning function returns a ccalloc_status (0 is OK; see
 * ccalloc/ccalloc.h) and leaves a message for ccalloc_torch_last_error() on
 * the calling thread. Streams are cudaStream_t passed as void*.
 *
 * Pools follow PyTorch's private memory pools (CUDA graphs, MemPool): 0 is the
 * default pool; the extension maps PyTorch's MempoolId_t pairs onto other
 * numbers.
 */
#ifndef CCALLOC_TORCH_H_
#define CCALLOC_TORCH_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- Allocation (also used by the plain CUDAPluggableAllocator path) ------ */
int ccalloc_torch_try_malloc(size_t size, int device, void* stream, void** out);
/* Frees a pointer of any device's allocator; never throws. Returns the status
 * (INVALID_ARGUMENT for a pointer no allocator handed out). */
int ccalloc_torch_free_ptr(void* ptr);
/* Record-stream; NOT_FOUND-like INVALID_ARGUMENT when no allocator owns ptr. */
int ccalloc_torch_record_stream(void* ptr, void* stream);
int ccalloc_torch_empty_cache(int device); /* device < 0: every device */
int ccalloc_torch_set_memory_fraction(int device, double fraction);
int ccalloc_torch_memory_limit(int device, size_t* bytes);
int ccalloc_torch_memory_fraction(int device, double* fraction);
int ccalloc_torch_device_memory(int device, size_t* free_bytes, size_t* total_bytes);
int ccalloc_torch_reset_peak_stats(int device);
int ccalloc_torch_reset_accumulated_stats(int device);
/* torch.cuda.caching_allocator_enable(): 0 makes every request a device
 * allocation of its own outside the cache (PYTORCH_NO_CUDA_MEMORY_CACHING=1
 * starts so); ccalloc_torch_caching_enabled says which is in force. */
int ccalloc_torch_set_caching(int enabled);
int ccalloc_torch_caching_enabled(void);
const char* ccalloc_torch_last_error(void);
int ccalloc_torch_last_error_code(void);

/* --- Counters, in the layout of c10::CachingDeviceAllocator::DeviceStats --- */
typedef struct ccalloc_torch_stat {
  int64_t current, peak, allocated, freed;
} ccalloc_torch_stat;

/* Arrays are indexed all, small_pool, large_pool. */
typedef struct ccalloc_torch_stats {
  ccalloc_torch_stat allocation[3], segment[3], active[3], inactive_split[3];
  ccalloc_torch_stat allocated_bytes[3], reserved_bytes[3], active_bytes[3];
  ccalloc_torch_stat inactive_split_bytes[3], requested_bytes[3];
  ccalloc_torch_stat oversize_allocations, oversize_segments;
  int64_t num_alloc_retries, num_ooms, num_sync_all_streams;
  int64_t num_device_alloc, num_device_free, max_split_size;
} ccalloc_torch_stats;

/* Zeros for a device that has no allocator yet. */
int ccalloc_torch_get_stats(int device, ccalloc_torch_stats* out);
/* The largest free cached block of the device (cudnn sizes its workspace
 * from it); 0 when there is none. */
int ccalloc_torch_largest_free_block(int device, size_t* out);

/* For each of ptrs[0..n), the allocated block holding it: start, size
 * (rounded) and tag id; zeros where none does. Any output may be NULL. */
int ccalloc_torch_blocks_holding(int device, const uint64_t* ptrs, size_t n, uint64_t* starts,
                                 uint64_t* sizes, uint32_t* tags);
/* The current tag of the calling thread and a tag's name (snprintf-like:
 * returns the name's length). */
uint32_t ccalloc_torch_current_tag(void);
size_t ccalloc_torch_tag_name(uint32_t tag, char* buffer, size_t capacity);
/* Live and peak bytes per tag of `device` without JSON: up to capacity
 * entries (by tag id); returns the number of tags (more than capacity: call
 * again with more room), -1 on error. */
int64_t ccalloc_torch_tag_usage(int device, uint32_t* tags, int64_t* current, int64_t* peak,
                                size_t capacity);

/* --- Snapshot: segments and their blocks, by address ---------------------- */
typedef struct ccalloc_torch_segment {
  uint64_t address, total_size, mapped_size;
  uint64_t allocated_size, active_size, requested_size;
  void* stream;
  uint64_t pool;
  int is_large, is_expandable;
} ccalloc_torch_segment;

typedef struct ccalloc_torch_block {
  uint64_t address, size, requested_size;
  int allocated; /* handed to the user */
  int active;    /* allocated, or freed but waiting for other streams */
} ccalloc_torch_block;

/* Calls on_segment for each segment of `device`, then on_block for each of
 * its blocks, under the allocator's snapshot (a consistent copy). As PyTorch
 * reports expandable segments, a growable segment is one segment per
 * contiguous mapped range, its free blocks cut at the range's ends. */
int ccalloc_torch_visit_snapshot(int device,
                                 void (*on_segment)(void* ctx, const ccalloc_torch_segment*),
                                 void (*on_block)(void* ctx, const ccalloc_torch_block*),
                                 void* ctx);

/* --- Private pools (CUDA graphs, MemPool) -------------------------------- */
int ccalloc_torch_pool_create_or_incref(int device, uint64_t pool);
/* Allocations on streams for which filter(ctx, stream) is nonzero go to
 * `pool` until ccalloc_torch_pool_end. `filter` is called under the
 * allocator's lock and must not allocate from it. */
int ccalloc_torch_pool_begin(int device, uint64_t pool, int (*filter)(void* ctx, void* stream),
                             void* ctx);
int ccalloc_torch_pool_end(int device, uint64_t pool);
int ccalloc_torch_pool_release(int device, uint64_t pool);
int ccalloc_torch_pool_use_count(int device, uint64_t pool, int* out);
/* MemPool(use_on_oom=True): the pool's free memory serves allocations
 * outside any pool that would fail for want of memory (0 turns it off). */
int ccalloc_torch_pool_set_use_on_oom(int device, uint64_t pool, int use_on_oom);
int ccalloc_torch_pool_empty_cache(int device, uint64_t pool);
/* Calls on_block(ctx, ptr, size, requested, stream) for each allocated block
 * of the pool, by address. */
int ccalloc_torch_pool_live_blocks(int device, uint64_t pool,
                                   void (*on_block)(void* ctx, void* ptr, size_t size,
                                                    size_t requested, void* stream),
                                   void* ctx);
/* Allocates exactly [ptr, ptr + size) of the pool (restoring a checkpoint). */
int ccalloc_torch_allocate_at(int device, uint64_t pool, void* ptr, size_t size,
                              size_t requested, void* stream);

/* --- MemPools with an allocator of their own ----------------------------- */
/* MemPool(allocator=CUDAPluggableAllocator(...)): a pool whose segments come
 * from `alloc` (one call per segment, PyTorch's segment sizes; NULL when it
 * has no memory) and go back through `free`, its blocks carved and cached as
 * PyTorch's allocator does (allocator/torch/source_pools.h). Both callbacks
 * run with the pools' lock held and must not call into these functions.
 * *handle names the pool below; ccalloc_torch_free_ptr frees its blocks, and
 * ccalloc_torch_get_stats counts it in its device's figures. */
int ccalloc_torch_source_pool_create(int device,
                                     void* (*alloc)(void* ctx, size_t bytes, void* stream),
                                     void (*free)(void* ctx, void* ptr, size_t bytes,
                                                  void* stream),
                                     void* ctx, uint64_t* handle);
int ccalloc_torch_source_pool_malloc(uint64_t handle, size_t size, void* stream, void** out);
int ccalloc_torch_source_pool_empty_cache(uint64_t handle);
/* The pool's last user is gone: its memory goes back once no block is live. */
int ccalloc_torch_source_pool_release(uint64_t handle);
/* As ccalloc_torch_visit_snapshot, for the pool's segments (pool.snapshot()). */
int ccalloc_torch_source_pool_visit_snapshot(
    uint64_t handle, void (*on_segment)(void* ctx, const ccalloc_torch_segment*),
    void (*on_block)(void* ctx, const ccalloc_torch_block*), void* ctx);

/* --- IPC and peers --------------------------------------------------------- */
/* The allocation ptr lies in (what IPC exports). */
int ccalloc_torch_base_allocation(void* ptr, void** base, size_t* size);
/* Exports the allocation holding ptr. snprintf-like on the handle bytes:
 * writes at most `capacity` bytes and stores the handle's length in *length
 * (call again with a larger buffer when it exceeds capacity); *offset is
 * ptr's offset from the address that opening the handle returns. */
int ccalloc_torch_ipc_export(void* ptr, char* handle, size_t capacity, size_t* length,
                             size_t* offset);
/* Opens a handle exported by another process on `device`; each open is undone
 * by one close. */
int ccalloc_torch_ipc_open(int device, const char* handle, size_t length, void** base);
int ccalloc_torch_ipc_close(int device, void* base);
/* Memory of `device` becomes accessible from `peer` (VMM memory needs it). */
int ccalloc_torch_add_peer_access(int device, int peer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CCALLOC_TORCH_H_ */
