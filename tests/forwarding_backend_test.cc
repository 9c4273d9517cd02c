// ForwardingBackend (allocator/backends/forwarding_backend.h): every
// DeviceBackend call reaches the inner backend with its arguments, and its
// answer comes back; a wrapper's override takes its call and leaves the rest
// forwarded. The replay's driver counts, the tests' outstanding-resource
// checks and the reliability suites' borrowed card all stand on it.
#include "allocator/backends/forwarding_backend.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace ccalloc {
namespace {

// Answers every call with a value derived from its arguments and records
// "Name(args)", so a dropped, reordered or misrouted argument shows.
class RecordingBackend final : public DeviceBackend {
 public:
  std::vector<std::string> calls;

  int device() const override { return 7; }
  const char* name() const override { return "recording"; }
  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override {
    Note("Allocate", bytes);
    return DevicePtr{bytes + 1};
  }
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override {
    return Done("Deallocate", ptr, bytes);
  }
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo() override {
    Note("MemoryInfo");
    return DeviceMemoryInfo{11, 22};
  }
  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override {
    Note("RecordEvent", stream);
    return EventHandle{stream + 1};
  }
  absl::StatusOr<bool> QueryEvent(EventHandle event) override {
    Note("QueryEvent", event);
    return event % 2 == 1;
  }
  absl::Status SynchronizeEvent(EventHandle event) override {
    return Done("SynchronizeEvent", event);
  }
  absl::Status StreamWaitEvent(StreamId stream, EventHandle event) override {
    return Done("StreamWaitEvent", stream, event);
  }
  void DestroyEvent(EventHandle event) override { Note("DestroyEvent", event); }
  absl::Status SynchronizeDevice() override { return Done("SynchronizeDevice"); }
  absl::StatusOr<CapturePosition> CapturePositionOf(StreamId stream) override {
    Note("CapturePositionOf", stream);
    CapturePosition p;
    p.capture = stream + 1;
    return p;
  }
  absl::StatusOr<bool> OrderedBefore(const CapturePosition& before, StreamId stream) override {
    Note("OrderedBefore", before.capture, stream);
    return true;
  }
  bool SupportsVirtualMemory() const override { return true; }
  std::size_t PageSize() const override { return 4096; }
  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override {
    Note("ReserveAddressRange", bytes);
    return DevicePtr{bytes + 2};
  }
  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override {
    return Done("ReleaseAddressRange", base, bytes);
  }
  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override {
    Note("CreatePhysical", bytes);
    return PhysicalHandle{bytes + 3};
  }
  absl::Status ReleasePhysical(PhysicalHandle handle) override {
    return Done("ReleasePhysical", handle);
  }
  absl::Status Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) override {
    return Done("Map", va, bytes, handle);
  }
  absl::Status Unmap(DevicePtr va, std::size_t bytes) override { return Done("Unmap", va, bytes); }
  absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                         absl::Span<const int> peers) override {
    return Done("MapChunks", va, chunks.size(), chunks.empty() ? 0 : chunks[0].handle,
                peers.size());
  }
  absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                        std::size_t* unmapped) override {
    if (unmapped != nullptr) *unmapped = bytes / 2;
    return Done("UnmapRun", va, bytes, bytes_each);
  }
  absl::Status SetAccess(DevicePtr va, std::size_t bytes, absl::Span<const int> devices) override {
    return Done("SetAccess", va, bytes, devices.size());
  }
  absl::Status CheckPeer(int peer) override { return Done("CheckPeer", peer); }
  absl::StatusOr<HostPtr> AllocateHost(std::size_t bytes) override {
    Note("AllocateHost", bytes);
    return HostPtr{bytes + 4};
  }
  absl::Status FreeHost(HostPtr ptr, std::size_t bytes) override {
    return Done("FreeHost", ptr, bytes);
  }
  absl::Status CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) override {
    return Done("CopyToHost", dst, src, bytes);
  }
  absl::Status CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) override {
    return Done("CopyToDevice", dst, src, bytes);
  }
  absl::Status WaitCopies() override { return Done("WaitCopies"); }
  absl::StatusOr<CopyFence> RecordCopyFence() override {
    Note("RecordCopyFence");
    return CopyFence{42};
  }
  absl::Status WaitCopyFence(CopyFence fence) override { return Done("WaitCopyFence", fence); }
  absl::StatusOr<std::string> ExportAllocation(DevicePtr base) override {
    Note("ExportAllocation", base);
    return absl::StrCat("handle-", base);
  }
  absl::StatusOr<DevicePtr> OpenAllocation(absl::string_view handle) override {
    Note("OpenAllocation", handle.size());
    return DevicePtr{handle.size()};
  }
  absl::Status CloseAllocation(DevicePtr ptr) override { return Done("CloseAllocation", ptr); }
  absl::StatusOr<SharedPhysical> ExportPhysical(PhysicalHandle handle) override {
    Note("ExportPhysical", handle);
    return SharedPhysical{static_cast<int>(handle), 5};
  }
  absl::StatusOr<PhysicalHandle> ImportPhysical(SharedPhysical from) override {
    Note("ImportPhysical", from.pid, from.fd);
    return PhysicalHandle{static_cast<PhysicalHandle>(from.pid)};
  }

 private:
  template <typename... Args>
  void Note(absl::string_view call, Args... args) {
    const std::vector<std::string> parts = {absl::StrCat(args)...};
    calls.push_back(absl::StrCat(call, "(", absl::StrJoin(parts, ","), ")"));
  }
  template <typename... Args>
  absl::Status Done(absl::string_view call, Args... args) {
    Note(call, args...);
    return absl::OkStatus();
  }
};

TEST(ForwardingBackendTest, EveryCallReachesTheInnerBackendWithItsArguments) {
  RecordingBackend inner;
  ForwardingBackend fwd(&inner);
  EXPECT_EQ(&fwd.inner(), &inner);
  EXPECT_EQ(fwd.device(), 7);
  EXPECT_STREQ(fwd.name(), "recording");
  EXPECT_TRUE(fwd.SupportsVirtualMemory());
  EXPECT_EQ(fwd.PageSize(), 4096u);

  EXPECT_EQ(*fwd.Allocate(100), 101u);
  EXPECT_TRUE(fwd.Deallocate(5, 6).ok());
  EXPECT_EQ(fwd.MemoryInfo()->total_bytes, 22u);
  EXPECT_EQ(*fwd.RecordEvent(8), 9u);
  EXPECT_TRUE(*fwd.QueryEvent(9));
  EXPECT_TRUE(fwd.SynchronizeEvent(10).ok());
  EXPECT_TRUE(fwd.StreamWaitEvent(11, 12).ok());
  fwd.DestroyEvent(13);
  EXPECT_TRUE(fwd.SynchronizeDevice().ok());
  const absl::StatusOr<CapturePosition> position = fwd.CapturePositionOf(14);
  EXPECT_EQ(position->capture, 15u);
  EXPECT_TRUE(*fwd.OrderedBefore(*position, 16));
  EXPECT_EQ(*fwd.ReserveAddressRange(200), 202u);
  EXPECT_TRUE(fwd.ReleaseAddressRange(17, 18).ok());
  EXPECT_EQ(*fwd.CreatePhysical(300), 303u);
  EXPECT_TRUE(fwd.ReleasePhysical(19).ok());
  EXPECT_TRUE(fwd.Map(20, 21, 22).ok());
  EXPECT_TRUE(fwd.Unmap(23, 24).ok());
  const DeviceBackend::ChunkToMap chunks[] = {{4096, 25}, {4096, 26}};
  const int peers[] = {1};
  EXPECT_TRUE(fwd.MapChunks(27, chunks, peers).ok());
  std::size_t unmapped = 0;
  EXPECT_TRUE(fwd.UnmapRun(28, 8192, 4096, &unmapped).ok());
  EXPECT_EQ(unmapped, 4096u);
  EXPECT_TRUE(fwd.SetAccess(29, 30, peers).ok());
  EXPECT_TRUE(fwd.CheckPeer(31).ok());
  EXPECT_EQ(*fwd.AllocateHost(32), 36u);
  EXPECT_TRUE(fwd.FreeHost(45, 33).ok());
  EXPECT_TRUE(fwd.CopyToHost(46, 34, 35).ok());
  EXPECT_TRUE(fwd.CopyToDevice(36, 47, 37).ok());
  EXPECT_TRUE(fwd.WaitCopies().ok());
  EXPECT_EQ(*fwd.RecordCopyFence(), 42u);
  EXPECT_TRUE(fwd.WaitCopyFence(38).ok());
  EXPECT_EQ(*fwd.ExportAllocation(39), "handle-39");
  EXPECT_EQ(*fwd.OpenAllocation("abcd"), 4u);
  EXPECT_TRUE(fwd.CloseAllocation(40).ok());
  EXPECT_EQ(fwd.ExportPhysical(41)->pid, 41);
  EXPECT_EQ(*fwd.ImportPhysical(SharedPhysical{43, 44}), 43u);

  const std::vector<std::string> want = {
      "Allocate(100)", "Deallocate(5,6)", "MemoryInfo()", "RecordEvent(8)", "QueryEvent(9)",
      "SynchronizeEvent(10)", "StreamWaitEvent(11,12)", "DestroyEvent(13)",
      "SynchronizeDevice()", "CapturePositionOf(14)", "OrderedBefore(15,16)",
      "ReserveAddressRange(200)", "ReleaseAddressRange(17,18)", "CreatePhysical(300)",
      "ReleasePhysical(19)", "Map(20,21,22)", "Unmap(23,24)", "MapChunks(27,2,25,1)",
      "UnmapRun(28,8192,4096)", "SetAccess(29,30,1)", "CheckPeer(31)", "AllocateHost(32)",
      "FreeHost(45,33)", "CopyToHost(46,34,35)", "CopyToDevice(36,47,37)", "WaitCopies()",
      "RecordCopyFence()", "WaitCopyFence(38)", "ExportAllocation(39)", "OpenAllocation(4)",
      "CloseAllocation(40)", "ExportPhysical(41)", "ImportPhysical(43,44)"};
  EXPECT_EQ(inner.calls, want);
}

// A wrapper takes the calls it overrides; the others still reach the inner
// backend, and an override can hand its call on.
TEST(ForwardingBackendTest, AWrapperTakesWhatItOverridesAndForwardsTheRest) {
  class Wrapper final : public ForwardingBackend {
   public:
    using ForwardingBackend::ForwardingBackend;
    int maps = 0;
    absl::Status Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) override {
      ++maps;
      return ForwardingBackend::Map(va, bytes, handle);
    }
    absl::Status Unmap(DevicePtr, std::size_t) override {
      return absl::FailedPreconditionError("refused by the wrapper");
    }
  };
  RecordingBackend inner;
  Wrapper w(&inner);
  EXPECT_TRUE(w.Map(1, 2, 3).ok());
  EXPECT_EQ(w.maps, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(w.Unmap(4, 5)));
  EXPECT_EQ(*w.CreatePhysical(6), 9u);
  EXPECT_EQ(inner.calls, (std::vector<std::string>{"Map(1,2,3)", "CreatePhysical(6)"}));
}

}  // namespace
}  // namespace ccalloc
