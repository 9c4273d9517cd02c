// ipc_test.cc — sharing blocks with other processes and devices, on the
// simulated device, for classic and growable segments.
//
// The "other process" is a second SimBackend sharing the producer's
// SimIpcRegistry (its own pid, its own addresses), with an IpcImporter on it.
// Every test ends with the producer validated and destroyed, the importer
// destroyed, and both backends proven to hold nothing.
#include "allocator/cache/ipc.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/backends/sim_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::size_t kPage = std::size_t{2} << 20;

template <typename Config>
class IpcTest : public AllocatorTest<Config> {
 protected:
  void TearDown() override {
    if (importer_ != nullptr) {
      std::string why;
      EXPECT_TRUE(importer_->Validate(&why)) << why;
      importer_.reset();
    }
    if (consumer_ != nullptr) {
      EXPECT_TRUE(consumer_->NothingOutstanding()) << "the consumer process kept something";
    }
    AllocatorTest<Config>::TearDown();
    if (consumer_ != nullptr) {
      EXPECT_EQ(consumer_->ipc_registry()->live_objects(), 0);
    }
  }

  bool growable() const { return Config::kGrowable; }
  SimBackend& producer() { return *this->env_.sim(); }

  // The other process: a backend of its own on the producer's registry.
  SimBackend& consumer() {
    if (consumer_ == nullptr) {
      SimBackend::Config config;
      config.ipc = producer().ipc_registry();
      consumer_ = std::make_unique<SimBackend>(config);
      importer_ = std::make_unique<IpcImporter>(consumer_.get());
    }
    return *consumer_;
  }
  IpcImporter& importer() {
    consumer();
    return *importer_;
  }

  DevicePtr AllocateOk(std::size_t size) {
    absl::StatusOr<DevicePtr> p = this->alloc_->Allocate(size, 0);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  }
  DeviceAllocator::IpcExport ExportOk(DevicePtr ptr) {
    absl::StatusOr<DeviceAllocator::IpcExport> e = this->alloc_->ExportIpc(ptr);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? *e : DeviceAllocator::IpcExport{};
  }
  // Two 3 MiB blocks back to back: in one 20 MiB classic segment, or in one
  // growable range, where the first maps pages 0 and 1 as a chunk each and
  // the second starts in page 1 and maps page 2.
  std::pair<DevicePtr, DevicePtr> TwoBlocks() {
    const DevicePtr a = AllocateOk(3 * kMiB);
    const DevicePtr b = AllocateOk(3 * kMiB);
    EXPECT_EQ(b, a + 3 * kMiB);
    return {a, b};
  }

  std::unique_ptr<SimBackend> consumer_;
  std::unique_ptr<IpcImporter> importer_;
};

using SimConfigs = ::testing::Types<SimClassic, SimGrowable>;
TYPED_TEST_SUITE(IpcTest, SimConfigs, EnvNames);

// What only one segment kind does.
class ClassicIpcTest : public IpcTest<SimClassic> {};
class GrowableIpcTest : public IpcTest<SimGrowable> {};

// The offset is the pointer's distance from the exported base, for a block's
// start and for a pointer inside it; the handle has the documented layout.
TYPED_TEST(IpcTest, ExportGivesTheOffsetFromTheExportedBase) {
  this->Make();
  const auto [a, b] = this->TwoBlocks();
  absl::StatusOr<std::pair<DevicePtr, std::size_t>> range = this->alloc_->BaseAllocation(b);
  ASSERT_TRUE(range.ok()) << range.status();
  const auto [base, size] = *range;
  EXPECT_LE(base, b);
  EXPECT_GE(base + size, b + 3 * kMiB);
  if (this->growable()) {
    // b's pages are 1 to 3; page 1 is a chunk of its own (a's partial last
    // page), so the range starts there.
    EXPECT_EQ(base, a + kPage);
    EXPECT_EQ(size, 2 * kPage);
  } else {
    EXPECT_EQ(base, a);
    EXPECT_EQ(size, 20 * kMiB);
  }

  const DeviceAllocator::IpcExport e = this->ExportOk(b);
  EXPECT_EQ(e.offset, b - base);
  const DeviceAllocator::IpcExport inner = this->ExportOk(b + 1000);
  EXPECT_EQ(inner.offset, b - base + 1000);
  EXPECT_EQ(inner.handle, e.handle) << "one block, one handle";
  absl::StatusOr<std::pair<DevicePtr, std::size_t>> inner_range =
      this->alloc_->BaseAllocation(b + 1000);
  ASSERT_TRUE(inner_range.ok());
  EXPECT_EQ(*inner_range, *range);

  absl::StatusOr<IpcHandleContents> contents = DecodeIpcHandle(e.handle);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_GE(e.handle.size(), 2u);
  EXPECT_EQ(e.handle[0], kIpcHandleVersion);
  if (this->growable()) {
    EXPECT_EQ(e.handle[1], kIpcKindGrowable);
    EXPECT_EQ(contents->pid, this->producer().pid());
    EXPECT_EQ(contents->range_size, size);
    ASSERT_EQ(contents->chunks.size(), 2u);
    EXPECT_EQ(contents->chunks[0].offset, 0u);
    EXPECT_EQ(contents->chunks[1].offset, kPage);
    EXPECT_EQ(this->producer().ipc_registry()->open_fds(this->producer().pid()), 2);
  } else {
    // PyTorch's own layout: version 2, 'c', then the 64-byte handle of the
    // segment.
    EXPECT_EQ(e.handle.size(), 2 + kIpcMemHandleBytes);
    EXPECT_EQ(e.handle[1], kIpcKindClassic);
    absl::StatusOr<std::string> raw = this->producer().ExportAllocation(base);
    ASSERT_TRUE(raw.ok());
    EXPECT_EQ(e.handle.substr(2), *raw);
  }
  // The first block's range: classic, the same segment; growable, its own.
  absl::StatusOr<DeviceAllocator::IpcExport> first = this->alloc_->ExportIpc(a);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->offset, 0u);
}

// Foreign, freed and pending pointers are refused with InvalidArgument; the
// allocator and the device are left exactly as they were.
TYPED_TEST(IpcTest, ForeignAndFreedPointersAreRefusedAndChangeNothing) {
  this->Make();
  const auto [a, b] = this->TwoBlocks();
  const DevicePtr c = this->AllocateOk(3 * kMiB);
  ASSERT_TRUE(this->alloc_->Free(b).ok());
  ASSERT_TRUE(this->alloc_->RecordStream(c, 7).ok());
  ASSERT_TRUE(this->alloc_->Free(c).ok());  // pending until stream 7 finishes
  const std::string before = StateFingerprint(*this->alloc_);
  const SimBackend::Counts counts = this->producer().counts();

  struct Case {
    DevicePtr ptr;
    const char* message;
  };
  for (const Case& k : {Case{0x1234, "not allocated by this allocator"},
                        Case{a - kPage, "not allocated by this allocator"},
                        Case{b, "free cached memory"}, Case{b + 4096, "free cached memory"},
                        Case{c, "already freed (waiting for other streams)"}}) {
    absl::StatusOr<DeviceAllocator::IpcExport> e = this->alloc_->ExportIpc(k.ptr);
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << k.ptr;
    EXPECT_THAT(e.status().message(), HasSubstr(k.message));
    EXPECT_THAT(e.status().message(), HasSubstr("ExportIpc of 0x"));
    absl::StatusOr<std::pair<DevicePtr, std::size_t>> r = this->alloc_->BaseAllocation(k.ptr);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << k.ptr;
    EXPECT_THAT(r.status().message(), HasSubstr(k.message));
  }
  EXPECT_EQ(StateFingerprint(*this->alloc_), before);
  const SimBackend::Counts after = this->producer().counts();
  EXPECT_EQ(after.exported_fds, counts.exported_fds);
  EXPECT_EQ(after.bytes_in_use, counts.bytes_in_use);
  EXPECT_EQ(after.live_mappings, counts.live_mappings);
  this->env_.CompleteAll();
}

// The other process opens the handle, sees memory of the exported range's
// size at base + offset, and closing gives everything back.
TYPED_TEST(IpcTest, OpenCloseRoundTripInAnotherProcess) {
  this->Make();
  const auto [a, b] = this->TwoBlocks();
  const DeviceAllocator::IpcExport e = this->ExportOk(b + 512);
  absl::StatusOr<DevicePtr> base = this->importer().Open(e.handle);
  ASSERT_TRUE(base.ok()) << base.status();
  EXPECT_NE(*base, 0u);
  EXPECT_EQ(this->importer().open_mappings(), 1u);
  const SimBackend::Counts c = this->consumer().counts();
  if (this->growable()) {
    EXPECT_EQ(c.live_ranges, 1);
    EXPECT_EQ(c.live_imported, 2);
    EXPECT_EQ(c.live_mappings, 2);
    EXPECT_EQ(c.bytes_in_use, 0u) << "imported memory is the producer's";
    EXPECT_THAT(this->consumer().AccessOf(*base), ElementsAre(0));
    EXPECT_THAT(this->consumer().AccessOf(*base + kPage), ElementsAre(0));
    // The consumer's descriptors were its own copies, closed after import.
    EXPECT_EQ(c.exported_fds, 0);
  } else {
    EXPECT_EQ(c.live_opened, 1);
  }
  ASSERT_TRUE(this->importer().Close(*base).ok());
  EXPECT_EQ(this->importer().open_mappings(), 0u);
  EXPECT_TRUE(this->consumer().NothingOutstanding());
  // The producer is untouched by all of it.
  EXPECT_TRUE(IsValid(*this->alloc_));
}

// A handle opened twice is one mapping with two references; a third Close,
// and a Close of a base never opened, are InvalidArgument.
TYPED_TEST(IpcTest, DoubleOpenCountsReferences) {
  this->Make();
  const DevicePtr p = this->AllocateOk(5 * kMiB);
  const DeviceAllocator::IpcExport e = this->ExportOk(p);
  absl::StatusOr<DevicePtr> first = this->importer().Open(e.handle);
  ASSERT_TRUE(first.ok()) << first.status();
  const SimBackend::Counts once = this->consumer().counts();
  absl::StatusOr<DevicePtr> second = this->importer().Open(e.handle);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(this->importer().open_mappings(), 1u);
  const SimBackend::Counts twice = this->consumer().counts();
  EXPECT_EQ(twice.live_mappings, once.live_mappings) << "nothing mapped a second time";
  EXPECT_EQ(twice.live_opened, once.live_opened);

  ASSERT_TRUE(this->importer().Close(*first).ok());
  EXPECT_EQ(this->importer().open_mappings(), 1u) << "one reference left";
  EXPECT_EQ(this->consumer().counts().live_mappings, once.live_mappings);
  ASSERT_TRUE(this->importer().Close(*first).ok());
  EXPECT_EQ(this->importer().open_mappings(), 0u);
  absl::Status third = this->importer().Close(*first);
  EXPECT_EQ(third.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(third.message(), HasSubstr("not a base returned by Open"));
  absl::Status unknown = this->importer().Close(0x5000);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(this->consumer().NothingOutstanding());
}

// Malformed handles are refused before the device is asked for anything.
TYPED_TEST(IpcTest, MalformedHandlesAreInvalidArgument) {
  this->Make();
  const DevicePtr p = this->AllocateOk(3 * kMiB);
  const std::string good = this->ExportOk(p).handle;
  std::vector<std::string> bad = {"", "x", std::string(good.size() + 1, '\0'),
                                  good.substr(0, good.size() - 1)};
  std::string unknown_kind = good;
  unknown_kind[1] = 'z';
  bad.push_back(unknown_kind);
  std::string future = good;
  future[0] = 9;
  bad.push_back(future);
  if (this->growable()) {
    std::string layout = good;
    layout[2] = 7;
    bad.push_back(layout);
    std::string gap = good;
    gap[20] = 1;  // first chunk's offset 1
    bad.push_back(gap);
  }
  SimBackend& consumer = this->consumer();
  for (const std::string& handle : bad) {
    absl::StatusOr<DevicePtr> base = this->importer().Open(handle);
    EXPECT_EQ(base.status().code(), absl::StatusCode::kInvalidArgument)
        << base.status() << " for a handle of " << handle.size() << " bytes";
    EXPECT_THAT(base.status().message(), HasSubstr("IPC handle"));
  }
  std::string pytorch_expandable = good;
  pytorch_expandable[1] = 'e';
  EXPECT_EQ(this->importer().Open(pytorch_expandable).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(consumer.NothingOutstanding());
  const SimBackend::Counts c = consumer.counts();
  EXPECT_EQ(c.map_calls, 0);
}

// An injected failure at any step of an open leaves the other process with
// nothing mapped, imported, opened or reserved, and a retry then works.
TYPED_TEST(IpcTest, FailedOpenLeavesNothingBehind) {
  this->Make();
  const auto [a, b] = this->TwoBlocks();
  const DeviceAllocator::IpcExport e = this->ExportOk(b);
  SimBackend& consumer = this->consumer();
  std::vector<std::pair<SimOp, int>> failures;
  if (this->growable()) {
    failures = {{SimOp::kImportPhysical, 1}, {SimOp::kImportPhysical, 2}, {SimOp::kMap, 1},
                {SimOp::kMap, 2}};
  } else {
    failures = {{SimOp::kOpenAllocation, 1}};
  }
  for (const auto& [op, nth] : failures) {
    consumer.FailNth(op, nth);
    absl::StatusOr<DevicePtr> base = this->importer().Open(e.handle);
    EXPECT_FALSE(base.ok()) << "op " << static_cast<int>(op) << " call " << nth;
    EXPECT_THAT(base.status().message(), HasSubstr("injected failure"));
    EXPECT_TRUE(consumer.NothingOutstanding()) << "op " << static_cast<int>(op);
    EXPECT_EQ(this->importer().open_mappings(), 0u);
    consumer.FailNth(op, 0);
  }
  // Only the producer holds the memory again.
  if (this->growable()) EXPECT_EQ(consumer.ipc_registry()->live_objects(), 2);
  absl::StatusOr<DevicePtr> base = this->importer().Open(e.handle);
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_TRUE(this->importer().Close(*base).ok());
}

// Classic handles cannot be opened by the process that exported them (the
// driver refuses); growable ones can, mapping the same memory again.
TYPED_TEST(IpcTest, OpeningInTheExportingProcess) {
  this->Make();
  const DevicePtr p = this->AllocateOk(3 * kMiB);
  const DeviceAllocator::IpcExport e = this->ExportOk(p);
  IpcImporter local(this->env_.backend());
  absl::StatusOr<DevicePtr> base = local.Open(e.handle);
  if (this->growable()) {
    ASSERT_TRUE(base.ok()) << base.status();
    EXPECT_NE(*base, p - e.offset) << "a second mapping, at its own address";
    EXPECT_TRUE(local.Close(*base).ok());
  } else {
    EXPECT_EQ(base.status().code(), absl::StatusCode::kFailedPrecondition) << base.status();
  }
  EXPECT_EQ(local.open_mappings(), 0u);
}

// The bare 64-byte handle older PyTorch sends and the versioned one name the
// same memory: one mapping.
TEST_F(ClassicIpcTest, BareAndVersionedClassicHandlesShareOneMapping) {
  this->Make();
  const DevicePtr p = this->AllocateOk(3 * kMiB);
  const std::string handle = this->ExportOk(p).handle;
  absl::StatusOr<DevicePtr> versioned = this->importer().Open(handle);
  ASSERT_TRUE(versioned.ok()) << versioned.status();
  absl::StatusOr<DevicePtr> bare = this->importer().Open(handle.substr(2));
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(*bare, *versioned);
  std::string torch_2_13 = handle;
  torch_2_13[0] = 3;
  absl::StatusOr<DevicePtr> v3 = this->importer().Open(torch_2_13);
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_EQ(*v3, *versioned);
  EXPECT_EQ(this->consumer().counts().live_opened, 1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(this->importer().Close(*versioned).ok());
}

// The producer's descriptors stay open while it holds the memory, however
// the cache moves; once the chunks are released they close, and memory the
// other process still maps lives on until it closes it.
TEST_F(GrowableIpcTest, ExportedMemoryLivesWhileMapped) {
  this->Make();
  const auto [a, b] = this->TwoBlocks();
  const DeviceAllocator::IpcExport e = this->ExportOk(b);
  absl::StatusOr<IpcHandleContents> contents = DecodeIpcHandle(e.handle);
  ASSERT_TRUE(contents.ok());
  const int pid = this->producer().pid();
  const std::shared_ptr<SimIpcRegistry> registry = this->producer().ipc_registry();
  auto all_open = [&] {
    for (const IpcChunk& c : contents->chunks) {
      if (!registry->fd_open(pid, c.fd)) return false;
    }
    return true;
  };
  ASSERT_TRUE(all_open());
  // The cache is emptied with the block live: nothing of it goes.
  ASSERT_TRUE(this->alloc_->EmptyCache().ok());
  EXPECT_TRUE(all_open());
  // Exporting again hands out the same descriptors.
  EXPECT_EQ(this->ExportOk(b).handle, e.handle);

  absl::StatusOr<DevicePtr> base = this->importer().Open(e.handle);
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_TRUE(this->alloc_->Free(a).ok());
  ASSERT_TRUE(this->alloc_->Free(b).ok());
  ASSERT_TRUE(this->alloc_->EmptyCache().ok());
  EXPECT_EQ(this->producer().counts().live_physical, 0);
  EXPECT_EQ(registry->open_fds(pid), 0) << "released chunks close their descriptors";
  EXPECT_EQ(registry->live_objects(), 2) << "the other process still maps both chunks";
  ASSERT_TRUE(this->importer().Close(*base).ok());
  EXPECT_EQ(registry->live_objects(), 0);
}

// Chunks the cache takes from under a freed block and remaps elsewhere keep
// their descriptor (same memory); chunks it gives back close theirs.
TEST_F(GrowableIpcTest, RecycledChunksKeepTheirDescriptorReleasedOnesClose) {
  SimBackend sim;
  absl::StatusOr<PhysicalHandle> h = sim.CreatePhysical(kPage);
  ASSERT_TRUE(h.ok());
  absl::StatusOr<SharedPhysical> first = sim.ExportPhysical(*h);
  absl::StatusOr<SharedPhysical> again = sim.ExportPhysical(*h);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->fd, again->fd);
  EXPECT_EQ(first->pid, sim.pid());
  absl::StatusOr<DevicePtr> range = sim.ReserveAddressRange(2 * kPage);
  ASSERT_TRUE(range.ok());
  // Map, unmap, map elsewhere: the handle and its descriptor are unchanged.
  ASSERT_TRUE(sim.Map(*range, kPage, *h).ok());
  ASSERT_TRUE(sim.Unmap(*range, kPage).ok());
  ASSERT_TRUE(sim.Map(*range + kPage, kPage, *h).ok());
  EXPECT_TRUE(sim.ipc_registry()->fd_open(sim.pid(), first->fd));
  EXPECT_EQ(sim.ReleasePhysical(*h).code(), absl::StatusCode::kFailedPrecondition)
      << "mapped memory is not released";
  EXPECT_TRUE(sim.ipc_registry()->fd_open(sim.pid(), first->fd));
  ASSERT_TRUE(sim.Unmap(*range + kPage, kPage).ok());
  ASSERT_TRUE(sim.ReleasePhysical(*h).ok());
  EXPECT_FALSE(sim.ipc_registry()->fd_open(sim.pid(), first->fd));
  EXPECT_EQ(sim.ImportPhysical(*first).status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(sim.ReleaseAddressRange(*range, 2 * kPage).ok());
  EXPECT_TRUE(sim.NothingOutstanding());
}

// Growable memory the device cannot export is refused clearly.
TEST_F(GrowableIpcTest, UnexportableGrowableMemoryIsUnimplemented) {
  SimBackend::Config config;
  config.exportable_physical = false;
  auto backend = std::make_unique<SimBackend>(config);
  SimBackend* sim = backend.get();
  {
    DeviceAllocator alloc(std::move(backend), this->env_.BaseOptions());
    absl::StatusOr<DevicePtr> p = alloc.Allocate(3 * kMiB, 0);
    ASSERT_TRUE(p.ok());
    const std::string before = StateFingerprint(alloc);
    absl::StatusOr<DeviceAllocator::IpcExport> e = alloc.ExportIpc(*p);
    EXPECT_EQ(e.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(e.status().message(), HasSubstr("without a shareable handle type"));
    EXPECT_EQ(StateFingerprint(alloc), before);
    EXPECT_EQ(sim->counts().exported_fds, 0);
  }
}

// Peer access: every growable mapping, existing and new, is accessible from
// the peer; repeating is harmless; bad devices are refused.
TYPED_TEST(IpcTest, PeerAccessOnExistingAndNewMappings) {
  this->Make();
  const DevicePtr a = this->AllocateOk(3 * kMiB);
  // Every mapping's access list, page by page through the mapped ranges.
  auto access_lists = [this] {
    std::vector<std::vector<int>> lists;
    for (const SegmentInfo& s : this->alloc_->TakeSnapshot().segments) {
      for (const auto& [lo, hi] : s.mapped_ranges) {
        for (DevicePtr va = lo; va < hi; va += kPage) {
          std::vector<int> access = this->producer().AccessOf(va);
          if (!access.empty()) lists.push_back(access);
        }
      }
    }
    return lists;
  };
  const std::int64_t maps_before = this->producer().counts().map_calls;
  ASSERT_TRUE(this->alloc_->AddPeerAccess(3).ok());
  ASSERT_TRUE(this->alloc_->AddPeerAccess(3).ok()) << "idempotent";
  EXPECT_EQ(this->producer().counts().map_calls, maps_before) << "nothing remapped";
  const DevicePtr b = this->AllocateOk(9 * kMiB);
  if (this->growable()) {
    std::vector<std::vector<int>> lists = access_lists();
    EXPECT_GE(lists.size(), 3u);
    for (const std::vector<int>& access : lists) EXPECT_THAT(access, ElementsAre(0, 3));
    ASSERT_TRUE(this->alloc_->AddPeerAccess(5).ok());
    for (const std::vector<int>& access : access_lists()) {
      EXPECT_THAT(access, ElementsAre(0, 3, 5));
    }
  } else {
    EXPECT_EQ(this->producer().counts().live_mappings, 0) << "classic segments map nothing";
  }

  const std::string before = StateFingerprint(*this->alloc_);
  for (int bad : {-1, 0, 8, 1000}) {
    absl::Status s = this->alloc_->AddPeerAccess(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("AddPeerAccess"));
  }
  EXPECT_EQ(StateFingerprint(*this->alloc_), before);
  ASSERT_TRUE(this->alloc_->Free(a).ok());
  ASSERT_TRUE(this->alloc_->Free(b).ok());
}

// A peer's access that cannot be set on a new mapping fails that mapping
// whole: the chunk goes back, and the out-of-memory ladder's retry succeeds.
TEST_F(GrowableIpcTest, FailedPeerAccessOnANewMappingLeavesNothingHalfMapped) {
  this->Make();
  ASSERT_TRUE(this->alloc_->AddPeerAccess(1).ok());
  this->producer().FailNth(SimOp::kSetAccess, 1);
  const DevicePtr p = this->AllocateOk(6 * kMiB);
  ASSERT_NE(p, 0u);
  EXPECT_EQ(this->producer().counts().failures_injected, 1);
  const SimBackend::Counts c = this->producer().counts();
  EXPECT_EQ(c.live_mappings, c.live_physical) << "every chunk is mapped, no chunk is loose";
  EXPECT_TRUE(IsValid(*this->alloc_));
  EXPECT_THAT(this->producer().AccessOf(p), ElementsAre(0, 1));
}

}  // namespace
}  // namespace ccalloc::test
