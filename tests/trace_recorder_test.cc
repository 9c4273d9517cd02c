// A recorded trace replays to the same allocator state: the recorder sees
// exactly the requests the allocator accepted, in order.
#include "stats/trace_recorder.h"

#include <filesystem>
#include <memory>
#include <vector>

#include "allocator/cache/device_allocator.h"
#include "allocator/backends/sim_backend.h"
#include "gtest/gtest.h"
#include "stats/trace.h"

namespace ccalloc {
namespace {

std::unique_ptr<DeviceAllocator> MakeAllocator(bool expandable) {
  SimBackend::Config config;
  config.auto_complete_events = true;
  config.capacity = std::size_t{8} << 30;
  Options options = DefaultOptions();
  options.expandable_segments = expandable;
  return std::make_unique<DeviceAllocator>(std::make_unique<SimBackend>(config), options);
}

TEST(TraceRecorderTest, RecordedTraceReplaysToTheSamePeaks) {
  auto original = MakeAllocator(/*expandable=*/false);
  TraceRecorder recorder("unit");
  original->SetTraceRecorder(&recorder);
  std::vector<DevicePtr> live;
  const StreamId kStreamA = 0x7f00aa, kStreamB = 0x7f00bb;
  for (int i = 0; i < 400; ++i) {
    const std::size_t size = (std::size_t{1} << (9 + i % 16)) + 100 * i;
    absl::StatusOr<DevicePtr> p = original->Allocate(size, i % 3 == 0 ? kStreamB : kStreamA);
    ASSERT_TRUE(p.ok()) << p.status();
    live.push_back(*p);
    if (i % 4 == 3) {
      ASSERT_TRUE(original->Free(live[live.size() / 2]).ok());
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(live.size() / 2));
    }
  }
  // A rejected free is not recorded.
  EXPECT_FALSE(original->Free(live.front() + 1).ok());  // interior: never a block start
  ASSERT_TRUE(original->Free(live.back()).ok());
  live.pop_back();

  const std::string path =
      (std::filesystem::temp_directory_path() / "ccalloc_recorded.trace.gz").string();
  ASSERT_TRUE(recorder.Write(path).ok());
  absl::StatusOr<Trace> trace = ReadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_TRUE(ValidateTrace(*trace).ok());
  EXPECT_EQ(trace->num_ids, 400u);
  EXPECT_EQ(trace->events.size(), 400u + 100u + 1u);
  // Streams are renumbered in order of first use.
  EXPECT_EQ(trace->events[0].stream, 0u);  // i == 0 used stream B: first seen
  EXPECT_EQ(trace->events[1].stream, 1u);  // then stream A
  for (const TraceEvent& e : trace->events) EXPECT_LE(e.stream, 1u);

  auto replayed = MakeAllocator(/*expandable=*/false);
  std::vector<DevicePtr> ptrs(trace->num_ids);
  for (const TraceEvent& e : trace->events) {
    if (e.op == TraceEvent::Op::kAlloc) {
      absl::StatusOr<DevicePtr> p = replayed->Allocate(e.bytes, e.stream);
      ASSERT_TRUE(p.ok());
      ptrs[e.id] = *p;
    } else {
      ASSERT_TRUE(replayed->Free(ptrs[e.id]).ok());
    }
  }
  const MemoryStats a = original->GetStats();
  const MemoryStats b = replayed->GetStats();
  EXPECT_EQ(a.allocated_bytes[kStatAll].peak, b.allocated_bytes[kStatAll].peak);
  EXPECT_EQ(a.reserved_bytes[kStatAll].peak, b.reserved_bytes[kStatAll].peak);
  EXPECT_EQ(a.allocated_bytes[kStatAll].current, b.allocated_bytes[kStatAll].current);
  EXPECT_EQ(a.num_device_alloc, b.num_device_alloc);
  for (DevicePtr p : live) ASSERT_TRUE(original->Free(p).ok());
  std::filesystem::remove(path);
}

TEST(TraceRecorderTest, DetachedRecorderSeesNothing) {
  auto allocator = MakeAllocator(/*expandable=*/true);
  TraceRecorder recorder;
  allocator->SetTraceRecorder(&recorder);
  absl::StatusOr<DevicePtr> p = allocator->Allocate(4096, 0);
  ASSERT_TRUE(p.ok());
  allocator->SetTraceRecorder(nullptr);
  ASSERT_TRUE(allocator->Free(*p).ok());
  Trace trace = recorder.Snapshot();
  ASSERT_EQ(trace.events.size(), 1u);
  EXPECT_EQ(trace.events[0].bytes, 4096u);
}

// Pause and resume are recorded with the region and the bytes, written as
// "p"/"r" lines and read back; traces without them read as before, and a
// bad pause line is a clear error.
TEST(TraceRecorderTest, PauseAndResumeAreRecordedWrittenAndReadBack) {
  auto allocator = MakeAllocator(/*expandable=*/true);
  TraceRecorder recorder;
  allocator->SetTraceRecorder(&recorder);
  const RegionId previous = SetCurrentRegion(4);
  absl::StatusOr<DevicePtr> p = allocator->Allocate(6 << 20, 0);
  SetCurrentRegion(previous);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<std::size_t> paused = allocator->Pause(4, {.backup = true});
  ASSERT_TRUE(paused.ok()) << paused.status();
  absl::StatusOr<std::size_t> resumed = allocator->Resume(4);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE(allocator->Free(*p).ok());
  const Trace trace = recorder.Snapshot();
  ASSERT_EQ(trace.events.size(), 4u);
  EXPECT_EQ(trace.events[0].region, 4u) << "the alloc line names its region";
  EXPECT_EQ(trace.events[1], (TraceEvent{TraceEvent::Op::kPause, 4, *paused, 0}));
  EXPECT_EQ(trace.events[2], (TraceEvent{TraceEvent::Op::kResume, 4, *resumed, 0}));
  const std::string path =
      (std::filesystem::temp_directory_path() / "ccalloc_pause_trace_test.trace").string();
  ASSERT_TRUE(WriteTrace(trace, path).ok());
  absl::StatusOr<Trace> back = ReadTrace(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->events, trace.events);
  EXPECT_EQ(back->num_ids, 1u);
  // Alloc lines without a region (old traces) read as region 0; a region
  // field that is not a 32-bit number is an error.
  absl::StatusOr<Trace> old = ParseTrace("a 0 512 0\na 1 512 0 7\nf 0\nf 1\n", "t");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->events[0].region, 0u);
  EXPECT_EQ(old->events[1].region, 7u);
  EXPECT_FALSE(ParseTrace("a 0 512 0 4294967296\nf 0\n", "t").ok());
  absl::StatusOr<Trace> bad = ParseTrace("a 0 512 0\np 0 4096\n", "t");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("region"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace ccalloc
