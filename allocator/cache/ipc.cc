// ipc.cc — see ipc.h for the handle format and the importer's contract.
#include "allocator/cache/ipc.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ccalloc {
namespace {

constexpr std::size_t kGrowableHeaderBytes = 20;
constexpr std::size_t kGrowableChunkBytes = 20;
constexpr std::size_t kClassicBytes = 2 + kIpcMemHandleBytes;

void PutLE(std::string* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

std::uint64_t GetLE(absl::string_view in, std::size_t at, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  }
  return value;
}

absl::Status Malformed(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("IPC handle: ", why));
}

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

absl::StatusOr<IpcHandleContents> DecodeGrowable(absl::string_view handle) {
  if (handle.size() < kGrowableHeaderBytes) {
    return Malformed(absl::StrCat("growable handle of ", handle.size(),
                                  " bytes is shorter than its ", kGrowableHeaderBytes,
                                  "-byte header"));
  }
  if (handle[2] != kGrowableLayoutVersion) {
    return Malformed(absl::StrCat("growable handle layout version ",
                                  static_cast<int>(handle[2]), " is not ",
                                  static_cast<int>(kGrowableLayoutVersion),
                                  " (made by a newer or older ccalloc)"));
  }
  IpcHandleContents contents;
  contents.kind = kIpcKindGrowable;
  contents.pid = static_cast<std::int32_t>(GetLE(handle, 4, 4));
  contents.range_size = GetLE(handle, 8, 8);
  const std::uint64_t n = GetLE(handle, 16, 4);
  if (contents.pid <= 0) return Malformed(absl::StrCat("producer pid ", contents.pid));
  if (n == 0) return Malformed("growable handle with no chunks");
  if (handle.size() != kGrowableHeaderBytes + n * kGrowableChunkBytes) {
    return Malformed(absl::StrCat("growable handle of ", handle.size(), " bytes for ", n,
                                  " chunks (expected ",
                                  kGrowableHeaderBytes + n * kGrowableChunkBytes, ")"));
  }
  std::size_t expect = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::size_t at = kGrowableHeaderBytes + i * kGrowableChunkBytes;
    IpcChunk chunk;
    chunk.offset = GetLE(handle, at, 8);
    chunk.size = GetLE(handle, at + 8, 8);
    chunk.fd = static_cast<std::int32_t>(GetLE(handle, at + 16, 4));
    if (chunk.offset != expect || chunk.size == 0 || chunk.size > contents.range_size ||
        chunk.offset > contents.range_size - chunk.size || chunk.fd < 0) {
      return Malformed(absl::StrCat("chunk ", i, " (offset ", chunk.offset, ", size ",
                                    chunk.size, ", fd ", chunk.fd,
                                    ") does not continue the range at ", expect, " of ",
                                    contents.range_size, " bytes"));
    }
    expect = chunk.offset + chunk.size;
    contents.chunks.push_back(chunk);
  }
  if (expect != contents.range_size) {
    return Malformed(absl::StrCat("the chunks cover ", expect, " of the range's ",
                                  contents.range_size, " bytes"));
  }
  return contents;
}

}  // namespace

std::string EncodeClassicIpcHandle(absl::string_view mem_handle) {
  std::string out;
  out.reserve(kClassicBytes);
  out.push_back(kIpcHandleVersion);
  out.push_back(kIpcKindClassic);
  out.append(mem_handle.data(), mem_handle.size());
  return out;
}

std::string EncodeGrowableIpcHandle(int pid, std::size_t range_size,
                                    absl::Span<const IpcChunk> chunks) {
  std::string out;
  out.reserve(kGrowableHeaderBytes + chunks.size() * kGrowableChunkBytes);
  out.push_back(kIpcHandleVersion);
  out.push_back(kIpcKindGrowable);
  out.push_back(kGrowableLayoutVersion);
  out.push_back(0);
  PutLE(&out, static_cast<std::uint32_t>(pid), 4);
  PutLE(&out, range_size, 8);
  PutLE(&out, chunks.size(), 4);
  for (const IpcChunk& chunk : chunks) {
    PutLE(&out, chunk.offset, 8);
    PutLE(&out, chunk.size, 8);
    PutLE(&out, static_cast<std::uint32_t>(chunk.fd), 4);
  }
  return out;
}

absl::StatusOr<IpcHandleContents> DecodeIpcHandle(absl::string_view handle) {
  // Older PyTorch sent the bare cudaIpcMemHandle_t.
  if (handle.size() == kIpcMemHandleBytes) {
    IpcHandleContents contents;
    contents.kind = kIpcKindClassic;
    contents.mem_handle = std::string(handle);
    return contents;
  }
  if (handle.size() < 2) {
    return Malformed(absl::StrCat("a handle of ", handle.size(), " bytes is too short"));
  }
  const int version = static_cast<unsigned char>(handle[0]);
  const char kind = handle[1];
  switch (kind) {
    case kIpcKindClassic: {
      if (version < 1 || version > 3) {
        return Malformed(absl::StrCat("classic handle of unknown version ", version));
      }
      if (handle.size() != kClassicBytes) {
        return Malformed(absl::StrCat("classic handle of ", handle.size(), " bytes (expected ",
                                      kClassicBytes, ")"));
      }
      IpcHandleContents contents;
      contents.kind = kIpcKindClassic;
      contents.mem_handle = std::string(handle.substr(2));
      return contents;
    }
    case kIpcKindGrowable:
      if (version != kIpcHandleVersion) {
        return Malformed(absl::StrCat("growable handle of unknown version ", version));
      }
      return DecodeGrowable(handle);
    case kIpcKindPytorchExpandable:
      return absl::UnimplementedError(
          "IPC handle: PyTorch expandable-segment handles ('e') cannot be opened by ccalloc; "
          "share from a ccalloc allocator or with expandable_segments:False");
    default:
      return Malformed(absl::StrCat("unknown kind byte ", static_cast<int>(kind)));
  }
}

// ---------------------------------------------------------------------------
// IpcImporter
// ---------------------------------------------------------------------------

IpcImporter::IpcImporter(DeviceBackend* backend) : backend_(backend) {}

IpcImporter::~IpcImporter() {
  absl::MutexLock lock(&mu_);
  // Results are dropped: there is nobody to tell, and each step is tried.
  for (const auto& [base, mapping] : by_base_) (void)Undo(base, mapping);
  by_base_.clear();
  by_key_.clear();
}

absl::StatusOr<DevicePtr> IpcImporter::Open(absl::string_view handle) {
  absl::StatusOr<IpcHandleContents> contents = DecodeIpcHandle(handle);
  if (!contents.ok()) return contents.status();
  std::string key = contents->kind == kIpcKindClassic
                        ? absl::StrCat(std::string(1, kIpcKindClassic), contents->mem_handle)
                        : std::string(handle);

  absl::MutexLock lock(&mu_);
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    ++by_base_.at(it->second).refs;
    return it->second;
  }
  Mapping mapping;
  mapping.key = key;
  absl::StatusOr<DevicePtr> base;
  if (contents->kind == kIpcKindClassic) {
    base = backend_->OpenAllocation(contents->mem_handle);
  } else {
    mapping.growable = true;
    mapping.range_size = contents->range_size;
    base = OpenGrowable(*contents, &mapping.chunks);
  }
  if (!base.ok()) return base.status();
  mapping.refs = 1;
  by_key_.emplace(std::move(key), *base);
  by_base_.emplace(*base, std::move(mapping));
  return *base;
}

absl::StatusOr<DevicePtr> IpcImporter::OpenGrowable(const IpcHandleContents& contents,
                                                    std::vector<Chunk>* chunks) {
  const std::size_t page = backend_->PageSize();
  for (const IpcChunk& c : contents.chunks) {
    if (c.size % page != 0 || c.offset % page != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "IPC handle: chunk at offset ", c.offset, " of ", c.size,
          " bytes is not a multiple of this device's ", page, "-byte page"));
    }
  }
  absl::StatusOr<DevicePtr> base = backend_->ReserveAddressRange(contents.range_size);
  if (!base.ok()) return base.status();
  for (const IpcChunk& c : contents.chunks) {
    absl::StatusOr<PhysicalHandle> handle = backend_->ImportPhysical({contents.pid, c.fd});
    absl::Status status = handle.status();
    if (status.ok()) {
      // Map grants this device access; an import that cannot be mapped is
      // released at once.
      status = backend_->Map(*base + c.offset, c.size, *handle);
      if (!status.ok()) (void)backend_->ReleasePhysical(*handle);
    }
    if (!status.ok()) {
      (void)UndoGrowable(*base, contents.range_size, *chunks);
      chunks->clear();
      return status;
    }
    chunks->push_back(Chunk{c.offset, c.size, *handle});
  }
  return *base;
}

absl::Status IpcImporter::UndoGrowable(DevicePtr base, std::size_t range_size,
                                       absl::Span<const Chunk> chunks) {
  absl::Status first;
  for (const Chunk& c : chunks) {
    absl::Status s = backend_->Unmap(base + c.offset, c.size);
    if (s.ok()) s = backend_->ReleasePhysical(c.handle);
    first.Update(s);
  }
  first.Update(backend_->ReleaseAddressRange(base, range_size));
  return first;
}

absl::Status IpcImporter::Undo(DevicePtr base, const Mapping& mapping) {
  if (!mapping.growable) return backend_->CloseAllocation(base);
  return UndoGrowable(base, mapping.range_size, mapping.chunks);
}

absl::Status IpcImporter::Close(DevicePtr base) {
  absl::MutexLock lock(&mu_);
  auto it = by_base_.find(base);
  if (it == by_base_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("IpcImporter::Close of ", Hex(base), ": not a base returned by Open ",
                     "(or already closed)"));
  }
  if (--it->second.refs > 0) return absl::OkStatus();
  // The entry goes whatever the device answers: a half-undone mapping
  // cannot be closed again, and the first error says what was left.
  absl::Status status = Undo(base, it->second);
  by_key_.erase(it->second.key);
  by_base_.erase(it);
  return status;
}

std::size_t IpcImporter::open_mappings() const {
  absl::MutexLock lock(&mu_);
  return by_base_.size();
}

bool IpcImporter::Validate(std::string* why) const {
  auto fail = [why](std::string message) {
    if (why != nullptr) *why = std::move(message);
    return false;
  };
  absl::MutexLock lock(&mu_);
  if (by_key_.size() != by_base_.size()) return fail("the two indexes differ in size");
  for (const auto& [base, mapping] : by_base_) {
    auto key = by_key_.find(mapping.key);
    if (key == by_key_.end() || key->second != base) {
      return fail(absl::StrCat("mapping at ", Hex(base), " is not indexed by its handle"));
    }
    if (mapping.refs <= 0) return fail(absl::StrCat("mapping at ", Hex(base), " has no refs"));
    if (!mapping.growable) continue;
    std::size_t expect = 0;
    for (const Chunk& c : mapping.chunks) {
      if (c.offset != expect || c.size == 0 || c.handle == 0) {
        return fail(absl::StrCat("mapping at ", Hex(base), ": chunk at ", c.offset,
                                 " does not continue the range"));
      }
      expect += c.size;
    }
    if (expect != mapping.range_size) {
      return fail(absl::StrCat("mapping at ", Hex(base), ": chunks do not fill the range"));
    }
  }
  return true;
}

}  // namespace ccalloc
