// cuda_backend_gpu_test.cc — CudaBackend against a real CUDA device.
//
// Every CudaBackendTest skips itself where CudaDeviceAvailable() is false (the
// build machines have no GPU and no driver); CudaBackendNoDeviceTest covers
// exactly that situation and skips where a device exists.
//
// The tests open the driver themselves for what the backend deliberately does
// not offer (streams, memset, copies back to the host), so that they can check
// that memory handed out is really usable, not just that calls return OK.
#include "allocator/backends/cuda_backend.h"

#include <cuda.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/ipc.h"
#include "allocator/cache/options.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cuda_test_driver.h"

namespace ccalloc {
namespace {

using ::testing::HasSubstr;

constexpr char kNoDevice[] =
    "no CUDA driver or device on this machine (CudaDeviceAvailable() is false)";
constexpr std::size_t kMiB = std::size_t{1} << 20;

// Makes `device`'s primary context current on this thread while alive, then
// leaves the thread with no current context.
class PrimaryContextOnThisThread {
 public:
  PrimaryContextOnThisThread(const TestDriver& driver, int device)
      : driver_(driver) {
    ok_ = driver_.device_get(&device_, device) == CUDA_SUCCESS &&
          driver_.primary_ctx_retain(&context_, device_) == CUDA_SUCCESS;
    retained_ = ok_;
    ok_ = ok_ && driver_.ctx_set_current(context_) == CUDA_SUCCESS;
  }
  PrimaryContextOnThisThread(const PrimaryContextOnThisThread&) = delete;
  PrimaryContextOnThisThread& operator=(const PrimaryContextOnThisThread&) =
      delete;
  ~PrimaryContextOnThisThread() {
    if (!retained_) return;
    driver_.ctx_set_current(nullptr);
    driver_.primary_ctx_release(device_);
  }

  bool ok() const { return ok_; }
  CUcontext context() const { return context_; }

 private:
  const TestDriver& driver_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool ok_ = false;
  bool retained_ = false;
};

CUcontext CurrentContext(const TestDriver& driver) {
  CUcontext current = nullptr;
  EXPECT_EQ(driver.ctx_get_current(&current), CUDA_SUCCESS);
  return current;
}

TEST(CudaBackendNoDeviceTest, FactoryReportsUnavailable) {
  if (CudaDeviceAvailable()) {
    GTEST_SKIP() << "a CUDA device is present; CudaBackendTest covers it";
  }
  absl::StatusOr<std::unique_ptr<DeviceBackend>> backend = CreateCudaBackend(0);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kUnavailable)
      << backend.status();
  EXPECT_FALSE(backend.status().message().empty());

  // Either the driver is unusable, or it works and sees no device.
  absl::StatusOr<int> count = CudaDeviceCount();
  if (count.ok()) {
    EXPECT_EQ(*count, 0);
  } else {
    EXPECT_EQ(count.status().code(), absl::StatusCode::kUnavailable)
        << count.status();
  }
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDeviceAvailable()) GTEST_SKIP() << kNoDevice;
    driver_ = LoadTestDriver();
    ASSERT_NE(driver_, nullptr) << "libcuda.so.1 lacks a symbol the tests use";
    absl::StatusOr<std::unique_ptr<DeviceBackend>> backend =
        CreateCudaBackend(0);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = *std::move(backend);
    // The test thread's own driver calls need a context; the backend's calls
    // then find theirs already current.
    context_ = std::make_unique<PrimaryContextOnThisThread>(*driver_, 0);
    ASSERT_TRUE(context_->ok());
  }

  void Write(DevicePtr ptr, const std::vector<std::uint8_t>& bytes) {
    ASSERT_EQ(driver_->memcpy_htod(ptr, bytes.data(), bytes.size()), CUDA_SUCCESS);
  }

  std::vector<std::uint8_t> ReadBack(DevicePtr ptr, std::size_t bytes) {
    std::vector<std::uint8_t> host(bytes);
    EXPECT_EQ(driver_->memcpy_dtoh(host.data(), ptr, bytes), CUDA_SUCCESS);
    return host;
  }

  const TestDriver* driver_ = nullptr;
  std::unique_ptr<DeviceBackend> backend_;
  std::unique_ptr<PrimaryContextOnThisThread> context_;
};

TEST_F(CudaBackendTest, ReportsDeviceAndName) {
  EXPECT_EQ(backend_->device(), 0);
  EXPECT_STREQ(backend_->name(), "cuda");
  absl::StatusOr<int> count = CudaDeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_GE(*count, 1);
}

TEST_F(CudaBackendTest, AllocateWriteReadFree) {
  absl::StatusOr<DevicePtr> ptr = backend_->Allocate(kMiB);
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  ASSERT_NE(*ptr, 0u);
  ASSERT_EQ(driver_->memset_d8(*ptr, 0xAB, kMiB), CUDA_SUCCESS);
  std::vector<std::uint8_t> host = ReadBack(*ptr, kMiB);
  EXPECT_EQ(host.front(), 0xAB);
  EXPECT_EQ(host.back(), 0xAB);
  EXPECT_TRUE(backend_->Deallocate(*ptr, kMiB).ok());
}

TEST_F(CudaBackendTest, MemoryInfoIsSaneAndDropsAfterAllocation) {
  absl::StatusOr<DeviceMemoryInfo> before = backend_->MemoryInfo();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(before->total_bytes, 0u);
  EXPECT_LE(before->free_bytes, before->total_bytes);

  absl::StatusOr<DevicePtr> ptr = backend_->Allocate(64 * kMiB);
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  absl::StatusOr<DeviceMemoryInfo> after = backend_->MemoryInfo();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_LT(after->free_bytes, before->free_bytes);
  EXPECT_EQ(after->total_bytes, before->total_bytes);
  EXPECT_TRUE(backend_->Deallocate(*ptr, 64 * kMiB).ok());
}

TEST_F(CudaBackendTest, HugeAllocationIsResourceExhausted) {
  absl::StatusOr<DevicePtr> ptr = backend_->Allocate(std::size_t{1} << 50);
  ASSERT_FALSE(ptr.ok());
  EXPECT_EQ(ptr.status().code(), absl::StatusCode::kResourceExhausted)
      << ptr.status();
  EXPECT_THAT(ptr.status().message(), HasSubstr("cuMemAlloc"));
  EXPECT_THAT(ptr.status().message(), HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
  // A failed allocation must not poison the context.
  absl::StatusOr<DevicePtr> small = backend_->Allocate(kMiB);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_TRUE(backend_->Deallocate(*small, kMiB).ok());
}

TEST_F(CudaBackendTest, OutOfRangeDeviceIsInvalidArgument) {
  absl::StatusOr<int> count = CudaDeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  for (int device : {-1, *count, *count + 100}) {
    absl::StatusOr<std::unique_ptr<DeviceBackend>> backend =
        CreateCudaBackend(device);
    ASSERT_FALSE(backend.ok()) << "device " << device;
    EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument)
        << backend.status();
    EXPECT_THAT(backend.status().message(), HasSubstr(std::to_string(device)));
  }
}

TEST_F(CudaBackendTest, EventOnStreamCompletesAfterSynchronizeEvent) {
  CUstream stream = nullptr;
  ASSERT_EQ(driver_->stream_create(&stream, CU_STREAM_NON_BLOCKING),
            CUDA_SUCCESS);
  constexpr std::size_t kBytes = 256 * kMiB;
  absl::StatusOr<DevicePtr> ptr = backend_->Allocate(kBytes);
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  // Enough queued work that the event is unlikely to be complete at once.
  for (int i = 0; i < 16; ++i) {
    ASSERT_EQ(driver_->memset_d8_async(*ptr, static_cast<unsigned char>(i),
                                       kBytes, stream),
              CUDA_SUCCESS);
  }
  absl::StatusOr<EventHandle> event =
      backend_->RecordEvent(reinterpret_cast<StreamId>(stream));
  ASSERT_TRUE(event.ok()) << event.status();
  absl::StatusOr<bool> early = backend_->QueryEvent(*event);
  ASSERT_TRUE(early.ok()) << early.status();  // true or false, both fine

  EXPECT_TRUE(backend_->SynchronizeEvent(*event).ok());
  absl::StatusOr<bool> done = backend_->QueryEvent(*event);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(*done);
  EXPECT_EQ(ReadBack(*ptr, 1).front(), 15);

  backend_->DestroyEvent(*event);
  EXPECT_EQ(driver_->stream_destroy(stream), CUDA_SUCCESS);
  EXPECT_TRUE(backend_->Deallocate(*ptr, kBytes).ok());
}

TEST_F(CudaBackendTest, QueryEventTrueAfterSynchronizeDevice) {
  constexpr std::size_t kBytes = 64 * kMiB;
  absl::StatusOr<DevicePtr> ptr = backend_->Allocate(kBytes);
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  ASSERT_EQ(driver_->memset_d8_async(*ptr, 1, kBytes, /*hStream=*/nullptr),
            CUDA_SUCCESS);
  absl::StatusOr<EventHandle> event = backend_->RecordEvent(/*stream=*/0);
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_TRUE(backend_->SynchronizeDevice().ok());
  absl::StatusOr<bool> done = backend_->QueryEvent(*event);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(*done);
  backend_->DestroyEvent(*event);
  EXPECT_TRUE(backend_->Deallocate(*ptr, kBytes).ok());
}

// The event cache is the point of DestroyEvent: the next RecordEvent must not
// pay for cuEventCreate.
TEST_F(CudaBackendTest, DestroyedEventsAreReused) {
  absl::StatusOr<EventHandle> first = backend_->RecordEvent(0);
  ASSERT_TRUE(first.ok()) << first.status();
  backend_->DestroyEvent(*first);
  absl::StatusOr<EventHandle> second = backend_->RecordEvent(0);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, *first);
  EXPECT_TRUE(backend_->SynchronizeEvent(*second).ok());
  backend_->DestroyEvent(*second);
}

TEST_F(CudaBackendTest, NullEventIsInvalidArgument) {
  EXPECT_EQ(backend_->QueryEvent(0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->SynchronizeEvent(0).code(),
            absl::StatusCode::kInvalidArgument);
  backend_->DestroyEvent(0);  // a no-op, not a crash
}

// PyTorch threads call in with their own current device; the backend must not
// switch it under them (the runtime derives the device from the context).
TEST_F(CudaBackendTest, CallsLeaveTheCallersContextAlone) {
  auto exercise = [this] {
    absl::StatusOr<DevicePtr> ptr = backend_->Allocate(kMiB);
    ASSERT_TRUE(ptr.ok()) << ptr.status();
    absl::StatusOr<EventHandle> event = backend_->RecordEvent(0);
    ASSERT_TRUE(event.ok()) << event.status();
    EXPECT_TRUE(backend_->SynchronizeEvent(*event).ok());
    backend_->DestroyEvent(*event);
    EXPECT_TRUE(backend_->MemoryInfo().ok());
    EXPECT_TRUE(backend_->Deallocate(*ptr, kMiB).ok());
  };

  std::thread bare([&] {
    ASSERT_EQ(CurrentContext(*driver_), nullptr);
    exercise();
    EXPECT_EQ(CurrentContext(*driver_), nullptr);
  });
  bare.join();

  absl::StatusOr<int> count = CudaDeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  if (*count < 2) return;
  std::thread on_other_device([&] {
    PrimaryContextOnThisThread other(*driver_, 1);
    ASSERT_TRUE(other.ok());
    exercise();
    EXPECT_EQ(CurrentContext(*driver_), other.context());
  });
  on_other_device.join();
}

TEST_F(CudaBackendTest, ConcurrentCallsFromManyThreads) {
  constexpr int kThreads = 8;
  constexpr int kIterations = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < kIterations; ++i) {
        absl::StatusOr<DevicePtr> ptr = backend_->Allocate(kMiB);
        ASSERT_TRUE(ptr.ok()) << ptr.status();
        absl::StatusOr<EventHandle> event = backend_->RecordEvent(0);
        ASSERT_TRUE(event.ok()) << event.status();
        EXPECT_TRUE(backend_->QueryEvent(*event).ok());
        EXPECT_TRUE(backend_->SynchronizeEvent(*event).ok());
        backend_->DestroyEvent(*event);
        EXPECT_TRUE(backend_->Deallocate(*ptr, kMiB).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST_F(CudaBackendTest, VirtualMemoryRoundTrip) {
  if (!backend_->SupportsVirtualMemory()) {
    GTEST_SKIP() << "device 0 has no virtual memory management";
  }
  const std::size_t page = backend_->PageSize();
  ASSERT_GT(page, 0u);
  ASSERT_EQ(page & (page - 1), 0u) << "page size " << page;

  // Two physical pages mapped side by side in a four-page range, then one
  // write across the seam: the growable-segment pattern in miniature.
  const std::size_t range = 4 * page;
  absl::StatusOr<DevicePtr> base = backend_->ReserveAddressRange(range);
  ASSERT_TRUE(base.ok()) << base.status();
  EXPECT_EQ(*base % page, 0u);
  std::vector<PhysicalHandle> handles;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<PhysicalHandle> handle = backend_->CreatePhysical(page);
    ASSERT_TRUE(handle.ok()) << handle.status();
    handles.push_back(*handle);
    absl::Status mapped = backend_->Map(*base + i * page, page, *handle);
    ASSERT_TRUE(mapped.ok()) << mapped;
  }

  ASSERT_EQ(driver_->memset_d8(*base, 0x5A, 2 * page), CUDA_SUCCESS);
  std::vector<std::uint8_t> host = ReadBack(*base, 2 * page);
  EXPECT_EQ(host.front(), 0x5A);
  EXPECT_EQ(host[page - 1], 0x5A);
  EXPECT_EQ(host[page], 0x5A);
  EXPECT_EQ(host.back(), 0x5A);

  EXPECT_TRUE(backend_->SynchronizeDevice().ok());
  for (int i = 0; i < 2; ++i) {
    absl::Status unmapped = backend_->Unmap(*base + i * page, page);
    EXPECT_TRUE(unmapped.ok()) << unmapped;
    absl::Status released = backend_->ReleasePhysical(handles[i]);
    EXPECT_TRUE(released.ok()) << released;
  }
  absl::Status freed = backend_->ReleaseAddressRange(*base, range);
  EXPECT_TRUE(freed.ok()) << freed;
}

// Chunks of different sizes mapped as one stretch with one access call
// (what growable segments do for the new pages of a block): the memory is
// there across every seam, each chunk unmaps alone, and a stretch that
// cannot be mapped leaves nothing mapped.
TEST_F(CudaBackendTest, MapChunksMapsAStretchWithOneAccess) {
  if (!backend_->SupportsVirtualMemory()) {
    GTEST_SKIP() << "device 0 has no virtual memory management";
  }
  const std::size_t page = backend_->PageSize();
  const std::size_t sizes[] = {page, 2 * page, page};
  const std::size_t total = 4 * page;
  absl::StatusOr<DevicePtr> base = backend_->ReserveAddressRange(total + page);
  ASSERT_TRUE(base.ok()) << base.status();
  std::vector<DeviceBackend::ChunkToMap> chunks;
  for (std::size_t bytes : sizes) {
    absl::StatusOr<PhysicalHandle> handle = backend_->CreatePhysical(bytes);
    ASSERT_TRUE(handle.ok()) << handle.status();
    chunks.push_back({bytes, *handle});
  }
  // A size that is not a whole number of pages is refused, mapping nothing.
  std::vector<DeviceBackend::ChunkToMap> bad = chunks;
  bad[1].bytes += 1;
  EXPECT_EQ(backend_->MapChunks(*base, bad, {}).code(), absl::StatusCode::kInvalidArgument);
  // A chunk larger than its handle fails at the driver: the chunk before it
  // was mapped and is unmapped again (the good stretch maps there next).
  bad = chunks;
  bad[1].handle = chunks[0].handle;  // one page, asked to map two
  EXPECT_FALSE(backend_->MapChunks(*base, bad, {}).ok());
  absl::Status mapped = backend_->MapChunks(*base, chunks, {});
  ASSERT_TRUE(mapped.ok()) << mapped;

  ASSERT_EQ(driver_->memset_d8(*base, 0x3C, total), CUDA_SUCCESS);
  std::vector<std::uint8_t> host = ReadBack(*base, total);
  for (std::size_t at : {std::size_t{0}, page - 1, page, 3 * page - 1, 3 * page, total - 1}) {
    EXPECT_EQ(host[at], 0x3C) << "byte " << at;
  }
  EXPECT_TRUE(backend_->SynchronizeDevice().ok());
  std::size_t offset = 0;
  for (const DeviceBackend::ChunkToMap& c : chunks) {
    absl::Status unmapped = backend_->Unmap(*base + offset, c.bytes);
    EXPECT_TRUE(unmapped.ok()) << unmapped;
    EXPECT_TRUE(backend_->ReleasePhysical(c.handle).ok());
    offset += c.bytes;
  }
  EXPECT_TRUE(backend_->ReleaseAddressRange(*base, total + page).ok());
}

// A run of mappings undone by UnmapRun (one cuMemUnmap over the run where
// the driver takes it, else one a mapping): all of it goes, it says so, and
// the range can be mapped and used again.
TEST_F(CudaBackendTest, UnmapRunUndoesAWholeRun) {
  if (!backend_->SupportsVirtualMemory()) {
    GTEST_SKIP() << "device 0 has no virtual memory management";
  }
  const std::size_t page = backend_->PageSize();
  constexpr std::size_t kRun = 4;
  absl::StatusOr<DevicePtr> base = backend_->ReserveAddressRange(kRun * page);
  ASSERT_TRUE(base.ok()) << base.status();
  std::vector<PhysicalHandle> handles;
  for (std::size_t i = 0; i < kRun; ++i) {
    absl::StatusOr<PhysicalHandle> handle = backend_->CreatePhysical(page);
    ASSERT_TRUE(handle.ok()) << handle.status();
    handles.push_back(*handle);
  }
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    absl::Status mapped = backend_->MapRun(*base, page, handles, {});
    ASSERT_TRUE(mapped.ok()) << mapped;
    ASSERT_EQ(driver_->memset_d8(*base, 0x5A, kRun * page), CUDA_SUCCESS);
    std::vector<std::uint8_t> host = ReadBack(*base, kRun * page);
    EXPECT_EQ(host.front(), 0x5A);
    EXPECT_EQ(host.back(), 0x5A);
    ASSERT_TRUE(backend_->SynchronizeDevice().ok());
    std::size_t unmapped = 0;
    absl::Status s = backend_->UnmapRun(*base, kRun * page, page, &unmapped);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(unmapped, kRun * page);
  }
  for (PhysicalHandle h : handles) EXPECT_TRUE(backend_->ReleasePhysical(h).ok());
  EXPECT_TRUE(backend_->ReleaseAddressRange(*base, kRun * page).ok());
}

TEST_F(CudaBackendTest, VirtualMemoryRejectsUnalignedArguments) {
  if (!backend_->SupportsVirtualMemory()) {
    GTEST_SKIP() << "device 0 has no virtual memory management";
  }
  const std::size_t page = backend_->PageSize();
  EXPECT_EQ(backend_->ReserveAddressRange(page + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->CreatePhysical(page / 2).status().code(),
            absl::StatusCode::kInvalidArgument);

  absl::StatusOr<DevicePtr> base = backend_->ReserveAddressRange(2 * page);
  ASSERT_TRUE(base.ok()) << base.status();
  absl::StatusOr<PhysicalHandle> handle = backend_->CreatePhysical(page);
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_EQ(backend_->Map(*base + 1, page, *handle).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->Map(*base, page + 1, *handle).code(),
            absl::StatusCode::kInvalidArgument);
  // Nothing was mapped, so the range and the memory release cleanly.
  EXPECT_TRUE(backend_->ReleasePhysical(*handle).ok());
  EXPECT_TRUE(backend_->ReleaseAddressRange(*base, 2 * page).ok());
}

// --- IPC and peer access -----------------------------------------------------

std::vector<std::uint8_t> Pattern(std::size_t bytes, std::uint8_t seed) {
  std::vector<std::uint8_t> out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::uint8_t>(seed + i * 7);
  return out;
}

bool FdIsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

// A physical chunk exported as a file descriptor and imported again (CUDA
// allows that within one process, unlike cuIpcOpenMemHandle) is the same
// memory: bytes written through one mapping read back through the other.
// The descriptor stays open until the exporter's handle is released.
TEST_F(CudaBackendTest, PhysicalChunkExportImportWithinOneProcess) {
  if (!backend_->SupportsVirtualMemory()) {
    GTEST_SKIP() << "device 0 has no virtual memory management";
  }
  const std::size_t page = backend_->PageSize();
  absl::StatusOr<PhysicalHandle> handle = backend_->CreatePhysical(page);
  ASSERT_TRUE(handle.ok()) << handle.status();
  absl::StatusOr<SharedPhysical> shared = backend_->ExportPhysical(*handle);
  if (shared.status().code() == absl::StatusCode::kUnimplemented) {
    EXPECT_TRUE(backend_->ReleasePhysical(*handle).ok());
    GTEST_SKIP() << shared.status();
  }
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->pid, static_cast<int>(getpid()));
  EXPECT_TRUE(FdIsOpen(shared->fd));
  absl::StatusOr<SharedPhysical> again = backend_->ExportPhysical(*handle);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->fd, shared->fd) << "one descriptor per handle";

  absl::StatusOr<DevicePtr> producer = backend_->ReserveAddressRange(page);
  absl::StatusOr<DevicePtr> consumer = backend_->ReserveAddressRange(page);
  ASSERT_TRUE(producer.ok() && consumer.ok());
  ASSERT_TRUE(backend_->Map(*producer, page, *handle).ok());
  absl::StatusOr<PhysicalHandle> imported = backend_->ImportPhysical(*shared);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_TRUE(backend_->Map(*consumer, page, *imported).ok());

  const std::vector<std::uint8_t> one = Pattern(page, 3);
  Write(*producer, one);
  EXPECT_EQ(ReadBack(*consumer, page), one);
  const std::vector<std::uint8_t> two = Pattern(page, 101);
  Write(*consumer, two);
  EXPECT_EQ(ReadBack(*producer, page), two);

  EXPECT_TRUE(backend_->SynchronizeDevice().ok());
  EXPECT_TRUE(backend_->Unmap(*consumer, page).ok());
  EXPECT_TRUE(backend_->ReleasePhysical(*imported).ok());
  EXPECT_TRUE(FdIsOpen(shared->fd)) << "the exporter still holds the memory";
  EXPECT_TRUE(backend_->Unmap(*producer, page).ok());
  EXPECT_TRUE(backend_->ReleasePhysical(*handle).ok());
  EXPECT_FALSE(FdIsOpen(shared->fd)) << "released with its handle";
  EXPECT_TRUE(backend_->ReleaseAddressRange(*producer, page).ok());
  EXPECT_TRUE(backend_->ReleaseAddressRange(*consumer, page).ok());
}

// End to end on growable segments: ExportIpc of a block that shares a chunk
// with its neighbour, opened with IpcImporter in this process; the block's
// bytes are at base + offset.
TEST_F(CudaBackendTest, GrowableBlockExportOpenWithinOneProcess) {
  if (!backend_->SupportsVirtualMemory()) {
    GTEST_SKIP() << "device 0 has no virtual memory management";
  }
  absl::StatusOr<std::unique_ptr<DeviceBackend>> producer_backend = CreateCudaBackend(0);
  ASSERT_TRUE(producer_backend.ok()) << producer_backend.status();
  Options options = PytorchNativeOptions();
  options.expandable_segments = true;
  DeviceAllocator alloc(*std::move(producer_backend), options);
  absl::StatusOr<DevicePtr> a = alloc.Allocate(3 * kMiB, 0);
  absl::StatusOr<DevicePtr> b = alloc.Allocate(3 * kMiB, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<DeviceAllocator::IpcExport> e = alloc.ExportIpc(*b + 4096);
  if (e.status().code() == absl::StatusCode::kUnimplemented) GTEST_SKIP() << e.status();
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<std::pair<DevicePtr, std::size_t>> range = alloc.BaseAllocation(*b);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(e->offset, *b + 4096 - range->first);

  const std::vector<std::uint8_t> bytes = Pattern(3 * kMiB, 42);
  Write(*b, bytes);
  {
    IpcImporter importer(backend_.get());
    absl::StatusOr<DevicePtr> base = importer.Open(e->handle);
    ASSERT_TRUE(base.ok()) << base.status();
    EXPECT_EQ(ReadBack(*base + e->offset - 4096, bytes.size()), bytes);
    absl::StatusOr<DevicePtr> twice = importer.Open(e->handle);
    ASSERT_TRUE(twice.ok()) << twice.status();
    EXPECT_EQ(*twice, *base);
    EXPECT_TRUE(importer.Close(*base).ok());
    EXPECT_TRUE(importer.Close(*base).ok());
    EXPECT_EQ(importer.Close(*base).code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(alloc.Free(*a).ok());
  EXPECT_TRUE(alloc.Free(*b).ok());
}

// Classic segments export a 64-byte cuIpc handle inside PyTorch's layout;
// the driver will not open it in the exporting process.
TEST_F(CudaBackendTest, ClassicExportHasPytorchLayout) {
  absl::StatusOr<std::unique_ptr<DeviceBackend>> producer_backend = CreateCudaBackend(0);
  ASSERT_TRUE(producer_backend.ok()) << producer_backend.status();
  Options options = PytorchNativeOptions();
  options.expandable_segments = false;
  DeviceAllocator alloc(*std::move(producer_backend), options);
  absl::StatusOr<DevicePtr> a = alloc.Allocate(3 * kMiB, 0);
  absl::StatusOr<DevicePtr> b = alloc.Allocate(3 * kMiB, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<DeviceAllocator::IpcExport> e = alloc.ExportIpc(*b);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->handle.size(), 2 + kIpcMemHandleBytes);
  EXPECT_EQ(e->handle[0], 2);
  EXPECT_EQ(e->handle[1], 'c');
  EXPECT_EQ(e->offset, *b - *a);
  IpcImporter importer(backend_.get());
  EXPECT_FALSE(importer.Open(e->handle).ok()) << "CUDA refuses its own process's handle";
  EXPECT_EQ(importer.open_mappings(), 0u);
  EXPECT_TRUE(alloc.Free(*a).ok());
  EXPECT_TRUE(alloc.Free(*b).ok());
}

TEST_F(CudaBackendTest, PeerChecksAndAccess) {
  absl::StatusOr<int> count = CudaDeviceCount();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(backend_->CheckPeer(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend_->CheckPeer(*count).code(), absl::StatusCode::kInvalidArgument);
  if (!backend_->SupportsVirtualMemory()) return;
  const std::size_t page = backend_->PageSize();
  absl::StatusOr<DevicePtr> base = backend_->ReserveAddressRange(page);
  absl::StatusOr<PhysicalHandle> handle = backend_->CreatePhysical(page);
  ASSERT_TRUE(base.ok() && handle.ok());
  ASSERT_TRUE(backend_->Map(*base, page, *handle).ok());
  const int own[] = {0};
  EXPECT_TRUE(backend_->SetAccess(*base, page, own).ok());
  if (*count >= 2) {
    absl::Status peer = backend_->CheckPeer(1);
    if (peer.ok()) {
      const int devices[] = {1};
      EXPECT_TRUE(backend_->SetAccess(*base, page, devices).ok());
    } else {
      EXPECT_EQ(peer.code(), absl::StatusCode::kFailedPrecondition) << peer;
    }
  }
  EXPECT_TRUE(backend_->Unmap(*base, page).ok());
  EXPECT_TRUE(backend_->ReleasePhysical(*handle).ok());
  EXPECT_TRUE(backend_->ReleaseAddressRange(*base, page).ok());
}

// With two devices that can reach each other, growable memory of device 0
// mapped before and after AddPeerAccess(1) reads back correctly through
// device 1's context (the copy runs on device 1, so it needs the access).
TEST_F(CudaBackendTest, AllocatorAddPeerAccess) {
  absl::StatusOr<int> count = CudaDeviceCount();
  ASSERT_TRUE(count.ok());
  if (*count < 2) GTEST_SKIP() << "needs two devices";
  if (!backend_->SupportsVirtualMemory()) GTEST_SKIP() << "no virtual memory management";
  if (!backend_->CheckPeer(1).ok()) GTEST_SKIP() << "device 1 cannot access device 0";
  absl::StatusOr<std::unique_ptr<DeviceBackend>> producer_backend = CreateCudaBackend(0);
  ASSERT_TRUE(producer_backend.ok());
  Options options = PytorchNativeOptions();
  options.expandable_segments = true;
  DeviceAllocator alloc(*std::move(producer_backend), options);
  absl::StatusOr<DevicePtr> a = alloc.Allocate(5 * kMiB, 0);
  ASSERT_TRUE(a.ok());
  absl::Status added = alloc.AddPeerAccess(1);
  ASSERT_TRUE(added.ok()) << added;
  EXPECT_TRUE(alloc.AddPeerAccess(1).ok());
  absl::StatusOr<DevicePtr> b = alloc.Allocate(9 * kMiB, 0);
  ASSERT_TRUE(b.ok()) << b.status();
  const std::vector<std::uint8_t> before = Pattern(5 * kMiB, 9);
  const std::vector<std::uint8_t> after = Pattern(9 * kMiB, 77);
  Write(*a, before);
  Write(*b, after);
  {
    PrimaryContextOnThisThread on_peer(*driver_, 1);
    ASSERT_TRUE(on_peer.ok());
    EXPECT_EQ(ReadBack(*a, before.size()), before);
    EXPECT_EQ(ReadBack(*b, after.size()), after);
  }
  ASSERT_EQ(driver_->ctx_set_current(context_->context()), CUDA_SUCCESS);
  std::string why;
  EXPECT_TRUE(alloc.Validate(&why)) << why;
  EXPECT_TRUE(alloc.Free(*a).ok());
  EXPECT_TRUE(alloc.Free(*b).ok());
}

// The backup path: page-locked host memory and async copies on the
// backend's own stream, waited for once.
TEST_F(CudaBackendTest, CopiesRoundTripThroughPinnedHost) {
  constexpr std::size_t kBytes = 6 * kMiB;
  absl::StatusOr<DevicePtr> ptr = backend_->Allocate(kBytes);
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  absl::StatusOr<HostPtr> host = backend_->AllocateHost(kBytes);
  ASSERT_TRUE(host.ok()) << host.status();
  const std::vector<std::uint8_t> bytes = Pattern(kBytes, 31);
  Write(*ptr, bytes);
  // Two copies of unequal halves, one wait.
  ASSERT_TRUE(backend_->CopyToHost(*host, *ptr, kMiB).ok());
  ASSERT_TRUE(backend_->CopyToHost(*host + kMiB, *ptr + kMiB, kBytes - kMiB).ok());
  ASSERT_TRUE(backend_->WaitCopies().ok());
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(*host), bytes.data(), kBytes), 0);
  ASSERT_EQ(driver_->memset_d8(*ptr, 0, kBytes), CUDA_SUCCESS);
  ASSERT_TRUE(backend_->CopyToDevice(*ptr, *host, kBytes).ok());
  ASSERT_TRUE(backend_->WaitCopies().ok());
  EXPECT_EQ(ReadBack(*ptr, kBytes), bytes);
  EXPECT_TRUE(backend_->FreeHost(*host, kBytes).ok());
  EXPECT_TRUE(backend_->Deallocate(*ptr, kBytes).ok());
}

// Copy fences: waiting for one means the copies queued before it are done,
// and fences are reused after WaitCopies.
TEST_F(CudaBackendTest, CopyFencesCoverTheCopiesQueuedBefore) {
  constexpr std::size_t kBytes = 8 * kMiB;
  absl::StatusOr<DevicePtr> ptr = backend_->Allocate(kBytes);
  ASSERT_TRUE(ptr.ok()) << ptr.status();
  absl::StatusOr<HostPtr> host = backend_->AllocateHost(kBytes);
  ASSERT_TRUE(host.ok()) << host.status();
  const std::vector<std::uint8_t> bytes = Pattern(kBytes, 17);
  Write(*ptr, bytes);
  for (int round = 0; round < 2; ++round) {
    std::memset(reinterpret_cast<void*>(*host), 0, kBytes);
    ASSERT_TRUE(backend_->CopyToHost(*host, *ptr, kBytes / 2).ok());
    absl::StatusOr<CopyFence> first = backend_->RecordCopyFence();
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(backend_->CopyToHost(*host + kBytes / 2, *ptr + kBytes / 2, kBytes / 2).ok());
    absl::StatusOr<CopyFence> second = backend_->RecordCopyFence();
    ASSERT_TRUE(second.ok()) << second.status();
    ASSERT_TRUE(backend_->WaitCopyFence(*first).ok());
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(*host), bytes.data(), kBytes / 2), 0);
    ASSERT_TRUE(backend_->WaitCopyFence(*second).ok());
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(*host), bytes.data(), kBytes), 0);
    ASSERT_TRUE(backend_->WaitCopies().ok());
  }
  EXPECT_TRUE(backend_->FreeHost(*host, kBytes).ok());
  EXPECT_TRUE(backend_->Deallocate(*ptr, kBytes).ok());
}

// Sleep and wake on the device: a region paused with backup gives its memory
// back to the device (cuMemGetInfo sees it) and resumes with its bytes, at
// the same addresses. 163 MiB live, in three of the 64 MiB batches: chunks
// are given back while later copies run (the pipeline), as in a large pause.
TEST_F(CudaBackendTest, AllocatorPauseWithBackupRestoresBytes) {
  if (!backend_->SupportsVirtualMemory()) GTEST_SKIP() << "no virtual memory management";
  absl::StatusOr<std::unique_ptr<DeviceBackend>> backend = CreateCudaBackend(0);
  ASSERT_TRUE(backend.ok());
  Options options = PytorchNativeOptions();
  options.expandable_segments = true;
  DeviceAllocator alloc(*std::move(backend), options);
  const RegionId previous = SetCurrentRegion(3);
  absl::StatusOr<DevicePtr> a = alloc.Allocate(160 * kMiB, 0);
  absl::StatusOr<DevicePtr> b = alloc.Allocate(3 * kMiB + 512, 0);
  SetCurrentRegion(previous);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<std::uint8_t> pa = Pattern(160 * kMiB, 5);
  const std::vector<std::uint8_t> pb = Pattern(3 * kMiB + 512, 6);
  Write(*a, pa);
  Write(*b, pb);
  absl::StatusOr<DeviceMemoryInfo> before = backend_->MemoryInfo();
  absl::StatusOr<std::size_t> paused = alloc.Pause(3, DeviceAllocator::PauseOptions{true});
  ASSERT_TRUE(paused.ok()) << paused.status();
  absl::StatusOr<DeviceMemoryInfo> after = backend_->MemoryInfo();
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_GE(after->free_bytes, before->free_bytes + *paused - 2 * kMiB)
      << "the device did not get the paused memory back";
  EXPECT_GT(alloc.GetStats().backup_bytes, 0);
  absl::StatusOr<std::size_t> resumed = alloc.Resume(3);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(ReadBack(*a, pa.size()), pa);
  EXPECT_EQ(ReadBack(*b, pb.size()), pb);
  std::string why;
  EXPECT_TRUE(alloc.Validate(&why)) << why;
  EXPECT_TRUE(alloc.Free(*a).ok());
  EXPECT_TRUE(alloc.Free(*b).ok());
}

}  // namespace
}  // namespace ccalloc
