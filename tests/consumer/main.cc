// Uses the installed ccalloc through its C API on the simulated device:
// allocate, read allocated_bytes.all.current, free, read it again. Exits
// non-zero (with the reason) on any mismatch.
#include <ccalloc/ccalloc.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

extern "C" const char* ccalloc_consumer_c_last_error(void);

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "ccalloc_consumer: FAILED: %s (last error: %s)\n", what,
                 ccalloc_consumer_c_last_error());
    ++failures;
  }
}

int64_t Stat(ccalloc_allocator* a, const char* key) {
  int64_t value = -1;
  Check(ccalloc_get_stat(a, key, &value) == CCALLOC_OK, key);
  return value;
}

}  // namespace

int main() {
  ccalloc_allocator* a = nullptr;
  // 1 GiB simulated device; "" = no settings.
  if (ccalloc_create_simulated(size_t{1} << 30, "", &a) != CCALLOC_OK || a == nullptr) {
    std::fprintf(stderr, "ccalloc_consumer: ccalloc_create_simulated failed: %s\n",
                 ccalloc_last_error());
    return 1;
  }

  // Both sizes are multiples of 512, so no rounding shows in the counter.
  constexpr size_t kLarge = size_t{4} << 20;
  constexpr size_t kSmall = 4096;
  void* large = nullptr;
  void* small = nullptr;
  Check(ccalloc_malloc(a, kLarge, nullptr, &large) == CCALLOC_OK && large != nullptr,
        "malloc 4 MiB");
  Check(ccalloc_malloc(a, kSmall, nullptr, &small) == CCALLOC_OK && small != nullptr,
        "malloc 4 KiB");
  int64_t allocated = Stat(a, "allocated_bytes.all.current");
  if (allocated != static_cast<int64_t>(kLarge + kSmall)) {
    std::fprintf(stderr,
                 "ccalloc_consumer: allocated_bytes.all.current = %" PRId64
                 " after two mallocs, want %zu\n",
                 allocated, kLarge + kSmall);
    ++failures;
  }
  Check(Stat(a, "reserved_bytes.all.current") >= allocated, "reserved >= allocated");

  Check(ccalloc_free(a, large) == CCALLOC_OK, "free 4 MiB");
  Check(ccalloc_free(a, small) == CCALLOC_OK, "free 4 KiB");
  allocated = Stat(a, "allocated_bytes.all.current");
  if (allocated != 0) {
    std::fprintf(stderr,
                 "ccalloc_consumer: allocated_bytes.all.current = %" PRId64
                 " after freeing everything, want 0\n",
                 allocated);
    ++failures;
  }
  ccalloc_destroy(a);

  if (failures != 0) return 1;
  std::printf("ccalloc_consumer: OK\n");
  return 0;
}
