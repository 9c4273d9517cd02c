// The PyTorch plugin's C ABI (allocator/torch/torch_plugin.cc), driven the way
// PyTorch and the Python package drive it, on a simulated device
// (CCALLOC_TORCH_SIMULATE). Allocators live for the whole process, one per
// device, so each test works on a device of its own.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ccalloc/ccalloc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// The plugin's exports, as PyTorch (ctypes + std::function) sees them.
typedef struct CUstream_st* cudaStream_t;
extern "C" {
void* ccalloc_torch_malloc(size_t size, int device, cudaStream_t stream);
void ccalloc_torch_free(void* ptr, size_t size, int device, cudaStream_t stream);
int ccalloc_torch_try_malloc(size_t size, int device, cudaStream_t stream, void** out);
void ccalloc_torch_empty_cache_hook(void);
void ccalloc_torch_memory_fraction_hook(double fraction, int device);
void ccalloc_torch_record_stream_hook(void* ptr, cudaStream_t stream);
int ccalloc_torch_configure(const char* conf);
int ccalloc_torch_set_allocator_settings(const char* conf);
int ccalloc_torch_set_caching(int enabled);
int ccalloc_torch_caching_enabled(void);
int ccalloc_torch_free_ptr(void* ptr);
size_t ccalloc_torch_options(int device, char* buffer, size_t capacity);
int ccalloc_torch_empty_cache(int device);
int ccalloc_torch_set_memory_limit(int device, size_t bytes);
int ccalloc_torch_memory_limit(int device, size_t* bytes);
int ccalloc_torch_memory_fraction(int device, double* fraction);
int ccalloc_torch_record_stream(void* ptr, cudaStream_t stream);
int ccalloc_torch_reset_peak_stats(int device);
uint32_t ccalloc_torch_tag_intern(const char* name);
uint32_t ccalloc_torch_set_tag(uint32_t tag);
int64_t ccalloc_torch_tag_usage(int device, uint32_t* tags, int64_t* current, int64_t* peak,
                                size_t capacity);
int ccalloc_torch_largest_free_block(int device, size_t* out);
int64_t ccalloc_torch_profile_read(int device, int64_t* out, size_t capacity, uint32_t flags);
size_t ccalloc_torch_stats_json(int device, char* buffer, size_t capacity);
size_t ccalloc_torch_snapshot_json(int device, char* buffer, size_t capacity);
int ccalloc_torch_devices(int* out, int capacity);
const char* ccalloc_torch_last_error(void);
int ccalloc_torch_last_error_code(void);
int ccalloc_torch_pool_create_or_incref(int device, uint64_t pool);
int ccalloc_torch_pool_begin(int device, uint64_t pool, int (*filter)(void* ctx, void* stream),
                             void* ctx);
int ccalloc_torch_pool_end(int device, uint64_t pool);
int ccalloc_torch_pool_release(int device, uint64_t pool);
int ccalloc_torch_pool_set_use_on_oom(int device, uint64_t pool, int use_on_oom);
}

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;
constexpr size_t kCapacity = 2 * kGiB;

cudaStream_t Stream(uintptr_t id) { return reinterpret_cast<cudaStream_t>(id); }

std::string StatsJson(int device) {
  size_t need = ccalloc_torch_stats_json(device, nullptr, 0);
  std::string out(need, '\0');
  ccalloc_torch_stats_json(device, out.data(), out.size());
  out.resize(need - 1);
  return out;
}

// One counter out of the flat JSON object ({"key":value,...}).
int64_t Stat(int device, const std::string& key) {
  std::string json = StatsJson(device);
  std::string needle = absl::StrCat("\"", key, "\":");
  size_t at = json.find(needle);
  EXPECT_NE(at, std::string::npos) << key << " missing from " << json;
  if (at == std::string::npos) return -1;
  at += needle.size();
  size_t end = json.find_first_of(",}", at);
  int64_t value = -1;
  EXPECT_TRUE(absl::SimpleAtoi(json.substr(at, end - at), &value));
  return value;
}

std::string Options(int device) {
  char buffer[1024];
  EXPECT_GT(ccalloc_torch_options(device, buffer, sizeof(buffer)), 0u);
  return buffer;
}

class TorchPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Read when an allocator is created, so setting it before each test is
    // enough even when the tests share a process.
    setenv("CCALLOC_TORCH_SIMULATE", absl::StrCat(kCapacity).c_str(), 1);
  }
};

TEST_F(TorchPluginTest, MallocAndFreeMoveTheCounters) {
  const int dev = 0;
  void* p = ccalloc_torch_malloc(3 * kMiB, dev, Stream(0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), int64_t{3 * kMiB});
  EXPECT_EQ(Stat(dev, "requested_bytes.all.current"), int64_t{3 * kMiB});
  EXPECT_EQ(Stat(dev, "allocation.all.current"), 1);
  ccalloc_torch_free(p, 3 * kMiB, dev, Stream(0));
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), 0);
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.peak"), int64_t{3 * kMiB});
}

TEST_F(TorchPluginTest, SizeZeroIsANullPointerAndNoError) {
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(ccalloc_torch_try_malloc(0, 1, Stream(0), &p), CCALLOC_OK);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ccalloc_torch_malloc(0, 1, Stream(0)), nullptr);
  ccalloc_torch_free(nullptr, 0, 1, Stream(0));  // PyTorch may hand it back
}

TEST_F(TorchPluginTest, OutOfMemoryThrowsTheReportAndTheAllocatorGoesOn) {
  const int dev = 2;
  void* keep = ccalloc_torch_malloc(8 * kMiB, dev, Stream(0));
  ASSERT_NE(keep, nullptr);
  ASSERT_EQ(ccalloc_torch_set_memory_limit(dev, 64 * kMiB), CCALLOC_OK);

  void* p = nullptr;
  EXPECT_EQ(ccalloc_torch_try_malloc(128 * kMiB, dev, Stream(0), &p), CCALLOC_OUT_OF_MEMORY);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ccalloc_torch_last_error_code(), CCALLOC_OUT_OF_MEMORY);
  // PyTorch's own text first (tools and tests match on it), ccalloc's after.
  EXPECT_THAT(ccalloc_torch_last_error(),
              StartsWith("CUDA out of memory. Tried to allocate 128.00 MiB. GPU 2 has a total "
                         "capacity of "));
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("64.00 MiB allowed; Of the allocated memory "
                                                    "8.00 MiB is allocated by PyTorch, and "));
  EXPECT_THAT(ccalloc_torch_last_error(),
              HasSubstr("is reserved by PyTorch but unallocated. If reserved but unallocated "
                        "memory is large try setting "
                        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr(" ccalloc: tried to allocate 128.00 MiB"));

  try {
    ccalloc_torch_malloc(128 * kMiB, dev, Stream(0));
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("ccalloc"));
    EXPECT_THAT(e.what(), HasSubstr("memory limit 64.00 MiB"));
  }
  EXPECT_EQ(Stat(dev, "num_ooms"), 2);
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), int64_t{8 * kMiB});

  // A size past what can be represented is out of memory too, as PyTorch
  // reports a request the driver refuses (its test_out_of_memory asks for
  // 800,000,000 GiB), and counts as one.
  EXPECT_EQ(ccalloc_torch_try_malloc(std::size_t{800000000} << 30, dev, Stream(0), &p),
            CCALLOC_OUT_OF_MEMORY);
  EXPECT_THAT(ccalloc_torch_last_error(),
              StartsWith("CUDA out of memory. Tried to allocate 800000000.00 GiB. GPU 2"));
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("cannot be represented"));
  EXPECT_EQ(Stat(dev, "num_ooms"), 3);
  EXPECT_EQ(ccalloc_torch_try_malloc(std::size_t{8000000000} << 30, dev, Stream(0), &p),
            CCALLOC_OUT_OF_MEMORY);
  EXPECT_STREQ(ccalloc_torch_last_error(),
               "CUDA out of memory. Tried to allocate more than 1EB memory.");
  EXPECT_EQ(Stat(dev, "num_ooms"), 3) << "PyTorch counts none for it either";
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), int64_t{8 * kMiB});

  void* more = ccalloc_torch_malloc(32 * kMiB, dev, Stream(0));
  EXPECT_NE(more, nullptr);
  ccalloc_torch_free(more, 0, dev, Stream(0));
  ccalloc_torch_free(keep, 0, dev, Stream(0));
}

// MemPool(use_on_oom=True) through the functions the extension calls: with
// the device's memory limit reached, a request outside any pool takes the
// pool's free memory (PyTorch's order: create, then set); a pool the device
// does not know is a clear error.
TEST_F(TorchPluginTest, AUseOnOomPoolServesWhatTheLimitWouldRefuse) {
  const int dev = 17;
  ASSERT_EQ(ccalloc_torch_set_memory_limit(dev, 64 * kMiB), CCALLOC_OK);
  ASSERT_EQ(ccalloc_torch_pool_create_or_incref(dev, 5), CCALLOC_OK);
  ASSERT_EQ(ccalloc_torch_pool_begin(dev, 5, +[](void*, void*) { return 1; }, nullptr),
            CCALLOC_OK);
  void* in_pool = ccalloc_torch_malloc(40 * kMiB, dev, Stream(0));
  ASSERT_NE(in_pool, nullptr);
  ASSERT_EQ(ccalloc_torch_pool_end(dev, 5), CCALLOC_OK);
  ASSERT_EQ(ccalloc_torch_pool_release(dev, 5), CCALLOC_OK);  // use_mem_pool's use
  ccalloc_torch_free(in_pool, 0, dev, Stream(0));              // the pool keeps it
  void* p = nullptr;
  EXPECT_EQ(ccalloc_torch_try_malloc(32 * kMiB, dev, Stream(0), &p), CCALLOC_OUT_OF_MEMORY);

  ASSERT_EQ(ccalloc_torch_pool_set_use_on_oom(dev, 5, 1), CCALLOC_OK);
  ASSERT_EQ(ccalloc_torch_try_malloc(32 * kMiB, dev, Stream(0), &p), CCALLOC_OK)
      << ccalloc_torch_last_error();
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(Stat(dev, "reserved_bytes.all.current"), int64_t{40 * kMiB}) << "new memory taken";
  ccalloc_torch_free(p, 0, dev, Stream(0));

  EXPECT_NE(ccalloc_torch_pool_set_use_on_oom(dev, 99, 1), CCALLOC_OK);
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("unknown pool 99"));
  ASSERT_EQ(ccalloc_torch_pool_release(dev, 5), CCALLOC_OK);  // the MemPool's
}

TEST_F(TorchPluginTest, FreeOfAForeignPointerNeverThrowsAndChangesNothing) {
  const int dev = 3;
  void* p = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  const std::string before = StatsJson(dev);
  EXPECT_NO_THROW(ccalloc_torch_free(reinterpret_cast<void*>(0xdead000), kMiB, dev, Stream(0)));
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("ccalloc"));
  EXPECT_NO_THROW(ccalloc_torch_free(p, kMiB, /*device=*/99, Stream(0)));
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("no allocator on device 99"));
  EXPECT_EQ(StatsJson(dev), before);
  ccalloc_torch_free(p, kMiB, dev, Stream(0));
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), 0);
}

TEST_F(TorchPluginTest, EmptyCacheHookReleasesEveryDevice) {
  for (int dev : {4, 5}) {
    void* p = ccalloc_torch_malloc(100 * kMiB, dev, Stream(0));
    ccalloc_torch_free(p, 0, dev, Stream(0));
    EXPECT_GT(Stat(dev, "reserved_bytes.all.current"), 0);
  }
  ccalloc_torch_empty_cache_hook();
  EXPECT_EQ(Stat(4, "reserved_bytes.all.current"), 0);
  EXPECT_EQ(Stat(5, "reserved_bytes.all.current"), 0);
  EXPECT_GE(Stat(4, "num_device_free"), 1);
}

// What the extension's memory history relies on for its segment_alloc and
// segment_map entries (python/ccalloc/csrc/mapped_ranges.h): after
// empty_cache nothing is kept, so a request as small as test_memory_plots'
// 64 KiB one takes new memory, and reserved moving says so; a request served
// from what is mapped leaves reserved where it was. Both segment kinds.
TEST_F(TorchPluginTest, AfterEmptyCacheASmallRequestMovesReserved) {
  const std::pair<const char*, int> configs[] = {{"expandable_segments:True", 40},
                                                 {"expandable_segments:False", 41}};
  for (const auto& [conf, dev] : configs) {
    SCOPED_TRACE(conf);
    ASSERT_EQ(ccalloc_torch_configure(conf), CCALLOC_OK);
    void* first = ccalloc_torch_malloc(64 * 1024, dev, Stream(0));
    ccalloc_torch_free(first, 0, dev, Stream(0));
    ASSERT_EQ(ccalloc_torch_empty_cache(dev), CCALLOC_OK);
    EXPECT_EQ(Stat(dev, "reserved_bytes.all.current"), 0);
    void* again = ccalloc_torch_malloc(64 * 1024, dev, Stream(0));
    ASSERT_NE(again, nullptr);
    const int64_t reserved = Stat(dev, "reserved_bytes.all.current");
    EXPECT_GT(reserved, 0);
    void* beside = ccalloc_torch_malloc(64 * 1024, dev, Stream(0));
    EXPECT_EQ(Stat(dev, "reserved_bytes.all.current"), reserved);
    ccalloc_torch_free(beside, 0, dev, Stream(0));
    ccalloc_torch_free(again, 0, dev, Stream(0));
  }
  ASSERT_EQ(ccalloc_torch_configure(nullptr), CCALLOC_OK);
}

TEST_F(TorchPluginTest, MemoryFractionHookSetsTheLimitAndRejectsBadFractions) {
  const int dev = 6;
  ccalloc_torch_memory_fraction_hook(0.25, dev);
  size_t limit = 0;
  ASSERT_EQ(ccalloc_torch_memory_limit(dev, &limit), CCALLOC_OK);
  EXPECT_EQ(limit, kCapacity / 4);
  double fraction = 0;
  ASSERT_EQ(ccalloc_torch_memory_fraction(dev, &fraction), CCALLOC_OK);
  EXPECT_EQ(fraction, 0.25);
  EXPECT_THROW(ccalloc_torch_memory_fraction_hook(1.5, dev), std::runtime_error);
  EXPECT_THROW(ccalloc_torch_memory_fraction_hook(-0.1, dev), std::runtime_error);
  ASSERT_EQ(ccalloc_torch_memory_limit(dev, &limit), CCALLOC_OK);
  EXPECT_EQ(limit, kCapacity / 4);
  // 0, as PyTorch takes it: nothing may be allocated, and the getter says 0.
  ccalloc_torch_memory_fraction_hook(0.0, dev);
  ASSERT_EQ(ccalloc_torch_memory_fraction(dev, &fraction), CCALLOC_OK);
  EXPECT_EQ(fraction, 0.0);
  void* p = nullptr;
  EXPECT_EQ(ccalloc_torch_try_malloc(4096, dev, Stream(0), &p), CCALLOC_OUT_OF_MEMORY);
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr(" is free. 0 bytes allowed; "));
  // Others read back as PyTorch computes them: the bytes they allow over the
  // total.
  ccalloc_torch_memory_fraction_hook(0.3713, dev);
  ASSERT_EQ(ccalloc_torch_memory_fraction(dev, &fraction), CCALLOC_OK);
  EXPECT_EQ(fraction, std::floor(0.3713 * static_cast<double>(kCapacity)) /
                          static_cast<double>(kCapacity));
  ASSERT_EQ(ccalloc_torch_set_memory_limit(dev, 0), CCALLOC_OK);
  ASSERT_EQ(ccalloc_torch_memory_fraction(dev, &fraction), CCALLOC_OK);
  EXPECT_EQ(fraction, 1.0);
  EXPECT_THROW(ccalloc_torch_memory_fraction_hook(0.5, -1), std::runtime_error);
}

TEST_F(TorchPluginTest, RecordStreamHookIgnoresForeignPointersLikePyTorch) {
  const int dev = 7;
  void* p = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  EXPECT_EQ(ccalloc_torch_record_stream(p, Stream(0x70)), CCALLOC_OK);
  EXPECT_NO_THROW(ccalloc_torch_record_stream_hook(p, Stream(0x71)));
  EXPECT_NO_THROW(ccalloc_torch_record_stream_hook(reinterpret_cast<void*>(0xbad000), Stream(0x70)));
  EXPECT_EQ(ccalloc_torch_record_stream(reinterpret_cast<void*>(0xbad000), Stream(0x70)),
            CCALLOC_INVALID_ARGUMENT);
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("not allocated by ccalloc"));
  ccalloc_torch_free(p, 0, dev, Stream(0));
  // The simulated device completes events at once, so the block comes back.
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), 0);
  void* again = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  EXPECT_EQ(again, p);
  ccalloc_torch_free(again, 0, dev, Stream(0));
}

TEST_F(TorchPluginTest, BadDevicesAreClearErrors) {
  void* p = nullptr;
  for (int dev : {-1, 128, 100000}) {
    EXPECT_EQ(ccalloc_torch_try_malloc(kMiB, dev, Stream(0), &p), CCALLOC_INVALID_ARGUMENT);
    EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("out of range"));
    EXPECT_EQ(ccalloc_torch_stats_json(dev, nullptr, 0), 0u);
  }
  EXPECT_THROW(ccalloc_torch_malloc(kMiB, -1, Stream(0)), std::runtime_error);
}

TEST_F(TorchPluginTest, ReadingStatsDoesNotCreateAnAllocator) {
  const int dev = 90;
  EXPECT_EQ(Stat(dev, "reserved_bytes.all.current"), 0);
  std::vector<int> devices(128);
  int n = ccalloc_torch_devices(devices.data(), static_cast<int>(devices.size()));
  devices.resize(n);
  EXPECT_THAT(devices, Not(::testing::Contains(dev)));
  size_t need = ccalloc_torch_snapshot_json(dev, nullptr, 0);
  std::string snap(need, '\0');
  ccalloc_torch_snapshot_json(dev, snap.data(), snap.size());
  EXPECT_THAT(snap, HasSubstr("\"segments\":[]"));
}

TEST_F(TorchPluginTest, JsonExportsAreSnprintfLike) {
  const int dev = 8;
  void* p = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  size_t need = ccalloc_torch_snapshot_json(dev, nullptr, 0);
  ASSERT_GT(need, 10u);
  char small[8];
  EXPECT_EQ(ccalloc_torch_snapshot_json(dev, small, sizeof(small)), need);
  EXPECT_EQ(std::string(small).size(), sizeof(small) - 1);
  std::string full(need, '\0');
  EXPECT_EQ(ccalloc_torch_snapshot_json(dev, full.data(), full.size()), need);
  EXPECT_THAT(full, HasSubstr(absl::StrCat("\"address\":", reinterpret_cast<uintptr_t>(p))));
  EXPECT_THAT(full, HasSubstr("active_allocated"));
  ccalloc_torch_free(p, 0, dev, Stream(0));
}

TEST_F(TorchPluginTest, SnapshotNamesEachLiveBlocksStream) {
  // What a caller on another library's stream (CuPy, a side stream) checks:
  // the block, not only its segment, says which stream it was allocated for.
  // (Device 9 is ConfigureAppliesToAllocatorsCreatedAfterIt's.)
  const int dev = 15;
  void* a = ccalloc_torch_malloc(kMiB, dev, Stream(7));
  size_t need = ccalloc_torch_snapshot_json(dev, nullptr, 0);
  std::string snap(need, '\0');
  ccalloc_torch_snapshot_json(dev, snap.data(), snap.size());
  EXPECT_THAT(snap, HasSubstr(absl::StrCat("{\"address\":", reinterpret_cast<uintptr_t>(a),
                                           ",\"size\":")));
  EXPECT_THAT(snap, HasSubstr(absl::StrCat("\"state\":\"active_allocated\",\"stream\":",
                                           reinterpret_cast<uintptr_t>(Stream(7)))));
  ccalloc_torch_free(a, kMiB, dev, Stream(7));
}

TEST_F(TorchPluginTest, ConfigureAppliesToAllocatorsCreatedAfterIt) {
  EXPECT_EQ(ccalloc_torch_configure("expandable_segments:maybe"), CCALLOC_INVALID_ARGUMENT);
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("expandable_segments"));
  ASSERT_EQ(ccalloc_torch_configure("expandable_segments:False,max_split_size_mb:100"),
            CCALLOC_OK);
  void* p = ccalloc_torch_malloc(kMiB, 9, Stream(0));
  EXPECT_THAT(Options(9), HasSubstr("expandable_segments:False"));
  EXPECT_THAT(Options(9), HasSubstr("max_split_size_mb:100"));
  ASSERT_EQ(ccalloc_torch_configure(nullptr), CCALLOC_OK);
  EXPECT_THAT(Options(9), HasSubstr("max_split_size_mb:100")) << "existing allocators keep theirs";
  EXPECT_THAT(Options(10), Not(HasSubstr("max_split_size_mb:100")));
  ccalloc_torch_free(p, 0, 9, Stream(0));
}

// torch.cuda.memory._set_allocator_settings(): PyTorch's per-request keys
// change on the allocators that exist and on those made later; keys left out
// go back to PyTorch's defaults; a bad string changes nothing.
TEST_F(TorchPluginTest, AllocatorSettingsApplyAtRunTime) {
  const size_t request = 5 * kMiB + 1;
  auto allocated_for = [&](int dev) {
    void* p = ccalloc_torch_malloc(request, dev, Stream(0));
    EXPECT_NE(p, nullptr);
    const int64_t bytes = Stat(dev, "allocated_bytes.all.current");
    ccalloc_torch_free(p, request, dev, Stream(0));
    return bytes;
  };
  EXPECT_EQ(allocated_for(20), int64_t{5 * kMiB + 512});
  ASSERT_EQ(ccalloc_torch_set_allocator_settings(
                "roundup_power2_divisions:4,max_split_size_mb:40,release_lock_on_cudamalloc:True"),
            CCALLOC_OK)
      << ccalloc_torch_last_error();
  EXPECT_EQ(allocated_for(20), int64_t{6 * kMiB}) << "[4, 8) MiB in quarter steps";
  // The statistic is the configured value (none here), as PyTorch's is:
  // its allocator sets it once, at construction (H200, PyTorch 2.11: -1
  // after max_split_size_mb:40 at run time).
  EXPECT_EQ(Stat(20, "max_split_size"), -1);
  EXPECT_EQ(allocated_for(21), int64_t{6 * kMiB}) << "an allocator made after the call";
  EXPECT_EQ(Stat(21, "max_split_size"), -1) << "an allocator made after the call";
  EXPECT_EQ(ccalloc_torch_set_allocator_settings("max_split_size_mb:abc"),
            CCALLOC_INVALID_ARGUMENT);
  EXPECT_EQ(ccalloc_torch_set_allocator_settings(nullptr), CCALLOC_INVALID_ARGUMENT);
  EXPECT_EQ(allocated_for(20), int64_t{6 * kMiB}) << "a refused string changed nothing";
  // Keys left out are PyTorch's defaults again.
  ASSERT_EQ(ccalloc_torch_set_allocator_settings("garbage_collection_threshold:0.5"), CCALLOC_OK);
  EXPECT_EQ(allocated_for(20), int64_t{5 * kMiB + 512});
  EXPECT_EQ(Stat(20, "max_split_size"), -1);
  // graph_capture_record_stream_reuse applies too, but left out it keeps
  // its value (PyTorch's CUDA allocator config keeps it).
  EXPECT_THAT(Options(20), HasSubstr("graph_capture_record_stream_reuse:False"));
  ASSERT_EQ(ccalloc_torch_set_allocator_settings("graph_capture_record_stream_reuse:True"),
            CCALLOC_OK);
  EXPECT_THAT(Options(20), HasSubstr("graph_capture_record_stream_reuse:True"));
  ASSERT_EQ(ccalloc_torch_set_allocator_settings("max_split_size_mb:40"), CCALLOC_OK);
  EXPECT_THAT(Options(20), HasSubstr("graph_capture_record_stream_reuse:True"));
  EXPECT_THAT(Options(22), HasSubstr("graph_capture_record_stream_reuse:True"))
      << "an allocator made after the call";
  EXPECT_EQ(ccalloc_torch_set_allocator_settings("graph_capture_record_stream_reuse:maybe"),
            CCALLOC_INVALID_ARGUMENT);
  EXPECT_THAT(Options(20), HasSubstr("graph_capture_record_stream_reuse:True"));
  ASSERT_EQ(ccalloc_torch_set_allocator_settings("graph_capture_record_stream_reuse:False"),
            CCALLOC_OK);
  EXPECT_THAT(Options(20), HasSubstr("graph_capture_record_stream_reuse:False"));
  ASSERT_EQ(ccalloc_torch_set_allocator_settings(""), CCALLOC_OK);
}

// torch.cuda.caching_allocator_enable(False): each request is a device
// allocation of its own, outside the cache and its counters, freed at its
// free, also after caching is back on (PyTorch's test_cachingAllocator_raw_alloc).
TEST_F(TorchPluginTest, UncachedModeBypassesTheCacheAndItsCounters) {
  const int dev = 16;
  ASSERT_EQ(ccalloc_torch_caching_enabled(), 1);
  void* cached = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(Stat(dev, "requested_bytes.all.allocated"), int64_t{kMiB});
  ASSERT_EQ(ccalloc_torch_set_caching(0), CCALLOC_OK);
  EXPECT_EQ(ccalloc_torch_caching_enabled(), 0);
  void* a = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  void* b = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(Stat(dev, "requested_bytes.all.allocated"), int64_t{kMiB}) << "not counted";
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), int64_t{kMiB});
  ccalloc_torch_free(a, kMiB, dev, Stream(0));
  // A cached block is freed to the cache even while caching is off.
  ccalloc_torch_free(cached, kMiB, dev, Stream(0));
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), 0);
  ASSERT_EQ(ccalloc_torch_set_caching(1), CCALLOC_OK);
  // Handed out uncached, freed uncached after caching came back.
  EXPECT_EQ(ccalloc_torch_free_ptr(b), CCALLOC_OK) << ccalloc_torch_last_error();
  EXPECT_EQ(ccalloc_torch_free_ptr(b), CCALLOC_INVALID_ARGUMENT) << "a second free";
  void* c = ccalloc_torch_malloc(kMiB, dev, Stream(0));
  EXPECT_EQ(Stat(dev, "requested_bytes.all.allocated"), int64_t{2 * kMiB});
  ccalloc_torch_free(c, kMiB, dev, Stream(0));
}

TEST_F(TorchPluginTest, BadSimulatedCapacityIsReported) {
  setenv("CCALLOC_TORCH_SIMULATE", "lots", 1);
  void* p = nullptr;
  EXPECT_EQ(ccalloc_torch_try_malloc(kMiB, 11, Stream(0), &p), CCALLOC_INVALID_ARGUMENT);
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("CCALLOC_TORCH_SIMULATE='lots'"));
  setenv("CCALLOC_TORCH_SIMULATE", absl::StrCat(kCapacity).c_str(), 1);
  EXPECT_EQ(ccalloc_torch_try_malloc(kMiB, 11, Stream(0), &p), CCALLOC_OK) << "not remembered";
  ccalloc_torch_free(p, 0, 11, Stream(0));
}

TEST_F(TorchPluginTest, ConcurrentFirstUseCreatesOneAllocator) {
  const int dev = 12;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 200;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &errors] {
      std::vector<void*> mine;
      for (int i = 0; i < kPerThread; ++i) {
        void* p = nullptr;
        if (ccalloc_torch_try_malloc(4096 * (1 + i % 7), dev, Stream(t), &p) != CCALLOC_OK) {
          errors[t] = ccalloc_torch_last_error();
          break;
        }
        mine.push_back(p);
        if (i % 3 == 2) {
          ccalloc_torch_free(mine.front(), 0, dev, Stream(t));
          mine.erase(mine.begin());
        }
      }
      for (void* p : mine) ccalloc_torch_free(p, 0, dev, Stream(t));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.current"), 0);
  EXPECT_EQ(Stat(dev, "allocation.all.allocated"), kThreads * kPerThread);
}

TEST_F(TorchPluginTest, LastErrorIsPerThread) {
  void* p = nullptr;
  ASSERT_EQ(ccalloc_torch_try_malloc(kMiB, -5, Stream(0), &p), CCALLOC_INVALID_ARGUMENT);
  std::string other;
  int other_code = -1;
  std::thread([&] {
    other = ccalloc_torch_last_error();
    other_code = ccalloc_torch_last_error_code();
  }).join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(other_code, CCALLOC_OK);
  EXPECT_THAT(ccalloc_torch_last_error(), HasSubstr("-5"));
}

TEST_F(TorchPluginTest, PeakResetFollowsCurrent) {
  const int dev = 13;
  void* a = ccalloc_torch_malloc(16 * kMiB, dev, Stream(0));
  ccalloc_torch_free(a, 0, dev, Stream(0));
  void* b = ccalloc_torch_malloc(2 * kMiB, dev, Stream(0));
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.peak"), int64_t{16 * kMiB});
  ASSERT_EQ(ccalloc_torch_reset_peak_stats(dev), CCALLOC_OK);
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.peak"), int64_t{2 * kMiB});
  ccalloc_torch_free(b, 0, dev, Stream(0));
  EXPECT_EQ(ccalloc_torch_empty_cache(dev), CCALLOC_OK);
  EXPECT_EQ(Stat(dev, "reserved_bytes.all.current"), 0);
}

// The profiler's one read per boundary gives what the separate calls give,
// resets the peaks only when asked and only once everything fitted.
TEST_F(TorchPluginTest, ProfileReadIsTheSeparateReadsInOneCall) {
  const int dev = 14;
  int64_t out[64];
  // No allocator yet: zeros, no tags, and none is created.
  const int devices = ccalloc_torch_devices(nullptr, 0);
  ASSERT_EQ(ccalloc_torch_profile_read(dev, out, 64, 1), 4);
  EXPECT_EQ(out[0] | out[1] | out[2] | out[3], 0);
  EXPECT_EQ(ccalloc_torch_devices(nullptr, 0), devices);

  const uint32_t tag_a = ccalloc_torch_tag_intern("profile-read-a");
  const uint32_t tag_b = ccalloc_torch_tag_intern("profile-read-b");
  const uint32_t outer = ccalloc_torch_set_tag(tag_a);
  void* a = ccalloc_torch_malloc(16 * kMiB, dev, Stream(0));
  ccalloc_torch_set_tag(tag_b);
  void* b = ccalloc_torch_malloc(3 * kMiB, dev, Stream(0));
  void* c = ccalloc_torch_malloc(5 * kMiB, dev, Stream(0));
  ccalloc_torch_set_tag(outer);
  ccalloc_torch_free(c, 0, dev, Stream(0));

  uint32_t tags[8];
  int64_t current[8], peak[8];
  const int64_t ntags = ccalloc_torch_tag_usage(dev, tags, current, peak, 8);
  ASSERT_GE(ntags, 2);
  size_t largest = 0;
  ASSERT_EQ(ccalloc_torch_largest_free_block(dev, &largest), CCALLOC_OK);
  EXPECT_GE(largest, 5 * kMiB);

  // Too little room: the size it needs, nothing written, no reset.
  out[0] = -7;
  EXPECT_EQ(ccalloc_torch_profile_read(dev, out, 5, 1), 4 + 3 * ntags);
  EXPECT_EQ(out[0], -7);
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.peak"), int64_t{24 * kMiB});

  // Without the reset flag: the separate reads' values, peaks kept.
  ASSERT_EQ(ccalloc_torch_profile_read(dev, out, 64, 0), 4 + 3 * ntags);
  EXPECT_EQ(out[0], int64_t{19 * kMiB});
  EXPECT_EQ(out[1], int64_t{24 * kMiB});
  EXPECT_EQ(out[2], Stat(dev, "reserved_bytes.all.current"));
  EXPECT_EQ(out[3], static_cast<int64_t>(largest));
  for (int64_t i = 0; i < ntags; ++i) {
    EXPECT_EQ(out[4 + 3 * i], tags[i]);
    EXPECT_EQ(out[5 + 3 * i], current[i]);
    EXPECT_EQ(out[6 + 3 * i], peak[i]);
    if (tags[i] == tag_b) EXPECT_EQ(peak[i], int64_t{8 * kMiB});
  }
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.peak"), int64_t{24 * kMiB});

  // With it: read as before, then the allocator's and the tags' peaks reset.
  ASSERT_EQ(ccalloc_torch_profile_read(dev, out, 64, 1), 4 + 3 * ntags);
  EXPECT_EQ(out[1], int64_t{24 * kMiB});
  EXPECT_EQ(Stat(dev, "allocated_bytes.all.peak"), int64_t{19 * kMiB});
  ASSERT_EQ(ccalloc_torch_profile_read(dev, out, 64, 0), 4 + 3 * ntags);
  EXPECT_EQ(out[1], int64_t{19 * kMiB});
  for (int64_t i = 0; i < ntags; ++i) EXPECT_EQ(out[6 + 3 * i], out[5 + 3 * i]);

  EXPECT_EQ(ccalloc_torch_profile_read(dev, out, 64, 2), -1);
  EXPECT_EQ(ccalloc_torch_last_error_code(), CCALLOC_INVALID_ARGUMENT);
  EXPECT_EQ(ccalloc_torch_profile_read(-1, out, 64, 0), -1);
  EXPECT_EQ(ccalloc_torch_profile_read(dev, nullptr, 64, 0), -1);
  ccalloc_torch_free(a, 0, dev, Stream(0));
  ccalloc_torch_free(b, 0, dev, Stream(0));
}

}  // namespace
