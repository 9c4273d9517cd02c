// c_api.cc — the C API (ccalloc.h). Status becomes an error code here, and
// the message is kept per thread for ccalloc_last_error().
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/status_code.h"
#include "ccalloc/allocator.h"
#include "ccalloc/ccalloc.h"

struct ccalloc_allocator {
  std::unique_ptr<ccalloc::Allocator> impl;
};

namespace {

thread_local std::string last_error;

ccalloc_status Report(const absl::Status& status) {
  if (status.ok()) return CCALLOC_OK;
  last_error = std::string(status.message());
  return ccalloc::StatusCode(status);
}

ccalloc_status NullAllocator() {
  return Report(absl::InvalidArgumentError("allocator is NULL"));
}

// Runs `create` and hands its allocator out through `out` (NULL on failure).
template <typename Create>
ccalloc_status Wrap(ccalloc_allocator** out, Create create) {
  if (out == nullptr) return Report(absl::InvalidArgumentError("out is NULL"));
  *out = nullptr;
  absl::StatusOr<std::unique_ptr<ccalloc::Allocator>> impl = create();
  if (!impl.ok()) return Report(impl.status());
  *out = new ccalloc_allocator{std::move(*impl)};
  return CCALLOC_OK;
}

size_t CopyOut(const std::string& text, char* buffer, size_t capacity) {
  if (buffer != nullptr && capacity > 0) {
    size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return text.size() + 1;
}

}  // namespace

extern "C" {

ccalloc_status ccalloc_create(int device, const char* conf, ccalloc_allocator** out) {
  return Wrap(out, [&] {
    return ccalloc::Allocator::Create(device, conf == nullptr ? "" : conf,
                                      /*from_env=*/conf == nullptr);
  });
}

ccalloc_status ccalloc_create_simulated(size_t capacity, const char* conf,
                                        ccalloc_allocator** out) {
  return Wrap(out, [&] {
    return ccalloc::Allocator::CreateSimulated(capacity, conf == nullptr ? "" : conf,
                                               /*from_env=*/conf == nullptr);
  });
}

void ccalloc_destroy(ccalloc_allocator* allocator) { delete allocator; }

ccalloc_status ccalloc_malloc(ccalloc_allocator* allocator, size_t size, void* stream,
                              void** out) {
  if (allocator == nullptr) return NullAllocator();
  if (out == nullptr) return Report(absl::InvalidArgumentError("out is NULL"));
  *out = nullptr;
  absl::StatusOr<void*> ptr = allocator->impl->Allocate(size, stream);
  if (!ptr.ok()) return Report(ptr.status());
  *out = *ptr;
  return CCALLOC_OK;
}

ccalloc_status ccalloc_free(ccalloc_allocator* allocator, void* ptr) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->Free(ptr));
}

ccalloc_status ccalloc_record_stream(ccalloc_allocator* allocator, void* ptr, void* stream) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->RecordStream(ptr, stream));
}

ccalloc_status ccalloc_empty_cache(ccalloc_allocator* allocator) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->EmptyCache());
}

ccalloc_status ccalloc_set_memory_limit(ccalloc_allocator* allocator, size_t bytes) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->SetMemoryLimit(bytes));
}

ccalloc_status ccalloc_set_memory_fraction(ccalloc_allocator* allocator, double fraction) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->SetMemoryFraction(fraction));
}

ccalloc_status ccalloc_pool_begin(ccalloc_allocator* allocator, ccalloc_pool_id pool,
                                  void* stream) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->BeginAllocateToPool(pool, stream));
}

ccalloc_status ccalloc_pool_end(ccalloc_allocator* allocator, ccalloc_pool_id pool) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->EndAllocateToPool(pool));
}

ccalloc_status ccalloc_pool_release(ccalloc_allocator* allocator, ccalloc_pool_id pool) {
  if (allocator == nullptr) return NullAllocator();
  return Report(allocator->impl->ReleasePool(pool));
}

ccalloc_status ccalloc_get_stat(ccalloc_allocator* allocator, const char* key,
                                int64_t* value) {
  if (allocator == nullptr) return NullAllocator();
  if (key == nullptr || value == nullptr) {
    return Report(absl::InvalidArgumentError("key or value is NULL"));
  }
  absl::StatusOr<std::int64_t> v = allocator->impl->Stat(key);
  if (!v.ok()) return Report(v.status());
  *value = *v;
  return CCALLOC_OK;
}

ccalloc_status ccalloc_reset_peak_stats(ccalloc_allocator* allocator) {
  if (allocator == nullptr) return NullAllocator();
  allocator->impl->ResetPeakStats();
  return CCALLOC_OK;
}

size_t ccalloc_stats_json(ccalloc_allocator* allocator, char* buffer, size_t capacity) {
  if (allocator == nullptr) return 0;
  return CopyOut(allocator->impl->StatsJson(), buffer, capacity);
}

size_t ccalloc_snapshot_json(ccalloc_allocator* allocator, char* buffer, size_t capacity) {
  if (allocator == nullptr) return 0;
  return CopyOut(allocator->impl->SnapshotJson(), buffer, capacity);
}

ccalloc_tag ccalloc_tag_intern(const char* name) {
  return name == nullptr ? 0 : ccalloc::Allocator::InternTag(name);
}

ccalloc_tag ccalloc_set_tag(ccalloc_tag tag) { return ccalloc::Allocator::SetCurrentTag(tag); }

ccalloc_tag ccalloc_current_tag(void) { return ccalloc::Allocator::CurrentTag(); }

ccalloc_status ccalloc_tag_usage(ccalloc_allocator* allocator, ccalloc_tag tag,
                                 int64_t* current_bytes, int64_t* peak_bytes) {
  if (allocator == nullptr) return NullAllocator();
  if (current_bytes == nullptr || peak_bytes == nullptr) {
    return Report(absl::InvalidArgumentError("current_bytes or peak_bytes is NULL"));
  }
  *current_bytes = *peak_bytes = 0;
  for (const ccalloc::Allocator::TagStat& t : allocator->impl->TagStats()) {
    if (t.tag != tag) continue;
    *current_bytes = t.current_bytes;
    *peak_bytes = t.peak_bytes;
  }
  return CCALLOC_OK;
}

size_t ccalloc_tag_usage_json(ccalloc_allocator* allocator, char* buffer, size_t capacity) {
  if (allocator == nullptr) return 0;
  return CopyOut(allocator->impl->TagStatsJson(), buffer, capacity);
}

ccalloc_region ccalloc_set_region(ccalloc_region region) {
  return ccalloc::Allocator::SetCurrentRegion(region);
}

namespace {
ccalloc_status Bytes(absl::StatusOr<std::size_t> n, size_t* bytes) {
  if (!n.ok()) return Report(n.status());
  if (bytes != nullptr) *bytes = *n;
  return CCALLOC_OK;
}

ccalloc_status PauseOrResume(ccalloc_allocator* allocator, ccalloc_region region, size_t* bytes,
                             bool pause, bool backup) {
  if (bytes != nullptr) *bytes = 0;
  if (allocator == nullptr) return NullAllocator();
  absl::StatusOr<std::size_t> n =
      pause ? allocator->impl->Pause(region, ccalloc::Allocator::PauseOptions{backup})
            : allocator->impl->Resume(region);
  return Bytes(n, bytes);
}
}  // namespace

ccalloc_status ccalloc_pause(ccalloc_allocator* allocator, ccalloc_region region,
                             size_t* bytes) {
  return PauseOrResume(allocator, region, bytes, /*pause=*/true, /*backup=*/false);
}

ccalloc_status ccalloc_pause_ex(ccalloc_allocator* allocator, ccalloc_region region,
                                uint32_t flags, size_t* bytes) {
  if ((flags & ~CCALLOC_PAUSE_BACKUP) != 0) {
    if (bytes != nullptr) *bytes = 0;
    return Report(absl::InvalidArgumentError(
        absl::StrCat("ccalloc_pause_ex: unknown flags 0x", absl::Hex(flags & ~CCALLOC_PAUSE_BACKUP),
                     " (CCALLOC_PAUSE_BACKUP is 1)")));
  }
  return PauseOrResume(allocator, region, bytes, /*pause=*/true,
                       /*backup=*/(flags & CCALLOC_PAUSE_BACKUP) != 0);
}

ccalloc_status ccalloc_resume(ccalloc_allocator* allocator, ccalloc_region region,
                              size_t* bytes) {
  return PauseOrResume(allocator, region, bytes, /*pause=*/false, /*backup=*/false);
}

ccalloc_status ccalloc_reserve_backup(ccalloc_allocator* allocator, ccalloc_region region,
                                      size_t* bytes) {
  if (bytes != nullptr) *bytes = 0;
  if (allocator == nullptr) return NullAllocator();
  return Bytes(allocator->impl->ReserveBackup(region), bytes);
}

const char* ccalloc_last_error(void) { return last_error.c_str(); }

}  // extern "C"
