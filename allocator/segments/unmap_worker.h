// unmap_worker.h — driver calls that nobody waits for, made on a thread of
// their own.
//
// Unmapping a chunk (cuMemUnmap, ~15-30 us) and giving its memory back
// (cuMemRelease, 15-70 us) are host time on whichever thread calls them.
// Made inside an allocation, that thread is the one launching the training
// step's kernels, and on host-bound models each call is step time. Nothing
// needs their result at once: the pages are marked as leaving (no block can
// land there, no memory counted there) and the memory is counted where it
// went. So GrowableSegments hands them to this worker, which makes them on
// its own thread, in the order given, and reports how each went.
//
// On an H100 a second thread's map and unmap calls do not slow the first
// thread's kernel launches (3.51 us per launch alone, 3.59 with a thread
// mapping and unmapping back to back, 3.61 at one pair per 200 us:
// bench/results/h100_vmm_thread_probe.json), so the work really leaves the
// launching thread rather than waiting for it behind a driver lock.
//
// Jobs run in order, one at a time: a release queued after the unmap of one
// of its handle's mappings runs after it. The worker never takes the cache's
// mutex (the store holds it while it submits and waits), so waiting for a job
// under that mutex cannot deadlock.
#ifndef CCALLOC_ALLOCATOR_SEGMENTS_UNMAP_WORKER_H_
#define CCALLOC_ALLOCATOR_SEGMENTS_UNMAP_WORKER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"

namespace ccalloc {

class UnmapWorker {
 public:
  // What a job did: its id, then the unmap's and the release's outcome
  // (OK where there was none to make; a release is not tried after a failed
  // unmap, and reports FailedPrecondition then).
  struct Result {
    std::uint64_t id = 0;
    PhysicalHandle release = 0;  // the handle the job was to release, or 0
    absl::Status unmapped;
    absl::Status released;
    std::int64_t ns = 0;  // host time of its calls
    // The release was not made because an earlier job's unmap of another
    // mapping of the same memory failed (Submit's `maps`): that mapping
    // still holds it, and the memory is the caller's to count again.
    bool kept = false;
  };

  // `threaded` false: every job runs inside Submit, on the caller's thread
  // (background_unmap:0, for A/B runs and for a backend without threads).
  UnmapWorker(DeviceBackend& backend, bool threaded);
  // Finishes every queued job, then stops the thread.
  ~UnmapWorker();
  UnmapWorker(const UnmapWorker&) = delete;
  UnmapWorker& operator=(const UnmapWorker&) = delete;

  // Queues the unmap of [va, va + bytes) (none when bytes is 0) followed by
  // the release of `release` (none when 0), and returns the job's id (> 0).
  // `maps`: the memory mapped there when the job releases nothing (a move's
  // old mapping); if that unmap fails, a later job's release of the same
  // memory is not made (Result::kept), so that the device never frees
  // memory a mapping still holds behind the caller's counters.
  // The thread starts with the first job.
  std::uint64_t Submit(DevicePtr va, std::size_t bytes, PhysicalHandle release,
                       PhysicalHandle maps = 0);
  // The results of jobs finished since the last call, in submission order.
  std::vector<Result> TakeResults();
  // Returns once job `id` and every job before it have finished.
  void WaitFor(std::uint64_t id);
  // Returns once every job submitted so far has finished.
  void Drain();
  // Jobs submitted and not yet finished.
  std::size_t pending() const;
  // The allocating thread made (or is about to make) a driver call of its
  // own: queued jobs wait until it has made none for kQuiet.
  void NoteForegroundCall();
  // Submitted, finished and running counts agree; `why` gets the problem.
  bool Validate(std::string* why) const;

 private:
  struct Job {
    std::uint64_t id;
    DevicePtr va;
    std::size_t bytes;
    PhysicalHandle release;
    std::int64_t submitted_ns;
    PhysicalHandle maps = 0;
  };
  // How long the allocating threads must have made no driver call before a
  // job runs, and how long a job may wait for that at most (its memory is
  // counted as gone but still held meanwhile), and how many may queue.
  static constexpr std::int64_t kQuietNs = 100'000;
  static constexpr std::int64_t kMaxDelayNs = 5'000'000;
  static constexpr std::size_t kMaxQueued = 256;
  static std::int64_t NowNs();
  // Runs `job`, keeping still_mapped_ current.
  Result Run(const Job& job);
  void Loop();
  // A child of fork(): the thread did not come along, so jobs run on the
  // caller (the child cannot use the device anyway; nothing may hang).
  bool Forked() const { return getpid() != pid_; }
  // Runs every queued job on the caller, in order (mu_ held on entry and
  // exit; released while the jobs run).
  void RunQueueHere() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasWorkOrStop() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The front job runs now (waited for, stopping, or a long queue); the
  // queue is not empty.
  bool Urgent() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool UrgentOrGone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool NotRunning() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  DeviceBackend& backend_;
  const bool threaded_;
  mutable absl::Mutex mu_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<Result> results_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Every job with an id up to this one has finished.
  std::uint64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // A job is running (on the thread, or a queue on a caller: Submit).
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  // Memory a failed unmap left mapped, whose release is withheld when its
  // job comes (Submit's `maps`). Only the one running jobs touches it (the
  // thread, or a caller with running_ set, or Submit inline under the
  // caller's own lock), so it is handed over with running_.
  std::vector<PhysicalHandle> still_mapped_;
  // Jobs up to this one are waited for: they run without yielding.
  std::uint64_t urgent_through_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<std::int64_t> last_foreground_ns_{0};
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // The thread, started by the first job (a pointer: a child of fork()
  // has no such thread and must neither join nor destroy it), and the
  // process it runs in.
  std::unique_ptr<std::thread> thread_;
  const pid_t pid_;
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SEGMENTS_UNMAP_WORKER_H_
