#define _GNU_SOURCE 1
#include "actiond_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

// The child side of actiond_spawn. Only async-signal-safe calls: the parent may be
// multi-threaded (tests) and its heap/locks are in an unknown state after fork.
// On failure the errno and a step index go to `report_fd`, then _exit(127).
static void actiond_spawn_child(const actiond_spawn_request *r, int report_fd) {
  int step = 0;
  int err = 0;
#define FAIL(n) do { step = (n); err = errno; goto fail; } while (0)
  // Own process group, so a timeout can signal the whole tree (grandchildren too).
  if (setpgid(0, 0) != 0) FAIL(1);
  // The daemon blocks signals it reads through signalfd; a child must not inherit that.
  sigset_t all;
  sigemptyset(&all);
  if (sigprocmask(SIG_SETMASK, &all, NULL) != 0) FAIL(2);
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    (void)sigaction(s, &sa, NULL);  // EINVAL for the realtime signals glibc reserves
  }
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) FAIL(3);
  int out = r->stdout_fd >= 0 ? r->stdout_fd : null_fd;
  int errfd = r->stderr_fd >= 0 ? r->stderr_fd : null_fd;
  // dup2 clears FD_CLOEXEC on the target; when source == target it does not, so fix that.
  if (dup2(null_fd, 0) < 0) FAIL(4);
  if (out == 1) { if (fcntl(1, F_SETFD, 0) != 0) FAIL(4); } else if (dup2(out, 1) < 0) FAIL(4);
  if (errfd == 2) { if (fcntl(2, F_SETFD, 0) != 0) FAIL(4); } else if (dup2(errfd, 2) < 0) FAIL(4);
  // Everything else (sockets, devices, the epoll fd) must not leak into the command.
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 1024; fd++) if (fd != report_fd) (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (r->working_directory != NULL && chdir(r->working_directory) != 0) FAIL(5);
  if (r->change_user) {
    if (setgroups(r->group_count, (const gid_t *)r->groups) != 0) FAIL(6);
    if (setgid(r->gid) != 0) FAIL(7);
    if (setuid(r->uid) != 0) FAIL(8);
  }
  if (strchr(r->argv[0], '/') != NULL) {
    execve(r->argv[0], r->argv, r->envp);
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
        execve(buf, r->argv, r->envp);
        if (errno != ENOENT && errno != ENOTDIR && first_error == ENOENT) first_error = errno;
      }
      if (end == NULL) break;
      p = end + 1;
    }
    errno = first_error;
  }
  FAIL(9);
fail:;
  int report[2] = {err, step};
  ssize_t ignored = write(report_fd, report, sizeof(report));
  (void)ignored;
  _exit(127);
#undef FAIL
}

static const char *const actiond_spawn_steps[] = {
  "fork", "setpgid", "sigprocmask", "open /dev/null", "dup2", "chdir", "setgroups", "setgid", "setuid", "execve",
};

pid_t actiond_spawn(const actiond_spawn_request *request, int *child_errno, const char **failed_step) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *child_errno = errno;
    *failed_step = "pipe2";
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    *child_errno = errno;
    *failed_step = actiond_spawn_steps[0];
    close(report[0]);
    close(report[1]);
    return -1;
  }
  if (pid == 0) {
    close(report[0]);
    actiond_spawn_child(request, report[1]);
  }
  close(report[1]);
  // Also set the group from the parent: whichever runs first, a kill(-pid) right after
  // return reaches the child.
  (void)setpgid(pid, pid);
  int result[2];
  ssize_t n;
  do { n = read(report[0], result, sizeof(result)); } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == (ssize_t)sizeof(result)) {
    // exec failed: reap the child (it has already _exit'ed or is about to).
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    *child_errno = result[0];
    int step = result[1];
    *failed_step = (step >= 0 && step < (int)(sizeof(actiond_spawn_steps) / sizeof(actiond_spawn_steps[0])))
                       ? actiond_spawn_steps[step] : "spawn";
    return -1;
  }
  return pid;
}
