// What `import Glibc` does not expose to Swift on Debian 12: epoll, timerfd, signalfd,
// eventfd, struct ucred, accept4 and the CMSG_* macros. Kept tiny on purpose: each
// wrapper exists only because Swift cannot see the macro or declaration.
#ifndef ACTIOND_SHIM_H
#define ACTIOND_SHIM_H

// No _GNU_SOURCE here: the Glibc module is built without it, and a header that changes
// glibc's struct definitions (fd_set) makes the two modules conflict. shim.c defines it.
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

// MARK: errno text

/// "EAGAIN" for EAGAIN; NULL when glibc does not know the number.
const char *actiond_errno_name(int errnum);
/// "Resource temporarily unavailable"; thread-safe (strerrordesc_np), NULL when unknown.
const char *actiond_errno_description(int errnum);

/// `environ`, which may be NULL after clearenv(3) (Swift imports the global as non-optional).
char **actiond_environ(void);

// MARK: sockets

/// The peer credentials of a connected AF_UNIX socket (SO_PEERCRED). Our own struct
/// because glibc only declares `struct ucred` under _GNU_SOURCE, which the Glibc
/// module was built without.
typedef struct actiond_peer_credentials {
  int32_t pid;
  uint32_t uid;
  uint32_t gid;
} actiond_peer_credentials;

/// 0 on success, -1 with errno set.
int actiond_get_peer_credentials(int fd, actiond_peer_credentials *out);

/// pipe2(2) (a GNU extension Glibc does not show Swift).
int actiond_pipe2(int fds[2], int flags);

/// accept4(2); `flags` takes SOCK_CLOEXEC | SOCK_NONBLOCK.
int actiond_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/// The socket type flags accept4/socket take (macros in glibc).
extern const int actiond_SOCK_CLOEXEC;
extern const int actiond_SOCK_NONBLOCK;

// CMSG_* are macros: one function per macro.
struct cmsghdr *actiond_cmsg_firsthdr(struct msghdr *msg);
struct cmsghdr *actiond_cmsg_nxthdr(struct msghdr *msg, struct cmsghdr *cmsg);
unsigned char *actiond_cmsg_data(struct cmsghdr *cmsg);
size_t actiond_cmsg_space(size_t length);
size_t actiond_cmsg_len(size_t length);

// MARK: processes

/// pidfd_open(2) (no glibc wrapper on Debian 12's headers for Swift). -1 with errno set.
int actiond_pidfd_open(pid_t pid);

/// prctl(PR_SET_TIMERSLACK) (prctl is variadic, which Swift cannot call). 0 or -1 with errno.
int actiond_set_timer_slack(unsigned long nanoseconds);

/// What the child of `actiond_spawn` does between fork and exec.
typedef struct actiond_spawn_request {
  /// NULL-terminated argv; argv[0] is the program (a path, or a name looked up in
  /// the PATH of `envp` when it has no slash).
  char *const *argv;
  /// NULL-terminated environment, given explicitly (the daemon's own is not inherited).
  char *const *envp;
  /// Directory to chdir to, or NULL.
  const char *working_directory;
  /// Fds that become the child's stdout and stderr (-1: /dev/null).
  int stdout_fd;
  int stderr_fd;
  /// Non-zero: drop privileges to uid/gid with the supplementary groups given.
  int change_user;
  uint32_t uid;
  uint32_t gid;
  const uint32_t *groups;
  size_t group_count;
} actiond_spawn_request;

/// Starts `request` in a new process group (pgid = pid), with stdin on /dev/null,
/// every signal unblocked and at its default disposition, and every other fd closed.
/// Like posix_spawn it uses clone(CLONE_VM | CLONE_VFORK): no page tables are copied
/// and the call returns once the child has exec'ed (or failed). Returns the pid, or -1
/// with `*child_errno` set to the errno of the step that failed (mmap/clone in the
/// parent; setpgid/chdir/setgroups/setgid/setuid/execve in the child) and
/// `*failed_step` to a static name of that step.
pid_t actiond_spawn(const actiond_spawn_request *request, int *child_errno, const char **failed_step);

/// A child started by `actiond_arm`, waiting to exec.
typedef struct actiond_armed actiond_armed;

/// Starts a child that does everything `actiond_spawn`'s does (process group, signal
/// dispositions, stdio, close-on-exec, chdir, credentials) and then waits, with every
/// signal blocked, for `actiond_armed_fire` (exec) or `actiond_armed_discard` (exit 0).
/// It dies with the daemon while it waits (PR_SET_PDEATHSIG), not after its exec. The
/// request is copied. Returns NULL with `*child_errno` and `*failed_step` when the
/// parent's part fails (malloc, pipe2, mmap, clone); a failure in the child is only known
/// once it has exited: see `actiond_armed_release`. `*pid` is the child's pid.
actiond_armed *actiond_arm(const actiond_spawn_request *request, pid_t *pid, int *child_errno,
                           const char **failed_step);
/// Lets the child exec. 0, or the errno of writing to it (EPIPE: it has already exited).
int actiond_armed_fire(actiond_armed *armed);
/// Makes the child exit without exec'ing. 0, or the errno of writing to it.
int actiond_armed_discard(actiond_armed *armed);
/// Once the child has been reaped: 1 with `*child_errno`/`*failed_step` when it failed
/// before or at its exec (it exited 127), else 0. Frees `armed`.
int actiond_armed_release(actiond_armed *armed, int *child_errno, const char **failed_step);

#endif
