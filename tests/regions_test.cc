// regions_test.cc — sleep and wake on the simulated device: a region's
// allocations live in segments of their own; Pause gives back exactly the
// memory the region holds (live blocks' too) while every block keeps its
// address; Resume maps memory again under the live blocks only; failures in
// the middle of a resume leave the region paused and consistent.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/backends/sim_backend.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {


// Sets the calling thread's region for a scope.
class InRegion {
 public:
  explicit InRegion(RegionId region) : previous_(SetCurrentRegion(region)) {}
  ~InRegion() { SetCurrentRegion(previous_); }

 private:
  RegionId previous_;
};

class RegionsTest : public AllocatorTest<SimGrowable> {
 protected:
  DevicePtr AllocateOk(std::size_t size, StreamId stream = 0) {
    absl::StatusOr<DevicePtr> p = alloc_->Allocate(size, stream);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  }
  std::int64_t Reserved() const { return alloc_->GetStats().reserved_bytes[kStatAll].current; }
  // What the device holds once the unmap worker's calls are done.
  std::size_t DeviceBytes() {
    if (alloc_ != nullptr) (void)alloc_->FinishBackgroundWork();
    return env_.sim()->counts().bytes_in_use;
  }
  // A pattern of `size` bytes that differs per block and per byte position.
  static std::string Pattern(DevicePtr p, std::size_t size) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i) {
      bytes[i] = static_cast<char>((p >> 21) * 131 + i * 7 + (i >> 12));
    }
    return bytes;
  }
  // Fills the block at `p` with its pattern (first and last 64 KiB: enough
  // to catch a shifted or truncated copy, cheap for the sim).
  void Fill(DevicePtr p, std::size_t size) {
    const std::size_t edge = std::min<std::size_t>(size, 64 * 1024);
    ASSERT_TRUE(env_.sim()->WriteBytes(p, Pattern(p, edge)).ok());
    ASSERT_TRUE(env_.sim()->WriteBytes(p + size - edge, Pattern(p + size - edge, edge)).ok());
  }
  bool Holds(DevicePtr p, std::size_t size) {
    const std::size_t edge = std::min<std::size_t>(size, 64 * 1024);
    absl::StatusOr<std::string> head = env_.sim()->ReadBytes(p, edge);
    absl::StatusOr<std::string> tail = env_.sim()->ReadBytes(p + size - edge, edge);
    return head.ok() && tail.ok() && *head == Pattern(p, edge) &&
           *tail == Pattern(p + size - edge, edge);
  }
  std::int64_t Backup() const { return alloc_->GetStats().backup_bytes; }
  std::int64_t BackupHost() const { return alloc_->GetStats().backup_host_bytes; }
  static constexpr DeviceAllocator::PauseOptions kBackup{.backup = true};
};

// Pause gives back exactly what the region holds, other memory untouched;
// the blocks keep their addresses, allocating in the paused region is an
// error and allocating elsewhere is not; Resume maps the live blocks again
// at the same addresses.
TEST_F(RegionsTest, PauseGivesBackTheRegionOnlyAndResumeMapsTheSameAddresses) {
  Make();
  const DevicePtr other = AllocateOk(30 * kMiB);
  std::vector<DevicePtr> weights;
  {
    InRegion r(1);
    for (std::size_t mib : {8, 24, 40}) weights.push_back(AllocateOk(mib * kMiB));
  }
  const std::int64_t reserved_before = Reserved();
  const std::size_t device_before = DeviceBytes();
  absl::StatusOr<std::size_t> paused = alloc_->Pause(1);
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_GE(*paused, 72 * kMiB);
  EXPECT_EQ(Reserved(), reserved_before - static_cast<std::int64_t>(*paused));
  EXPECT_EQ(DeviceBytes(), device_before - *paused) << "the device got back what was counted";
  EXPECT_EQ(alloc_->GetStats().paused_bytes, static_cast<std::int64_t>(*paused));
  EXPECT_TRUE(alloc_->IsPaused(1));
  EXPECT_EQ(alloc_->GetStats().allocated_bytes[kStatAll].current,
            static_cast<std::int64_t>((30 + 72) * kMiB))
      << "paused blocks are still allocated";
  {
    InRegion r(1);
    absl::StatusOr<DevicePtr> refused = alloc_->Allocate(kMiB, 0);
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
    EXPECT_NE(refused.status().message().find("paused"), std::string::npos);
  }
  const DevicePtr elsewhere = AllocateOk(4 * kMiB);
  EXPECT_TRUE(IsValid(*alloc_));

  absl::StatusOr<std::size_t> resumed = alloc_->Resume(1);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_GE(*resumed, 72 * kMiB);
  EXPECT_FALSE(alloc_->IsPaused(1));
  EXPECT_EQ(alloc_->GetStats().paused_bytes, 0);
  EXPECT_EQ(static_cast<std::int64_t>(DeviceBytes()), Reserved());
  Snapshot snap = alloc_->TakeSnapshot();
  for (DevicePtr p : weights) {
    const BlockInfo* b = BlockAt(snap, p);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->status, BlockStatus::kActiveAllocated) << "the block moved or was lost";
    const SegmentInfo* seg = SegmentOf(snap, p);
    EXPECT_EQ(seg->pool_id, kRegionPoolBit | 1);
  }
  EXPECT_TRUE(IsValid(*alloc_));
  {
    InRegion r(1);
    const DevicePtr more = AllocateOk(kMiB);
    EXPECT_TRUE(alloc_->Free(more).ok());
  }
  for (DevicePtr p : weights) EXPECT_TRUE(alloc_->Free(p).ok());
  for (DevicePtr p : {other, elsewhere}) EXPECT_TRUE(alloc_->Free(p).ok());
}

// Freed blocks of a paused region are simply free (nothing released twice);
// split and coalesced blocks are resumed by what is live, pending frees
// completed by the pause's wait.
TEST_F(RegionsTest, FreesPendingSplitAndCoalescedBlocksAcrossAPause) {
  Make();
  std::vector<DevicePtr> b;
  {
    InRegion r(2);
    for (int i = 0; i < 4; ++i) b.push_back(AllocateOk(6 * kMiB));
  }
  // b[1] is used on stream 5 too: freeing it leaves it pending.
  ASSERT_TRUE(alloc_->RecordStream(b[1], 5).ok());
  ASSERT_TRUE(alloc_->Free(b[1]).ok());
  ASSERT_TRUE(alloc_->Free(b[2]).ok());  // coalesces with nothing yet (b[1] pending)
  ASSERT_TRUE(alloc_->Pause(2).ok());
  EXPECT_EQ(Reserved(), 0) << "the region was the only memory";
  // Freeing a paused block: free, nothing to give back twice.
  const std::int64_t frees_before = env_.sim()->counts().live_physical;
  ASSERT_TRUE(alloc_->Free(b[3]).ok());
  EXPECT_EQ(env_.sim()->counts().live_physical, frees_before);
  EXPECT_TRUE(IsValid(*alloc_));
  absl::StatusOr<std::size_t> resumed = alloc_->Resume(2);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  // Only b[0] is live: only its pages come back.
  EXPECT_EQ(*resumed, 6 * kMiB);
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(6 * kMiB));
  EXPECT_TRUE(IsValid(*alloc_));
  ASSERT_TRUE(alloc_->Free(b[0]).ok());
}

// A resume that fails part way (the device refuses a map) leaves the region
// paused with nothing it took, and a later resume succeeds.
TEST_F(RegionsTest, FailedResumeLeavesTheRegionPausedAndConsistent) {
  Make();
  std::vector<DevicePtr> b;
  {
    InRegion r(3);
    // Six blocks, each its own chunk when resumed (regions map up to 64 MiB).
    for (int i = 0; i < 6; ++i) b.push_back(AllocateOk(40 * kMiB));
  }
  ASSERT_TRUE(alloc_->Pause(3).ok());
  const std::int64_t reserved_paused = Reserved();
  const std::size_t device_paused = DeviceBytes();
  for (SimOp op : {SimOp::kMap, SimOp::kCreatePhysical}) {
    env_.sim()->FailNth(op, 4);  // the fourth chunk of the resume
    absl::StatusOr<std::size_t> resumed = alloc_->Resume(3);
    ASSERT_FALSE(resumed.ok());
    EXPECT_TRUE(alloc_->IsPaused(3));
    EXPECT_EQ(Reserved(), reserved_paused) << "a failed resume kept memory";
    EXPECT_EQ(DeviceBytes(), device_paused);
    EXPECT_TRUE(IsValid(*alloc_));
  }
  ASSERT_TRUE(alloc_->Resume(3).ok());
  EXPECT_FALSE(alloc_->IsPaused(3));
  for (DevicePtr p : b) ASSERT_TRUE(alloc_->Free(p).ok());
}

// With a backup the bytes of live blocks survive a pause: adjacent blocks
// (one copy run), split blocks next to free holes, a block pending on
// another stream at the pause (completed by the wait, so not backed up) and
// a block freed while paused (its part dropped, nothing released twice).
TEST_F(RegionsTest, BackupRestoresLiveSplitAndCoalescedBlocksExactly) {
  Make();
  std::vector<std::size_t> sizes = {3 * kMiB, 5 * kMiB, 512 * 1024, 7 * kMiB, 9 * kMiB, 1536};
  std::vector<DevicePtr> b;
  {
    InRegion r(4);
    for (std::size_t size : sizes) b.push_back(AllocateOk(size));
  }
  const DevicePtr other = AllocateOk(4 * kMiB);
  Fill(other, 4 * kMiB);
  for (std::size_t i = 0; i < b.size(); ++i) Fill(b[i], sizes[i]);
  // b[2] freed now (a hole that splits the run), b[3] pending on stream 9.
  ASSERT_TRUE(alloc_->Free(b[2]).ok());
  ASSERT_TRUE(alloc_->RecordStream(b[3], 9).ok());
  ASSERT_TRUE(alloc_->Free(b[3]).ok());
  const std::int64_t live = alloc_->GetStats().allocated_bytes[kStatAll].current;
  const std::size_t device_before = DeviceBytes();
  absl::StatusOr<std::size_t> paused = alloc_->Pause(4, kBackup);
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_EQ(DeviceBytes(), device_before - *paused);
  // Live: b0, b1, b4, b5 (the pending one was completed by the wait, so it
  // is free and not copied); 1536 bytes round to 1536.
  std::int64_t expect = 0;
  for (std::size_t i : {0, 1, 4, 5}) expect += static_cast<std::int64_t>(sizes[i]);
  EXPECT_EQ(alloc_->GetStats().allocated_bytes[kStatAll].current - live, 0);
  EXPECT_EQ(Backup(), expect);
  EXPECT_GE(BackupHost(), Backup());
  EXPECT_EQ(env_.sim()->counts().host_bytes, static_cast<std::size_t>(BackupHost()));
  // Freeing a paused block drops its part of the backup, nothing else.
  ASSERT_TRUE(alloc_->Free(b[1]).ok());
  EXPECT_EQ(Backup(), expect - static_cast<std::int64_t>(5 * kMiB));
  EXPECT_TRUE(IsValid(*alloc_));
  absl::StatusOr<std::size_t> resumed = alloc_->Resume(4);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  for (std::size_t i : {0, 4, 5}) EXPECT_TRUE(Holds(b[i], sizes[i])) << "block " << i;
  EXPECT_TRUE(Holds(other, 4 * kMiB)) << "a block outside the region";
  EXPECT_EQ(Backup(), 0);
  EXPECT_GT(BackupHost(), 0) << "the host buffer is kept for the next pause";
  EXPECT_TRUE(IsValid(*alloc_));
  // Written after the resume, kept across a second pause that reuses the
  // buffer (no new host allocation).
  Fill(b[0], sizes[0]);
  const std::int64_t host_buffers = env_.sim()->counts().live_host;
  ASSERT_TRUE(alloc_->Pause(4, kBackup).ok());
  EXPECT_EQ(env_.sim()->counts().live_host, host_buffers);
  ASSERT_TRUE(alloc_->Resume(4).ok());
  EXPECT_TRUE(Holds(b[0], sizes[0]));
  // EmptyCache frees the buffer of a running region.
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(BackupHost(), 0);
  EXPECT_EQ(env_.sim()->counts().live_host, 0);
  for (std::size_t i : {0, 4, 5}) ASSERT_TRUE(alloc_->Free(b[i]).ok());
  ASSERT_TRUE(alloc_->Free(other).ok());
}

// A backup that fails (host memory refused, a copy refused, the wait
// failing) leaves the region running with every byte in place; a restore
// that fails leaves it paused with its backup, and a retry restores.
TEST_F(RegionsTest, FailedBackupKeepsTheRegionRunningAndFailedRestoreKeepsItPaused) {
  Make();
  std::vector<DevicePtr> b;
  std::vector<std::size_t> sizes = {6 * kMiB, 20 * kMiB, 2 * kMiB, 33 * kMiB};
  {
    InRegion r(5);
    for (std::size_t size : sizes) b.push_back(AllocateOk(size));
  }
  ASSERT_TRUE(alloc_->Free(b[2]).ok());  // two runs
  for (std::size_t i : {0, 1, 3}) Fill(b[i], sizes[i]);
  const std::int64_t reserved = Reserved();
  for (SimOp op : {SimOp::kAllocateHost, SimOp::kCopy, SimOp::kWaitCopies}) {
    env_.sim()->FailNth(op, op == SimOp::kCopy ? 2 : 1);
    absl::StatusOr<std::size_t> paused = alloc_->Pause(5, kBackup);
    ASSERT_FALSE(paused.ok()) << "op " << static_cast<int>(op);
    EXPECT_FALSE(alloc_->IsPaused(5));
    EXPECT_LE(Reserved(), reserved) << "only memory of free blocks may have gone";
    EXPECT_EQ(Backup(), 0);
    for (std::size_t i : {0, 1, 3}) EXPECT_TRUE(Holds(b[i], sizes[i]));
    EXPECT_TRUE(IsValid(*alloc_));
  }
  ASSERT_TRUE(alloc_->Pause(5, kBackup).ok());
  const std::int64_t reserved_paused = Reserved();
  const std::size_t device_paused = DeviceBytes();
  for (SimOp op : {SimOp::kMap, SimOp::kCopy, SimOp::kWaitCopies}) {
    env_.sim()->FailNth(op, op == SimOp::kMap ? 3 : (op == SimOp::kCopy ? 2 : 1));
    absl::StatusOr<std::size_t> resumed = alloc_->Resume(5);
    ASSERT_FALSE(resumed.ok()) << "op " << static_cast<int>(op);
    EXPECT_TRUE(alloc_->IsPaused(5));
    EXPECT_EQ(Reserved(), reserved_paused);
    EXPECT_EQ(DeviceBytes(), device_paused);
    EXPECT_GT(Backup(), 0) << "the backup stays for a retry";
    EXPECT_TRUE(IsValid(*alloc_));
  }
  ASSERT_TRUE(alloc_->Resume(5).ok());
  for (std::size_t i : {0, 1, 3}) EXPECT_TRUE(Holds(b[i], sizes[i])) << "block " << i;
  for (std::size_t i : {0, 1, 3}) ASSERT_TRUE(alloc_->Free(b[i]).ok());
}

// The backup pipeline (fenced every 64 MiB: four fences here): each chunk is
// given back only once the fence covering its bytes passed (the sim refuses
// to unmap memory a queued copy reads), and copies never split a run except
// at batch borders. A failure at any stage (a copy queued, a fence recorded
// or waited for, early or mid-pipeline with chunks already given back)
// leaves the region running with every live byte in place; an undo that
// fails too leaves it paused with what was copied, and Resume restores it.
TEST_F(RegionsTest, BackupPipelineGivesBackChunksAsTheirBytesAreSafeAndUndoesFailures) {
  constexpr std::int64_t kBatch = 64 * kMiB;  // DeviceAllocator's
  Make();
  std::vector<DevicePtr> b;
  // 140 MiB spans several chunks: a run larger than a chunk. The live runs
  // (143 and 75 MiB) are copied in five pieces: 64, 64, 15 | 49, 26.
  std::vector<std::size_t> sizes = {3 * kMiB, 140 * kMiB, 1 * kMiB, 5 * kMiB, 70 * kMiB};
  {
    InRegion r(8);
    for (std::size_t size : sizes) b.push_back(AllocateOk(size));
  }
  ASSERT_TRUE(alloc_->Free(b[2]).ok());  // two runs
  const std::vector<std::size_t> live = {0, 1, 3, 4};
  for (std::size_t i : live) Fill(b[i], sizes[i]);
  std::int64_t total = 0;
  for (std::size_t i : live) total += static_cast<std::int64_t>(sizes[i]);
  const std::int64_t reserved = Reserved();
  struct Failure {
    SimOp op;
    std::int64_t nth;
  };
  for (Failure f : {Failure{SimOp::kCopy, 1}, Failure{SimOp::kCopy, 4},
                    Failure{SimOp::kCopyFence, 1}, Failure{SimOp::kCopyFence, 3},
                    Failure{SimOp::kWaitCopies, 1}, Failure{SimOp::kWaitCopies, 3},
                    Failure{SimOp::kWaitCopies, 4}}) {
    SCOPED_TRACE(testing::Message() << "op " << static_cast<int>(f.op) << " #" << f.nth);
    env_.sim()->FailNth(f.op, f.nth);
    absl::StatusOr<std::size_t> paused = alloc_->Pause(8, kBackup);
    ASSERT_FALSE(paused.ok());
    EXPECT_FALSE(alloc_->IsPaused(8)) << paused.status();
    EXPECT_LE(Reserved(), reserved) << "only memory of free blocks may have gone";
    EXPECT_EQ(Backup(), 0);
    for (std::size_t i : live) EXPECT_TRUE(Holds(b[i], sizes[i])) << "block " << i;
    EXPECT_TRUE(IsValid(*alloc_));
  }
  // The undo fails too (a fence wait mid-pipeline, then a map of the undo):
  // paused, what was copied kept, Resume brings every byte back.
  env_.sim()->FailNth(SimOp::kWaitCopies, 3);
  env_.sim()->FailNth(SimOp::kMap, 1);
  absl::StatusOr<std::size_t> failed = alloc_->Pause(8, kBackup);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(alloc_->IsPaused(8)) << failed.status();
  EXPECT_GT(Backup(), 0);
  EXPECT_LT(Backup(), total);
  EXPECT_TRUE(IsValid(*alloc_));
  ASSERT_TRUE(alloc_->Resume(8).ok());
  for (std::size_t i : live) EXPECT_TRUE(Holds(b[i], sizes[i])) << "block " << i;
  // A clean pause copies every live byte, in as few copies as the batches
  // allow (no copy per chunk or per block), and gives back every chunk.
  const std::int64_t copies = env_.sim()->counts().copy_calls;
  absl::StatusOr<std::size_t> paused = alloc_->Pause(8, kBackup);
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_EQ(Backup(), total);
  EXPECT_EQ(Reserved(), 0);
  const std::int64_t batches = (total + kBatch - 1) / kBatch;
  EXPECT_LE(env_.sim()->counts().copy_calls - copies, batches + 1);
  ASSERT_TRUE(alloc_->Resume(8).ok());
  for (std::size_t i : live) EXPECT_TRUE(Holds(b[i], sizes[i])) << "block " << i;
  EXPECT_TRUE(IsValid(*alloc_));
  for (std::size_t i : live) ASSERT_TRUE(alloc_->Free(b[i]).ok());
}

// ReserveBackup pins the buffer ahead, sized to the live bytes; EmptyCache
// keeps it and the first pause allocates no host memory.
TEST_F(RegionsTest, ReserveBackupPinsTheBufferAheadAndKeepsIt) {
  Make();
  EXPECT_TRUE(absl::IsNotFound(alloc_->ReserveBackup(9).status()));
  DevicePtr p;
  {
    InRegion r(9);
    p = AllocateOk(12 * kMiB);
  }
  Fill(p, 12 * kMiB);
  absl::StatusOr<std::size_t> pinned = alloc_->ReserveBackup(9);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_GE(*pinned, 12 * kMiB);
  EXPECT_EQ(BackupHost(), static_cast<std::int64_t>(*pinned));
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(BackupHost(), static_cast<std::int64_t>(*pinned)) << "EmptyCache keeps it";
  const std::int64_t host_allocs = env_.sim()->counts().live_host;
  ASSERT_TRUE(alloc_->Pause(9, kBackup).ok());
  EXPECT_EQ(env_.sim()->counts().live_host, host_allocs);
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc_->ReserveBackup(9).status()));
  ASSERT_TRUE(alloc_->Resume(9).ok());
  EXPECT_TRUE(Holds(p, 12 * kMiB));
  EXPECT_TRUE(IsValid(*alloc_));
  ASSERT_TRUE(alloc_->Free(p).ok());
}

// A pause without backup keeps nothing: fresh memory reads as zero (the
// simulated device's fresh pages), which is what proves the restores above.
TEST_F(RegionsTest, PauseWithoutBackupLosesContents) {
  Make();
  DevicePtr p;
  {
    InRegion r(6);
    p = AllocateOk(4 * kMiB);
  }
  Fill(p, 4 * kMiB);
  ASSERT_TRUE(alloc_->Pause(6).ok());
  EXPECT_EQ(BackupHost(), 0);
  ASSERT_TRUE(alloc_->Resume(6).ok());
  EXPECT_FALSE(Holds(p, 4 * kMiB));
  ASSERT_TRUE(alloc_->Free(p).ok());
}

TEST_F(RegionsTest, BadCallsAreClearErrors) {
  Make();
  EXPECT_TRUE(absl::IsNotFound(alloc_->Pause(9).status()));
  EXPECT_TRUE(absl::IsNotFound(alloc_->Resume(0).status()));
  DevicePtr p = 0;
  {
    InRegion r(4);
    p = AllocateOk(kMiB);
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc_->Resume(4).status())) << "resume of a running region";
  ASSERT_TRUE(alloc_->Pause(4).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc_->Pause(4).status())) << "pause twice";
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc_->ExportIpc(p).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(alloc_->CreateOrIncrefPool(kRegionPoolBit | 4)))
      << "a region id used as a graph pool";
  ASSERT_TRUE(alloc_->Resume(4).ok());
  ASSERT_TRUE(alloc_->Free(p).ok());
}

// Classic segments cannot give memory back under live blocks: refused.
TEST(RegionsClassicTest, PauseOfClassicSegmentsIsRefused) {
  AllocatorEnv env(SimClassic::kKind, SimClassic::kGrowable);
  absl::StatusOr<std::unique_ptr<DeviceAllocator>> made = env.Make(env.BaseOptions(), kGiB);
  ASSERT_TRUE(made.ok());
  DeviceAllocator& alloc = **made;
  const RegionId before = SetCurrentRegion(7);
  absl::StatusOr<DevicePtr> p = alloc.Allocate(kMiB, 0);
  SetCurrentRegion(before);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<std::size_t> paused = alloc.Pause(7);
  ASSERT_FALSE(paused.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(paused.status()));
  EXPECT_NE(paused.status().message().find("expandable_segments:True"), std::string::npos)
      << paused.status();
  EXPECT_TRUE(alloc.Validate());
  ASSERT_TRUE(alloc.Free(*p).ok());
}

}  // namespace
}  // namespace ccalloc::test
