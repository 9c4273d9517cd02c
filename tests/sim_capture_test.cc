// sim_capture_test.cc — the simulated device's stream capture records a
// graph: work launched on a captured stream is a node after the stream's
// dependencies, an event recorded in the capture carries them, and a stream
// that waits for it joins the capture; CapturePositionOf and OrderedBefore
// answer from that graph, and what a real capture refuses (the host waiting
// for the graph's events, waits across captures, a stream not joined back at
// the end) is refused and marks the capture invalidated.
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/sim_backend.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc {
namespace {

using test::WaitStream;

constexpr StreamId kS1 = 11, kS2 = 12, kS3 = 13;

TEST(SimCaptureTest, WaitsJoinStreamsAndOrderTheirWork) {
  SimBackend sim;
  EXPECT_TRUE(absl::IsFailedPrecondition(sim.CapturePositionOf(kS1).status()));
  ASSERT_TRUE(sim.BeginCapture(kS1).ok());
  absl::StatusOr<CapturePosition> start = sim.CapturePositionOf(kS1);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_TRUE(start->nodes.empty()) << "no work captured yet";
  sim.Launch(kS1);
  const CapturePosition a = *sim.CapturePositionOf(kS1);
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.capture, start->capture);
  // kS2 is not in the capture until it waits for kS1.
  EXPECT_TRUE(absl::IsFailedPrecondition(sim.CapturePositionOf(kS2).status()));
  EXPECT_FALSE(*sim.OrderedBefore(a, kS2));
  ASSERT_TRUE(WaitStream(sim, kS2, kS1));
  EXPECT_EQ(sim.CapturePositionOf(kS2)->nodes, a.nodes);
  EXPECT_TRUE(*sim.OrderedBefore(a, kS2)) << "a dependency is ordered before";
  sim.Launch(kS2);
  const CapturePosition b = *sim.CapturePositionOf(kS2);
  EXPECT_TRUE(*sim.OrderedBefore(a, kS2)) << "an ancestor is ordered before";
  EXPECT_FALSE(*sim.OrderedBefore(b, kS1)) << "kS1 has not waited for kS2";
  sim.Launch(kS1);
  EXPECT_FALSE(*sim.OrderedBefore(b, kS1));
  ASSERT_TRUE(WaitStream(sim, kS1, kS2));
  EXPECT_TRUE(*sim.OrderedBefore(b, kS1));
  EXPECT_EQ(sim.CapturePositionOf(kS1)->nodes.size(), 2u) << "a wait adds to the dependencies";
  // A position of another capture is never ordered.
  CapturePosition other = b;
  other.capture += 1000;
  EXPECT_FALSE(*sim.OrderedBefore(other, kS1));
  EXPECT_TRUE(absl::IsFailedPrecondition(sim.EndCapture(kS2))) << "kS2 did not begin it";
  ASSERT_TRUE(sim.EndCapture(kS1).ok());
  EXPECT_FALSE(sim.capturing()) << "the joined stream left the capture with it";
  EXPECT_FALSE(*sim.OrderedBefore(b, kS1));
  EXPECT_FALSE(sim.capture_invalidated()) << sim.capture_violation();
  EXPECT_TRUE(sim.NothingOutstanding());
}

TEST(SimCaptureTest, WhatARealCaptureRefusesIsRefused) {
  SimBackend sim;
  ASSERT_TRUE(sim.BeginCapture(kS1).ok());
  ASSERT_TRUE(sim.BeginCapture(kS3).ok());
  sim.Launch(kS1);
  absl::StatusOr<EventHandle> captured = sim.RecordEvent(kS1);
  ASSERT_TRUE(captured.ok()) << captured.status();
  // The host cannot wait for the graph's event, nor another capture.
  EXPECT_TRUE(absl::IsFailedPrecondition(sim.QueryEvent(*captured).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(sim.StreamWaitEvent(kS3, *captured)));
  EXPECT_TRUE(sim.capture_invalidated());
  ASSERT_TRUE(sim.EndCapture(kS3).ok());
  // A stream that joined and did work nobody waited for.
  ASSERT_TRUE(sim.StreamWaitEvent(kS2, *captured).ok());
  sim.Launch(kS2);
  absl::Status end = sim.EndCapture(kS1);
  EXPECT_TRUE(absl::IsFailedPrecondition(end)) << end;
  EXPECT_NE(end.message().find("not joined back"), absl::string_view::npos) << end;
  EXPECT_FALSE(sim.capturing());
  // After the capture, its event is still the graph's.
  EXPECT_TRUE(absl::IsFailedPrecondition(sim.SynchronizeEvent(*captured)));
  EXPECT_TRUE(absl::IsFailedPrecondition(sim.StreamWaitEvent(kS2, *captured)));
  sim.DestroyEvent(*captured);
  // A new capture starts with a clean mark.
  ASSERT_TRUE(sim.BeginCapture(kS1).ok());
  EXPECT_FALSE(sim.capture_invalidated());
  ASSERT_TRUE(sim.EndCapture(kS1).ok());
  EXPECT_TRUE(sim.NothingOutstanding());
}

}  // namespace
}  // namespace ccalloc
