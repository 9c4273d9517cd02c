// replay_bundled_traces_test.cc — whole replays of the bundled traces
// (traces/): the pytorch-native preset reproduces PyTorch's published peaks
// on gpt2 and resnet, the ccalloc preset stays within its marks with room and
// within 1% of the allocated peak near the end of memory, the driver calls
// agree with the allocator's own counters, and every trace in traces/ costs
// the allocating thread at most 1 ms a step after warm-up. The shared helpers
// are in tests/support/replay_fixture.h.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "bench/driver_costs.h"
#include "bench/replay.h"
#include "gtest/gtest.h"
#include "stats/trace.h"
#include "tests/support/replay_fixture.h"

namespace ccalloc::replay {
namespace {

struct Published {
  std::string trace;
  std::int64_t native_peak_reserved_mib;
};

class BundledTraceTest : public ::testing::TestWithParam<Published> {};

TEST_P(BundledTraceTest, PytorchNativeReproducesPublishedPeakReserved) {
  const Trace trace = LoadBundled(GetParam().trace);
  ASSERT_FALSE(trace.events.empty());
  const ReplayResult r = ReplayWith(trace, "pytorch-native");
  // Segments are whole MiB multiples, so the floor loses nothing.
  EXPECT_EQ(r.peak_reserved_bytes % kMiBytes, 0);
  EXPECT_EQ(ToMiB(r.peak_reserved_bytes), GetParam().native_peak_reserved_mib);
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.maps, 0) << "classic segments map nothing";
}

// With room (an 80 GiB card), reserved stays within the loose marks: at most
// release_slack_hard (10%) past the peak allocated, and at least its low
// mark's worth of memory is held rather than moved (PyTorch's native policy
// holds 1.2-1.6x on these).
TEST_P(BundledTraceTest, CcallocReservesWithinItsMarksWithRoom) {
  const Trace trace = LoadBundled(GetParam().trace);
  ASSERT_FALSE(trace.events.empty());
  const ReplayResult r = ReplayWith(trace, "ccalloc");
  ASSERT_GT(r.peak_allocated_bytes, 0);
  EXPECT_GE(r.peak_reserved_bytes, r.peak_allocated_bytes);
  EXPECT_LE(r.ratio, 1.10) << "peak reserved " << r.peak_reserved_bytes << ", allocated "
                           << r.peak_allocated_bytes;
  EXPECT_DOUBLE_EQ(r.ratio, static_cast<double>(r.peak_reserved_bytes) /
                                static_cast<double>(r.peak_allocated_bytes));
  EXPECT_GT(r.maps, 0) << "the ccalloc preset uses growable segments";
  EXPECT_EQ(r.ooms, 0);
}

// Near the end of memory (a card 5% larger than the trace's peak allocated)
// the marks tighten: reserved within 1% of the peak, nothing refused. With
// the loose marks alone the cache would hold memory up to the card's end.
TEST_P(BundledTraceTest, CcallocReservesWithinOnePercentNearTheEndOfMemory) {
  const Trace trace = LoadBundled(GetParam().trace);
  ASSERT_FALSE(trace.events.empty());
  ReplayConfig config;
  config.timing_repetitions = 0;
  const ReplayResult roomy = ReplayWith(trace, "ccalloc", config);
  config.capacity = static_cast<std::size_t>(1.05 * static_cast<double>(roomy.peak_allocated_bytes));
  const ReplayResult r = ReplayWith(trace, "ccalloc", config);
  EXPECT_EQ(r.peak_allocated_bytes, roomy.peak_allocated_bytes);
  EXPECT_LE(r.ratio, 1.01) << "peak reserved " << r.peak_reserved_bytes << ", allocated "
                           << r.peak_allocated_bytes;
  EXPECT_EQ(r.ooms, 0);
  EXPECT_TRUE(r.fits);
}

INSTANTIATE_TEST_SUITE_P(Traces, BundledTraceTest,
                         ::testing::Values(Published{"gpt2", 51698}, Published{"resnet", 7628}),
                         [](const auto& info) { return info.param.trace; });

std::filesystem::path CostTablePath() {
  return TracesDir().parent_path() / "bench" / "driver_costs" / "h100.json";
}

// Issue 50, acceptance point 3, the driver-time half: with room, every trace
// in traces/ costs the allocating thread at most 1 ms of modelled driver
// time a step after warm-up (the trace's second half, H100 costs), within
// its marks (at most 1.10 of the peak) and refusing nothing. The whole set
// replays in a few seconds; a trace added to traces/ is held to it too.
TEST(AllBundledTracesTest, AtMostOneMsAStepOnTheAllocatingThreadAfterWarmUpWithRoom) {
  absl::StatusOr<DriverCostTable> table = LoadDriverCostTable(CostTablePath().string());
  ASSERT_TRUE(table.ok()) << table.status();
  ReplayConfig config;
  config.driver_costs = std::make_shared<const DriverCostTable>(*table);
  int traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TracesDir())) {
    const std::string file = entry.path().filename().string();
    if (!absl::EndsWith(file, ".trace.gz")) continue;
    SCOPED_TRACE(file);
    absl::StatusOr<Trace> trace = LoadTrace(entry.path().string());
    ASSERT_TRUE(trace.ok()) << trace.status();
    const ReplayResult r = ReplayWith(*trace, "ccalloc", config);
    ASSERT_GT(r.steps, 1) << "every bundled trace says its steps";
    EXPECT_LE(r.late_foreground_driver_ms_per_step(), 1.0);
    EXPECT_LE(r.ratio, 1.10);
    EXPECT_EQ(r.ooms, 0);
    ++traces;
  }
  EXPECT_GE(traces, 21);
}

TEST_P(BundledTraceTest, DriverCallsMatchTheAllocatorsOwnCounters) {
  const Trace trace = LoadBundled(GetParam().trace);
  ASSERT_FALSE(trace.events.empty());
  for (absl::string_view policy : {"pytorch-native", "ccalloc"}) {
    SCOPED_TRACE(policy);
    const ReplayResult r = ReplayWith(trace, policy);
    // A stretch of chunks is one call (map_run); each chunk is a map.
    EXPECT_EQ(r.mapped_chunks, r.maps);
    EXPECT_LE(Calls(r, DriverCall::kMap) + Calls(r, DriverCall::kMapRun), r.maps);
    EXPECT_EQ(Calls(r, DriverCall::kUnmap), r.unmaps);
    // num_device_alloc counts classic segments and physical chunks alike.
    EXPECT_EQ(Calls(r, DriverCall::kDeviceAlloc) + Calls(r, DriverCall::kCreate), r.device_allocs);
    EXPECT_EQ(Calls(r, DriverCall::kDeviceFree) + Calls(r, DriverCall::kRelease), r.device_frees);
    // One stream: every event wait is a wait before unmapping.
    EXPECT_EQ(Calls(r, DriverCall::kEventSynchronize), r.stream_waits);
    std::int64_t total = 0;
    for (std::int64_t n : r.driver_calls) total += n;
    EXPECT_EQ(total, r.driver_calls_total);
    EXPECT_EQ(r.steps, 20) << "traces/README.md: 20 steps";
  }
}
}  // namespace
}  // namespace ccalloc::replay
