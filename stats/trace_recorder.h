// trace_recorder.h — records a live allocator's requests as a replayable trace.
//
// Attach one to a DeviceAllocator (SetTraceRecorder) and every successful
// allocate and free is appended in the v1 trace format of traces/README.md:
// dense ids, the size the program asked for, and streams renumbered in order
// of first use (stream handles are process-local pointers; their order is
// what a replay needs). `ccalloc-replay` then runs the same work through any
// policy. Costs one hash-map operation and a vector append per call.
#ifndef CCALLOC_STATS_TRACE_RECORDER_H_
#define CCALLOC_STATS_TRACE_RECORDER_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "stats/trace.h"

namespace ccalloc {

class TraceRecorder {
 public:
  explicit TraceRecorder(std::string name = "recorded") { trace_.name = std::move(name); }

  void OnAllocate(std::uint64_t ptr, std::uint64_t bytes, std::uint64_t stream,
                  std::uint32_t region = 0)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnFree(std::uint64_t ptr) ABSL_LOCKS_EXCLUDED(mu_);
  // A region paused (its memory given back) or resumed.
  void OnPause(std::uint32_t region, std::uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  void OnResume(std::uint32_t region, std::uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);

  // A copy of what was recorded so far (blocks still live stay unfreed).
  Trace Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);
  // Writes the trace (gzipped if `path` ends in .gz).
  absl::Status Write(const std::string& path) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  Trace trace_ ABSL_GUARDED_BY(mu_);
  // Live pointer -> index of its allocation event.
  absl::flat_hash_map<std::uint64_t, std::size_t> live_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::uint64_t, std::uint64_t> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccalloc

#endif  // CCALLOC_STATS_TRACE_RECORDER_H_
