// unmap_worker.cc — see unmap_worker.h.
#include "allocator/segments/unmap_worker.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ccalloc {

UnmapWorker::UnmapWorker(DeviceBackend& backend, bool threaded)
    : backend_(backend), threaded_(threaded), pid_(getpid()) {}

UnmapWorker::~UnmapWorker() {
  if (thread_ != nullptr && Forked()) {
    // The parent's thread is not here: joining or destroying it would abort.
    (void)thread_.release();
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_ != nullptr && thread_->joinable()) thread_->join();
}

void UnmapWorker::RunQueueHere() {
  std::vector<Job> jobs(queue_.begin(), queue_.end());
  queue_.clear();
  running_ = true;
  mu_.Unlock();
  std::vector<Result> results;
  results.reserve(jobs.size());
  for (const Job& job : jobs) results.push_back(Run(job));
  mu_.Lock();
  for (Result& r : results) results_.push_back(std::move(r));
  if (!jobs.empty()) finished_ = jobs.back().id;
  running_ = false;
}

UnmapWorker::Result UnmapWorker::Run(const Job& job) {
  Result result{job.id, job.release, absl::OkStatus(), absl::OkStatus()};
  const std::int64_t start = NowNs();
  if (job.bytes > 0) result.unmapped = backend_.Unmap(job.va, job.bytes);
  if (job.maps != 0) {
    // A failed unmap leaves the memory mapped; a later one that succeeds
    // (the caller tries again) no longer does.
    if (!result.unmapped.ok()) {
      still_mapped_.push_back(job.maps);
    } else if (auto it = std::find(still_mapped_.begin(), still_mapped_.end(), job.maps);
               it != still_mapped_.end()) {
      still_mapped_.erase(it);
    }
  }
  if (job.release != 0) {
    auto held = std::find(still_mapped_.begin(), still_mapped_.end(), job.release);
    if (!result.unmapped.ok()) {
      result.released = absl::FailedPreconditionError("not released: its unmap failed");
    } else if (held != still_mapped_.end()) {
      // Another mapping of it is still there: freeing it now would leave
      // the device holding memory nobody counts.
      still_mapped_.erase(held);
      result.kept = true;
      result.released =
          absl::FailedPreconditionError("not released: an old mapping of it is still mapped");
    } else {
      result.released = backend_.ReleasePhysical(job.release);
    }
  }
  result.ns = NowNs() - start;
  return result;
}

std::uint64_t UnmapWorker::Submit(DevicePtr va, std::size_t bytes, PhysicalHandle release,
                                  PhysicalHandle maps) {
  if (!threaded_ || Forked()) {
    std::uint64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = next_id_++;
    }
    Result result = Run(Job{id, va, bytes, release, 0, maps});
    absl::MutexLock lock(&mu_);
    results_.push_back(std::move(result));
    finished_ = id;
    return id;
  }
  const std::int64_t now = NowNs();
  absl::MutexLock lock(&mu_);
  const std::uint64_t id = next_id_++;
  queue_.push_back(Job{id, va, bytes, release, now, maps});
  // The oldest job has waited kQuiet for a pause in the caller's own driver
  // calls and got none (a churn of allocations that each map): the caller
  // is the busy one, and a second thread calling the driver would only make
  // its calls wait. The queue is run here then, in order (only while the
  // worker runs nothing, so the order holds).
  if (!running_ && queue_.front().submitted_ns + kQuietNs <= now) {
    RunQueueHere();
    return id;
  }
  if (!started_) {
    started_ = true;
    thread_ = std::make_unique<std::thread>([this] { Loop(); });
  }
  return id;
}

void UnmapWorker::Loop() {
  // Named for whoever looks at the process's threads (top -H, gdb).
  pthread_setname_np(pthread_self(), "ccalloc-unmap");
  // Its calls are off the allocating thread (MemoryStats::background_driver_calls).
  const BackgroundCalls background;
  absl::MutexLock lock(&mu_);
  for (;;) {
    // Waits for work; on stop, leaves only once the queue is empty, so no
    // mapping or memory is left behind.
    mu_.Await(absl::Condition(this, &UnmapWorker::HasWorkOrStop));
    if (queue_.empty()) return;  // stopping, and nothing left
    // Yields to the allocating threads' own driver calls: a call made while
    // one of theirs runs waits for it behind the driver's lock (an H100
    // map on one thread took 88 us instead of 22 while another mapped and
    // unmapped back to back), so a job waits until they have made none for
    // kQuiet. Unless it is waited for, the queue is long, or it is old.
    // (A caller that found the worker idle may run the queue meanwhile.)
    bool go = false;
    while (!queue_.empty() && !running_) {
      const std::int64_t now = NowNs();
      const std::int64_t ready_at =
          std::min(last_foreground_ns_.load(std::memory_order_relaxed) + kQuietNs,
                   queue_.front().submitted_ns + kMaxDelayNs);
      if (now >= ready_at || Urgent()) {
        go = true;
        break;
      }
      mu_.AwaitWithTimeout(absl::Condition(this, &UnmapWorker::UrgentOrGone),
                           absl::Nanoseconds(ready_at - now));
    }
    if (!go) {
      // The caller is running the queue: wait for it before looking again.
      mu_.Await(absl::Condition(this, &UnmapWorker::NotRunning));
      continue;
    }
    const Job job = queue_.front();
    queue_.pop_front();
    running_ = true;
    mu_.Unlock();
    Result result = Run(job);
    mu_.Lock();
    results_.push_back(std::move(result));
    finished_ = job.id;
    running_ = false;
  }
}

bool UnmapWorker::HasWorkOrStop() const { return stop_ || !queue_.empty(); }

bool UnmapWorker::UrgentOrGone() const { return queue_.empty() || running_ || Urgent(); }

bool UnmapWorker::NotRunning() const { return !running_; }

bool UnmapWorker::Urgent() const {
  return stop_ || urgent_through_ >= queue_.front().id || queue_.size() >= kMaxQueued;
}

std::int64_t UnmapWorker::NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void UnmapWorker::NoteForegroundCall() {
  last_foreground_ns_.store(NowNs(), std::memory_order_relaxed);
}

std::vector<UnmapWorker::Result> UnmapWorker::TakeResults() {
  absl::MutexLock lock(&mu_);
  std::vector<Result> out;
  out.swap(results_);
  return out;
}

void UnmapWorker::WaitFor(std::uint64_t id) {
  // (Await evaluates the condition with mu_ held.)
  struct Finished {
    const UnmapWorker* worker;
    std::uint64_t id;
    bool operator()() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return worker->finished_ >= id; }
  };
  const Finished finished{this, id};
  absl::MutexLock lock(&mu_);
  if (Forked() && !running_) RunQueueHere();  // the parent's queue, if any
  urgent_through_ = std::max(urgent_through_, id);  // no more yielding for these
  mu_.Await(absl::Condition(&finished));
}

void UnmapWorker::Drain() {
  std::uint64_t last;
  {
    absl::MutexLock lock(&mu_);
    last = next_id_ - 1;
  }
  WaitFor(last);
}

std::size_t UnmapWorker::pending() const {
  absl::MutexLock lock(&mu_);
  return static_cast<std::size_t>(next_id_ - 1 - finished_);
}

bool UnmapWorker::Validate(std::string* why) const {
  absl::MutexLock lock(&mu_);
  // Unfinished jobs are the queued ones, and those running (one on the
  // thread, or the queue a caller took: Submit) when something runs.
  const std::uint64_t submitted = next_id_ - 1;
  const std::uint64_t queued = queue_.size();
  const std::uint64_t unfinished = submitted - finished_;
  const bool ok = finished_ <= submitted &&
                  (running_ ? unfinished > queued : unfinished == queued) &&
                  (queue_.empty() || queue_.back().id == submitted);
  if (!ok && why != nullptr) {
    *why = absl::StrCat("unmap worker: ", submitted, " jobs submitted, ", finished_,
                        " finished, ", queued, " queued");
  }
  return ok;
}

}  // namespace ccalloc
