// ipc.h — sharing device memory with other processes: the handle format and
// the consumer side.
//
// The producer is DeviceAllocator::ExportIpc, which hands out a handle and
// the offset of the pointer inside the memory the handle names. The consumer
// is IpcImporter here, in any process (torch.multiprocessing's receiving
// side): it opens the handle, and the user adds the offset to the base it
// returns. The importer does not belong to the cache: opened memory is
// another process's, never handed out by an allocator here.
//
// Handle format. Byte 0 is a version, byte 1 the kind; this header is
// PyTorch's ShareableHandle layout (c10/cuda/CUDACachingAllocator.cpp,
// SHAREABLE_HANDLE_VERSION 2), so handles of both allocators can be told
// apart by any reader. Integers are little-endian.
//
//   classic segment ('c'), 66 bytes, byte for byte PyTorch's own:
//     0  u8   version: 2 (kIpcHandleVersion)
//     1  u8   'c'
//     2  64   cuIpcGetMemHandle of the segment (= cudaIpcMemHandle_t)
//   A consumer process running PyTorch's own allocator opens these handles
//   (its getIpcDevPtr accepts version <= 2 with kind 'c'), and IpcImporter
//   opens PyTorch's: 'c' with versions 1 to 3 (torch 2.13 writes 3 with the
//   same payload) and the bare 64-byte handles of older PyTorch.
//
//   growable segment ('g', ccalloc's own; PyTorch rejects it as an unknown
//   kind), 20 + 20 * n bytes:
//     0  u8   version: 2
//     1  u8   'g'
//     2  u8   layout version of 'g': 1 (kGrowableLayoutVersion)
//     3  u8   0
//     4  i32  producer pid
//     8  u64  range size: the chunks below tile [0, range size)
//     16 u32  n, the number of chunks
//     20 per chunk, in address order: u64 offset in the range, u64 size,
//        i32 file descriptor (open in the producer)
//   The range is the physical chunks mapped under the block's pages (a
//   chunk is exported whole: the driver maps handles only whole). Each chunk
//   is a CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR export that the producer
//   keeps open for as long as it holds the physical memory; the consumer
//   copies the descriptor with pidfd_open + pidfd_getfd (Linux 5.6 or
//   later, and ptrace access to the producer, as for PyTorch's expandable
//   segments), imports it, and maps all chunks into a range of its own.
//
// The producer must keep the block allocated until every consumer closed
// it (PyTorch's CUDA IPC reference counting does that), as with cudaMalloc
// memory: a freed block's pages may be unmapped and given to other blocks.
#ifndef CCALLOC_ALLOCATOR_IPC_H_
#define CCALLOC_ALLOCATOR_IPC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "allocator/backends/backend.h"

namespace ccalloc {

inline constexpr char kIpcHandleVersion = 2;
inline constexpr char kIpcKindClassic = 'c';
inline constexpr char kIpcKindGrowable = 'g';
// PyTorch's expandable-segment handles; recognised only to be refused clearly.
inline constexpr char kIpcKindPytorchExpandable = 'e';
inline constexpr char kGrowableLayoutVersion = 1;

// One physical chunk of a growable handle.
struct IpcChunk {
  std::size_t offset = 0;  // in the range
  std::size_t size = 0;
  int fd = -1;  // open in the producer
};

// A handle taken apart.
struct IpcHandleContents {
  char kind = 0;           // kIpcKindClassic or kIpcKindGrowable
  std::string mem_handle;  // classic: kIpcMemHandleBytes bytes
  int pid = 0;             // growable: the producer
  std::size_t range_size = 0;
  std::vector<IpcChunk> chunks;
};

// `mem_handle` must be kIpcMemHandleBytes long.
std::string EncodeClassicIpcHandle(absl::string_view mem_handle);
std::string EncodeGrowableIpcHandle(int pid, std::size_t range_size,
                                    absl::Span<const IpcChunk> chunks);
// InvalidArgument (saying what is wrong) for anything that is not a
// well-formed handle of the kinds above; Unimplemented for PyTorch's 'e'.
absl::StatusOr<IpcHandleContents> DecodeIpcHandle(absl::string_view handle);

// Opens handles made by ExportIpc in another process (or, for growable
// ones, this one) on `backend`'s device. Returns the base address; Close
// undoes exactly one Open. Opening the same handle twice in one process
// returns the same mapping with a reference count (older drivers refuse to
// open a cuIpc handle twice, and two mappings of one block would waste
// address space anyway). Thread-safe.
class IpcImporter {
 public:
  // `backend` is not owned and must outlive the importer.
  explicit IpcImporter(DeviceBackend* backend);
  // Closes whatever is still open, however many references it has.
  ~IpcImporter();

  IpcImporter(const IpcImporter&) = delete;
  IpcImporter& operator=(const IpcImporter&) = delete;

  // InvalidArgument for a malformed handle (nothing is asked of the device
  // then); the backend's error when opening fails, after undoing whatever
  // part of the mapping was made.
  absl::StatusOr<DevicePtr> Open(absl::string_view handle) ABSL_LOCKS_EXCLUDED(mu_);
  // InvalidArgument for a base that Open did not return (or that is closed).
  absl::Status Close(DevicePtr base) ABSL_LOCKS_EXCLUDED(mu_);

  // Distinct mappings open now.
  std::size_t open_mappings() const ABSL_LOCKS_EXCLUDED(mu_);
  // The two indexes agree, every mapping is referenced, and the chunks of a
  // growable mapping tile its range.
  bool Validate(std::string* why = nullptr) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Chunk {
    std::size_t offset = 0;
    std::size_t size = 0;
    PhysicalHandle handle = 0;
  };
  struct Mapping {
    std::string key;  // in by_key_
    bool growable = false;
    std::size_t range_size = 0;  // growable
    std::vector<Chunk> chunks;   // growable, mapped and imported
    int refs = 0;
  };

  absl::StatusOr<DevicePtr> OpenGrowable(const IpcHandleContents& contents,
                                         std::vector<Chunk>* chunks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Unmaps and releases `chunks` of the growable range at `base` and the
  // range itself; returns the first error but tries every step.
  absl::Status UndoGrowable(DevicePtr base, std::size_t range_size,
                            absl::Span<const Chunk> chunks) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Undo(DevicePtr base, const Mapping& mapping) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  DeviceBackend* const backend_;
  mutable absl::Mutex mu_;
  // The handle (classic: its kind and 64-byte handle, so that the versioned
  // and the bare form of one handle are one key) -> base.
  absl::flat_hash_map<std::string, DevicePtr> by_key_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DevicePtr, Mapping> by_base_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_IPC_H_
