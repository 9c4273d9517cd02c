// sim_capture.cc — the simulated device's stream capture: which streams are
// captured, the graph each capture records, and the order it gives the work
// of its streams (see sim_backend.h for the model).
//
// A captured stream has a dependency set: the nodes the next work captured on
// it depends on. Launch adds a node after that set and makes it the set; an
// event recorded on the stream copies the set, and a stream waiting for the
// event joins the capture with it (or unions it into its own): that is all
// torch.cuda.Stream.wait_stream does during a capture. Nodes and captures are
// numbered from counters that never repeat, so a position of an ended
// capture can never be mistaken for one of a later capture.
//
// Part of SimBackend (sim_backend.cc holds the rest); every function here
// takes the backend's lock or requires it.
#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "allocator/backends/sim_backend.h"

namespace ccalloc {
namespace {

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

}  // namespace

absl::Status SimBackend::RefuseCaptured(const char* what) {
  std::string message = absl::StrCat("sim: ", what, " is not permitted: it belongs to the graph");
  if (capture_violation_.empty()) capture_violation_ = message;
  return absl::FailedPreconditionError(message);
}

absl::Status SimBackend::BeginCapture(StreamId stream) {
  absl::MutexLock lock(&mu_);
  if (captures_.contains(stream)) {
    return absl::FailedPreconditionError(
        absl::StrCat("sim: stream ", Hex(stream), " is already being captured"));
  }
  if (captures_.empty()) capture_violation_.clear();
  const std::uint64_t id = next_capture_++;
  graphs_[id].origin = stream;
  captures_[stream] = Captured{id, {}};
  return absl::OkStatus();
}

absl::Status SimBackend::EndCapture(StreamId stream) {
  absl::MutexLock lock(&mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sim: stream ", Hex(stream), " is not being captured"));
  }
  const std::uint64_t id = it->second.capture;
  auto graph = graphs_.find(id);
  if (graph->second.origin != stream) {
    return absl::FailedPreconditionError(
        absl::StrCat("sim: stream ", Hex(stream), " joined capture ", id,
                     " but did not begin it: end it on stream ", Hex(graph->second.origin)));
  }
  // Every stream that joined must have its work joined back into the
  // origin's, or the graph has work nothing waits for.
  const absl::InlinedVector<CaptureNode, 4> end = it->second.after;
  std::vector<StreamId> members;
  StreamId unjoined = 0;
  bool all_joined = true;
  for (const auto& [s, captured] : captures_) {
    if (captured.capture != id) continue;
    members.push_back(s);
    if (s != stream && !Precede(id, captured.after, end)) {
      all_joined = false;
      unjoined = s;
    }
  }
  for (StreamId s : members) captures_.erase(s);
  graphs_.erase(graph);
  if (!all_joined) {
    std::string message = absl::StrCat("sim: EndCapture on stream ", Hex(stream), ": stream ",
                                       Hex(unjoined), " joined the capture and was not joined back");
    if (capture_violation_.empty()) capture_violation_ = message;
    return absl::FailedPreconditionError(message);
  }
  return absl::OkStatus();
}

bool SimBackend::capturing() const {
  absl::MutexLock lock(&mu_);
  return !captures_.empty();
}

bool SimBackend::capture_invalidated() const {
  absl::MutexLock lock(&mu_);
  return !capture_violation_.empty();
}

std::string SimBackend::capture_violation() const {
  absl::MutexLock lock(&mu_);
  return capture_violation_;
}

void SimBackend::Launch(StreamId stream) {
  absl::MutexLock lock(&mu_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return;
  const CaptureNode node = next_node_++;
  graphs_[it->second.capture].parents[node].assign(it->second.after.begin(),
                                                   it->second.after.end());
  it->second.after.assign({node});
}

absl::Status SimBackend::WaitInCapture(StreamId stream, const EventState& event) {
  if (!graphs_.contains(event.capture)) {
    return RefuseCaptured("StreamWaitEvent for an event recorded in a capture that has ended");
  }
  auto it = captures_.find(stream);
  if (it == captures_.end()) {
    Captured& joined = captures_[stream];
    joined.capture = event.capture;
    joined.after.assign(event.after.begin(), event.after.end());
    return absl::OkStatus();
  }
  if (it->second.capture != event.capture) {
    // cudaErrorStreamCaptureIsolation: a capture cannot wait for another's work.
    return RefuseCaptured("StreamWaitEvent across two captures");
  }
  for (CaptureNode n : event.after) {
    if (std::find(it->second.after.begin(), it->second.after.end(), n) == it->second.after.end()) {
      it->second.after.push_back(n);
    }
  }
  return absl::OkStatus();
}

bool SimBackend::Precede(std::uint64_t capture, absl::Span<const CaptureNode> nodes,
                         absl::Span<const CaptureNode> from) const {
  auto graph = graphs_.find(capture);
  if (graph == graphs_.end()) return nodes.empty();
  // Backwards from `from` over the dependencies, each node once.
  absl::flat_hash_set<CaptureNode> seen(from.begin(), from.end());
  std::vector<CaptureNode> todo(from.begin(), from.end());
  while (!todo.empty()) {
    const CaptureNode n = todo.back();
    todo.pop_back();
    auto parents = graph->second.parents.find(n);
    if (parents == graph->second.parents.end()) continue;
    for (CaptureNode p : parents->second) {
      if (seen.insert(p).second) todo.push_back(p);
    }
  }
  return std::all_of(nodes.begin(), nodes.end(), [&](CaptureNode n) { return seen.contains(n); });
}

absl::StatusOr<CapturePosition> SimBackend::CapturePositionOf(StreamId stream) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kCaptureQuery)) {
    return absl::InternalError("sim: injected failure in CapturePositionOf");
  }
  auto it = captures_.find(stream);
  if (it == captures_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sim: stream ", Hex(stream), " is not being captured"));
  }
  CapturePosition position;
  position.capture = it->second.capture;
  position.nodes.assign(it->second.after.begin(), it->second.after.end());
  return position;
}

absl::StatusOr<bool> SimBackend::OrderedBefore(const CapturePosition& before, StreamId stream) {
  absl::MutexLock lock(&mu_);
  if (ShouldFail(SimOp::kCaptureQuery)) {
    return absl::InternalError("sim: injected failure in OrderedBefore");
  }
  auto it = captures_.find(stream);
  if (it == captures_.end() || it->second.capture != before.capture) return false;
  return Precede(before.capture, before.nodes, it->second.after);
}

}  // namespace ccalloc
