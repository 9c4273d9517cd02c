/* c_api_test.c — the C API as a C program sees it.
 *
 * Written in C, not C++, so that ccalloc.h is proven usable from C and the
 * library links into a C program. Uses the simulated device, so it runs on
 * every machine. Prints one line per failed check and "N passed, N failed";
 * exits non-zero on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ccalloc/ccalloc.h"

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (cond) {                                                                                \
      ++passed;                                                                                \
    } else {                                                                                   \
      ++failed;                                                                                \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              ccalloc_last_error());                                                           \
    }                                                                                          \
  } while (0)

#define MiB ((size_t)1 << 20)

static int64_t stat_of(ccalloc_allocator* a, const char* key) {
  int64_t value = -1;
  ccalloc_status s = ccalloc_get_stat(a, key, &value);
  CHECK(s == CCALLOC_OK);
  return value;
}

static void test_lifecycle(void) {
  ccalloc_allocator* a = NULL;
  void* stream1 = (void*)(uintptr_t)1;
  void* p = NULL;
  void* q = NULL;
  char small_buffer[8];
  size_t needed;

  CHECK(ccalloc_create_simulated((size_t)1 << 30, "", &a) == CCALLOC_OK);
  CHECK(a != NULL);
  if (a == NULL) return;

  CHECK(ccalloc_malloc(a, 1000, NULL, &p) == CCALLOC_OK);
  CHECK(p != NULL);
  CHECK(ccalloc_malloc(a, 3 * MiB, NULL, &q) == CCALLOC_OK);
  CHECK(q != NULL && q != p);
  /* 1000 bytes round to 1024; 3 MiB is already a multiple of 512. */
  CHECK(stat_of(a, "allocated_bytes.all.current") == (int64_t)(1024 + 3 * MiB));
  CHECK(stat_of(a, "requested_bytes.all.current") == (int64_t)(1000 + 3 * MiB));
  CHECK(stat_of(a, "allocation.all.current") == 2);
  CHECK(stat_of(a, "allocation.small_pool.current") == 1);
  CHECK(stat_of(a, "allocation.large_pool.current") == 1);

  CHECK(ccalloc_record_stream(a, q, stream1) == CCALLOC_OK);
  CHECK(ccalloc_free(a, q) == CCALLOC_OK);
  CHECK(ccalloc_free(a, p) == CCALLOC_OK);
  CHECK(stat_of(a, "allocated_bytes.all.current") == 0);
  CHECK(stat_of(a, "reserved_bytes.all.current") > 0);

  CHECK(ccalloc_empty_cache(a) == CCALLOC_OK);
  CHECK(stat_of(a, "reserved_bytes.all.current") == 0);
  CHECK(stat_of(a, "num_device_alloc") == stat_of(a, "num_device_free"));

  /* Freeing NULL is a no-op; malloc(0) gives NULL. */
  CHECK(ccalloc_free(a, NULL) == CCALLOC_OK);
  p = (void*)1;
  CHECK(ccalloc_malloc(a, 0, NULL, &p) == CCALLOC_OK);
  CHECK(p == NULL);

  /* An unknown statistic is a bad argument, not a zero. */
  {
    int64_t value = 0;
    CHECK(ccalloc_get_stat(a, "no_such_stat", &value) == CCALLOC_INVALID_ARGUMENT);
    CHECK(strstr(ccalloc_last_error(), "no_such_stat") != NULL);
  }

  /* JSON exports follow snprintf's contract. */
  needed = ccalloc_stats_json(a, small_buffer, sizeof small_buffer);
  CHECK(needed > sizeof small_buffer);
  CHECK(strlen(small_buffer) == sizeof small_buffer - 1);
  CHECK(ccalloc_snapshot_json(a, NULL, 0) > 1);

  ccalloc_destroy(a);
}

static void test_double_free(void) {
  ccalloc_allocator* a = NULL;
  void* p = NULL;
  int64_t before;
  CHECK(ccalloc_create_simulated((size_t)1 << 30, NULL, &a) == CCALLOC_OK);
  if (a == NULL) return;
  CHECK(ccalloc_malloc(a, 4 * MiB, NULL, &p) == CCALLOC_OK);
  CHECK(ccalloc_free(a, p) == CCALLOC_OK);
  before = stat_of(a, "reserved_bytes.all.current");
  CHECK(ccalloc_free(a, p) == CCALLOC_INVALID_ARGUMENT);
  CHECK(ccalloc_last_error()[0] != '\0');
  CHECK(strstr(ccalloc_last_error(), "double free") != NULL);
  CHECK(stat_of(a, "reserved_bytes.all.current") == before);
  CHECK(stat_of(a, "allocation.all.current") == 0);
  /* A pointer it never handed out. */
  CHECK(ccalloc_free(a, (void*)(uintptr_t)0x1000) == CCALLOC_INVALID_ARGUMENT);
  CHECK(ccalloc_last_error()[0] != '\0');
  ccalloc_destroy(a);
}

static void test_out_of_memory(void) {
  ccalloc_allocator* a = NULL;
  void* p = NULL;
  void* q = (void*)1;
  CHECK(ccalloc_create_simulated(32 * MiB, "", &a) == CCALLOC_OK);
  if (a == NULL) return;
  CHECK(ccalloc_malloc(a, 24 * MiB, NULL, &p) == CCALLOC_OK);
  CHECK(ccalloc_malloc(a, 24 * MiB, NULL, &q) == CCALLOC_OUT_OF_MEMORY);
  CHECK(q == NULL);
  CHECK(strstr(ccalloc_last_error(), "out of memory") != NULL);
  CHECK(stat_of(a, "num_ooms") == 1);
  /* The live block is untouched and still frees. */
  CHECK(stat_of(a, "allocation.all.current") == 1);
  CHECK(ccalloc_free(a, p) == CCALLOC_OK);
  /* A limit below the device's size refuses growth as well. */
  CHECK(ccalloc_set_memory_limit(a, 8 * MiB) == CCALLOC_OK);
  CHECK(ccalloc_empty_cache(a) == CCALLOC_OK);
  CHECK(ccalloc_malloc(a, 12 * MiB, NULL, &q) == CCALLOC_OUT_OF_MEMORY);
  CHECK(strstr(ccalloc_last_error(), "memory limit") != NULL);
  CHECK(ccalloc_set_memory_fraction(a, 1.5) == CCALLOC_INVALID_ARGUMENT);
  ccalloc_destroy(a);
}

static void test_bad_configuration(void) {
  ccalloc_allocator* a = (ccalloc_allocator*)1;
  CHECK(ccalloc_create_simulated(MiB, "no_such_key:1", &a) == CCALLOC_INVALID_ARGUMENT);
  CHECK(a == NULL);
  CHECK(strstr(ccalloc_last_error(), "no_such_key") != NULL);
  CHECK(ccalloc_create_simulated(MiB, "max_split_size_mb:abc", &a) == CCALLOC_INVALID_ARGUMENT);
  CHECK(strstr(ccalloc_last_error(), "max_split_size_mb") != NULL);
  {
    void* p = (void*)1;
    CHECK(ccalloc_malloc(NULL, 1, NULL, &p) == CCALLOC_INVALID_ARGUMENT);
    CHECK(p == (void*)1 || p == NULL);
  }
  /* A good configuration string in PyTorch's syntax. */
  a = NULL;
  CHECK(ccalloc_create_simulated((size_t)1 << 30, "max_split_size_mb:64,expandable_segments:True",
                                 &a) == CCALLOC_OK);
  ccalloc_destroy(a);
}

/* CUDA graph pools: allocations on the routed stream go to the pool, its
 * memory stays until the last release, then goes back as blocks are freed. */
static void test_pools(void) {
  ccalloc_allocator* a = NULL;
  void* stream = (void*)(uintptr_t)7;
  void* pooled = NULL;
  void* eager = NULL;
  /* Classic segments: the pool's 3 MiB block lives in one 20 MiB segment. */
  CHECK(ccalloc_create_simulated((size_t)1 << 30, "expandable_segments:False", &a) == CCALLOC_OK);
  if (a == NULL) return;
  CHECK(ccalloc_pool_begin(a, 42, stream) == CCALLOC_OK);
  CHECK(ccalloc_pool_begin(a, 42, stream) == CCALLOC_INVALID_ARGUMENT);
  CHECK(strstr(ccalloc_last_error(), "already being allocated to") != NULL);
  CHECK(ccalloc_malloc(a, 3 * MiB, stream, &pooled) == CCALLOC_OK);
  CHECK(ccalloc_pool_end(a, 42) == CCALLOC_OK);
  CHECK(ccalloc_pool_end(a, 42) == CCALLOC_INVALID_ARGUMENT);
  CHECK(ccalloc_free(a, pooled) == CCALLOC_OK);
  /* The pool keeps its freed block: eager code on the same stream gets other
   * memory, and empty_cache leaves the pool alone. */
  CHECK(ccalloc_malloc(a, 3 * MiB, stream, &eager) == CCALLOC_OK);
  CHECK(eager != NULL && eager != pooled);
  CHECK(ccalloc_free(a, eager) == CCALLOC_OK);
  CHECK(ccalloc_empty_cache(a) == CCALLOC_OK);
  CHECK(stat_of(a, "reserved_bytes.all.current") == (int64_t)(20 * MiB));
  CHECK(ccalloc_pool_release(a, 42) == CCALLOC_OK);
  CHECK(stat_of(a, "reserved_bytes.all.current") == 0);
  CHECK(ccalloc_pool_release(a, 42) == CCALLOC_INVALID_ARGUMENT);
  CHECK(strstr(ccalloc_last_error(), "unknown pool 42") != NULL);
  CHECK(ccalloc_pool_begin(a, 0, stream) == CCALLOC_INVALID_ARGUMENT);
  CHECK(ccalloc_pool_begin(NULL, 1, stream) == CCALLOC_INVALID_ARGUMENT);
  ccalloc_destroy(a);
}

/* Tags: the calling thread's current tag is counted per block, and the
 * counts follow frees; names intern to the same id. */
static void test_tags(void) {
  ccalloc_allocator* a = NULL;
  CHECK(ccalloc_create_simulated((size_t)1 << 30, "", &a) == CCALLOC_OK);
  const ccalloc_tag fwd = ccalloc_tag_intern("c/forward");
  const ccalloc_tag bwd = ccalloc_tag_intern("c/backward");
  CHECK(fwd != 0 && bwd != 0 && fwd != bwd);
  CHECK(ccalloc_tag_intern("c/forward") == fwd);
  CHECK(ccalloc_tag_intern(NULL) == 0 && ccalloc_tag_intern("") == 0);
  const ccalloc_tag before = ccalloc_set_tag(fwd);
  CHECK(ccalloc_current_tag() == fwd);
  void* p = NULL;
  void* q = NULL;
  CHECK(ccalloc_malloc(a, 3 * MiB, NULL, &p) == CCALLOC_OK);
  CHECK(ccalloc_set_tag(bwd) == fwd);
  CHECK(ccalloc_malloc(a, 1000, NULL, &q) == CCALLOC_OK);
  int64_t current = -1;
  int64_t peak = -1;
  CHECK(ccalloc_tag_usage(a, fwd, &current, &peak) == CCALLOC_OK);
  CHECK(current == (int64_t)(3 * MiB) && peak == (int64_t)(3 * MiB));
  CHECK(ccalloc_tag_usage(a, bwd, &current, &peak) == CCALLOC_OK);
  CHECK(current == 1024);
  CHECK(ccalloc_free(a, p) == CCALLOC_OK);
  CHECK(ccalloc_tag_usage(a, fwd, &current, &peak) == CCALLOC_OK);
  CHECK(current == 0 && peak == (int64_t)(3 * MiB));
  char json[512];
  CHECK(ccalloc_tag_usage_json(a, json, sizeof json) < sizeof json);
  CHECK(strstr(json, "\"name\":\"c/backward\",\"current_bytes\":1024") != NULL);
  CHECK(ccalloc_tag_usage(NULL, fwd, &current, &peak) == CCALLOC_INVALID_ARGUMENT);
  CHECK(ccalloc_tag_usage(a, fwd, NULL, &peak) == CCALLOC_INVALID_ARGUMENT);
  CHECK(ccalloc_free(a, q) == CCALLOC_OK);
  ccalloc_set_tag(before);
  ccalloc_destroy(a);
}

/* Sleep and wake: a region's memory goes back to the device and comes back
 * at the same addresses; allocating in a paused region is refused. */
static void test_regions(void) {
  ccalloc_allocator* a = NULL;
  CHECK(ccalloc_create_simulated((size_t)1 << 30, "", &a) == CCALLOC_OK);
  const ccalloc_region before = ccalloc_set_region(5);
  void* w = NULL;
  CHECK(ccalloc_malloc(a, 8 * MiB, NULL, &w) == CCALLOC_OK);
  ccalloc_set_region(before);
  const int64_t reserved = stat_of(a, "reserved_bytes.all.current");
  size_t bytes = 0;
  CHECK(ccalloc_pause(a, 5, &bytes) == CCALLOC_OK);
  CHECK(bytes >= 8 * MiB);
  CHECK(stat_of(a, "reserved_bytes.all.current") == reserved - (int64_t)bytes);
  CHECK(stat_of(a, "ccalloc.paused_bytes") == (int64_t)bytes);
  ccalloc_set_region(5);
  void* refused = NULL;
  CHECK(ccalloc_malloc(a, MiB, NULL, &refused) == CCALLOC_INVALID_ARGUMENT);
  CHECK(strstr(ccalloc_last_error(), "paused") != NULL);
  ccalloc_set_region(before);
  CHECK(ccalloc_pause(a, 5, NULL) == CCALLOC_INVALID_ARGUMENT); /* twice */
  CHECK(ccalloc_resume(a, 5, &bytes) == CCALLOC_OK);
  CHECK(bytes >= 8 * MiB);
  CHECK(stat_of(a, "ccalloc.paused_bytes") == 0);
  CHECK(ccalloc_resume(a, 5, NULL) == CCALLOC_INVALID_ARGUMENT); /* not paused */
  CHECK(ccalloc_pause(a, 77, NULL) == CCALLOC_INVALID_ARGUMENT); /* never used */
  CHECK(ccalloc_pause(NULL, 5, NULL) == CCALLOC_INVALID_ARGUMENT);
  /* With a backup: the live bytes wait in host memory; a bad flag does nothing. */
  CHECK(ccalloc_pause_ex(a, 5, 0x80, &bytes) == CCALLOC_INVALID_ARGUMENT);
  CHECK(bytes == 0);
  CHECK(strstr(ccalloc_last_error(), "flags") != NULL);
  CHECK(stat_of(a, "ccalloc.paused_bytes") == 0);
  CHECK(ccalloc_pause_ex(a, 5, CCALLOC_PAUSE_BACKUP, &bytes) == CCALLOC_OK);
  CHECK(bytes >= 8 * MiB);
  CHECK(stat_of(a, "ccalloc.backup_bytes") == (int64_t)(8 * MiB));
  CHECK(stat_of(a, "ccalloc.backup_host_bytes") >= (int64_t)(8 * MiB));
  CHECK(ccalloc_resume(a, 5, &bytes) == CCALLOC_OK);
  CHECK(stat_of(a, "ccalloc.backup_bytes") == 0);
  CHECK(ccalloc_empty_cache(a) == CCALLOC_OK);
  CHECK(stat_of(a, "ccalloc.backup_host_bytes") == 0);
  /* Pinned ahead: kept by empty_cache. */
  CHECK(ccalloc_reserve_backup(a, 5, &bytes) == CCALLOC_OK);
  CHECK(bytes >= 8 * MiB);
  CHECK(ccalloc_empty_cache(a) == CCALLOC_OK);
  CHECK(stat_of(a, "ccalloc.backup_host_bytes") == (int64_t)bytes);
  CHECK(ccalloc_reserve_backup(a, 77, NULL) == CCALLOC_INVALID_ARGUMENT); /* never used */
  CHECK(ccalloc_free(a, w) == CCALLOC_OK);
  ccalloc_destroy(a);
}

int main(void) {
  test_lifecycle();
  test_regions();
  test_tags();
  test_double_free();
  test_out_of_memory();
  test_bad_configuration();
  test_pools();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
