// cuda_capture_gpu_test.cc — CudaBackend's answers about a real stream
// capture's graph (CapturePositionOf, OrderedBefore), and
// graph_capture_record_stream_reuse on a real device: PyTorch's
// test_graph_capture_reclaim_2_streams pattern, with memsets standing for the
// kernels, in a global-mode capture that must end intact.
//
// Every test skips itself where CudaDeviceAvailable() is false (the build
// machines). The tests open the driver themselves for what the backend does
// not offer (streams, captures, events as PyTorch's wait_stream uses them).
#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "gtest/gtest.h"
#include "tests/support/cuda_test_driver.h"

namespace ccalloc {
namespace {

StreamId Id(CUstream stream) { return reinterpret_cast<StreamId>(stream); }

class CudaCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDeviceAvailable()) GTEST_SKIP() << "no CUDA driver or device on this machine";
    d_ = LoadTestDriver();
    ASSERT_NE(d_, nullptr) << "libcuda.so.1 lacks a symbol the tests use";
    ASSERT_EQ(d_->device_get(&device_, 0), CUDA_SUCCESS);
    ASSERT_EQ(d_->primary_ctx_retain(&context_, device_), CUDA_SUCCESS);
    ASSERT_EQ(d_->ctx_set_current(context_), CUDA_SUCCESS);
    // Non-blocking: no implicit order with the legacy stream, as PyTorch's
    // side streams.
    ASSERT_EQ(d_->stream_create(&s1_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(d_->stream_create(&s2_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(d_->event_create(&event_, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (d_ == nullptr || context_ == nullptr) return;
    d_->ctx_synchronize();
    if (event_ != nullptr) d_->event_destroy(event_);
    if (s2_ != nullptr) d_->stream_destroy(s2_);
    if (s1_ != nullptr) d_->stream_destroy(s1_);
    d_->ctx_set_current(nullptr);
    d_->primary_ctx_release(device_);
  }
  // torch.cuda.Stream.wait_stream: record on `from`, wait on `waiter`.
  void WaitStream(CUstream waiter, CUstream from) {
    ASSERT_EQ(d_->event_record(event_, from), CUDA_SUCCESS);
    ASSERT_EQ(d_->stream_wait_event(waiter, event_, 0), CUDA_SUCCESS);
  }
  // A kernel's stand-in: one memset node on `stream`.
  void Work(CUstream stream, DevicePtr ptr, std::size_t bytes) {
    ASSERT_EQ(d_->memset_d8_async(ptr, 1, bytes, stream), CUDA_SUCCESS);
  }
  // Ends the capture on s1; it must not have been invalidated.
  void EndCapture() {
    CUgraph graph = nullptr;
    ASSERT_EQ(d_->end_capture(s1_, &graph), CUDA_SUCCESS) << "the capture was invalidated";
    ASSERT_NE(graph, nullptr);
    d_->graph_destroy(graph);
  }

  const TestDriver* d_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream s1_ = nullptr;
  CUstream s2_ = nullptr;
  CUevent event_ = nullptr;
};

TEST_F(CudaCaptureTest, PositionsFollowTheCapturesGraph) {
  absl::StatusOr<std::unique_ptr<DeviceBackend>> made = CreateCudaBackend(0);
  ASSERT_TRUE(made.ok()) << made.status();
  DeviceBackend& backend = **made;
  absl::StatusOr<DevicePtr> buffer = backend.Allocate(4096);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_TRUE(absl::IsFailedPrecondition(backend.CapturePositionOf(Id(s1_)).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(backend.CapturePositionOf(0).status()))
      << "the legacy stream";

  ASSERT_EQ(d_->begin_capture(s1_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  absl::StatusOr<CapturePosition> start = backend.CapturePositionOf(Id(s1_));
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_TRUE(start->nodes.empty());
  Work(s1_, *buffer, 512);
  const CapturePosition a = *backend.CapturePositionOf(Id(s1_));
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.capture, start->capture);
  EXPECT_TRUE(absl::IsFailedPrecondition(backend.CapturePositionOf(Id(s2_)).status()));
  EXPECT_FALSE(*backend.OrderedBefore(a, Id(s2_))) << "s2 is not in the capture";
  WaitStream(s2_, s1_);
  EXPECT_TRUE(*backend.OrderedBefore(a, Id(s2_)));
  Work(s2_, *buffer + 512, 512);
  const CapturePosition b = *backend.CapturePositionOf(Id(s2_));
  EXPECT_TRUE(*backend.OrderedBefore(a, Id(s2_))) << "an ancestor";
  EXPECT_FALSE(*backend.OrderedBefore(b, Id(s1_)));
  Work(s1_, *buffer, 512);
  EXPECT_FALSE(*backend.OrderedBefore(b, Id(s1_))) << "s1 has not waited for s2";
  WaitStream(s1_, s2_);
  EXPECT_TRUE(*backend.OrderedBefore(b, Id(s1_)));
  Work(s1_, *buffer, 512);
  EXPECT_TRUE(*backend.OrderedBefore(b, Id(s1_))) << "and stays ordered";
  CapturePosition other = b;
  other.capture += 1;
  EXPECT_FALSE(*backend.OrderedBefore(other, Id(s1_)));
  EndCapture();
  EXPECT_FALSE(*backend.OrderedBefore(b, Id(s1_))) << "the capture ended";
  ASSERT_TRUE(backend.SynchronizeDevice().ok());
  ASSERT_TRUE(backend.Deallocate(*buffer, 4096).ok());
}

// test_graph_capture_reclaim_2_streams on the device, both segment kinds.
class CudaCaptureReuseTest : public CudaCaptureTest,
                             public ::testing::WithParamInterface<bool> {};

TEST_P(CudaCaptureReuseTest, TwoStreamsReuseOnlyAfterTheJoin) {
  absl::StatusOr<std::unique_ptr<DeviceBackend>> made = CreateCudaBackend(0);
  ASSERT_TRUE(made.ok()) << made.status();
  Options options = PytorchNativeOptions();
  options.expandable_segments = GetParam();
  options.graph_capture_record_stream_reuse = true;
  DeviceAllocator alloc(*std::move(made), options);
  const StreamId s1 = Id(s1_), s2 = Id(s2_);
  constexpr std::size_t kBytes = 8 * sizeof(float);
  constexpr PoolId kPool = 5;
  // PyTorch routes before it begins the capture.
  ASSERT_TRUE(
      alloc.BeginAllocateToPool(kPool, [=](StreamId s) { return s == s1 || s == s2; }).ok());
  ASSERT_EQ(d_->begin_capture(s1_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  auto allocate = [&](StreamId s) {
    absl::StatusOr<DevicePtr> p = alloc.Allocate(kBytes, s);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  };
  const DevicePtr sink1 = allocate(s1);
  const DevicePtr data1 = allocate(s1);
  WaitStream(s2_, s1_);
  const DevicePtr buf2 = allocate(s2);
  Work(s2_, buf2, kBytes);  // add(data1, 2, out=buf2)
  ASSERT_TRUE(alloc.RecordStream(data1, s2).ok());
  ASSERT_TRUE(alloc.Free(data1).ok());
  const DevicePtr data2 = allocate(s1);
  EXPECT_NE(data2, data1) << "reused before s1 waited for s2";
  WaitStream(s1_, s2_);
  Work(s1_, sink1, kBytes);  // sink1.fill_(1)
  const DevicePtr data3 = allocate(s1);
  EXPECT_EQ(data3, data1) << "not reused after s1 waited for s2";
  std::string why;
  EXPECT_TRUE(alloc.Validate(&why)) << why;
  for (DevicePtr p : {sink1, buf2, data2, data3}) ASSERT_TRUE(alloc.Free(p).ok());
  ASSERT_TRUE(alloc.EndAllocateToPool(kPool).ok());
  EndCapture();
  ASSERT_TRUE(alloc.ReleasePool(kPool).ok());
  EXPECT_TRUE(alloc.EmptyCache().ok());
  EXPECT_TRUE(alloc.Validate(&why)) << why;
}

INSTANTIATE_TEST_SUITE_P(Segments, CudaCaptureReuseTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Growable" : "Classic";
                         });

}  // namespace
}  // namespace ccalloc
