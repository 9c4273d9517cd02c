// fd_transfer.h — copying a file descriptor out of another process.
//
// Growable-segment IPC hands out physical memory as POSIX file descriptors
// that stay open in the producer (see allocator/cache/ipc.h). A consumer takes its
// own copy with pidfd_open + pidfd_getfd: no socket or helper process is
// needed, at the price of Linux 5.6 and ptrace access to the producer (the
// same user, and kernel.yama.ptrace_scope allowing it), as for PyTorch's
// expandable segments.
#ifndef CCALLOC_ALLOCATOR_FD_TRANSFER_H_
#define CCALLOC_ALLOCATOR_FD_TRANSFER_H_

#include "absl/status/statusor.h"

namespace ccalloc {

// A new descriptor (close-on-exec; the caller closes it) for what `fd` is in
// process `pid`. This process's own descriptors are duplicated with fcntl,
// which needs no kernel support. InvalidArgument when `fd` is not open in a
// live process `pid`; Unimplemented (naming the kernel requirement) where
// pidfd_open or pidfd_getfd is missing; PermissionDenied without ptrace
// access to `pid`.
absl::StatusOr<int> CopyFdFromProcess(int pid, int fd);

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_FD_TRANSFER_H_
