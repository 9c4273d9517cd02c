#include "stats/trace_recorder.h"

namespace ccalloc {

void TraceRecorder::OnAllocate(std::uint64_t ptr, std::uint64_t bytes, std::uint64_t stream,
                               std::uint32_t region) {
  absl::MutexLock lock(&mu_);
  const std::uint64_t id = trace_.num_ids++;
  const std::uint64_t renumbered = streams_.try_emplace(stream, streams_.size()).first->second;
  live_[ptr] = trace_.events.size();
  trace_.events.push_back(TraceEvent{TraceEvent::Op::kAlloc, id, bytes, renumbered, region});
}

void TraceRecorder::OnFree(std::uint64_t ptr) {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(ptr);
  // The allocator only reports frees it accepted, so the pointer is live.
  if (it == live_.end()) return;
  // A free carries its block's size and stream, as the trace readers do.
  const TraceEvent alloc = trace_.events[it->second];
  trace_.events.push_back(TraceEvent{TraceEvent::Op::kFree, alloc.id, alloc.bytes, alloc.stream});
  live_.erase(it);
}

void TraceRecorder::OnPause(std::uint32_t region, std::uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  trace_.events.push_back(TraceEvent{TraceEvent::Op::kPause, region, bytes, 0});
}

void TraceRecorder::OnResume(std::uint32_t region, std::uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  trace_.events.push_back(TraceEvent{TraceEvent::Op::kResume, region, bytes, 0});
}

Trace TraceRecorder::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return trace_;
}

absl::Status TraceRecorder::Write(const std::string& path) const {
  return WriteTrace(Snapshot(), path);
}

}  // namespace ccalloc
