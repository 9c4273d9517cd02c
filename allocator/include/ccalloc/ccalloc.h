/* ccalloc.h — C API of the ccalloc caching allocator for GPU memory.
 *
 * One allocator serves one device. Every call returns a ccalloc_status; on
 * failure ccalloc_last_error() gives a message for the calling thread that says
 * what went wrong (for out of memory: what was asked, reserved, allocated, the
 * largest free block and the fragmentation). Streams are passed as void* so
 * that this header needs no CUDA header: pass a cudaStream_t / CUstream, or
 * NULL for the default stream. As with PyTorch's allocator, a stream must stay
 * alive while ccalloc caches memory for it: ccalloc records events on it (at
 * frees, to learn when their work is done) and may wait for it. Destroy a
 * stream only after every block allocated or used on it is freed and
 * ccalloc_empty_cache has returned, or after ccalloc_destroy.
 *
 * Settings come from a configuration string with PyTorch's
 * PYTORCH_CUDA_ALLOC_CONF syntax ("max_split_size_mb:512,expandable_segments:True");
 * NULL means "read the CCALLOC_CONF environment variable".
 */
#ifndef CCALLOC_CCALLOC_H_
#define CCALLOC_CCALLOC_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ccalloc_allocator ccalloc_allocator;

typedef enum ccalloc_status {
  CCALLOC_OK = 0,
  CCALLOC_OUT_OF_MEMORY = 1,    /* the device (or the memory limit) refused */
  CCALLOC_INVALID_ARGUMENT = 2, /* bad size, bad configuration, foreign or
                                   double free, unknown device */
  CCALLOC_INTERNAL = 3,         /* an unexpected driver error */
  CCALLOC_UNAVAILABLE = 4       /* no device / no driver on this machine */
} ccalloc_status;

/* An allocator on CUDA device `device` (the driver API, primary context). */
ccalloc_status ccalloc_create(int device, const char* conf,
                              ccalloc_allocator** out);
/* An allocator on the simulated device: fake addresses, `capacity` bytes. */
ccalloc_status ccalloc_create_simulated(size_t capacity, const char* conf,
                                        ccalloc_allocator** out);
/* Returns every cached segment to the device. Live blocks are released too:
 * their pointers become invalid. */
void ccalloc_destroy(ccalloc_allocator* allocator);

ccalloc_status ccalloc_malloc(ccalloc_allocator* allocator, size_t size,
                              void* stream, void** out);
ccalloc_status ccalloc_free(ccalloc_allocator* allocator, void* ptr);
/* The block at ptr is also used on `stream`: it is not reused after free until
 * the work queued on `stream` so far has finished. */
ccalloc_status ccalloc_record_stream(ccalloc_allocator* allocator, void* ptr,
                                     void* stream);
/* Returns every wholly free cached segment (or unmapped page) to the device. */
ccalloc_status ccalloc_empty_cache(ccalloc_allocator* allocator);
/* A cap on reserved memory in bytes; 0 removes it. */
ccalloc_status ccalloc_set_memory_limit(ccalloc_allocator* allocator,
                                        size_t bytes);
/* A cap on reserved memory as a fraction (0, 1] of the device's total. */
ccalloc_status ccalloc_set_memory_fraction(ccalloc_allocator* allocator,
                                           double fraction);

/* CUDA graphs. A private pool is named by a nonzero id. Allocations on
 * `stream` go to private pool `pool` (created, or shared: +1 use count) until
 * ccalloc_pool_end; while any pool is being allocated to the allocator calls
 * nothing a stream capture refuses. The pool's memory is kept (a graph
 * replays into it) until ccalloc_pool_release drops its last use; then it goes
 * back to the device as its blocks are freed. Errors: CCALLOC_INVALID_ARGUMENT
 * for pool 0, a pool already being allocated to, ending one that is not, or
 * releasing an unknown or already released pool. */
typedef uint64_t ccalloc_pool_id;
ccalloc_status ccalloc_pool_begin(ccalloc_allocator* allocator,
                                  ccalloc_pool_id pool, void* stream);
ccalloc_status ccalloc_pool_end(ccalloc_allocator* allocator,
                                ccalloc_pool_id pool);
ccalloc_status ccalloc_pool_release(ccalloc_allocator* allocator,
                                    ccalloc_pool_id pool);

/* One counter by its torch.cuda.memory_stats() key, e.g.
 * "allocated_bytes.all.current" or "num_alloc_retries". */
ccalloc_status ccalloc_get_stat(ccalloc_allocator* allocator, const char* key,
                                int64_t* value);
ccalloc_status ccalloc_reset_peak_stats(ccalloc_allocator* allocator);
/* JSON documents: every counter as a flat object with torch's keys, and the
 * snapshot of segments and blocks. Like snprintf: writes at most `capacity`
 * bytes including the NUL and returns the length the whole document needs. */
size_t ccalloc_stats_json(ccalloc_allocator* allocator, char* buffer,
                          size_t capacity);
size_t ccalloc_snapshot_json(ccalloc_allocator* allocator, char* buffer,
                             size_t capacity);

/* Tags: what an allocation was made for (a step, a phase, a module). A tag
 * is a nonzero id for a name; 0 is untagged. The calling thread's current tag
 * is copied onto every block it allocates (setting it takes no lock: set it as
 * often as you like), and every allocator counts the bytes of live blocks per
 * tag; a free counts against the block's own tag, whichever thread frees it.
 * ccalloc_tag_intern gives the same id for the same name for the life of the
 * process (NULL or "" give 0; names are cut at 256 bytes). */
typedef uint32_t ccalloc_tag;
ccalloc_tag ccalloc_tag_intern(const char* name);
/* Sets the calling thread's current tag; returns the previous one. */
ccalloc_tag ccalloc_set_tag(ccalloc_tag tag);
ccalloc_tag ccalloc_current_tag(void);
/* Bytes of live blocks of `tag` on `allocator` now and at peak (since
 * creation or ccalloc_reset_peak_stats); 0 and 0 for a tag never counted. */
ccalloc_status ccalloc_tag_usage(ccalloc_allocator* allocator, ccalloc_tag tag,
                                 int64_t* current_bytes, int64_t* peak_bytes);
/* Every counted tag as JSON, like ccalloc_stats_json:
 * [{"tag":1,"name":"forward","current_bytes":...,"peak_bytes":...,"blocks":...}] */
size_t ccalloc_tag_usage_json(ccalloc_allocator* allocator, char* buffer,
                              size_t capacity);

/* Sleep and wake. Allocations made while a region (a nonzero number) is the
 * calling thread's current region live in segments of that region only.
 * ccalloc_pause waits for the device and gives back all the memory the region
 * holds, live blocks' too: every pointer stays valid as an address.
 * ccalloc_pause loses the contents; ccalloc_pause_ex with
 * CCALLOC_PAUSE_BACKUP first copies the live blocks to page-locked host
 * memory (kept for the next pause; ccalloc_empty_cache frees it), and
 * ccalloc_resume copies them back; a failed backup changes nothing.
 * Allocating in a paused region fails with CCALLOC_INVALID_ARGUMENT; freeing
 * its blocks works. ccalloc_resume maps memory again under the live blocks
 * at the same addresses; if the device refuses (or a copy fails), the region
 * stays paused, backup included, and an error is returned. Needs growable
 * segments (the default). `bytes` (may be NULL) receives the device memory
 * given back or taken. */
typedef uint32_t ccalloc_region;
ccalloc_region ccalloc_set_region(ccalloc_region region); /* returns the previous */
ccalloc_status ccalloc_pause(ccalloc_allocator* allocator, ccalloc_region region,
                             size_t* bytes);
#define CCALLOC_PAUSE_BACKUP 1u /* keep the contents in host memory */
/* Unknown flag bits: CCALLOC_INVALID_ARGUMENT, nothing done. */
ccalloc_status ccalloc_pause_ex(ccalloc_allocator* allocator, ccalloc_region region,
                                uint32_t flags, size_t* bytes);
ccalloc_status ccalloc_resume(ccalloc_allocator* allocator, ccalloc_region region,
                              size_t* bytes);
/* Pins the host buffer a backup of `region` needs now (its live bytes), so
 * the first ccalloc_pause_ex with CCALLOC_PAUSE_BACKUP does not pay for
 * pinning (seconds for GiBs): call it once after building the model,
 * outside the timed path. Kept until the allocator is destroyed
 * (ccalloc_empty_cache keeps it). `bytes` (may be NULL): the buffer's size. */
ccalloc_status ccalloc_reserve_backup(ccalloc_allocator* allocator, ccalloc_region region,
                                      size_t* bytes);

/* The message of the last failed call on this thread ("" if none). */
const char* ccalloc_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CCALLOC_CCALLOC_H_ */
