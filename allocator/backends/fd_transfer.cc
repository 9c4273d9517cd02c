// fd_transfer.cc — see fd_transfer.h.
#include "allocator/backends/fd_transfer.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ccalloc {
namespace {

std::string KernelRelease() {
  struct utsname name = {};
  return uname(&name) == 0 ? std::string(name.release) : std::string("unknown");
}

absl::Status Missing(const char* call, int err) {
  return absl::UnimplementedError(absl::StrCat(
      call, " is not available (", std::strerror(err),
      "): opening a growable-segment IPC handle of another process needs Linux 5.6 or "
      "later (this kernel: ",
      KernelRelease(), ") and a seccomp policy that allows pidfd_open and pidfd_getfd"));
}

}  // namespace

absl::StatusOr<int> CopyFdFromProcess(int pid, int fd) {
  if (pid <= 0 || fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CopyFdFromProcess: bad process ", pid, " or descriptor ", fd));
  }
  if (pid == getpid()) {
    const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "descriptor ", fd, " of this process cannot be duplicated: ", std::strerror(errno)));
    }
    return copy;
  }
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  const long pidfd = syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    const int err = errno;
    if (err == ENOSYS || err == EPERM) return Missing("pidfd_open", err);
    return absl::InvalidArgumentError(absl::StrCat("process ", pid,
                                                   " cannot be opened (has the producer "
                                                   "exited?): ",
                                                   std::strerror(err)));
  }
  const long copy = syscall(SYS_pidfd_getfd, static_cast<int>(pidfd), fd, 0);
  const int err = errno;
  close(static_cast<int>(pidfd));
  if (copy >= 0) return static_cast<int>(copy);  // pidfd_getfd sets close-on-exec
  switch (err) {
    case ENOSYS:
      return Missing("pidfd_getfd", err);
    case EPERM:
      return absl::PermissionDeniedError(absl::StrCat(
          "pidfd_getfd of descriptor ", fd, " in process ", pid, ": ", std::strerror(err),
          "; it needs ptrace access to the producer (the same user, and "
          "kernel.yama.ptrace_scope 0, or 1 with the producer an ancestor)"));
    case EBADF:
      return absl::InvalidArgumentError(absl::StrCat(
          "descriptor ", fd, " is not open in process ", pid,
          " (the producer released the memory, or the handle is stale)"));
    default:
      return absl::InvalidArgumentError(absl::StrCat("pidfd_getfd of descriptor ", fd,
                                                     " in process ", pid, ": ",
                                                     std::strerror(err)));
  }
#else
  return absl::UnimplementedError(
      "ccalloc was built without the pidfd_open/pidfd_getfd syscall numbers (<sys/syscall.h> "
      "lacks them): opening a growable-segment IPC handle of another process needs them");
#endif
}

}  // namespace ccalloc
