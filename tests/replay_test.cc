// Tests of the replay library behind ccalloc-replay: the pytorch-native
// preset reproduces PyTorch's published peaks on the bundled traces, the
// ccalloc preset stays within 1% of the allocated peak, every input format
// and report comes out, and a card too small for a trace gives a report with
// the refused allocations, never a crash.
#include "bench/replay.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/backends/sim_backend.h"
#include "bench/driver_costs.h"
#include "bench/scenarios.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stats/trace.h"

namespace ccalloc::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Op = TraceEvent::Op;

constexpr std::int64_t kMiBytes = std::int64_t{1} << 20;
constexpr std::int64_t kGiBytes = std::int64_t{1} << 30;

std::filesystem::path TracesDir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "traces";
}

Trace LoadBundled(const std::string& name) {
  absl::StatusOr<Trace> t = LoadTrace((TracesDir() / (name + ".trace.gz")).string());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace{};
}

ReplayResult ReplayPolicy(const Trace& trace, const absl::StatusOr<Policy>& p,
                          ReplayConfig config) {
  config.timing_repetitions = 0;  // speed is the benchmarks' business
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  absl::StatusOr<ReplayResult> r = Replay(trace, *p, config);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ReplayResult{};
}

// A preset policy ("pytorch-native", "ccalloc").
ReplayResult ReplayWith(const Trace& trace, absl::string_view policy, ReplayConfig config = {}) {
  return ReplayPolicy(trace, PresetPolicy(policy), config);
}

// ccalloc's defaults with `conf` (CCALLOC_CONF syntax) on top.
ReplayResult ReplayConf(const Trace& trace, absl::string_view conf, ReplayConfig config = {}) {
  return ReplayPolicy(trace, CustomPolicy(conf), config);
}

// ccalloc's defaults with the marks and chunks they tighten to near the end
// of memory (growable_segments.cc, kTightSlack), and `conf` after them: the
// regime the mechanics tests below were written for, with room or without.
ReplayResult ReplayTight(const Trace& trace, absl::string_view conf = "",
                         ReplayConfig config = {}) {
  const std::string tight =
      "release_slack:0.005,release_slack_max:0.008,release_slack_hard:0.0095,max_map_chunk_mb:4";
  return ReplayConf(trace, conf.empty() ? tight : absl::StrCat(tight, ",", conf), config);
}

// A trace built by hand: each entry is {alloc?, id, bytes}.
Trace Handmade(const std::string& name,
               const std::vector<std::tuple<bool, std::uint64_t, std::uint64_t>>& ops) {
  Trace t;
  t.name = name;
  for (const auto& [alloc, id, bytes] : ops) {
    t.events.push_back(TraceEvent{alloc ? Op::kAlloc : Op::kFree, id, bytes, 0});
    if (alloc) t.num_ids = std::max(t.num_ids, id + 1);
  }
  return t;
}

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

// The chunk a large block maps in steps down as the end of memory comes
// near (GrowableSegments::ChunkCapAt): 32 MiB (max_map_chunk) while the
// peak's hard mark is within a quarter of the card, at most 16 MiB past
// that, at most 4 MiB once the marks tighten. A 1 GiB block, page-aligned,
// is all new memory: its chunks are its maps.
TEST(ReplayTest, ChunksGetSmallerAsTheEndOfMemoryComesNear) {
  const Trace t = Handmade("one_gib", {{true, 0, kGiBytes}, {false, 0, 0}});
  struct Case {
    std::size_t capacity;
    std::int64_t chunks;
  };
  for (const Case& c : {Case{80 * static_cast<std::size_t>(kGiBytes), 32},  // 1.1 GiB of 80: far
                        Case{3 * static_cast<std::size_t>(kGiBytes), 64},   // of 3: with room
                        Case{static_cast<std::size_t>(kGiBytes) + 64 * kMiBytes, 256}}) {  // tight
    SCOPED_TRACE(c.capacity);
    ReplayConfig config;
    config.capacity = c.capacity;
    const ReplayResult r = ReplayWith(t, "ccalloc", config);
    EXPECT_EQ(r.maps, c.chunks);
    EXPECT_EQ(r.device_allocs, c.chunks);
    EXPECT_EQ(r.ooms, 0);
  }
}

TEST(ReplayTest, CountsEventsAndTracksPeaks) {
  // 3 MiB and 5 MiB live together, then 3 MiB alone: allocated peaks at 8 MiB.
  const Trace t = Handmade("small", {{true, 0, 3 * kMiBytes},
                                     {true, 1, 5 * kMiBytes},
                                     {false, 0, 0},
                                     {false, 1, 0},
                                     {true, 2, 3 * kMiBytes},
                                     {false, 2, 0}});
  for (absl::string_view policy : {"pytorch-native", "ccalloc"}) {
    SCOPED_TRACE(policy);
    ReplayConfig config;
    config.record_timeline = true;
    const ReplayResult r = ReplayWith(t, policy, config);
    EXPECT_EQ(r.events, 6u);
    EXPECT_EQ(r.allocs, 3u);
    EXPECT_EQ(r.frees, 3u);
    EXPECT_EQ(r.peak_allocated_bytes, 8 * kMiBytes);
    EXPECT_EQ(r.end_allocated_bytes, 0);
    EXPECT_GE(r.peak_reserved_bytes, 8 * kMiBytes);
    ASSERT_EQ(r.timeline_allocated.size(), 6u);
    EXPECT_EQ(r.timeline_allocated[1], 8 * kMiBytes);
    EXPECT_EQ(r.timeline_reserved[r.peak_reserved_event], r.peak_reserved_bytes);
    EXPECT_TRUE(r.fits);
  }
}

TEST(ReplayTest, ReadsRmmCsv) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / absl::StrCat("replay_test_", getpid(), ".csv");
  {
    std::ofstream out(path);
    out << "Thread,Time,Action,Pointer,Size,Stream\n"
           "1,t,allocate,0x1000,1000,0x0\n"
           "1,t,allocate,0x2000,300000,0x0\n"
           "1,t,free,0x1000,1000,0x0\n"
           // The address comes back: a new block.
           "1,t,allocate,0x1000,4096,0x0\n"
           "1,t,free,0x2000,300000,0x0\n"
           "1,t,free,0x1000,4096,0x0\n";
  }
  absl::StatusOr<Trace> trace = LoadTrace(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->num_ids, 3u);
  // Small-pool blocks are split exactly, so allocated is the sum of the
  // 512-byte rounded sizes live together: 1024 + 300032, then 300032 + 4096.
  for (absl::string_view policy : {"pytorch-native", "ccalloc"}) {
    SCOPED_TRACE(policy);
    const ReplayResult r = ReplayWith(*trace, policy);
    EXPECT_EQ(r.allocs, 3u);
    EXPECT_EQ(r.peak_allocated_bytes, 300032 + 4096);
    EXPECT_TRUE(r.fits);
  }
}

TEST(ReplayTest, GeneratesScenarios) {
  absl::StatusOr<Trace> t = LoadTrace("scenario:two-streams:3");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Trace> same = scenarios::MakeScenario("two-streams", 3);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(t->events, same->events) << "scenario:<name>:<seed> is MakeScenario(name, seed)";
  EXPECT_THAT(LoadTrace("scenario:no-such-thing").status().message(), HasSubstr("no-such-thing"));
  EXPECT_FALSE(LoadTrace("scenario:growing:x").ok());
}

// Pause and resume lines are played: the region's live blocks (alloc lines
// naming region 3) leave reserved at the pause and come back at the resume;
// allocators that cannot pause (classic segments) play them as no-ops.
TEST(ReplayTest, PlaysPauseAndResumeOfRegions) {
  absl::StatusOr<Trace> t = ParseTrace(
      "a 0 8388608 0 3\n"
      "a 1 4194304 0\n"
      "p 3 0\n"
      "a 2 2097152 0\n"
      "r 3 0\n"
      "f 0\nf 1\nf 2\n",
      "regions");
  ASSERT_TRUE(t.ok()) << t.status();
  const ReplayResult r = ReplayWith(*t, "ccalloc");
  EXPECT_EQ(r.pauses, 1);
  EXPECT_GE(r.paused_bytes, 8 * kMiBytes);
  EXPECT_EQ(r.allocs, 3u);
  EXPECT_TRUE(r.fits);
  const ReplayResult native = ReplayWith(*t, "pytorch-native");
  EXPECT_EQ(native.pauses, 0);
  EXPECT_TRUE(native.fits);
}

TEST(ReplayTest, CrossStreamFreesWaitForTheirStream) {
  // Blocks used on the other stream are freed through RecordStream; with
  // events completing at once they are reusable by the next allocation.
  scenarios::TwoStreamsOptions options;
  options.steps = 150;
  const Trace t = scenarios::TwoStreams(options);
  std::size_t cross = 0;
  std::vector<std::uint64_t> stream(t.num_ids);
  for (const TraceEvent& e : t.events) {
    if (e.op == Op::kAlloc) {
      stream[e.id] = e.stream;
    } else {
      cross += e.stream != stream[e.id];
    }
  }
  ASSERT_GT(cross, 0u);
  for (absl::string_view policy : {"pytorch-native", "ccalloc"}) {
    SCOPED_TRACE(policy);
    const ReplayResult r = ReplayWith(t, policy);
    EXPECT_EQ(r.allocs + r.frees, t.events.size());
    EXPECT_EQ(r.end_allocated_bytes, 0);
    EXPECT_TRUE(r.fits);
  }
}

// A replay with a lagging GPU repeats itself: the unmap worker's jobs are
// finished before each event, so whether an old mapping has gone by the
// next placement does not depend on the thread's timing (without that,
// two_streams at lag 200 read 3,622 to 3,630 MiB over 12 runs).
TEST(ReplayTest, ALaggingReplayRepeatsItself) {
  const Trace t = LoadBundled("two_streams");
  ReplayConfig lagging;
  lagging.gpu_lag = 200;
  lagging.record_timeline = true;
  const ReplayResult first = ReplayWith(t, "ccalloc", lagging);
  ASSERT_FALSE(first.timeline_reserved.empty());
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE(absl::StrCat("run ", run));
    const ReplayResult again = ReplayWith(t, "ccalloc", lagging);
    EXPECT_EQ(again.peak_reserved_bytes, first.peak_reserved_bytes);
    EXPECT_EQ(again.maps, first.maps);
    EXPECT_EQ(again.unmaps, first.unmaps);
    EXPECT_EQ(again.stream_waits, first.stream_waits);
    // (Which thread made a call still may differ: one Reap within a
    // placement can find a job finished or not. 177 or 179 of them.)
    EXPECT_EQ(again.driver_calls_total, first.driver_calls_total);
    EXPECT_TRUE(again.timeline_reserved == first.timeline_reserved)
        << "reserved memory took another course";
  }
}

TEST(ReplayTest, PeakActiveCountsBlocksAwaitingAnotherStream) {
  // With the GPU behind, blocks freed after use on the other stream stay
  // pending: active memory peaks above allocated, and reserved holds at
  // least that much. With the GPU keeping up, no block waits long enough to
  // raise the peak much, and a one-stream trace's active peak is its
  // allocated peak. (ccalloc with streams kept apart, PyTorch's contract:
  // its default lends memory across streams where it would move it, and a
  // lent block goes back free at once, ordered on the device, so fewer
  // blocks wait and by how much depends on the unmap worker's pace. Over
  // 150 steps the streams-apart run's active peak came within 6 KiB of its
  // allocated one once the replay settled the worker before each event:
  // where the peak falls is a matter of placements, so the run is longer.)
  scenarios::TwoStreamsOptions options;
  options.steps = 300;
  const Trace t = scenarios::TwoStreams(options);
  ReplayConfig lagging;
  lagging.gpu_lag = 500;
  for (const ReplayResult& r : {ReplayWith(t, "pytorch-native", lagging),
                                ReplayConf(t, "cross_stream_reuse:False", lagging)}) {
    SCOPED_TRACE(r.policy);
    EXPECT_GT(r.peak_active_bytes, r.peak_allocated_bytes);
    EXPECT_GE(r.peak_reserved_bytes, r.peak_active_bytes);
    EXPECT_THAT(FormatTable({r}), HasSubstr("peak active"));
  }
  const ReplayResult lent = ReplayWith(t, "ccalloc", lagging);
  EXPECT_GE(lent.peak_reserved_bytes, lent.peak_active_bytes);
  const Trace one = Handmade("one", {{true, 0, 3 * kMiBytes},
                                     {true, 1, 5 * kMiBytes},
                                     {false, 0, 0},
                                     {false, 1, 0}});
  const ReplayResult r = ReplayWith(one, "ccalloc");
  EXPECT_EQ(r.peak_active_bytes, r.peak_allocated_bytes);
  EXPECT_THAT(FormatTable({r}), Not(HasSubstr("peak active")));
}

TEST(ReplayTest, LayoutAtDescribesTheFreeMemoryAnEventMeets) {
  // 8 MiB, 8 MiB, free the first, then 4 MiB: before event 3 the cache holds
  // the first block's 8 MiB free at the start of its range, and best fit
  // puts the 4 MiB there without a driver call.
  const Trace t = Handmade("hole", {{true, 0, 8 * kMiBytes},
                                    {true, 1, 8 * kMiBytes},
                                    {false, 0, 0},
                                    {true, 2, 4 * kMiBytes},
                                    {false, 1, 0},
                                    {false, 2, 0}});
  ReplayConfig config;
  config.layout_at = 3;
  const ReplayResult r = ReplayWith(t, "ccalloc", config);
  EXPECT_THAT(r.layout, StartsWith("layout before event 3 (allocate 4.0 MiB on stream 0): "
                                   "allocated 8 MiB, reserved 16 MiB"));
  EXPECT_THAT(r.layout, HasSubstr(" + 0.0 MiB: 8.0 MiB, of it held 8.0 MiB"));
  EXPECT_THAT(r.layout, HasSubstr("placed at segment"));
  EXPECT_THAT(r.layout, HasSubstr("+ 0.0 MiB; pages mapped 0, unmapped 0"));
  // Without it, nothing.
  EXPECT_TRUE(ReplayWith(t, "ccalloc").layout.empty());
}

TEST(ReplayTest, TooSmallCardReportsRefusedAllocationsAndGoesOn) {
  // Three 1 GiB blocks on a 2 GiB card: the third is refused, its free is
  // skipped, and the replay goes on to allocate again once memory is back.
  const Trace t = Handmade("three", {{true, 0, kGiBytes},
                                     {true, 1, kGiBytes},
                                     {true, 2, kGiBytes},
                                     {false, 2, 0},
                                     {false, 0, 0},
                                     {true, 3, kGiBytes},
                                     {false, 3, 0},
                                     {false, 1, 0}});
  for (absl::string_view policy : {"pytorch-native", "ccalloc"}) {
    SCOPED_TRACE(policy);
    ReplayConfig config;
    config.capacity = 2 * kGiBytes;
    const ReplayResult r = ReplayWith(t, policy, config);
    EXPECT_FALSE(r.fits);
    EXPECT_EQ(r.ooms, 1);
    EXPECT_EQ(r.first_oom_event, 2);
    EXPECT_THAT(r.first_oom_message, HasSubstr("out of memory"));
    EXPECT_LE(r.peak_reserved_bytes, 2 * kGiBytes);
    EXPECT_EQ(r.peak_allocated_bytes, 2 * kGiBytes);
    EXPECT_EQ(r.end_allocated_bytes, 0);
    EXPECT_GE(r.retries, 1) << "the OOM ladder retried before giving up";
    EXPECT_EQ(r.capacity_bytes, static_cast<std::uint64_t>(2 * kGiBytes));
    EXPECT_THAT(FormatComparison({r}), HasSubstr("does NOT fit"));
  }
}

TEST(ReplayTest, TightCardCostsNativeRetriesButNotCcalloc) {
  // resnet peaks at 5,724 MiB allocated; PyTorch's native policy held 7,628.
  // On a 6 GiB card the native policy has to give cached segments back.
  const Trace trace = LoadBundled("resnet");
  ASSERT_FALSE(trace.events.empty());
  ReplayConfig config;
  config.capacity = 6 * kGiBytes;
  const ReplayResult native = ReplayWith(trace, "pytorch-native", config);
  EXPECT_LE(native.peak_reserved_bytes, 6 * kGiBytes);
  EXPECT_GT(native.retries + native.ooms, 0);
  const ReplayResult ours = ReplayWith(trace, "ccalloc", config);
  EXPECT_TRUE(ours.fits) << ours.first_oom_message;
  EXPECT_EQ(ours.free_alls, 0);
}

TEST(ReplayTest, LaggingGpuMakesTrimsWaitAndCountsWhatTheyWaitedFor) {
  // With a GPU that keeps up every free has finished when a trim looks, so
  // nothing waits; with one that runs behind, memory freed recently is still
  // in use when a growth wants it back, and the replay counts those waits
  // and the events the GPU still had to run.
  const Trace trace = LoadBundled("resnet");
  ASSERT_FALSE(trace.events.empty());
  ReplayConfig config;
  config.timing_repetitions = 0;
  const ReplayResult keeps_up = ReplayTight(trace, "", config);
  EXPECT_EQ(keeps_up.stream_waits, 0);
  EXPECT_EQ(keeps_up.waited_events, 0u);
  config.gpu_lag = 200;
  const ReplayResult lags = ReplayTight(trace, "", config);
  EXPECT_TRUE(lags.fits);
  EXPECT_GT(lags.stream_waits, 0);
  EXPECT_GT(lags.waited_events, 0u);
  // No wait is longer than the lag.
  EXPECT_LE(lags.waited_events, static_cast<std::uint64_t>(lags.stream_waits) * 200);
  // The second half's share of them (the warm steps), counted apart.
  EXPECT_EQ(keeps_up.late_waited_events, 0u);
  EXPECT_LE(lags.late_waited_events, lags.waited_events);
  EXPECT_THAT(ResultsToJson({lags}),
              HasSubstr(absl::StrCat("\"late_waited_events\": ", lags.late_waited_events)));
  // Every wait is counted by what waited.
  EXPECT_EQ(lags.waits_under_block + lags.waits_trim + lags.waits_release, lags.stream_waits);
  EXPECT_THAT(ResultsToJson({lags}), HasSubstr("\"stream_waits_by_site\": {\"under_block\": "));
  EXPECT_THAT(FormatDriverTable({lags}), HasSubstr("waited ev"));
}

// mapped_fit's default (auto): a churn, whose live bytes swing below a peak
// the cache keeps holding, places requests on memory already mapped and
// maps far less than best fit alone; a training trace, whose peaks keep the
// cache within its marks, replays exactly as with best fit alone.
TEST(ReplayTest, MappedFitWhenSlackCutsChurnMapsAndLeavesTrainingAlone) {
  absl::StatusOr<Trace> churn = LoadTrace("scenario:churn:1042");
  ASSERT_TRUE(churn.ok()) << churn.status();
  // (16 MiB chunks, as with room once the end is in sight: with the 32 MiB
  // ones of a far end the churn maps too few chunks to tell.)
  const ReplayResult best_fit = ReplayConf(*churn, "mapped_fit:False,max_map_chunk_mb:16");
  const ReplayResult ours = ReplayConf(*churn, "max_map_chunk_mb:16");
  ASSERT_GT(best_fit.late_mapped_chunks, 50) << "the churn maps too little to tell";
  EXPECT_LT(ours.late_mapped_chunks * 2, best_fit.late_mapped_chunks);
  EXPECT_LT(ours.maps, best_fit.maps);
  // The memory it costs is within what the cache holds anyway.
  EXPECT_LE(ours.ratio, best_fit.ratio + 0.01);

  const Trace gpt2 = LoadBundled("gpt2");
  ASSERT_FALSE(gpt2.events.empty());
  const ReplayResult gpt2_best_fit = ReplayConf(gpt2, "mapped_fit:False");
  const ReplayResult gpt2_ours = ReplayWith(gpt2, "ccalloc");
  EXPECT_EQ(gpt2_ours.maps, gpt2_best_fit.maps);
  EXPECT_EQ(gpt2_ours.peak_reserved_bytes, gpt2_best_fit.peak_reserved_bytes);
}

// mapped_fit's default (auto) near the end of memory: requests whose best
// fit would map at least 64 MiB go on memory already mapped whatever the
// cache holds. On the checkpointed LM, whose huge logits blocks move dozens
// of chunks each, the second half then maps fewer chunks than with best fit
// by size, and the memory stays within 1%.
TEST(ReplayTest, MappedFitForLargeRequestsMovesLessOnTheCheckpointedLm) {
  const Trace trace = LoadBundled("ckpt_lm");
  ASSERT_FALSE(trace.events.empty());
  const ReplayResult by_size = ReplayTight(trace, "mapped_fit:False");
  const ReplayResult ours = ReplayTight(trace);
  EXPECT_LT(ours.late_mapped_chunks, by_size.late_mapped_chunks);
  EXPECT_LE(ours.ratio, 1.01);
}

// cross_stream_reuse: the two-stream trace's memory changes streams every
// step; lent where it lies, it is moved through the driver far less, within
// the same bound, with the GPU at the host's heels (the replay's default).
// Lent wherever a stream would map (True), every loan and return is ordered
// by a device-side wait; the default (auto) lends only where the cache
// would move memory, so it orders the streams less than half as often, for
// most of the saving.
TEST(ReplayTest, CrossStreamReuseMovesLessOnTheTwoStreamTrace) {
  const Trace trace = LoadBundled("two_streams");
  ASSERT_FALSE(trace.events.empty());
  const ReplayResult own = ReplayTight(trace, "cross_stream_reuse:False");
  const ReplayResult ordered = ReplayTight(trace, "cross_stream_reuse:True");
  const ReplayResult ours = ReplayTight(trace);
  const auto waits = [](const ReplayResult& r) {
    return r.driver_calls[static_cast<int>(DriverCall::kStreamWaitEvent)];
  };
  EXPECT_EQ(waits(own), 0) << "lent with cross_stream_reuse:False";
  EXPECT_GT(waits(ordered), 0);
  EXPECT_GT(waits(ours), 0);
  EXPECT_LT(2 * waits(ours), waits(ordered)) << "auto lent where no move was due";
  EXPECT_LT(2 * ordered.late_mapped_chunks, own.late_mapped_chunks);
  EXPECT_LT(2 * ours.late_mapped_chunks, own.late_mapped_chunks);
  for (const ReplayResult* r : {&own, &ordered, &ours}) EXPECT_LE(r->ratio, 1.01);
}

TEST(ReplayTest, JsonHasOneObjectPerPolicyWithTheRequiredKeys) {
  const Trace t = Handmade("json-\"quoted\"", {{true, 0, 12345}, {false, 0, 0}});
  ReplayConfig config;
  std::vector<ReplayResult> results;
  for (const std::string& name : PresetNames()) {
    absl::StatusOr<Policy> p = PresetPolicy(name);
    ASSERT_TRUE(p.ok());
    config.timing_repetitions = 3;
    absl::StatusOr<ReplayResult> r = Replay(t, *p, config);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->ns_per_op_passes.size(), 3u);
    EXPECT_GT(r->ns_per_op, 0);
    results.push_back(*r);
  }
  const std::string json = ResultsToJson(results);
  EXPECT_THAT(json, StartsWith("["));
  // One object per policy, each with every key the tools downstream read.
  const std::vector<std::string> objects = absl::StrSplit(json, "\n  {");
  ASSERT_EQ(objects.size(), 3u) << json;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const std::string& obj = objects[k + 1];
    const ReplayResult& r = results[k];
    EXPECT_THAT(obj, HasSubstr(absl::StrCat("\"policy\": \"", r.policy, "\"")));
    EXPECT_THAT(obj, HasSubstr("\"trace\": \"json-\\\"quoted\\\"\""));
    EXPECT_THAT(obj, HasSubstr(absl::StrCat("\"peak_allocated_bytes\": ", r.peak_allocated_bytes)));
    EXPECT_THAT(obj, HasSubstr(absl::StrCat("\"peak_reserved_bytes\": ", r.peak_reserved_bytes)));
    EXPECT_THAT(obj, HasSubstr(absl::StrCat("\"device_allocs\": ", r.device_allocs)));
    EXPECT_THAT(obj, HasSubstr(absl::StrCat("\"device_frees\": ", r.device_frees)));
    for (const char* key : {"\"ns_per_op\": ", "\"ratio\": ", "\"run_fragmentation\": ",
                            "\"fragmentation_at_peak\": ", "\"fragmentation_at_end\": ",
                            "\"maps\": ", "\"unmaps\": ", "\"maps_per_1k_allocs\": ",
                            "\"retries\": ", "\"free_alls\": ", "\"ooms\": ", "\"fits\": "}) {
      EXPECT_THAT(obj, HasSubstr(key));
    }
  }
}

// --events: the rows account for every chunk the run mapped, unmapped and
// took back, each row made some driver work, and an allocation's row says
// where its block went.
TEST(ReplayTest, EventCostsAccountForTheRunsDriverWork) {
  const Trace trace = LoadBundled("ckpt_lm");
  ReplayConfig config;
  config.gpu_lag = 200;
  EXPECT_TRUE(ReplayWith(trace, "ccalloc", config).event_costs.empty());  // not asked for

  config.record_events = true;
  // 16 MiB chunks: with the 32 MiB ones of a far end the trace moves too
  // little memory to move any back.
  const ReplayResult r =
      ReplayPolicy(trace, CustomPolicy("max_map_chunk_mb:16", "ccalloc"), config);
  ASSERT_FALSE(r.event_costs.empty());
  std::int64_t maps = 0, unmaps = 0, returns = 0, waits = 0, last = -1;
  for (const EventCost& c : r.event_costs) {
    EXPECT_GT(c.event, last);
    last = c.event;
    maps += c.maps;
    unmaps += c.unmaps;
    returns += c.returns;
    waits += c.waits;
    EXPECT_GT(c.maps + c.unmaps + c.returns + c.waits + c.device_allocs + c.device_frees, 0)
        << "event " << c.event;
    EXPECT_LE(c.foreground_unmaps, c.unmaps) << "event " << c.event;
    const TraceEvent& e = trace.events[static_cast<std::size_t>(c.event)];
    EXPECT_EQ(c.id, e.id);
    if (c.op == 'a') {
      EXPECT_NE(c.address, 0u) << "event " << c.event;
    } else {
      EXPECT_EQ(c.address, 0u) << "event " << c.event;
    }
  }
  EXPECT_EQ(maps, r.maps);
  EXPECT_EQ(unmaps, r.unmaps);
  EXPECT_EQ(returns, r.returns);
  EXPECT_EQ(waits, r.stream_waits);
  EXPECT_GT(returns, 0);  // the trace moves memory back and forth

  const std::vector<std::string> lines =
      absl::StrSplit(EventCostsCsv({r}), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), r.event_costs.size() + 1);
  EXPECT_THAT(lines[0], HasSubstr("policy,event,op,id,bytes,stream,address,maps,unmaps"));
  EXPECT_THAT(lines[1], ::testing::StartsWith("ccalloc,"));
}

TEST(ReplayTest, TimelineAndPlotNeedATimeline) {
  const Trace t = Handmade("plot<&>", {{true, 0, 3 << 20}, {true, 1, 1 << 20}, {false, 0, 0}});
  ReplayConfig config;
  ReplayResult without = ReplayWith(t, "ccalloc", config);
  EXPECT_FALSE(TimelineCsv({without}).ok());
  EXPECT_FALSE(PlotSvg({without}).ok());

  config.record_timeline = true;
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config)};
  absl::StatusOr<std::string> csv = TimelineCsv(results);
  ASSERT_TRUE(csv.ok()) << csv.status();
  const std::vector<std::string> lines = absl::StrSplit(*csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "event,pytorch-native_allocated_bytes,pytorch-native_reserved_bytes,"
            "pytorch-native_device_ops,ccalloc_allocated_bytes,ccalloc_reserved_bytes,"
            "ccalloc_device_ops");
  EXPECT_THAT(lines[2], StartsWith(absl::StrCat("1,", 4 << 20, ",")));

  absl::StatusOr<std::string> svg = PlotSvg(results);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_THAT(*svg, StartsWith("<svg"));
  EXPECT_THAT(*svg, HasSubstr("plot&lt;&amp;&gt;"));  // the title, escaped
  EXPECT_THAT(*svg, HasSubstr("ccalloc: reserved"));
  EXPECT_THAT(*svg, HasSubstr("GiB"));
}

TEST(ReplayTest, BadInputIsAnErrorNotACrash) {
  EXPECT_EQ(PresetPolicy("tcmalloc").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(PresetPolicy("tcmalloc").status().message(), HasSubstr("pytorch-native"));
  EXPECT_FALSE(CustomPolicy("no_such_key:1").ok());
  absl::StatusOr<Policy> custom = CustomPolicy("expandable_segments:True,release_slack:0.1");
  ASSERT_TRUE(custom.ok()) << custom.status();
  EXPECT_TRUE(custom->options.expandable_segments);
  EXPECT_EQ(custom->name, "custom");

  // A free of a block never allocated: the trace is refused up front.
  Trace bad = Handmade("bad", {{true, 0, 512}});
  bad.events.push_back(TraceEvent{Op::kFree, 7, 0, 0});
  absl::StatusOr<Policy> p = PresetPolicy("ccalloc");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(Replay(bad, *p, ReplayConfig{}).ok());
  ReplayConfig negative;
  negative.timing_repetitions = -1;
  EXPECT_FALSE(Replay(Handmade("ok", {{true, 0, 512}}), *p, negative).ok());
  EXPECT_FALSE(LoadTrace((TracesDir() / "missing.trace.gz").string()).ok());
}

TEST(ReplayTest, ReferenceRowsOnlyForThePublishedTraces) {
  EXPECT_EQ(ReferenceRows("gpt2").size(), 3u);
  EXPECT_EQ(ReferenceRows("resnet").size(), 3u);
  EXPECT_TRUE(ReferenceRows("transformer").empty());
}

// ---------------------------------------------------------------------------
// Driver calls, the cost table and the modelled driver time
// ---------------------------------------------------------------------------

std::filesystem::path DefaultCostTablePath() {
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "bench" / "driver_costs" /
         "h100.json";
}

std::int64_t Calls(const ReplayResult& r, DriverCall c) {
  return r.driver_calls[static_cast<int>(c)];
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

TEST(DriverCostsTest, CountingBackendAgreesWithSimBackendsOwnCounts) {
  auto sim = std::make_unique<SimBackend>();
  SimBackend* raw = sim.get();
  auto counting = std::make_unique<CountingBackend>(std::move(sim));
  CountingBackend* counter = counting.get();
  {
    Options options = DefaultOptions();
    options.expandable_segments = true;
    DeviceAllocator allocator(std::move(counting), options);
    std::vector<DevicePtr> ptrs;
    for (std::size_t mib : {3, 40, 7, 100, 1}) {
      absl::StatusOr<DevicePtr> p = allocator.Allocate(mib * kMiBytes, 0);
      ASSERT_TRUE(p.ok()) << p.status();
      ptrs.push_back(*p);
    }
    for (DevicePtr p : ptrs) ASSERT_TRUE(allocator.Free(p).ok());
    ASSERT_TRUE(allocator.EmptyCache().ok());
    const DriverCallCounts calls = counter->counts();
    const SimBackend::Counts sim_counts = raw->counts();
    // The sim counts a map per chunk and the stretches apart.
    EXPECT_EQ(calls.MappedChunks(raw->PageSize()), sim_counts.map_calls);
    EXPECT_EQ(calls.Total(DriverCall::kMap) + calls.Total(DriverCall::kMapRun),
              sim_counts.map_stretches);
    EXPECT_GT(calls.Total(DriverCall::kMapRun), 0) << "no block mapped several chunks at once";
    EXPECT_EQ(calls.Total(DriverCall::kUnmap), sim_counts.unmap_calls);
    EXPECT_EQ(calls.Total(DriverCall::kDeviceAlloc), sim_counts.allocate_calls);
    EXPECT_EQ(calls.Total(DriverCall::kDeviceFree), sim_counts.deallocate_calls);
    EXPECT_EQ(calls.Total(DriverCall::kDeviceSynchronize), sim_counts.synchronize_calls);
    EXPECT_GT(calls.Total(DriverCall::kMap), 0);
    EXPECT_GT(calls.Total(DriverCall::kUnmap), 0);
    // Every chunk created was released, at the size it was created with.
    EXPECT_EQ(calls.by_bytes[static_cast<int>(DriverCall::kCreate)],
              calls.by_bytes[static_cast<int>(DriverCall::kRelease)]);
  }
}

DriverCostEntry Entry(std::vector<DriverCall> calls, std::uint64_t bytes, double us) {
  DriverCostEntry e;
  e.calls = std::move(calls);
  e.bytes = bytes;
  e.us = us;
  e.source = "test";
  return e;
}

TEST(DriverCostsTest, ModelIsTheHandComputedSum) {
  DriverCostTable table;
  table.device = "test";
  table.entries = {Entry({DriverCall::kCreate, DriverCall::kMap}, 2 * kMiBytes, 30),
                   Entry({DriverCall::kMap}, 2 * kMiBytes, 5),
                   Entry({DriverCall::kUnmap}, 2 * kMiBytes, 20),
                   Entry({DriverCall::kUnmap}, 6 * kMiBytes, 40),
                   Entry({DriverCall::kDeviceAlloc}, 2 * kMiBytes, 10),
                   Entry({DriverCall::kDeviceAlloc}, 4 * kMiBytes, 20)};
  DriverCallCounts counts;
  counts.Add(DriverCall::kCreate, 2 * kMiBytes, 3);
  counts.Add(DriverCall::kMap, 2 * kMiBytes, 5);
  counts.Add(DriverCall::kUnmap, 4 * kMiBytes, 2);       // between 2 and 6 MiB: 30 us
  counts.Add(DriverCall::kDeviceAlloc, 1 * kMiBytes, 1);  // below the smallest: 10 us
  counts.Add(DriverCall::kDeviceAlloc, 8 * kMiBytes, 1);  // beyond: 20 + 5 us/MiB * 4 MiB
  counts.Add(DriverCall::kEventRecord, 0, 7);             // no entry
  const DriverTimeModel m = ModelDriverTime(counts, table);
  // 3 creates pair with 3 maps (30 each), 2 maps alone (5), 2 unmaps (30),
  // allocs 10 + 40.
  EXPECT_DOUBLE_EQ(m.us, 3 * 30 + 2 * 5 + 2 * 30 + 10 + 40);
  EXPECT_EQ(m.priced_calls, 3 * 2 + 2 + 2 + 2);
  EXPECT_EQ(m.unpriced_total(), 7);
  EXPECT_EQ(m.UnpricedText(), "event_record 7");
}

TEST(DriverCostsTest, ReplayModelsTheSumOfItsCounts) {
  // pytorch-native puts 3 MiB and 5 MiB in one 20 MiB segment: one cuMemAlloc
  // of 20 MiB, priced between the 2 MiB and 256 MiB entries.
  const Trace t = Handmade("small", {{true, 0, 3 * kMiBytes},
                                     {true, 1, 5 * kMiBytes},
                                     {false, 0, 0},
                                     {false, 1, 0}});
  auto table = std::make_shared<DriverCostTable>();
  table->device = "test";
  table->entries = {Entry({DriverCall::kDeviceAlloc}, 2 * kMiBytes, 10),
                    Entry({DriverCall::kDeviceAlloc}, 256 * kMiBytes, 100)};
  ReplayConfig config;
  config.driver_costs = table;
  config.steps = 4;
  const ReplayResult native = ReplayWith(t, "pytorch-native", config);
  EXPECT_EQ(Calls(native, DriverCall::kDeviceAlloc), 1);
  EXPECT_EQ(native.driver_calls_total, 1);
  EXPECT_TRUE(native.driver_time_modelled);
  const double expected_us = 10 + 90.0 * (20 - 2) / (256 - 2);
  EXPECT_NEAR(native.modelled_driver_us, expected_us, 1e-9);
  EXPECT_NEAR(native.modelled_driver_ms_per_step(), expected_us / 1000 / 4, 1e-12);
  EXPECT_EQ(native.unpriced_driver_calls, 0);
  EXPECT_EQ(native.steps_source, "given");

  // Every kind priced at (its index + 1) us, whatever the size: the model is
  // exactly Σ calls × cost over the counts the replay reports.
  auto flat = std::make_shared<DriverCostTable>();
  flat->device = "flat";
  for (int k = 0; k < kNumDriverCalls; ++k) {
    flat->entries.push_back(Entry({static_cast<DriverCall>(k)}, 0, k + 1.0));
  }
  config.driver_costs = flat;
  const ReplayResult growable = ReplayWith(t, "ccalloc", config);
  double sum = 0;
  for (int k = 0; k < kNumDriverCalls; ++k) {
    sum += static_cast<double>(growable.driver_calls[k]) * (k + 1.0);
  }
  EXPECT_GT(growable.driver_calls_total, 0);
  EXPECT_DOUBLE_EQ(growable.modelled_driver_us, sum);
  EXPECT_EQ(growable.unpriced_driver_calls, 0);
}

TEST(DriverCostsTest, ParserRejectsMalformedTablesWithAClearError) {
  const std::string good = R"({"schema": "ccalloc-driver-costs/1", "device": "x",
    "costs": [{"call": "map", "bytes": 2097152, "us": 1.5, "source": "s"}]})";
  ASSERT_TRUE(ParseDriverCostTable(good, "good.json").ok())
      << ParseDriverCostTable(good, "good.json").status();
  struct Case {
    std::string json;
    std::string error;
  };
  const std::vector<Case> cases = {
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x", "costs": [)",
       "not valid JSON: unexpected end of text"},
      {R"({"schema": "ccalloc-driver-costs/1",
          "device": "x" "costs": []})",
       "bad.json:2:25: not valid JSON: expected ',' or '}'"},
      {R"([1, 2])", "not a JSON object"},
      {R"({"schema": "v0", "device": "x", "costs": []})", "\"schema\" is \"v0\""},
      {R"({"schema": "ccalloc-driver-costs/1", "costs": []})", "\"device\" is missing"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x"})", "\"costs\" is missing"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "mmap", "us": 1, "source": "s"}]})",
       "costs[0]: unknown call \"mmap\""},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "us": -1, "source": "s"}]})",
       "\"us\" in costs[0] must be a number of microseconds >= 0"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "us": 1}]})",
       "\"source\" is missing"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "byte": 2097152, "us": 1, "source": "s"}]})",
       "unknown key \"byte\" in costs[0]"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "bytes": 2097152, "us": 1, "source": "s"},
                    {"call": "map", "bytes": 2097152, "us": 2, "source": "s"}]})",
       "costs[1]: a second entry for map at 2097152 bytes"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "bytes": 2097152, "us": 1, "source": "s"},
                    {"call": "map", "us": 2, "source": "s"}]})",
       "with and without \"bytes\""},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "bytes": 1.5, "us": 1, "source": "s"}]})",
       "\"bytes\" must be a whole number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    absl::StatusOr<DriverCostTable> t = ParseDriverCostTable(c.json, "bad.json");
    ASSERT_FALSE(t.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.error));
    EXPECT_THAT(std::string(t.status().message()), StartsWith("bad.json"));
  }
  EXPECT_TRUE(absl::IsNotFound(LoadDriverCostTable("/nonexistent/costs.json").status()));
}

TEST(DriverCostsTest, TableRoundTripsThroughItsJson) {
  DriverCostTable table;
  table.device = "NVIDIA \"Test\" GPU";
  table.driver_version = "12.8";
  table.source = "measured";
  DriverCostEntry e = Entry({DriverCall::kMap}, 2 * kMiBytes, 9.125);
  e.median_us = 8.5;
  e.mean_us = 9.125;
  e.min_us = 7;
  e.max_us = 30.25;
  e.samples = 50;
  table.entries = {e, Entry({DriverCall::kCreate, DriverCall::kMap}, 2 * kMiBytes, 30),
                   Entry({DriverCall::kEventRecord}, 0, 1.75)};
  const std::string json = DriverCostTableToJson(table);
  absl::StatusOr<DriverCostTable> back = ParseDriverCostTable(json, "round trip");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
  EXPECT_EQ(DriverCostTableToJson(*back), json);
  EXPECT_EQ(back->device, table.device);
  ASSERT_EQ(back->entries.size(), 3u);
  EXPECT_EQ(back->entries[0].median_us, 8.5);
  EXPECT_EQ(back->entries[0].samples, 50);
  EXPECT_EQ(back->entries[1].calls.size(), 2u);
}

TEST(DriverCostsTest, CommittedDefaultTableParsesAndStatesItsSources) {
  absl::StatusOr<DriverCostTable> t = LoadDriverCostTable(DefaultCostTablePath().string());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->entries.empty());
  for (const DriverCostEntry& e : t->entries) EXPECT_FALSE(e.source.empty());
}

TEST(DriverCostsTest, ReportAndJsonCarryDriverColumnsAndTheWorstRatio) {
  const Trace t = Handmade("small", {{true, 0, 3 * kMiBytes},
                                     {true, 1, 5 * kMiBytes},
                                     {false, 0, 0},
                                     {false, 1, 0}});
  absl::StatusOr<DriverCostTable> table = LoadDriverCostTable(DefaultCostTablePath().string());
  ASSERT_TRUE(table.ok()) << table.status();
  ReplayConfig config;
  config.driver_costs = std::make_shared<const DriverCostTable>(*table);
  config.steps = 2;
  std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                       ReplayWith(t, "ccalloc", config)};
  const std::string report = FormatDriverTable(results);
  EXPECT_THAT(report, HasSubstr("stream waits"));
  EXPECT_THAT(report, HasSubstr("driver ms/step"));
  EXPECT_THAT(report, HasSubstr("per step = total / 2 steps (--steps"));
  const std::string json = ResultsToJson(results);
  for (const char* key : {"\"driver_calls\": {\"device_alloc\": 1,", "\"stream_waits\": ",
                          "\"waited_events\": 0", "\"modelled_driver_ms_per_step\": ",
                          "\"steps\": 2"}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
  const std::string summary = FormatSummary(results);
  EXPECT_THAT(summary, StartsWith("worst ratio over all traces (1): pytorch-native "));
  EXPECT_THAT(summary, HasSubstr(", ccalloc 1."));
}

// ---------------------------------------------------------------------------
// The plain report: the first lines a newcomer reads
// ---------------------------------------------------------------------------

// Two 1 GiB blocks, the first freed, then 1.5 GiB, twice over: PyTorch's
// native policy cannot put the 1.5 GiB block in the 1 GiB hole and holds 3.5
// GiB for 2.5 GiB in use; ccalloc moves pages instead. Two steps.
Trace FragmentingTrace(const std::string& name = "frag") {
  Trace t = Handmade(name, {{true, 0, kGiBytes},
                            {true, 1, kGiBytes},
                            {false, 0, 0},
                            {true, 2, 3 * kGiBytes / 2},
                            {false, 2, 0},
                            {false, 1, 0},
                            {true, 3, kGiBytes},
                            {true, 4, kGiBytes},
                            {false, 3, 0},
                            {true, 5, 3 * kGiBytes / 2},
                            {false, 5, 0},
                            {false, 4, 0}});
  t.steps = 2;
  return t;
}

ReplayConfig PricedConfig() {
  absl::StatusOr<DriverCostTable> table = LoadDriverCostTable(DefaultCostTablePath().string());
  EXPECT_TRUE(table.ok()) << table.status();
  ReplayConfig config;
  if (table.ok()) config.driver_costs = std::make_shared<const DriverCostTable>(*table);
  return config;
}

// Milliseconds as the plain report gives them: 2 decimals below 10, 1 below 100.
std::string Ms(double ms) {
  return ms < 10 ? absl::StrFormat("%.2f", ms) : absl::StrFormat("%.1f", ms);
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(ReplayReportTest, FirstLinesStateTheReplaysFigures) {
  const Trace t = FragmentingTrace();
  const ReplayConfig config = PricedConfig();
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config)};
  const ReplayResult& native = results[0];
  const ReplayResult& ours = results[1];
  // The figures the sentence is made of, known by hand for the native policy.
  ASSERT_EQ(native.peak_reserved_bytes, 7 * kGiBytes / 2);
  ASSERT_EQ(native.peak_allocated_bytes, 5 * kGiBytes / 2);
  ASSERT_LT(ours.peak_reserved_bytes, native.peak_reserved_bytes);
  ASSERT_TRUE(native.fits && ours.fits);

  const std::string text = FormatPlainSummary(results);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 2u) << text;
  EXPECT_LE(lines.size(), 4u) << text;
  const double saved = static_cast<double>(native.peak_reserved_bytes - ours.peak_reserved_bytes);
  EXPECT_EQ(lines[0],
            absl::StrFormat(
                "frag: PyTorch's allocator would hold 3.5 GiB at its peak for 2.5 GiB "
                "in use (1.400x); ccalloc holds %.1f GiB (%.3fx), %.1f MiB less (%.0f%%).",
                static_cast<double>(ours.peak_reserved_bytes) / kGiBytes, ours.ratio,
                saved / kMiBytes, 100.0 * saved / static_cast<double>(native.peak_reserved_bytes)))
      << text;
  // Driver time a step after warm-up on the allocating thread, each policy's.
  ASSERT_GT(ours.late_foreground_driver_ms_per_step(), 0)
      << "ccalloc maps pages in the second step";
  EXPECT_THAT(lines[1],
              StartsWith("  Driver time a step after warm-up, on the allocating thread: "));
  EXPECT_THAT(lines[1],
              HasSubstr(absl::StrCat("PyTorch ", Ms(native.late_foreground_driver_ms_per_step()),
                                     " ms, ccalloc ", Ms(ours.late_foreground_driver_ms_per_step()),
                                     " ms (modelled, ", ours.driver_costs_device,
                                     " costs; the last half of 2 steps)")));
  EXPECT_THAT(text, Not(HasSubstr("OUT OF MEMORY")));
  EXPECT_THAT(text, Not(HasSubstr("Host time"))) << "not timed";
}

TEST(ReplayReportTest, HostTimeWhenTimedAndTotalsWithoutSteps) {
  Trace t = FragmentingTrace();
  t.steps = 0;  // and not a published trace: no per-step figures
  ReplayConfig config = PricedConfig();
  config.timing_repetitions = 0;
  absl::StatusOr<ReplayResult> native = Replay(t, *PresetPolicy("pytorch-native"), config);
  config.timing_repetitions = 3;
  absl::StatusOr<ReplayResult> ours = Replay(t, *PresetPolicy("ccalloc"), config);
  ASSERT_TRUE(native.ok() && ours.ok());
  ASSERT_EQ(ours->steps, 0);
  native->ns_per_op_passes = {100, 110, 120};  // as if timed
  native->ns_per_op = 110;
  const std::string text = FormatPlainSummary({*native, *ours});
  auto total_ms = [](const ReplayResult& r) {
    return Ms((r.modelled_driver_us - r.background_driver_us) / 1000.0);
  };
  ASSERT_GT(ours->modelled_driver_us, 0);
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "  Driver time over the whole trace, on the allocating thread: PyTorch ",
                        total_ms(*native), " ms, ccalloc ", total_ms(*ours), " ms")))
      << text;
  EXPECT_THAT(text, HasSubstr("steps unknown: --steps N gives it per step"));
  EXPECT_THAT(text, HasSubstr(absl::StrFormat(
                        "  Host time per allocate or free: PyTorch 110 ns, ccalloc %.0f ns "
                        "(measured on this machine, the median of 3 replays).",
                        ours->ns_per_op)));

  // Without a cost table: the calls, counted.
  const ReplayResult uncosted = ReplayWith(t, "ccalloc");
  ASSERT_FALSE(uncosted.driver_time_modelled);
  EXPECT_THAT(FormatPlainSummary({uncosted}),
              HasSubstr(absl::StrCat("  Driver calls over the whole trace: ccalloc ",
                                     uncosted.driver_calls_total, " (their time is not modelled")));
}

TEST(ReplayReportTest, SaysPlainlyWhichPolicyRanOutOfMemory) {
  // 2.5 GiB are in use at once: a 2 GiB card is too small for either policy.
  const Trace t = FragmentingTrace();
  ReplayConfig config = PricedConfig();
  config.capacity = 2 * kGiBytes;
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config)};
  for (const ReplayResult& r : results) {
    ASSERT_FALSE(r.fits) << r.policy;
  }
  const std::string text = FormatPlainSummary(results);
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "  PyTorch's allocator ran OUT OF MEMORY on the simulated 2.0 GiB card: ",
                        results[0].ooms, results[0].ooms == 1 ? " allocation" : " allocations",
                        " refused (the first at event ", results[0].first_oom_event, ")")))
      << text;
  EXPECT_THAT(text, HasSubstr(absl::StrCat("  ccalloc ran OUT OF MEMORY on the simulated 2.0 GiB "
                                           "card: ",
                                           results[1].ooms)));
  const std::string overview = FormatOverview(results);
  EXPECT_THAT(overview, HasSubstr(" OOM"));
  EXPECT_THAT(overview, HasSubstr("ran out of memory on frag"));

  // One that fits says nothing of it.
  config.capacity = 0;
  const std::string roomy = FormatPlainSummary(
      {ReplayWith(t, "pytorch-native", config), ReplayWith(t, "ccalloc", config)});
  EXPECT_THAT(roomy, Not(HasSubstr("OUT OF MEMORY")));
}

TEST(ReplayReportTest, NamesOtherPoliciesAndComparesEachWithPytorch) {
  const Trace t = FragmentingTrace();
  const ReplayConfig config = PricedConfig();
  ReplayConfig timing_off = config;
  timing_off.timing_repetitions = 0;
  absl::StatusOr<Policy> classic = CustomPolicy("expandable_segments:False");
  ASSERT_TRUE(classic.ok());
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config),
                                             *Replay(t, *classic, timing_off)};
  ASSERT_EQ(results[2].policy, "custom");
  const std::string text = FormatPlainSummary(results);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 3u) << text;
  EXPECT_THAT(lines[0], HasSubstr("; ccalloc holds ")) << text;
  // The custom policy by name and settings, against PyTorch's allocator.
  const ReplayResult& custom = results[2];
  const std::int64_t d = results[0].peak_reserved_bytes - custom.peak_reserved_bytes;
  EXPECT_THAT(lines[1],
              StartsWith(absl::StrFormat(
                  "  custom (expandable_segments:False) would hold %.1f GiB (%.3fx), ",
                  static_cast<double>(custom.peak_reserved_bytes) / kGiBytes, custom.ratio)))
      << text;
  if (d == 0) {
    EXPECT_THAT(lines[1], HasSubstr("as much as PyTorch's allocator"));
  } else {
    EXPECT_THAT(lines[1], HasSubstr(d > 0 ? "less than PyTorch's allocator"
                                          : "more than PyTorch's allocator"));
  }
  EXPECT_THAT(text, HasSubstr(", custom "));  // in the driver line

  // Without pytorch-native nothing is "less": the first policy leads.
  const std::string alone = FormatPlainSummary({results[1]});
  EXPECT_THAT(alone, StartsWith("frag: ccalloc would hold "));
  EXPECT_THAT(alone, Not(HasSubstr("less")));
}

TEST(ReplayReportTest, VerboseAddsTheFullTablesUnchanged) {
  const Trace t = FragmentingTrace();
  ReplayConfig config = PricedConfig();
  config.layout_at = 3;
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config)};
  const std::string plain = FormatTraceReport(results, /*verbose=*/false);
  const std::string verbose = FormatTraceReport(results, /*verbose=*/true);
  EXPECT_THAT(plain, StartsWith(FormatPlainSummary(results)));
  EXPECT_THAT(verbose, StartsWith(FormatPlainSummary(results)));
  // The old tables' headers, only with verbose.
  for (const char* header : {"peak alloc MiB", "frag@peak", "(un)maps/1k", "stream waits",
                             "caller ms/step", "does NOT fit", " fits in "}) {
    EXPECT_THAT(plain, Not(HasSubstr(header))) << header;
  }
  EXPECT_THAT(verbose, HasSubstr("peak alloc MiB"));
  EXPECT_THAT(verbose, HasSubstr("caller ms/step"));
  EXPECT_THAT(verbose, HasSubstr(FormatTable(results) + FormatDriverTable(results) +
                                 FormatComparison(results)));
  // An asked-for layout either way.
  ASSERT_FALSE(results[1].layout.empty());
  EXPECT_THAT(plain, HasSubstr(absl::StrCat("ccalloc: ", results[1].layout)));
  EXPECT_THAT(verbose, HasSubstr(absl::StrCat("ccalloc: ", results[1].layout)));
}

TEST(ReplayReportTest, OverviewHasARowPerTraceAndTheWorstCase) {
  const ReplayConfig config = PricedConfig();
  const Trace frag = FragmentingTrace();
  // A trace without fragmentation: both hold what is in use.
  Trace flat =
      Handmade("flat", {{true, 0, kGiBytes}, {false, 0, 0}, {true, 1, kGiBytes}, {false, 1, 0}});
  flat.steps = 2;
  std::vector<ReplayResult> results;
  for (const Trace* t : {&frag, static_cast<const Trace*>(&flat)}) {
    for (const char* p : {"pytorch-native", "ccalloc"})
      results.push_back(ReplayWith(*t, p, config));
  }
  ASSERT_GT(results[0].ratio, results[2].ratio);
  const std::string text = FormatOverview(results);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 6u) << text;
  EXPECT_THAT(lines[0],
              StartsWith("trace  PyTorch GiB  ratio  ms/step  ccalloc GiB  ratio  ms/step"));
  EXPECT_THAT(lines[0], HasSubstr("saved"));
  auto row = [&](const std::string& trace) {
    for (const std::string& l : lines) {
      if (absl::StartsWith(l, trace + " ")) return l;
    }
    return std::string();
  };
  const std::string frag_row = row("frag");
  const std::vector<std::string> cells = absl::StrSplit(frag_row, ' ', absl::SkipEmpty());
  ASSERT_EQ(cells.size(), 9u) << frag_row;
  EXPECT_EQ(cells[1], "3.50");
  EXPECT_EQ(cells[2], "1.400");
  EXPECT_EQ(cells[4], absl::StrFormat(
                          "%.2f", static_cast<double>(results[1].peak_reserved_bytes) / kGiBytes));
  EXPECT_EQ(cells[5], absl::StrFormat("%.3f", results[1].ratio));
  EXPECT_EQ(cells[6], Ms(results[1].late_foreground_driver_ms_per_step()));
  EXPECT_EQ(cells[7], absl::StrFormat("%.2f", static_cast<double>(results[0].peak_reserved_bytes -
                                                                  results[1].peak_reserved_bytes) /
                                                  kGiBytes));
  EXPECT_FALSE(row("flat").empty()) << text;
  EXPECT_THAT(text, HasSubstr("Worst case over 2 traces:"));
  EXPECT_THAT(text, HasSubstr("PyTorch's allocator holds at most 1.4000x its peak in use (frag)"));
  EXPECT_THAT(text,
              HasSubstr(absl::StrFormat("ccalloc holds at most %.4fx its peak in use (%s)",
                                        std::max(results[1].ratio, results[3].ratio),
                                        results[1].ratio >= results[3].ratio ? "frag" : "flat")));
  ASSERT_EQ(results[2].peak_reserved_bytes, results[3].peak_reserved_bytes);
  EXPECT_THAT(text, HasSubstr("saves nothing on flat")) << "frag saves 0.9 GiB";
  EXPECT_THAT(text, Not(HasSubstr("OOM")));
}

}  // namespace
}  // namespace ccalloc::replay
