// bad_input_test.cc — every row of docs/bad_input.md, through both APIs.
//
// For each bad input: the error code (absl::StatusCode in C++,
// ccalloc_status in C), a message that names what was wrong (the pointer,
// the size, the key), and proof that nothing changed: every counter and the
// whole snapshot (segments and blocks), plus Validate() where the engine is
// reachable (the C++ rows, which run on both segment kinds; the C rows compare
// ccalloc_stats_json and ccalloc_snapshot_json before and after).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "allocator/backends/cuda_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/size_policy.h"
#include "ccalloc/allocator.h"
#include "ccalloc/ccalloc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "tests/reliability/reliability_support.h"

namespace ccalloc::reliability {
namespace {

using ::testing::HasSubstr;

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

// Everything a refused call must leave as it was, in comparable form.
std::string State(const DeviceAllocator& alloc) {
  std::string out;
  for (const auto& [key, value] : Flatten(alloc.GetStats())) {
    absl::StrAppend(&out, key, "=", value, "\n");
  }
  absl::StrAppend(&out, SnapshotToJson(alloc.TakeSnapshot()));
  return out;
}

// ---------------------------------------------------------------------------
// C++ API: DeviceAllocator on the simulated device, both segment kinds
// ---------------------------------------------------------------------------

class BadInputTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    SimBackend::Config config;
    config.capacity = 8 * kGiB;
    config.auto_complete_events = false;
    sim_ = std::make_unique<SimBackend>(config);
    alloc_ = Make(sim_.get());
    // Some state for a bad call to disturb: blocks in both pools, on two
    // streams, one freed and cached.
    small_ = Allocate(4096, 0);
    large_ = Allocate(12 * kMiB, 0);
    other_ = Allocate(300 * 1024, 1);
    const DevicePtr cached = Allocate(64 * 1024, 0);
    EXPECT_TRUE(alloc_->Free(cached).ok());
  }

  void TearDown() override {
    std::string why;
    EXPECT_TRUE(alloc_->Validate(&why)) << why;
    alloc_.reset();
    EXPECT_TRUE(sim_->NothingOutstanding()) << DescribeOutstanding(sim_->counts());
  }

  std::unique_ptr<DeviceAllocator> Make(SimBackend* sim) {
    Options options = PytorchNativeOptions();
    options.expandable_segments = GetParam();
    return std::make_unique<DeviceAllocator>(std::make_unique<BorrowedBackend>(sim), options);
  }

  DevicePtr Allocate(std::size_t size, StreamId stream) {
    absl::StatusOr<DevicePtr> p = alloc_->Allocate(size, stream);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  }

  // Runs `call`, which must be refused with `code` and a message containing
  // every one of `mentions`, and must change nothing.
  template <typename Call>
  void ExpectRefused(Call call, absl::StatusCode code, const std::vector<std::string>& mentions) {
    const std::string before = State(*alloc_);
    const SimBackend::Counts device_before = sim_->counts();
    const absl::Status s = call();
    EXPECT_EQ(s.code(), code) << s;
    for (const std::string& m : mentions) EXPECT_THAT(s.message(), HasSubstr(m));
    EXPECT_EQ(State(*alloc_), before) << "the refused call changed the allocator";
    const SimBackend::Counts device_after = sim_->counts();
    EXPECT_EQ(device_after.bytes_in_use, device_before.bytes_in_use);
    EXPECT_EQ(device_after.live_events, device_before.live_events);
    std::string why;
    EXPECT_TRUE(alloc_->Validate(&why)) << why;
  }

  std::unique_ptr<SimBackend> sim_;  // outlives the allocator
  std::unique_ptr<DeviceAllocator> alloc_;
  DevicePtr small_ = 0, large_ = 0, other_ = 0;
};

TEST_P(BadInputTest, ForeignPointerFree) {
  for (DevicePtr foreign :
       {DevicePtr{0xdead000}, DevicePtr{1} << 40, std::numeric_limits<DevicePtr>::max()}) {
    ExpectRefused([&] { return alloc_->Free(foreign); }, absl::StatusCode::kInvalidArgument,
                  {Hex(foreign), "not allocated by this allocator"});
  }
}

TEST_P(BadInputTest, DoubleFree) {
  ASSERT_TRUE(alloc_->Free(small_).ok());
  ExpectRefused([&] { return alloc_->Free(small_); }, absl::StatusCode::kInvalidArgument,
                {"double free", Hex(small_), "free cached memory"});
}

TEST_P(BadInputTest, DoubleFreeWhileWaitingForAnotherStream) {
  // Used on stream 2, whose work has not finished: the first free leaves the
  // block pending, the second must still be refused.
  ASSERT_TRUE(alloc_->RecordStream(large_, 2).ok());
  ASSERT_TRUE(alloc_->Free(large_).ok());
  ExpectRefused([&] { return alloc_->Free(large_); }, absl::StatusCode::kInvalidArgument,
                {"double free", Hex(large_), "waiting for other streams"});
  sim_->CompleteAll();
}

TEST_P(BadInputTest, InteriorPointerFree) {
  for (DevicePtr interior : {large_ + 1, large_ + 512, large_ + 12 * kMiB - 1}) {
    ExpectRefused([&] { return alloc_->Free(interior); }, absl::StatusCode::kInvalidArgument,
                  {Hex(interior), "interior pointer", Hex(large_), "pass the block's start"});
  }
}

TEST_P(BadInputTest, ZeroSizeIsANullBlockNotAnError) {
  const std::string before = State(*alloc_);
  absl::StatusOr<DevicePtr> p = alloc_->Allocate(0, 0);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, 0u);
  EXPECT_TRUE(alloc_->Free(0).ok());
  EXPECT_TRUE(alloc_->RecordStream(0, 1).ok());
  EXPECT_EQ(State(*alloc_), before);
}

TEST_P(BadInputTest, SizeNearSizeMax) {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  // Rounding SIZE_MAX - 100 up to 512 would wrap to 0 if it were attempted.
  for (std::size_t size : {kMax, kMax - 100, kMax - 511, kMaxRequest + 1}) {
    ExpectRefused([&] { return alloc_->Allocate(size, 0).status(); },
                  absl::StatusCode::kInvalidArgument,
                  {absl::StrCat(size), "cannot be represented"});
  }
}

TEST_P(BadInputTest, SizeLargerThanTheDeviceIsOutOfMemoryWithAReport) {
  // Representable but far beyond the 8 GiB device: an out-of-memory error
  // with the report, never an abort. Only the OOM bookkeeping counters move.
  const std::size_t size = std::size_t{1} << 40;
  const MemoryStats before = alloc_->GetStats();
  absl::StatusOr<DevicePtr> p = alloc_->Allocate(size, 0);
  ASSERT_TRUE(absl::IsResourceExhausted(p.status())) << p.status();
  EXPECT_THAT(p.status().message(), HasSubstr("out of memory"));
  EXPECT_THAT(p.status().message(), HasSubstr(absl::StrCat(size, " bytes")));
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(after.num_ooms, before.num_ooms + 1);
  EXPECT_EQ(after.allocation[kStatAll].current, before.allocation[kStatAll].current);
  EXPECT_EQ(after.allocated_bytes[kStatAll].current, before.allocated_bytes[kStatAll].current);
  EXPECT_EQ(after.requested_bytes[kStatAll].current, before.requested_bytes[kStatAll].current);
  std::string why;
  EXPECT_TRUE(alloc_->Validate(&why)) << why;
  EXPECT_EQ(static_cast<std::int64_t>(sim_->counts().bytes_in_use),
            after.reserved_bytes[kStatAll].current);
}

TEST_P(BadInputTest, PointerFromAnotherAllocator) {
  // Allocator B has never handed out an address: whatever A gave is foreign
  // to it, before and after A is destroyed.
  SimBackend::Config config;
  config.auto_complete_events = false;
  SimBackend sim_b(config);
  std::unique_ptr<DeviceAllocator> b = Make(&sim_b);
  const std::string b_before = State(*b);
  for (DevicePtr p : {small_, large_}) {
    const absl::Status s = b->Free(p);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(s.message(), HasSubstr(Hex(p)));
    EXPECT_THAT(s.message(), HasSubstr("not allocated by this allocator"));
  }
  // A is destroyed; its pointer freed on B is still refused.
  alloc_.reset();
  EXPECT_TRUE(sim_->NothingOutstanding());
  const absl::Status s = b->Free(large_);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("not allocated by this allocator"));
  EXPECT_EQ(State(*b), b_before);
  b.reset();
  EXPECT_TRUE(sim_b.NothingOutstanding());
  alloc_ = Make(sim_.get());  // for TearDown
}

TEST_P(BadInputTest, RecordStreamOnAFreedBlock) {
  ASSERT_TRUE(alloc_->Free(other_).ok());
  ExpectRefused([&] { return alloc_->RecordStream(other_, 2); }, absl::StatusCode::kInvalidArgument,
                {"record_stream", Hex(other_)});
}

TEST_P(BadInputTest, RecordStreamOnAForeignOrInteriorPointer) {
  ExpectRefused([&] { return alloc_->RecordStream(DevicePtr{0xbad000}, 2); },
                absl::StatusCode::kInvalidArgument,
                {"record_stream", "0xbad000", "not allocated by this allocator"});
  ExpectRefused([&] { return alloc_->RecordStream(small_ + 8, 2); },
                absl::StatusCode::kInvalidArgument,
                {"record_stream", Hex(small_ + 8), "interior pointer"});
}

TEST_P(BadInputTest, MemoryFractionOutOfRange) {
  alloc_->SetMemoryLimit(6 * kGiB).IgnoreError();
  // [0, 1] as PyTorch takes it (0: nothing may be allocated).
  for (double f : {-0.5, 1.5, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity()}) {
    ExpectRefused([&] { return alloc_->SetMemoryFraction(f); }, absl::StatusCode::kInvalidArgument,
                  {"memory fraction", "[0, 1]"});
    EXPECT_EQ(alloc_->memory_limit(), 6 * kGiB);
  }
}

// Private-pool calls in the wrong state or with a bad pool.
TEST_P(BadInputTest, PoolCalls) {
  using Code = absl::StatusCode;
  auto only0 = [](StreamId s) { return s == 0; };
  ExpectRefused([&] { return alloc_->BeginAllocateToPool(0, only0); }, Code::kInvalidArgument,
                {"pool 0", "default pool"});
  ExpectRefused([&] { return alloc_->BeginAllocateToPool(5, nullptr); },
                Code::kInvalidArgument, {"filter is empty"});
  ExpectRefused([&] { return alloc_->EndAllocateToPool(5); }, Code::kFailedPrecondition,
                {"pool 5 is not being allocated to"});
  ExpectRefused([&] { return alloc_->ReleasePool(5); }, Code::kNotFound, {"unknown pool 5"});
  ExpectRefused([&] { return alloc_->ReleasePool(0); }, Code::kInvalidArgument, {"pool 0"});
  ExpectRefused([&] { return alloc_->CreateOrIncrefPool(0); }, Code::kInvalidArgument,
                {"pool 0"});
  ExpectRefused([&] { return alloc_->PoolUseCount(5).status(); }, Code::kNotFound,
                {"unknown pool 5"});
  ExpectRefused([&] { return alloc_->EmptyCachePool(5); }, Code::kNotFound, {"unknown pool 5"});
  ExpectRefused([&] { return alloc_->AllocateAt(5, large_, 512, 512, 0).status(); },
                Code::kNotFound, {"unknown pool"});

  // A pool with a live block and a free rest, being allocated to.
  ASSERT_TRUE(alloc_->BeginAllocateToPool(5, only0).ok());
  const DevicePtr pooled = Allocate(3 * kMiB, 0);
  ExpectRefused([&] { return alloc_->BeginAllocateToPool(5, only0); },
                Code::kFailedPrecondition, {"pool 5 is already being allocated to"});
  ExpectRefused([&] { return alloc_->ReleasePool(5); }, Code::kFailedPrecondition,
                {"pool 5 is being allocated to", "EndAllocateToPool"});
  ExpectRefused([&] { return alloc_->EmptyCache(); }, Code::kFailedPrecondition,
                {"not permitted while allocations are routed to a private pool"});
  ExpectRefused([&] { return alloc_->EmptyCachePool(0); }, Code::kFailedPrecondition,
                {"not permitted while allocations are routed to a private pool"});
  ASSERT_TRUE(alloc_->EndAllocateToPool(5).ok());
  ExpectRefused([&] { return alloc_->EndAllocateToPool(5); }, Code::kFailedPrecondition,
                {"pool 5 is not being allocated to"});

  // AllocateAt: a live block, the default pool's free memory, unaligned,
  // empty, requested above size, the wrong stream.
  ExpectRefused([&] { return alloc_->AllocateAt(5, pooled, 512, 512, 0).status(); },
                Code::kInvalidArgument, {"not wholly inside one free block of the pool"});
  ExpectRefused(
      [&] { return alloc_->AllocateAt(5, large_ + 12 * kMiB, 512, 512, 0).status(); },
      Code::kInvalidArgument, {"not wholly inside one free block of the pool"});
  ExpectRefused([&] { return alloc_->AllocateAt(5, pooled + 3 * kMiB + 100, 512, 512, 0).status(); },
                Code::kInvalidArgument, {"512-byte aligned"});
  ExpectRefused([&] { return alloc_->AllocateAt(5, pooled + 3 * kMiB, 0, 0, 0).status(); },
                Code::kInvalidArgument, {"512-byte aligned"});
  ExpectRefused([&] { return alloc_->AllocateAt(5, pooled + 3 * kMiB, 512, 1024, 0).status(); },
                Code::kInvalidArgument, {"requested (1024)"});
  ExpectRefused([&] { return alloc_->AllocateAt(5, pooled + 3 * kMiB, 512, 512, 1).status(); },
                Code::kInvalidArgument, {"the free block is on stream 0x0, not 0x1"});

  // Released to 0 while its block is live: the record stays until it is freed.
  ASSERT_TRUE(alloc_->ReleasePool(5).ok());
  ExpectRefused([&] { return alloc_->ReleasePool(5); }, Code::kFailedPrecondition,
                {"pool 5 is already released"});
  ASSERT_TRUE(alloc_->Free(pooled).ok());
  EXPECT_TRUE(absl::IsNotFound(alloc_->PoolUseCount(5).status()));
}

INSTANTIATE_TEST_SUITE_P(Segments, BadInputTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "Growable" : "Classic");
                         });

// On growable segments a request beyond the device is refused before any
// address range or page table is made (2^52 bytes once meant a 16 GiB host
// vector), and a failed attempt leaves no segment behind.
TEST(BadInputTest, HugeRequestOnGrowableSegmentsLeavesNothingBehind) {
  SimBackend::Config config;
  config.capacity = 8 * kGiB;
  SimBackend sim(config);
  Options options = PytorchNativeOptions();
  options.expandable_segments = true;
  auto alloc = std::make_unique<DeviceAllocator>(std::make_unique<BorrowedBackend>(&sim), options);
  const std::size_t huge = std::size_t{1} << 40;
  absl::StatusOr<DevicePtr> largest = alloc->Allocate(kMaxRequest, 0);
  ASSERT_TRUE(absl::IsResourceExhausted(largest.status())) << largest.status();
  absl::StatusOr<DevicePtr> p = alloc->Allocate(huge, 0);
  ASSERT_TRUE(absl::IsResourceExhausted(p.status())) << p.status();
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("larger than the device"));
  EXPECT_EQ(alloc->GetStats().segment[kStatAll].current, 0)
      << "the failed request left a segment behind";
  for (const SegmentInfo& segment : alloc->TakeSnapshot().segments) {
    EXPECT_LT(segment.total_size, huge)
        << "a " << segment.total_size << "-byte address range is still reserved";
  }
  EXPECT_EQ(sim.counts().live_ranges, 0);
  alloc.reset();
  EXPECT_TRUE(sim.NothingOutstanding());
}

// ---------------------------------------------------------------------------
// Devices and configuration
// ---------------------------------------------------------------------------

TEST(BadDeviceTest, UnknownDeviceOrdinal) {
  for (int device : {-1, 9999}) {
    absl::StatusOr<std::unique_ptr<DeviceBackend>> backend = CreateCudaBackend(device);
    ASSERT_FALSE(backend.ok());
    if (CudaDeviceAvailable()) {
      EXPECT_TRUE(absl::IsInvalidArgument(backend.status())) << backend.status();
      EXPECT_THAT(backend.status().message(), HasSubstr(absl::StrCat("CUDA device ", device)));
      EXPECT_THAT(backend.status().message(), HasSubstr("out of range"));
    } else {
      // No driver or no device: the ordinal cannot be judged, the device is
      // what is missing.
      EXPECT_TRUE(absl::IsUnavailable(backend.status())) << backend.status();
      EXPECT_FALSE(backend.status().message().empty());
    }
  }
}

TEST(BadDeviceTest, UnknownDeviceOrdinalCApi) {
  for (int device : {-1, 9999}) {
    ccalloc_allocator* out = reinterpret_cast<ccalloc_allocator*>(0x1);
    const ccalloc_status status = ccalloc_create(device, "", &out);
    EXPECT_EQ(status, CudaDeviceAvailable() ? CCALLOC_INVALID_ARGUMENT : CCALLOC_UNAVAILABLE);
    EXPECT_EQ(out, nullptr) << "a failed create must not leave a handle";
    EXPECT_STRNE(ccalloc_last_error(), "");
  }
}

TEST(BadConfTest, UnknownKey) {
  absl::StatusOr<Options> options = ParseOptions("max_split_size_mb:64,no_such_key:1");
  ASSERT_TRUE(absl::IsInvalidArgument(options.status())) << options.status();
  EXPECT_THAT(options.status().message(), HasSubstr("unknown key 'no_such_key'"));
  EXPECT_THAT(options.status().message(), HasSubstr("known: max_split_size_mb"));

  absl::StatusOr<std::unique_ptr<Allocator>> sim =
      Allocator::CreateSimulated(kGiB, "no_such_key:1");
  ASSERT_TRUE(absl::IsInvalidArgument(sim.status())) << sim.status();
  EXPECT_THAT(sim.status().message(), HasSubstr("no_such_key"));
}

TEST(BadConfTest, UnknownKeyCApi) {
  ccalloc_allocator* out = reinterpret_cast<ccalloc_allocator*>(0x1);
  EXPECT_EQ(ccalloc_create_simulated(kGiB, "no_such_key:1", &out), CCALLOC_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_THAT(ccalloc_last_error(), HasSubstr("unknown key 'no_such_key'"));
  // The configuration is checked before the device is opened, so the answer
  // is the same with or without a GPU.
  out = reinterpret_cast<ccalloc_allocator*>(0x1);
  EXPECT_EQ(ccalloc_create(0, "no_such_key:1", &out), CCALLOC_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_THAT(ccalloc_last_error(), HasSubstr("no_such_key"));
}

TEST(BadConfTest, UnknownKeyInTheEnvironment) {
  ASSERT_EQ(setenv("CCALLOC_CONF", "expandable_segments:True,bogus_key:7", 1), 0);
  absl::StatusOr<std::unique_ptr<Allocator>> cpp = Allocator::Create(0);
  ccalloc_allocator* out = reinterpret_cast<ccalloc_allocator*>(0x1);
  const ccalloc_status status = ccalloc_create(0, nullptr, &out);
  const std::string message = ccalloc_last_error();
  unsetenv("CCALLOC_CONF");
  ASSERT_TRUE(absl::IsInvalidArgument(cpp.status())) << cpp.status();
  EXPECT_THAT(cpp.status().message(), HasSubstr("bogus_key"));
  EXPECT_EQ(status, CCALLOC_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_THAT(message, HasSubstr("bogus_key"));
}

TEST(BadConfTest, BadValues) {
  struct Case {
    const char* conf;
    const char* key;
    const char* value;
  };
  for (const Case& c : std::vector<Case>{
           {"max_split_size_mb:abc", "max_split_size_mb", "abc"},
           {"max_split_size_mb:10", "max_split_size_mb", "10"},
           {"expandable_segments:maybe", "expandable_segments", "maybe"},
           {"garbage_collection_threshold:1.5", "garbage_collection_threshold", "1.5"},
           {"garbage_collection_threshold:nan", "garbage_collection_threshold", "nan"},
           {"roundup_power2_divisions:3", "roundup_power2_divisions", "3"},
           {"roundup_power2_divisions:[64:4", "roundup_power2_divisions", "[64:4"},
           {"memory_limit:12XB", "memory_limit", "12XB"},
           {"memory_limit:-1GiB", "memory_limit", "-1GiB"},
           {"per_process_memory_fraction:1.5", "per_process_memory_fraction", "1.5"},
           {"release_slack:2", "release_slack", "2"},
           {"release_slack_max:1.5", "release_slack_max", "1.5"},
           {"backend:cudaMallocAsync", "backend", "cudaMallocAsync"},
           {"max_map_chunk_mb:1", "max_map_chunk_mb", "1"},
           {"release_slack_hard:-0.5", "release_slack_hard", "-0.5"},
       }) {
    SCOPED_TRACE(c.conf);
    absl::StatusOr<Options> options = ParseOptions(c.conf);
    ASSERT_TRUE(absl::IsInvalidArgument(options.status())) << options.status();
    EXPECT_THAT(options.status().message(), HasSubstr(absl::StrCat("'", c.key, "'")));
    EXPECT_THAT(options.status().message(), HasSubstr(c.value));

    ccalloc_allocator* out = reinterpret_cast<ccalloc_allocator*>(0x1);
    EXPECT_EQ(ccalloc_create_simulated(kGiB, c.conf, &out), CCALLOC_INVALID_ARGUMENT);
    EXPECT_EQ(out, nullptr);
    EXPECT_THAT(ccalloc_last_error(), HasSubstr(c.key));
  }
  // Not key:value at all.
  absl::StatusOr<Options> options = ParseOptions("expandable_segments");
  ASSERT_TRUE(absl::IsInvalidArgument(options.status()));
  EXPECT_THAT(options.status().message(), HasSubstr("'expandable_segments' is not key:value"));
}

// ---------------------------------------------------------------------------
// C API
// ---------------------------------------------------------------------------

std::string StatsJson(ccalloc_allocator* a) {
  std::string s(ccalloc_stats_json(a, nullptr, 0), '\0');
  ccalloc_stats_json(a, s.data(), s.size());
  return s;
}

std::string SnapshotJson(ccalloc_allocator* a) {
  std::string s(ccalloc_snapshot_json(a, nullptr, 0), '\0');
  ccalloc_snapshot_json(a, s.data(), s.size());
  return s;
}

class BadInputCApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ccalloc_create_simulated(8 * kGiB, "", &a_), CCALLOC_OK) << ccalloc_last_error();
    ASSERT_EQ(ccalloc_malloc(a_, 4096, nullptr, &small_), CCALLOC_OK);
    ASSERT_EQ(ccalloc_malloc(a_, 12 * kMiB, nullptr, &large_), CCALLOC_OK);
    void* cached = nullptr;
    ASSERT_EQ(ccalloc_malloc(a_, 64 * 1024, nullptr, &cached), CCALLOC_OK);
    ASSERT_EQ(ccalloc_free(a_, cached), CCALLOC_OK);
  }
  void TearDown() override { ccalloc_destroy(a_); }

  // `call` must return `expect`, leave a message containing every one of
  // `mentions`, and change nothing.
  template <typename Call>
  void ExpectRefused(Call call, ccalloc_status expect, const std::vector<std::string>& mentions) {
    const std::string stats = StatsJson(a_), snapshot = SnapshotJson(a_);
    EXPECT_EQ(call(), expect);
    for (const std::string& m : mentions) EXPECT_THAT(ccalloc_last_error(), HasSubstr(m));
    EXPECT_EQ(StatsJson(a_), stats);
    EXPECT_EQ(SnapshotJson(a_), snapshot);
  }

  ccalloc_allocator* a_ = nullptr;
  void* small_ = nullptr;
  void* large_ = nullptr;
};

TEST_F(BadInputCApiTest, ForeignPointerFree) {
  void* foreign = reinterpret_cast<void*>(std::uintptr_t{0xdead000});
  ExpectRefused([&] { return ccalloc_free(a_, foreign); }, CCALLOC_INVALID_ARGUMENT,
                {"0xdead000", "not allocated by this allocator"});
}

TEST_F(BadInputCApiTest, DoubleFree) {
  ASSERT_EQ(ccalloc_free(a_, small_), CCALLOC_OK);
  ExpectRefused([&] { return ccalloc_free(a_, small_); }, CCALLOC_INVALID_ARGUMENT,
                {"double free", Hex(reinterpret_cast<std::uintptr_t>(small_))});
}

TEST_F(BadInputCApiTest, InteriorPointerFree) {
  void* interior = static_cast<char*>(large_) + 4096;
  ExpectRefused([&] { return ccalloc_free(a_, interior); }, CCALLOC_INVALID_ARGUMENT,
                {"interior pointer", Hex(reinterpret_cast<std::uintptr_t>(interior))});
}

TEST_F(BadInputCApiTest, ZeroSize) {
  const std::string stats = StatsJson(a_);
  void* out = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(ccalloc_malloc(a_, 0, nullptr, &out), CCALLOC_OK);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(ccalloc_free(a_, nullptr), CCALLOC_OK);
  EXPECT_EQ(StatsJson(a_), stats);
}

TEST_F(BadInputCApiTest, SizeNearSizeMax) {
  const std::size_t size = std::numeric_limits<std::size_t>::max() - 7;
  void* out = reinterpret_cast<void*>(0x1);
  ExpectRefused([&] { return ccalloc_malloc(a_, size, nullptr, &out); }, CCALLOC_INVALID_ARGUMENT,
                {absl::StrCat(size), "cannot be represented"});
  EXPECT_EQ(out, nullptr);
}

TEST_F(BadInputCApiTest, SizeLargerThanTheDevice) {
  void* out = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(ccalloc_malloc(a_, std::size_t{1} << 40, nullptr, &out), CCALLOC_OUT_OF_MEMORY);
  EXPECT_EQ(out, nullptr);
  EXPECT_THAT(ccalloc_last_error(), HasSubstr("out of memory"));
}

TEST_F(BadInputCApiTest, PointerFromAnotherAllocator) {
  ccalloc_allocator* b = nullptr;
  ASSERT_EQ(ccalloc_create_simulated(8 * kGiB, "", &b), CCALLOC_OK);
  const std::string b_stats = StatsJson(b);
  EXPECT_EQ(ccalloc_free(b, large_), CCALLOC_INVALID_ARGUMENT);
  EXPECT_THAT(ccalloc_last_error(), HasSubstr("not allocated by this allocator"));
  // The pointer's allocator is gone; B still refuses it.
  ccalloc_destroy(a_);
  a_ = nullptr;
  EXPECT_EQ(ccalloc_free(b, large_), CCALLOC_INVALID_ARGUMENT);
  EXPECT_THAT(ccalloc_last_error(), HasSubstr("not allocated by this allocator"));
  EXPECT_EQ(StatsJson(b), b_stats);
  ccalloc_destroy(b);
}

TEST_F(BadInputCApiTest, RecordStreamOnAFreedBlock) {
  ASSERT_EQ(ccalloc_free(a_, small_), CCALLOC_OK);
  void* stream = reinterpret_cast<void*>(std::uintptr_t{2});
  ExpectRefused([&] { return ccalloc_record_stream(a_, small_, stream); }, CCALLOC_INVALID_ARGUMENT,
                {"record_stream", Hex(reinterpret_cast<std::uintptr_t>(small_))});
}

TEST_F(BadInputCApiTest, NullAllocatorHandle) {
  void* out = nullptr;
  int64_t value = 0;
  const std::vector<std::pair<const char*, ccalloc_status>> calls = {
      {"malloc", ccalloc_malloc(nullptr, 64, nullptr, &out)},
      {"free", ccalloc_free(nullptr, small_)},
      {"record_stream", ccalloc_record_stream(nullptr, small_, nullptr)},
      {"empty_cache", ccalloc_empty_cache(nullptr)},
      {"set_memory_limit", ccalloc_set_memory_limit(nullptr, kGiB)},
      {"set_memory_fraction", ccalloc_set_memory_fraction(nullptr, 0.5)},
      {"get_stat", ccalloc_get_stat(nullptr, "allocated_bytes.all.current", &value)},
      {"reset_peak_stats", ccalloc_reset_peak_stats(nullptr)},
      {"pool_begin", ccalloc_pool_begin(nullptr, 1, nullptr)},
      {"pool_end", ccalloc_pool_end(nullptr, 1)},
      {"pool_release", ccalloc_pool_release(nullptr, 1)},
  };
  for (const auto& [name, status] : calls) {
    EXPECT_EQ(status, CCALLOC_INVALID_ARGUMENT) << name;
  }
  EXPECT_STREQ(ccalloc_last_error(), "allocator is NULL");
  // The JSON calls return a length, not a status: 0 for no allocator.
  char buffer[16] = "untouched";
  EXPECT_EQ(ccalloc_stats_json(nullptr, buffer, sizeof(buffer)), 0u);
  EXPECT_EQ(ccalloc_snapshot_json(nullptr, buffer, sizeof(buffer)), 0u);
  EXPECT_STREQ(buffer, "untouched");
  ccalloc_destroy(nullptr);  // a no-op, like free(NULL)
}

TEST_F(BadInputCApiTest, NullOutPointer) {
  ExpectRefused([&] { return ccalloc_malloc(a_, 4096, nullptr, nullptr); },
                CCALLOC_INVALID_ARGUMENT, {"out is NULL"});
  EXPECT_EQ(ccalloc_create_simulated(kGiB, "", nullptr), CCALLOC_INVALID_ARGUMENT);
  EXPECT_STREQ(ccalloc_last_error(), "out is NULL");
  EXPECT_EQ(ccalloc_create(0, "", nullptr), CCALLOC_INVALID_ARGUMENT);
  EXPECT_STREQ(ccalloc_last_error(), "out is NULL");
  int64_t value = 0;
  ExpectRefused([&] { return ccalloc_get_stat(a_, nullptr, &value); }, CCALLOC_INVALID_ARGUMENT,
                {"key or value is NULL"});
  ExpectRefused([&] { return ccalloc_get_stat(a_, "allocated_bytes.all.current", nullptr); },
                CCALLOC_INVALID_ARGUMENT, {"key or value is NULL"});
}

TEST_F(BadInputCApiTest, UnknownStatisticKey) {
  int64_t value = 42;
  ExpectRefused([&] { return ccalloc_get_stat(a_, "allocated_bytes.all.nonsense", &value); },
                CCALLOC_INVALID_ARGUMENT, {"unknown statistic 'allocated_bytes.all.nonsense'"});
  EXPECT_EQ(value, 42) << "a refused call wrote its out-parameter";
}

TEST_F(BadInputCApiTest, PoolCalls) {
  ExpectRefused([&] { return ccalloc_pool_begin(a_, 0, nullptr); }, CCALLOC_INVALID_ARGUMENT,
                {"pool 0"});
  ExpectRefused([&] { return ccalloc_pool_end(a_, 3); }, CCALLOC_INVALID_ARGUMENT,
                {"pool 3 is not being allocated to"});
  ExpectRefused([&] { return ccalloc_pool_release(a_, 3); }, CCALLOC_INVALID_ARGUMENT,
                {"unknown pool 3"});
  ExpectRefused([&] { return ccalloc_pool_release(a_, 0); }, CCALLOC_INVALID_ARGUMENT,
                {"pool 0"});
  ASSERT_EQ(ccalloc_pool_begin(a_, 3, nullptr), CCALLOC_OK);
  ExpectRefused([&] { return ccalloc_pool_begin(a_, 3, nullptr); }, CCALLOC_INVALID_ARGUMENT,
                {"pool 3 is already being allocated to"});
  ExpectRefused([&] { return ccalloc_pool_release(a_, 3); }, CCALLOC_INVALID_ARGUMENT,
                {"EndAllocateToPool"});
  ExpectRefused([&] { return ccalloc_empty_cache(a_); }, CCALLOC_INVALID_ARGUMENT,
                {"not permitted while allocations are routed"});
  ASSERT_EQ(ccalloc_pool_end(a_, 3), CCALLOC_OK);
  ASSERT_EQ(ccalloc_pool_release(a_, 3), CCALLOC_OK);
  ExpectRefused([&] { return ccalloc_pool_release(a_, 3); }, CCALLOC_INVALID_ARGUMENT,
                {"unknown pool 3"});
}

TEST_F(BadInputCApiTest, MemoryFractionOutOfRange) {
  for (double f : {-0.5, 2.0, -1.0, std::nan("")}) {
    ExpectRefused([&] { return ccalloc_set_memory_fraction(a_, f); }, CCALLOC_INVALID_ARGUMENT,
                  {"memory fraction"});
  }
}

}  // namespace
}  // namespace ccalloc::reliability
