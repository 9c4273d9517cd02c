// fd_transfer_test.cc — CopyFdFromProcess against a real child process.
//
// The child inherits a pipe and parks its write end at a known descriptor
// number; the parent copies that descriptor out of the child and proves it is
// the same pipe. Where the kernel or a seccomp policy withholds pidfd_getfd
// the test skips, printing the error that users would see.
#include "allocator/backends/fd_transfer.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccalloc {
namespace {

using ::testing::HasSubstr;

constexpr int kChildFd = 77;

bool SameFile(int a, int b) {
  struct stat sa = {}, sb = {};
  return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

TEST(FdTransferTest, OwnDescriptorIsDuplicated) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  absl::StatusOr<int> copy = CopyFdFromProcess(getpid(), fds[1]);
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_NE(*copy, fds[1]);
  EXPECT_TRUE(SameFile(*copy, fds[1]));
  close(*copy);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(CopyFdFromProcess(getpid(), fds[1]).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CopyFdFromProcess(0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CopyFdFromProcess(getpid(), -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FdTransferTest, DescriptorOfAnotherProcess) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe calls here: park the write end and wait.
    if (dup2(fds[1], kChildFd) < 0) _exit(1);
    close(fds[0]);
    pause();
    _exit(0);
  }
  // The child has parked the descriptor once a copy of it succeeds; until
  // then the copy fails with "not open", so retry briefly.
  absl::StatusOr<int> copy = absl::InvalidArgumentError("not tried");
  for (int i = 0; i < 200 && copy.status().code() == absl::StatusCode::kInvalidArgument; ++i) {
    copy = CopyFdFromProcess(child, kChildFd);
    if (!copy.ok()) usleep(5000);
  }
  absl::StatusOr<int> missing = CopyFdFromProcess(child, 999);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(fds[1]);
  if (copy.status().code() == absl::StatusCode::kUnimplemented ||
      copy.status().code() == absl::StatusCode::kPermissionDenied) {
    close(fds[0]);
    GTEST_SKIP() << copy.status();
  }
  ASSERT_TRUE(copy.ok()) << copy.status();
  // The copy is the pipe's write end: what it writes, the parent reads.
  ASSERT_EQ(write(*copy, "x", 1), 1);
  char c = 0;
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  close(*copy);
  close(fds[0]);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument) << missing.status();
  EXPECT_THAT(missing.status().message(), HasSubstr("is not open in process"));

  // The child is gone now.
  absl::StatusOr<int> gone = CopyFdFromProcess(child, kChildFd);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kInvalidArgument) << gone.status();
}

}  // namespace
}  // namespace ccalloc
