// cuda_backend_capture.cc — CudaBackend's answers about the order of work in
// a stream capture (graph_capture_record_stream_reuse): where a captured
// stream stands in its graph (cuStreamGetCaptureInfo) and whether nodes are
// ordered before a stream's next captured work (a walk back over
// cuGraphNodeGetDependencies from the stream's dependencies).
//
// Both are legal while the capture is underway: they read the graph and
// queue nothing. The walk follows only edges that wait for the upstream
// node's completion (the default edge type from the default port);
// programmatic edges (dependent launch) let a kernel start before the one it
// follows has finished, so order through them is not taken as proof, and a
// stream whose next work would follow a dependency that way does not start
// the walk from it. A free position (CapturePositionOf) is taken to cover
// all the work its stream captured before it, as stream order makes it; a
// dependent launch earlier on that stream is not looked for (PyTorch's walk
// assumes the same).
//
// Part of the CUDA backend (see cuda_backend_impl.h); the driver is called
// only through the DriverApi table, with the primary context made current.
#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_backend_impl.h"
#include "allocator/backends/cuda_driver.h"

namespace ccalloc {
namespace cuda_internal {
namespace {

// Whether an edge makes its downstream node wait for the upstream node to
// complete.
bool WaitsForCompletion(const CUgraphEdgeData& edge) {
  return edge.type == CU_GRAPH_DEPENDENCY_TYPE_DEFAULT &&
         edge.from_port == CU_GRAPH_KERNEL_NODE_PORT_DEFAULT;
}

// Streams whose walks are kept at most; past it, those of other captures go.
constexpr std::size_t kMaxAncestries = 64;

// The legacy default stream (StreamId 0) is never captured, and asking the
// driver about it while a blocking stream captures is
// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: it is answered without asking.
constexpr StreamId kLegacyStream = 0;

}  // namespace

absl::StatusOr<CudaBackend::CaptureInfo> CudaBackend::GetCaptureInfo(StreamId stream) const {
  CaptureInfo info;
  // With the edge data: asking without it is CUDA_ERROR_LOSSY_QUERY where
  // a dependency has non-default edge data.
  if (CUresult r = api_.stream_get_capture_info(reinterpret_cast<CUstream>(stream), &info.status,
                                                &info.id, /*graph_out=*/nullptr, &info.nodes,
                                                &info.edges, &info.count);
      r != CUDA_SUCCESS) {
    return Error(r, "cuStreamGetCaptureInfo", absl::StrCat("stream ", Hex(stream)));
  }
  return info;
}

absl::Status CudaBackend::NodeDependencies(CUgraphNode node, std::vector<CUgraphNode>* nodes,
                                           std::vector<CUgraphEdgeData>* edges) const {
  std::size_t count = 0;
  if (CUresult r = api_.graph_node_get_dependencies(node, nullptr, nullptr, &count);
      r != CUDA_SUCCESS) {
    return Error(r, "cuGraphNodeGetDependencies");
  }
  nodes->assign(count, nullptr);
  edges->assign(count, CUgraphEdgeData{});
  if (count == 0) return absl::OkStatus();
  if (CUresult r = api_.graph_node_get_dependencies(node, nodes->data(), edges->data(), &count);
      r != CUDA_SUCCESS) {
    return Error(r, "cuGraphNodeGetDependencies");
  }
  // The driver says how many it filled in (fewer if the node lost some).
  nodes->resize(std::min(count, nodes->size()));
  edges->resize(nodes->size());
  return absl::OkStatus();
}

absl::StatusOr<CapturePosition> CudaBackend::CapturePositionOf(StreamId stream) {
  if (api_.stream_get_capture_info == nullptr) return Missing("cuStreamGetCaptureInfo_v3");
  if (stream == kLegacyStream) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA device ", device_, ": the legacy default stream is never captured"));
  }
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  absl::StatusOr<CaptureInfo> info = GetCaptureInfo(stream);
  if (!info.ok()) return info.status();
  if (info->status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA device ", device_, ": stream ", Hex(stream),
        info->status == CU_STREAM_CAPTURE_STATUS_NONE ? " is not being captured"
                                                      : "'s capture is invalidated"));
  }
  CapturePosition position;
  position.capture = info->id;
  // (Null with a count of 0 right after the capture began.)
  for (std::size_t i = 0; i < info->count; ++i) {
    position.nodes.push_back(reinterpret_cast<CaptureNode>(info->nodes[i]));
  }
  return position;
}

absl::StatusOr<bool> CudaBackend::OrderedBefore(const CapturePosition& before, StreamId stream) {
  if (api_.stream_get_capture_info == nullptr || api_.graph_node_get_dependencies == nullptr ||
      stream == kLegacyStream) {
    return false;
  }
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  absl::StatusOr<CaptureInfo> info = GetCaptureInfo(stream);
  if (!info.ok()) return info.status();
  if (info->status != CU_STREAM_CAPTURE_STATUS_ACTIVE || info->id != before.capture) return false;

  absl::MutexLock lock(&capture_mu_);
  if (!ancestry_.contains(stream) && ancestry_.size() >= kMaxAncestries) {
    for (auto it = ancestry_.begin(); it != ancestry_.end();) {
      if (it->second.capture != info->id) {
        ancestry_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  Ancestry& ancestry = ancestry_[stream];
  if (ancestry.capture != info->id) {
    ancestry.capture = info->id;
    ancestry.ordered.clear();
  }
  // Backwards from the stream's dependencies, each node once (the set
  // already holds what earlier calls walked, and so their ancestors).
  std::vector<CUgraphNode> todo;
  for (std::size_t i = 0; i < info->count; ++i) {
    if (info->edges != nullptr && !WaitsForCompletion(info->edges[i])) continue;
    if (ancestry.ordered.insert(info->nodes[i]).second) todo.push_back(info->nodes[i]);
  }
  std::vector<CUgraphNode> parents;
  std::vector<CUgraphEdgeData> edges;
  while (!todo.empty()) {
    const CUgraphNode node = todo.back();
    todo.pop_back();
    if (absl::Status s = NodeDependencies(node, &parents, &edges); !s.ok()) {
      // A node in the set whose ancestors were not walked would hide them
      // from every later call: start afresh next time.
      ancestry.ordered.clear();
      return s;
    }
    for (std::size_t i = 0; i < parents.size(); ++i) {
      if (parents[i] == nullptr || !WaitsForCompletion(edges[i])) continue;
      if (ancestry.ordered.insert(parents[i]).second) todo.push_back(parents[i]);
    }
  }
  for (CaptureNode n : before.nodes) {
    if (!ancestry.ordered.contains(reinterpret_cast<CUgraphNode>(n))) return false;
  }
  return true;
}

}  // namespace cuda_internal
}  // namespace ccalloc
