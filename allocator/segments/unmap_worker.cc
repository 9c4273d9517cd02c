// unmap_worker.cc — see unmap_worker.h.
#include "allocator/segments/unmap_worker.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ccalloc {

UnmapWorker::UnmapWorker(DeviceBackend& backend, bool threaded)
    : backend_(backend), threaded_(threaded) {}

UnmapWorker::~UnmapWorker() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

UnmapWorker::Result UnmapWorker::Run(const Job& job) {
  Result result{job.id, job.release, absl::OkStatus(), absl::OkStatus()};
  if (job.bytes > 0) result.unmapped = backend_.Unmap(job.va, job.bytes);
  if (job.release != 0) {
    result.released = result.unmapped.ok()
                          ? backend_.ReleasePhysical(job.release)
                          : absl::FailedPreconditionError("not released: its unmap failed");
  }
  return result;
}

std::uint64_t UnmapWorker::Submit(DevicePtr va, std::size_t bytes, PhysicalHandle release) {
  if (!threaded_) {
    std::uint64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = next_id_++;
    }
    Result result = Run(Job{id, va, bytes, release});
    absl::MutexLock lock(&mu_);
    results_.push_back(std::move(result));
    finished_ = id;
    return id;
  }
  absl::MutexLock lock(&mu_);
  const std::uint64_t id = next_id_++;
  queue_.push_back(Job{id, va, bytes, release});
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { Loop(); });
  }
  return id;
}

void UnmapWorker::Loop() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    // Waits for work; on stop, leaves only once the queue is empty, so no
    // mapping or memory is left behind.
    mu_.Await(absl::Condition(this, &UnmapWorker::HasWorkOrStop));
    if (queue_.empty()) return;
    const Job job = queue_.front();
    queue_.pop_front();
    mu_.Unlock();
    Result result = Run(job);
    mu_.Lock();
    results_.push_back(std::move(result));
    finished_ = job.id;
  }
}

bool UnmapWorker::HasWorkOrStop() const { return stop_ || !queue_.empty(); }

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
  // Queued jobs are exactly the ids after finished_, less the one running.
  const std::uint64_t submitted = next_id_ - 1;
  const std::uint64_t queued = queue_.size();
  const bool ok = finished_ <= submitted && submitted - finished_ >= queued &&
                  submitted - finished_ <= queued + 1 &&
                  (queue_.empty() || queue_.back().id == submitted);
  if (!ok && why != nullptr) {
    *why = absl::StrCat("unmap worker: ", submitted, " jobs submitted, ", finished_,
                        " finished, ", queued, " queued");
  }
  return ok;
}

}  // namespace ccalloc
