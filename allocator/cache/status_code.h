// status_code.h — the one mapping from absl::Status to the C API's codes,
// shared by ccalloc.h's functions and the PyTorch plugin.
#ifndef CCALLOC_ALLOCATOR_STATUS_CODE_H_
#define CCALLOC_ALLOCATOR_STATUS_CODE_H_

#include "absl/status/status.h"
#include "ccalloc/ccalloc.h"

namespace ccalloc {

inline ccalloc_status StatusCode(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return CCALLOC_OK;
    case absl::StatusCode::kResourceExhausted:
      return CCALLOC_OUT_OF_MEMORY;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return CCALLOC_INVALID_ARGUMENT;
    case absl::StatusCode::kUnavailable:
      return CCALLOC_UNAVAILABLE;
    default:
      return CCALLOC_INTERNAL;
  }
}

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_STATUS_CODE_H_
