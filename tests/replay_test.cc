// Tests of the replay library behind ccalloc-replay: how a replay plays a
// trace (events and peaks, the input formats and generated scenarios, pause
// and resume, cross-stream frees, a lagging GPU that makes trims wait, the
// layout an event meets, a card too small for the trace, mapped_fit and
// cross_stream_reuse on the bundled traces, the chunk sizes near the end of
// memory), the JSON, --events, the timeline and plot, and bad input as an
// error, never a crash. The published peaks of the bundled traces are in
// replay_bundled_traces_test.cc, the driver cost model in
// replay_driver_costs_test.cc, the plain report in replay_report_test.cc; the
// shared helpers in tests/support/replay_fixture.h.
#include "bench/replay.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/driver_costs.h"
#include "bench/scenarios.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stats/trace.h"
#include "tests/support/replay_fixture.h"

namespace ccalloc::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Op = TraceEvent::Op;

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

// The page floor at the allocated peak: the pages under live blocks then.
// A classic segment counts whole (so it is reserved at that event); growable
// pages under the two blocks hold at least what they hold and at most what
// is reserved then; the floor of the ratio is never above the ratio.
TEST(ReplayTest, PageFloorIsThePagesUnderLiveBlocksAtTheAllocatedPeak) {
  const Trace t = Handmade("floor", {{true, 0, 3 * kMiBytes},
                                     {true, 1, 5 * kMiBytes + 4096},
                                     {false, 0, 0},
                                     {true, 2, 512 * 1024},
                                     {false, 1, 0},
                                     {false, 2, 0}});
  for (absl::string_view policy : {"pytorch-native", "ccalloc"}) {
    SCOPED_TRACE(policy);
    ReplayConfig config;
    config.record_timeline = true;
    const ReplayResult r = ReplayWith(t, policy, config);
    EXPECT_EQ(r.peak_allocated_event, 1);
    EXPECT_GE(r.page_floor_bytes, r.peak_allocated_bytes);
    EXPECT_LE(r.page_floor_bytes, r.timeline_reserved[1]);
    EXPECT_LE(r.page_floor_ratio, r.ratio + 1e-12);
    EXPECT_GT(r.page_floor_at_reserved_peak_bytes, 0);
    EXPECT_LE(r.page_floor_at_reserved_peak_bytes, r.peak_reserved_bytes);
    // Chunks hold whole pages: between the page floor and what is reserved.
    EXPECT_GE(r.chunk_floor_bytes, r.page_floor_bytes);
    EXPECT_LE(r.chunk_floor_bytes, r.timeline_reserved[1]);
    EXPECT_GE(r.chunk_floor_at_reserved_peak_bytes, r.page_floor_at_reserved_peak_bytes);
    EXPECT_LE(r.chunk_floor_at_reserved_peak_bytes, r.peak_reserved_bytes);
    if (policy == "pytorch-native") {
      EXPECT_EQ(r.page_floor_bytes, r.timeline_reserved[1]) << "classic segments count whole";
    } else {
      // 8 MiB + 4 KiB over 2 MiB pages: at least five pages.
      EXPECT_GE(r.page_floor_bytes, 10 * kMiBytes);
      EXPECT_EQ(r.page_floor_bytes % (2 * kMiBytes), 0);
    }
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
                            "\"retries\": ", "\"free_alls\": ", "\"ooms\": ", "\"fits\": ",
                            "\"page_floor_bytes\": ", "\"page_floor_ratio\": "}) {
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
}  // namespace
}  // namespace ccalloc::replay
