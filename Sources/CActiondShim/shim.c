#define _GNU_SOURCE 1
#include "actiond_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/syscall.h>
#include <sched.h>
#include <signal.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/// What the parent and the CLONE_VM child share: the request, and where the child
/// reports the step that failed (valid once clone returns: CLONE_VFORK).
typedef struct actiond_spawn_args {
  const actiond_spawn_request *request;
  int result_errno;
  int result_step;
} actiond_spawn_args;

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

const char *actiond_errno_name(int errnum) { return strerrorname_np(errnum); }
const char *actiond_errno_description(int errnum) { return strerrordesc_np(errnum); }

char **actiond_environ(void) { return environ; }

int actiond_get_peer_credentials(int fd, actiond_peer_credentials *out) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  out->pid = cred.pid;
  out->uid = cred.uid;
  out->gid = cred.gid;
  return 0;
}

int actiond_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

int actiond_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  return accept4(fd, addr, len, flags);
}

const int actiond_SOCK_CLOEXEC = SOCK_CLOEXEC;
const int actiond_SOCK_NONBLOCK = SOCK_NONBLOCK;

struct cmsghdr *actiond_cmsg_firsthdr(struct msghdr *msg) { return CMSG_FIRSTHDR(msg); }
struct cmsghdr *actiond_cmsg_nxthdr(struct msghdr *msg, struct cmsghdr *cmsg) { return CMSG_NXTHDR(msg, cmsg); }
unsigned char *actiond_cmsg_data(struct cmsghdr *cmsg) { return CMSG_DATA(cmsg); }
size_t actiond_cmsg_space(size_t length) { return CMSG_SPACE(length); }
size_t actiond_cmsg_len(size_t length) { return CMSG_LEN(length); }

int actiond_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

// The child side of actiond_spawn. It runs on its own small stack but in the
// parent's memory (CLONE_VM | CLONE_VFORK, as glibc's posix_spawn does): the parent
// is suspended until the exec succeeds or the child exits, and no page tables are
// copied, which is what makes a spawn cheap on a big process and on slow VMs. So:
// only raw system calls and pure functions here, never glibc wrappers that keep
// process-wide state (setuid's all-threads broadcast, malloc, stdio). On failure the
// errno and a step index are stored in `r->result_*` (shared memory), then _exit(127).
static int actiond_spawn_child(void *arg) {
  actiond_spawn_args *a = (actiond_spawn_args *)arg;
  const actiond_spawn_request *r = a->request;
  int step = 0;
#define FAIL(n) do { step = (n); goto fail; } while (0)
  // Own process group, so a timeout can signal the whole tree (grandchildren too).
  if (setpgid(0, 0) != 0) FAIL(1);
  // The parent blocked every signal around clone; handlers it installed must not run
  // here (they would run on the parent's memory), so reset them, then unblock all:
  // the daemon blocks what it reads through signalfd and a command must not inherit that.
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    (void)syscall(SYS_rt_sigaction, s, &sa, NULL, _NSIG / 8);  // EINVAL for reserved ones
  }
  sigset_t none;
  sigemptyset(&none);
  if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, _NSIG / 8) != 0) FAIL(2);
  int null_fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) FAIL(3);
  int out = r->stdout_fd >= 0 ? r->stdout_fd : null_fd;
  int errfd = r->stderr_fd >= 0 ? r->stderr_fd : null_fd;
  // dup2 clears FD_CLOEXEC on the target; when source == target it does not, so fix that.
  if (syscall(SYS_dup2, null_fd, 0) < 0) FAIL(4);
  if (out == 1) { if (syscall(SYS_fcntl, 1, F_SETFD, 0) != 0) FAIL(4); } else if (syscall(SYS_dup2, out, 1) < 0) FAIL(4);
  if (errfd == 2) { if (syscall(SYS_fcntl, 2, F_SETFD, 0) != 0) FAIL(4); } else if (syscall(SYS_dup2, errfd, 2) < 0) FAIL(4);
  // Everything else (sockets, devices, the epoll fd) must not leak into the command.
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 1024; fd++) (void)syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
  }
  if (r->working_directory != NULL && syscall(SYS_chdir, r->working_directory) != 0) FAIL(5);
  if (r->change_user) {
    // Raw calls: glibc's setgid/setuid would try to change every thread of the parent.
    if (syscall(SYS_setgroups, r->group_count, (const gid_t *)r->groups) != 0) FAIL(6);
    if (syscall(SYS_setresgid, r->gid, r->gid, r->gid) != 0) FAIL(7);
    if (syscall(SYS_setresuid, r->uid, r->uid, r->uid) != 0) FAIL(8);
  }
  if (strchr(r->argv[0], '/') != NULL) {
    syscall(SYS_execve, r->argv[0], r->argv, r->envp);
  } else {
    // execvpe searches the caller's PATH; the command's environment decides instead.
    const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    for (char *const *e = r->envp; *e != NULL; e++) {
      if (strncmp(*e, "PATH=", 5) == 0) { path = *e + 5; break; }
    }
    int first_error = ENOENT;
    char buf[4096];
    size_t name_len = strlen(r->argv[0]);
    const char *p = path;
    while (1) {
      const char *end = strchr(p, ':');
      size_t dir_len = end ? (size_t)(end - p) : strlen(p);
      if (dir_len == 0) { dir_len = 1; p = "."; }
      if (dir_len + 1 + name_len + 1 <= sizeof(buf)) {
        memcpy(buf, p, dir_len);
        buf[dir_len] = '/';
        memcpy(buf + dir_len + 1, r->argv[0], name_len + 1);
        syscall(SYS_execve, buf, r->argv, r->envp);
        if (errno != ENOENT && errno != ENOTDIR && first_error == ENOENT) first_error = errno;
      }
      if (end == NULL) break;
      p = end + 1;
    }
    errno = first_error;
  }
  FAIL(9);
fail:
  a->result_errno = errno;
  a->result_step = step;
  syscall(SYS_exit, 127);
  return 127;
#undef FAIL
}

static const char *const actiond_spawn_steps[] = {
  "clone", "setpgid", "sigprocmask", "open /dev/null", "dup2", "chdir", "setgroups", "setgid", "setuid", "execve",
};

pid_t actiond_spawn(const actiond_spawn_request *request, int *child_errno, const char **failed_step) {
  // The child's stack: untouched pages cost nothing (MAP_NORESERVE); the PATH search
  // buffer and the signal loop need a few KiB. Freed once the child has exec'ed.
  const size_t stack_size = 256 * 1024;
  void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                     -1, 0);
  if (stack == MAP_FAILED) {
    *child_errno = errno;
    *failed_step = "mmap";
    return -1;
  }
  actiond_spawn_args args = {.request = request, .result_errno = 0, .result_step = -1};
  // No handler of the parent may run in the child (it shares the memory): block all
  // signals around clone; the child resets dispositions, then unblocks.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = clone(actiond_spawn_child, (char *)stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  munmap(stack, stack_size);
  if (pid < 0) {
    *child_errno = clone_errno;
    *failed_step = actiond_spawn_steps[0];
    return -1;
  }
  // CLONE_VFORK: the child has exec'ed or exited by now.
  if (args.result_step >= 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    *child_errno = args.result_errno;
    int step = args.result_step;
    *failed_step = (step < (int)(sizeof(actiond_spawn_steps) / sizeof(actiond_spawn_steps[0])))
                       ? actiond_spawn_steps[step] : "spawn";
    return -1;
  }
  return pid;
}
