#include "allocator/backends/sim_backend.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ccalloc {
namespace {

// Far from zero so that a fake address is never mistaken for a host pointer in
// a debugger, and 2 MiB aligned like real device allocations.
constexpr DevicePtr kFirstAddress = DevicePtr{1} << 44;
constexpr std::size_t kAllocationAlignment = std::size_t{2} << 20;

absl::Status InjectedFailure(const char* what) {
  return absl::ResourceExhaustedError(absl::StrCat("sim: injected failure in ", what));
}

// A simulated classic IPC handle: this prefix, then the registry's handle id
// (8 bytes, little-endian), then zeros, kIpcMemHandleBytes in all.
constexpr char kSimHandlePrefix[] = "ccalloc-sim-ipc";  // 15 characters and the NUL
constexpr std::size_t kSimHandleIdAt = sizeof(kSimHandlePrefix);

std::string EncodeSimHandle(std::uint64_t id) {
  std::string handle(kIpcMemHandleBytes, '\0');
  std::memcpy(handle.data(), kSimHandlePrefix, sizeof(kSimHandlePrefix));
  for (int i = 0; i < 8; ++i) handle[kSimHandleIdAt + i] = static_cast<char>(id >> (8 * i));
  return handle;
}

// 0 when `handle` is not a simulated classic IPC handle.
std::uint64_t DecodeSimHandle(absl::string_view handle) {
  if (handle.size() != kIpcMemHandleBytes ||
      std::memcmp(handle.data(), kSimHandlePrefix, sizeof(kSimHandlePrefix)) != 0) {
    return 0;
  }
  std::uint64_t id = 0;
  for (int i = 0; i < 8; ++i) {
    id |= std::uint64_t{static_cast<unsigned char>(handle[kSimHandleIdAt + i])} << (8 * i);
  }
  return id;
}

std::shared_ptr<SimIpcRegistry> RegistryOf(const SimBackend::Config& config) {
  return config.ipc != nullptr ? config.ipc : std::make_shared<SimIpcRegistry>();
}

}  // namespace

std::int64_t SimIpcRegistry::live_objects() const {
  absl::MutexLock lock(&mu_);
  return static_cast<std::int64_t>(objects_.size());
}

std::int64_t SimIpcRegistry::open_fds(int pid) const {
  absl::MutexLock lock(&mu_);
  return std::count_if(fds_.begin(), fds_.end(),
                       [pid](const auto& entry) { return entry.first.first == pid; });
}

bool SimIpcRegistry::fd_open(int pid, int fd) const {
  absl::MutexLock lock(&mu_);
  return fds_.contains(std::make_pair(pid, fd));
}

int SimIpcRegistry::NewPid() {
  absl::MutexLock lock(&mu_);
  return next_pid_++;
}

SimBackend::SimBackend(Config config)
    : config_(config),
      registry_(RegistryOf(config)),
      pid_(registry_->NewPid()),
      capacity_(config.capacity),
      next_address_(kFirstAddress) {}

SimBackend::~SimBackend() = default;

void SimBackend::Contents::Write(std::size_t offset, const char* data, std::size_t n) {
  while (n > 0) {
    const std::size_t key = offset / kPiece;
    const std::size_t at = offset % kPiece;
    const std::size_t take = std::min(n, kPiece - at);
    std::string& piece = pieces_[key];
    if (piece.empty()) piece.assign(kPiece, '\0');
    std::memcpy(piece.data() + at, data, take);
    offset += take;
    data += take;
    n -= take;
  }
}

void SimBackend::Contents::Read(std::size_t offset, char* out, std::size_t n) const {
  std::memset(out, 0, n);
  const std::size_t end = offset + n;
  for (auto it = pieces_.lower_bound(offset / kPiece);
       it != pieces_.end() && it->first * kPiece < end; ++it) {
    const std::size_t begin = std::max(offset, it->first * kPiece);
    const std::size_t stop = std::min(end, (it->first + 1) * kPiece);
    std::memcpy(out + (begin - offset), it->second.data() + (begin - it->first * kPiece),
                stop - begin);
  }
}

absl::StatusOr<std::vector<SimBackend::Piece>> SimBackend::Pieces(DevicePtr ptr,
                                                                  std::size_t n) const {
  std::vector<Piece> pieces;
  while (n > 0) {
    auto it = mapping_ends_.upper_bound(ptr);
    if (it == mapping_ends_.begin() || std::prev(it)->second <= ptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("sim: device memory at 0x", absl::Hex(ptr), " is not mapped"));
    }
    --it;
    const std::size_t take = std::min<std::size_t>(n, it->second - ptr);
    pieces.push_back(Piece{mappings_.at(it->first).handle, ptr - it->first, take});
    ptr += take;
    n -= take;
  }
  return pieces;
}

absl::StatusOr<std::pair<SimBackend::HostBuffer*, std::size_t>> SimBackend::HostAt(HostPtr ptr,
                                                                                  std::size_t n) {
  auto it = host_.upper_bound(ptr);
  if (it == host_.begin() || std::prev(it)->first + std::prev(it)->second.bytes < ptr + n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sim: host memory [0x", absl::Hex(ptr), ", +", n, ") is not one host buffer"));
  }
  --it;
  return std::make_pair(&it->second, ptr - it->first);
}

bool SimBackend::CopyUses(DevicePtr va, std::size_t n) const {
  for (const QueuedCopy& c : queued_) {
    if (c.device < va + n && va < c.device + c.bytes) return true;
  }
  return false;
}

absl::StatusOr<HostPtr> SimBackend::AllocateHost(std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  if (bytes == 0) return absl::InvalidArgumentError("sim: AllocateHost of 0 bytes");
  if (ShouldFail(SimOp::kAllocateHost)) return InjectedFailure("AllocateHost");
  const HostPtr ptr = next_host_;
  next_host_ += (bytes + 4095) / 4096 * 4096 + 4096;  // never reused, never adjacent
  host_[ptr].bytes = bytes;
  ++counts_.live_host;
  counts_.host_bytes += bytes;
  return ptr;
}

absl::Status SimBackend::FreeHost(HostPtr ptr, std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  auto it = host_.find(ptr);
  if (it == host_.end() || it->second.bytes != bytes) {
    return absl::InvalidArgumentError("sim: FreeHost of an unknown host buffer or wrong size");
  }
  for (const QueuedCopy& c : queued_) {
    if (c.host >= ptr && c.host < ptr + bytes) {
      return absl::FailedPreconditionError("sim: FreeHost of a buffer a queued copy still uses");
    }
  }
  host_.erase(it);
  --counts_.live_host;
  counts_.host_bytes -= bytes;
  return absl::OkStatus();
}

absl::Status SimBackend::QueueCopy(bool to_host, DevicePtr device, HostPtr host,
                                   std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  ++counts_.copy_calls;
  const char* what = to_host ? "CopyToHost" : "CopyToDevice";
  if (ShouldFail(SimOp::kCopy)) return InjectedFailure(what);
  if (!captures_.empty()) return RefuseDuringCapture(what);
  if (absl::StatusOr<std::vector<Piece>> p = Pieces(device, bytes); !p.ok()) return p.status();
  if (absl::StatusOr<std::pair<HostBuffer*, std::size_t>> h = HostAt(host, bytes); !h.ok()) {
    return h.status();
  }
  queued_.push_back(QueuedCopy{copies_queued_++, to_host, device, host, bytes});
  return absl::OkStatus();
}

absl::Status SimBackend::CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) {
  return QueueCopy(/*to_host=*/true, src, dst, bytes);
}

absl::Status SimBackend::CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) {
  return QueueCopy(/*to_host=*/false, dst, src, bytes);
}

absl::Status SimBackend::WaitCopies() { return WaitCopyFence(~CopyFence{0}); }

absl::StatusOr<CopyFence> SimBackend::RecordCopyFence() {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kCopyFence)) return InjectedFailure("RecordCopyFence");
  return copies_queued_;
}

absl::Status SimBackend::WaitCopyFence(CopyFence fence) {
  absl::MutexLock lock(&mu_);
  // A failed wait drops the whole queue: what it would have copied is
  // unknown, as after a failed stream.
  if (ShouldFail(SimOp::kWaitCopies)) {
    queued_.clear();
    return InjectedFailure("WaitCopies");
  }
  std::string buffer;
  std::size_t n = 0;
  for (; n < queued_.size() && queued_[n].seq < fence; ++n) {
    const QueuedCopy& c = queued_[n];
    // Checked when queued; memory cannot go away while a copy uses it.
    std::vector<Piece> pieces = *Pieces(c.device, c.bytes);
    std::pair<HostBuffer*, std::size_t> host = *HostAt(c.host, c.bytes);
    std::size_t done = 0;
    for (const Piece& p : pieces) {
      buffer.resize(p.bytes);
      if (c.to_host) {
        contents_[p.handle].Read(p.offset, buffer.data(), p.bytes);
        host.first->contents.Write(host.second + done, buffer.data(), p.bytes);
      } else {
        host.first->contents.Read(host.second + done, buffer.data(), p.bytes);
        contents_[p.handle].Write(p.offset, buffer.data(), p.bytes);
      }
      done += p.bytes;
    }
    counts_.copied_bytes += c.bytes;
  }
  queued_.erase(queued_.begin(), queued_.begin() + static_cast<std::ptrdiff_t>(n));
  return absl::OkStatus();
}

absl::Status SimBackend::WriteBytes(DevicePtr ptr, const std::string& bytes) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::vector<Piece>> pieces = Pieces(ptr, bytes.size());
  if (!pieces.ok()) return pieces.status();
  std::size_t done = 0;
  for (const Piece& p : *pieces) {
    contents_[p.handle].Write(p.offset, bytes.data() + done, p.bytes);
    done += p.bytes;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SimBackend::ReadBytes(DevicePtr ptr, std::size_t bytes) const {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::vector<Piece>> pieces = Pieces(ptr, bytes);
  if (!pieces.ok()) return pieces.status();
  std::string out(bytes, '\0');
  std::size_t done = 0;
  for (const Piece& p : *pieces) {
    if (auto it = contents_.find(p.handle); it != contents_.end()) {
      it->second.Read(p.offset, out.data() + done, p.bytes);
    }
    done += p.bytes;
  }
  return out;
}

bool SimBackend::ShouldFail(SimOp op) {
  // Every operation asks first: the count of its driver calls (untimed: a
  // simulated call takes no time worth the name).
  const CountedCall counted(*this, /*timed=*/false);
  std::int64_t& nth = fail_nth_[static_cast<int>(op)];
  if (nth > 0 && --nth == 0) {
    ++counts_.failures_injected;
    return true;
  }
  // Random failures hit every call but Unmap: an allocator that is being
  // destroyed has no way to clean up after an unmap that fails, so unmap
  // failures are injected only where asked for (FailNth).
  if (fail_probability_ > 0.0 && op != SimOp::kUnmap &&
      std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < fail_probability_) {
    ++counts_.failures_injected;
    return true;
  }
  return false;
}

absl::Status SimBackend::RefuseDuringCapture(const char* what) {
  if (captures_.empty()) return absl::OkStatus();
  std::string message =
      absl::StrCat("sim: ", what, " is not permitted while a stream is being captured");
  if (capture_violation_.empty()) capture_violation_ = message;
  return absl::FailedPreconditionError(message);
}

DevicePtr SimBackend::NextAddress(std::size_t bytes, std::size_t alignment) {
  DevicePtr ptr = (next_address_ + alignment - 1) / alignment * alignment;
  // Addresses are never reused: a gap after each range catches off-by-one
  // overlaps in the allocator as a visible discontinuity.
  next_address_ = ptr + bytes + alignment;
  return ptr;
}

absl::StatusOr<DevicePtr> SimBackend::Allocate(std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  ++counts_.allocate_calls;
  if (bytes == 0) return absl::InvalidArgumentError("sim: zero-byte allocation");
  if (ShouldFail(SimOp::kAllocate) || (fail_above_ != 0 && bytes > fail_above_)) {
    return InjectedFailure("Allocate");
  }
  if (bytes > FreeBytes()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("sim: out of memory allocating ", bytes, " bytes (",
                     FreeBytes(), " free)"));
  }
  DevicePtr ptr = NextAddress(bytes, kAllocationAlignment);
  allocations_.emplace(ptr, bytes);
  counts_.bytes_in_use += bytes;
  ++counts_.live_allocations;
  return ptr;
}

absl::Status SimBackend::Deallocate(DevicePtr ptr, std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  ++counts_.deallocate_calls;
  if (absl::Status s = RefuseDuringCapture("Deallocate"); !s.ok()) return s;
  auto it = allocations_.find(ptr);
  if (it == allocations_.end() || it->second != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("sim: Deallocate of unknown allocation 0x", absl::Hex(ptr)));
  }
  counts_.bytes_in_use -= bytes;
  --counts_.live_allocations;
  allocations_.erase(it);
  // The handle names nothing from now on; processes that opened it keep
  // their mapping until they close it (on CUDA, using it is undefined).
  if (auto exported = exported_.find(ptr); exported != exported_.end()) {
    absl::MutexLock registry_lock(&registry_->mu_);
    registry_->classic_.erase(exported->second);
    exported_.erase(exported);
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceMemoryInfo> SimBackend::MemoryInfo() {
  absl::MutexLock lock(&mu_);
  return DeviceMemoryInfo{FreeBytes(), capacity_};
}

absl::StatusOr<EventHandle> SimBackend::RecordEvent(StreamId stream) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kRecordEvent)) return InjectedFailure("RecordEvent");
  EventHandle handle = next_event_++;
  EventState state{stream, config_.auto_complete_events && config_.gpu_lag == 0, tick_, 0, {}};
  if (auto captured = captures_.find(stream); captured != captures_.end()) {
    // Recorded into the graph: other streams of the capture may wait for
    // it (sim_capture.cc), the host never can.
    state.complete = false;
    state.capture = captured->second.capture;
    state.after.assign(captured->second.after.begin(), captured->second.after.end());
  }
  events_.emplace(handle, std::move(state));
  ++counts_.live_events;
  return handle;
}

absl::StatusOr<bool> SimBackend::QueryEvent(EventHandle event) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = RefuseDuringCapture("QueryEvent"); !s.ok()) return s;
  if (ShouldFail(SimOp::kQueryEvent)) return InjectedFailure("QueryEvent");
  auto it = events_.find(event);
  if (it == events_.end()) return absl::InvalidArgumentError("sim: unknown event");
  if (it->second.capture != 0) return RefuseCaptured("QueryEvent of an event recorded in a capture");
  return Reached(it->second);
}

bool SimBackend::Reached(EventState& state) {
  if (state.complete || !config_.auto_complete_events) return state.complete;
  state.complete = state.at + config_.gpu_lag <= tick_ || state.at < DrainedUpTo(state.stream);
  return state.complete;
}

std::uint64_t SimBackend::DrainedUpTo(StreamId stream) const {
  auto it = drained_.find(stream);
  return std::max(it == drained_.end() ? 0 : it->second, drained_all_);
}

void SimBackend::Tick() {
  absl::MutexLock lock(&mu_);
  ++tick_;
}

absl::Status SimBackend::SynchronizeEvent(EventHandle event) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = RefuseDuringCapture("SynchronizeEvent"); !s.ok()) return s;
  auto it = events_.find(event);
  if (it == events_.end()) return absl::InvalidArgumentError("sim: unknown event");
  EventState& state = it->second;
  if (state.capture != 0) return RefuseCaptured("SynchronizeEvent of an event recorded in a capture");
  if (!Reached(state) && config_.auto_complete_events) {
    // The host waits for the GPU to work through the queue up to the event.
    // The GPU stands lag ticks behind, or where a wait left it if further.
    const std::uint64_t behind =
        std::min(state.at + config_.gpu_lag - tick_, state.at + 1 - DrainedUpTo(state.stream));
    ++counts_.event_waits;
    counts_.waited_ticks += behind;
    drained_[state.stream] = state.at + 1;
    // Work the stream waited for on the device ran first (StreamWaitEvent).
    if (auto w = device_waits_.find(state.stream); w != device_waits_.end()) {
      for (const DeviceWait& d : w->second) {
        if (d.tick > state.at) break;
        std::uint64_t& drained = drained_[d.on];
        drained = std::max(drained, d.at + 1);
      }
    }
  }
  state.complete = true;
  return absl::OkStatus();
}

absl::Status SimBackend::StreamWaitEvent(StreamId stream, EventHandle event) {
  absl::MutexLock lock(&mu_);
  if (auto it = events_.find(event); it != events_.end() && it->second.capture != 0) {
    if (ShouldFail(SimOp::kStreamWait)) return InjectedFailure("StreamWaitEvent");
    ++counts_.stream_waits;
    return WaitInCapture(stream, it->second);
  }
  if (absl::Status s = RefuseDuringCapture("StreamWaitEvent"); !s.ok()) return s;
  if (ShouldFail(SimOp::kStreamWait)) return InjectedFailure("StreamWaitEvent");
  auto it = events_.find(event);
  if (it == events_.end()) return absl::InvalidArgumentError("sim: unknown event");
  ++counts_.stream_waits;
  if (!Reached(it->second)) {
    std::vector<DeviceWait>& waits = device_waits_[stream];
    // Waits the lagging GPU has passed order nothing any more.
    const std::uint64_t now = tick_, lag = config_.gpu_lag;
    auto past = std::find_if(waits.begin(), waits.end(),
                             [&](const DeviceWait& d) { return d.at + lag > now; });
    waits.erase(waits.begin(), past);
    waits.push_back(DeviceWait{tick_, it->second.stream, it->second.at});
  }
  return absl::OkStatus();
}

void SimBackend::DestroyEvent(EventHandle event) {
  absl::MutexLock lock(&mu_);
  if (events_.erase(event) == 1) --counts_.live_events;
}

absl::Status SimBackend::SynchronizeDevice() {
  absl::MutexLock lock(&mu_);
  ++counts_.synchronize_calls;
  if (absl::Status s = RefuseDuringCapture("SynchronizeDevice"); !s.ok()) return s;
  if (config_.auto_complete_events && config_.gpu_lag > 0) {
    const std::uint64_t behind = std::min(config_.gpu_lag, tick_ + 1 - drained_all_);
    if (behind > 0) {
      ++counts_.event_waits;
      counts_.waited_ticks += behind;
    }
  }
  drained_all_ = tick_ + 1;
  for (auto& [handle, state] : events_) state.complete = true;
  return absl::OkStatus();
}

absl::StatusOr<DevicePtr> SimBackend::ReserveAddressRange(std::size_t bytes) {
  if (!config_.virtual_memory) return DeviceBackend::ReserveAddressRange(bytes);
  absl::MutexLock lock(&mu_);
  if (bytes == 0 || bytes % config_.page_size != 0) {
    return absl::InvalidArgumentError("sim: range not a multiple of the page size");
  }
  DevicePtr base = NextAddress(bytes, config_.page_size);
  ranges_.emplace(base, bytes);
  ++counts_.live_ranges;
  return base;
}

absl::Status SimBackend::ReleaseAddressRange(DevicePtr base, std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = RefuseDuringCapture("ReleaseAddressRange"); !s.ok()) return s;
  auto it = ranges_.find(base);
  if (it == ranges_.end() || it->second != bytes) {
    return absl::InvalidArgumentError("sim: ReleaseAddressRange of unknown range");
  }
  for (const auto& [va, mapping] : mappings_) {
    if (va >= base && va < base + bytes) {
      return absl::FailedPreconditionError("sim: releasing a range with live mappings");
    }
  }
  ranges_.erase(it);
  --counts_.live_ranges;
  return absl::OkStatus();
}

absl::StatusOr<PhysicalHandle> SimBackend::CreatePhysical(std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  if (bytes == 0 || bytes % config_.page_size != 0) {
    return absl::InvalidArgumentError("sim: physical size not a multiple of the page size");
  }
  if (ShouldFail(SimOp::kCreatePhysical) || (fail_above_ != 0 && bytes > fail_above_)) {
    return InjectedFailure("CreatePhysical");
  }
  if (bytes > FreeBytes()) {
    return absl::ResourceExhaustedError(absl::StrCat("sim: out of memory creating ",
                                                     bytes, " bytes of pages"));
  }
  PhysicalHandle handle = next_physical_++;
  physical_.emplace(handle, Physical{bytes});
  counts_.bytes_in_use += bytes;
  ++counts_.live_physical;
  return handle;
}

absl::Status SimBackend::ReleasePhysical(PhysicalHandle handle) {
  absl::MutexLock lock(&mu_);
  auto it = physical_.find(handle);
  if (it == physical_.end()) return absl::InvalidArgumentError("sim: unknown physical handle");
  // Memory that was never mapped cannot be in a captured graph: releasing it
  // (after a failed Map) is harmless, and the driver allows it in relaxed mode.
  if (physical_map_count_.contains(handle)) {
    if (absl::Status s = RefuseDuringCapture("ReleasePhysical"); !s.ok()) return s;
  }
  if (physical_map_count_[handle] != 0) {
    return absl::FailedPreconditionError("sim: releasing mapped physical memory");
  }
  const Physical& p = it->second;
  if (p.object != 0) {
    // The exported descriptor closes with the handle; the memory lives on
    // while another process still holds a handle to it.
    absl::MutexLock registry_lock(&registry_->mu_);
    if (p.fd >= 0) {
      registry_->fds_.erase(std::make_pair(pid_, p.fd));
      --counts_.exported_fds;
    }
    auto object = registry_->objects_.find(p.object);
    if (object != registry_->objects_.end() && --object->second.refs == 0) {
      registry_->objects_.erase(object);
    }
  }
  if (p.imported) {
    --counts_.live_imported;
  } else {
    counts_.bytes_in_use -= p.bytes;
  }
  physical_.erase(it);
  physical_map_count_.erase(handle);
  contents_.erase(handle);
  --counts_.live_physical;
  return absl::OkStatus();
}

absl::Status SimBackend::MapOne(DevicePtr va, std::size_t bytes, PhysicalHandle handle) {
  if (ShouldFail(SimOp::kMap)) return InjectedFailure("Map");
  auto phys = physical_.find(handle);
  if (phys == physical_.end() || phys->second.bytes != bytes) {
    return absl::InvalidArgumentError("sim: Map of unknown physical handle or wrong size");
  }
  bool in_range = false;
  for (const auto& [base, size] : ranges_) {
    if (va >= base && va + bytes <= base + size) in_range = true;
  }
  if (!in_range || va % config_.page_size != 0) {
    return absl::InvalidArgumentError("sim: Map outside a reserved range");
  }
  if (!mappings_.emplace(va, Mapping{bytes, handle, {config_.device}}).second) {
    return absl::FailedPreconditionError("sim: address already mapped");
  }
  mapping_ends_[va] = va + bytes;
  ++physical_map_count_[handle];
  ++counts_.live_mappings;
  return absl::OkStatus();
}

void SimBackend::UnmapOne(DevicePtr va) {
  auto it = mappings_.find(va);
  --physical_map_count_[it->second.handle];
  mappings_.erase(it);
  mapping_ends_.erase(va);
  --counts_.live_mappings;
}

absl::Status SimBackend::Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) {
  absl::MutexLock lock(&mu_);
  ++counts_.map_calls;
  return MapOne(va, bytes, handle);
}

absl::Status SimBackend::MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                                   absl::Span<const int> peers) {
  absl::MutexLock lock(&mu_);
  ++counts_.map_stretches;
  counts_.map_calls += static_cast<std::int64_t>(chunks.size());
  for (int d : peers) {
    if (d < 0 || d >= config_.num_devices) {
      return absl::InvalidArgumentError(absl::StrCat("sim: MapChunks for unknown device ", d));
    }
  }
  // A failure may be injected at any chunk's map, and at the access call
  // (peers); what was mapped is undone then, as the driver would.
  std::size_t done = 0, offset = 0;
  absl::Status status;
  // Handles mapped for the first time here: a stretch undone leaves them as
  // never mapped (no graph can have used them; see ReleasePhysical).
  std::vector<bool> first_map(chunks.size());
  for (; done < chunks.size(); ++done) {
    first_map[done] = !physical_map_count_.contains(chunks[done].handle);
    status = MapOne(va + offset, chunks[done].bytes, chunks[done].handle);
    if (!status.ok()) break;
    offset += chunks[done].bytes;
  }
  if (status.ok() && !peers.empty() && ShouldFail(SimOp::kSetAccess)) {
    status = InjectedFailure("MapChunks' access");
  }
  if (!status.ok()) {
    offset = 0;
    for (std::size_t i = 0; i < done; ++i) {
      UnmapOne(va + offset);
      if (first_map[i] && physical_map_count_[chunks[i].handle] == 0) {
        physical_map_count_.erase(chunks[i].handle);
      }
      offset += chunks[i].bytes;
    }
    return status;
  }
  offset = 0;
  for (const ChunkToMap& c : chunks) {
    auto& access = mappings_.find(va + offset)->second.access;
    for (int d : peers) {
      auto pos = std::lower_bound(access.begin(), access.end(), d);
      if (pos == access.end() || *pos != d) access.insert(pos, d);
    }
    offset += c.bytes;
  }
  return absl::OkStatus();
}

absl::Status SimBackend::Unmap(DevicePtr va, std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  ++counts_.unmap_calls;
  if (absl::Status s = RefuseDuringCapture("Unmap"); !s.ok()) return s;
  if (ShouldFail(SimOp::kUnmap)) return InjectedFailure("Unmap");
  if (CopyUses(va, bytes)) {
    return absl::FailedPreconditionError("sim: Unmap of memory a queued copy still uses");
  }
  auto it = mappings_.find(va);
  if (it == mappings_.end() || it->second.bytes != bytes) {
    return absl::InvalidArgumentError("sim: Unmap of a range that is not mapped");
  }
  UnmapOne(va);
  return absl::OkStatus();
}

absl::Status SimBackend::UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                                  std::size_t* unmapped) {
  absl::MutexLock lock(&mu_);
  ++counts_.unmap_calls;
  if (unmapped != nullptr) *unmapped = 0;
  if (absl::Status s = RefuseDuringCapture("UnmapRun"); !s.ok()) return s;
  if (ShouldFail(SimOp::kUnmap)) return InjectedFailure("UnmapRun");
  if (CopyUses(va, bytes)) {
    return absl::FailedPreconditionError("sim: UnmapRun of memory a queued copy still uses");
  }
  // Whole mappings tiling the run, or nothing changes.
  if (bytes_each == 0 || bytes % bytes_each != 0) {
    return absl::InvalidArgumentError("sim: UnmapRun of a run that is not whole mappings");
  }
  for (DevicePtr at = va; at < va + bytes; at += bytes_each) {
    auto it = mappings_.find(at);
    if (it == mappings_.end() || it->second.bytes != bytes_each) {
      return absl::InvalidArgumentError("sim: UnmapRun over a range that is not mapped");
    }
  }
  for (DevicePtr at = va; at < va + bytes; at += bytes_each) UnmapOne(at);
  if (unmapped != nullptr) *unmapped = bytes;
  return absl::OkStatus();
}

absl::StatusOr<std::string> SimBackend::ExportAllocation(DevicePtr base) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kExport)) return InjectedFailure("ExportAllocation");
  auto it = allocations_.find(base);
  if (it == allocations_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sim: ExportAllocation of unknown allocation 0x", absl::Hex(base)));
  }
  // The same allocation always gives the same handle, as on CUDA.
  auto [exported, fresh] = exported_.try_emplace(base, 0);
  if (fresh) {
    absl::MutexLock registry_lock(&registry_->mu_);
    exported->second = registry_->next_id_++;
    registry_->classic_.emplace(exported->second,
                                SimIpcRegistry::ClassicExport{pid_, base, it->second});
  }
  return EncodeSimHandle(exported->second);
}

absl::StatusOr<DevicePtr> SimBackend::OpenAllocation(absl::string_view handle) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kOpenAllocation)) return InjectedFailure("OpenAllocation");
  const std::uint64_t id = DecodeSimHandle(handle);
  if (id == 0) return absl::InvalidArgumentError("sim: not a simulated IPC memory handle");
  SimIpcRegistry::ClassicExport source;
  {
    absl::MutexLock registry_lock(&registry_->mu_);
    auto it = registry_->classic_.find(id);
    if (it == registry_->classic_.end()) {
      return absl::InvalidArgumentError("sim: the IPC handle names no live allocation");
    }
    source = it->second;
  }
  if (source.pid == pid_) {
    return absl::FailedPreconditionError(
        "sim: an IPC memory handle cannot be opened in the process that exported it");
  }
  for (const auto& [ptr, opened] : opened_) {
    if (opened.id == id) {
      return absl::FailedPreconditionError("sim: the IPC memory handle is already open here");
    }
  }
  const DevicePtr ptr = NextAddress(source.bytes, kAllocationAlignment);
  opened_.emplace(ptr, Opened{id, source.bytes});
  ++counts_.live_opened;
  return ptr;
}

absl::Status SimBackend::CloseAllocation(DevicePtr ptr) {
  absl::MutexLock lock(&mu_);
  if (opened_.erase(ptr) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sim: CloseAllocation of 0x", absl::Hex(ptr), ", which is not open"));
  }
  --counts_.live_opened;
  return absl::OkStatus();
}

absl::StatusOr<SharedPhysical> SimBackend::ExportPhysical(PhysicalHandle handle) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kExport)) return InjectedFailure("ExportPhysical");
  auto it = physical_.find(handle);
  if (it == physical_.end()) return absl::InvalidArgumentError("sim: unknown physical handle");
  if (!config_.exportable_physical) {
    return absl::UnimplementedError(
        "sim: physical memory was created without a shareable handle type");
  }
  Physical& p = it->second;
  if (p.fd < 0) {
    absl::MutexLock registry_lock(&registry_->mu_);
    if (p.object == 0) {
      p.object = registry_->next_id_++;
      registry_->objects_.emplace(p.object, SimIpcRegistry::Object{p.bytes, 1});
    }
    p.fd = registry_->next_fd_++;
    registry_->fds_.emplace(std::make_pair(pid_, p.fd), p.object);
    ++counts_.exported_fds;
  }
  return SharedPhysical{pid_, p.fd};
}

absl::StatusOr<PhysicalHandle> SimBackend::ImportPhysical(SharedPhysical from) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kImportPhysical)) return InjectedFailure("ImportPhysical");
  std::uint64_t object = 0;
  std::size_t bytes = 0;
  {
    absl::MutexLock registry_lock(&registry_->mu_);
    auto fd = registry_->fds_.find(std::make_pair(from.pid, from.fd));
    if (fd == registry_->fds_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("sim: descriptor ", from.fd,
                                                     " is not open in process ", from.pid));
    }
    object = fd->second;
    SimIpcRegistry::Object& o = registry_->objects_.at(object);
    ++o.refs;
    bytes = o.bytes;
  }
  const PhysicalHandle handle = next_physical_++;
  physical_.emplace(handle, Physical{bytes, /*imported=*/true, object, -1});
  ++counts_.live_physical;
  ++counts_.live_imported;
  return handle;
}

absl::Status SimBackend::SetAccess(DevicePtr va, std::size_t bytes,
                                   absl::Span<const int> devices) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kSetAccess)) return InjectedFailure("SetAccess");
  for (int d : devices) {
    if (d < 0 || d >= config_.num_devices) {
      return absl::InvalidArgumentError(absl::StrCat("sim: SetAccess for unknown device ", d));
    }
  }
  // Check first, then change: a refused call changes nothing.
  std::vector<Mapping*> covered;
  for (DevicePtr at = va; at < va + bytes;) {
    auto it = mappings_.find(at);
    if (it == mappings_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sim: SetAccess over unmapped memory at 0x", absl::Hex(at)));
    }
    covered.push_back(&it->second);
    at += it->second.bytes;
    if (at > va + bytes) {
      return absl::InvalidArgumentError("sim: SetAccess over part of a mapping");
    }
  }
  for (Mapping* m : covered) {
    for (int d : devices) {
      auto pos = std::lower_bound(m->access.begin(), m->access.end(), d);
      if (pos == m->access.end() || *pos != d) m->access.insert(pos, d);
    }
  }
  return absl::OkStatus();
}

absl::Status SimBackend::CheckPeer(int peer) {
  if (peer < 0 || peer >= config_.num_devices) {
    return absl::InvalidArgumentError(absl::StrCat("sim: there is no device ", peer, " (",
                                                   config_.num_devices, " devices)"));
  }
  return absl::OkStatus();
}

std::vector<int> SimBackend::AccessOf(DevicePtr va) const {
  absl::MutexLock lock(&mu_);
  auto it = mappings_.find(va);
  if (it == mappings_.end()) return {};
  return std::vector<int>(it->second.access.begin(), it->second.access.end());
}

void SimBackend::FailNth(SimOp op, std::int64_t n) {
  absl::MutexLock lock(&mu_);
  fail_nth_[static_cast<int>(op)] = n;
}

void SimBackend::FailAbove(std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  fail_above_ = bytes;
}

void SimBackend::FailRandomly(double probability, std::uint64_t seed) {
  absl::MutexLock lock(&mu_);
  fail_probability_ = probability;
  rng_.seed(seed);
}

void SimBackend::SetCapacity(std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  capacity_ = bytes;
}

void SimBackend::CompleteStream(StreamId stream) {
  absl::MutexLock lock(&mu_);
  for (auto& [handle, state] : events_) {
    if (state.stream == stream) state.complete = true;
  }
  drained_[stream] = tick_ + 1;
}

void SimBackend::CompleteAll() {
  absl::MutexLock lock(&mu_);
  drained_all_ = tick_ + 1;
  for (auto& [handle, state] : events_) state.complete = true;
}

SimBackend::Counts SimBackend::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

bool SimBackend::NothingOutstanding() const {
  absl::MutexLock lock(&mu_);
  return counts_.bytes_in_use == 0 && counts_.live_allocations == 0 &&
         counts_.live_physical == 0 && counts_.live_mappings == 0 &&
         counts_.live_ranges == 0 && counts_.live_events == 0 && counts_.live_opened == 0 &&
         counts_.live_imported == 0 && counts_.exported_fds == 0 && counts_.live_host == 0 &&
         queued_.empty();
}

}  // namespace ccalloc
