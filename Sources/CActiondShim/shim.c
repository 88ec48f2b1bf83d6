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
#include <sys/prctl.h>
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

int actiond_set_timer_slack(unsigned long nanoseconds) { return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0); }

// MARK: spawning
//
// Both ways of starting a command clone a child that shares the daemon's memory
// (CLONE_VM, as glibc's posix_spawn does), so no page tables are copied:
// - actiond_spawn adds CLONE_VFORK: the daemon is suspended until the exec;
// - actiond_arm does not: the child prepares everything up to the exec, then waits on a
//   pipe while the daemon goes on, and execs only when actiond_armed_fire says so.
// Either way the child runs on its own stack in the daemon's memory while the daemon
// (or, without CLONE_VFORK, its loop) may run too. So the child code below calls no
// libc function at all: not even errno (the child has the daemon's thread pointer, so
// errno would be the daemon's), nor a PLT stub (lazy binding writes shared memory and
// the thread's TCB). System calls are made with inline assembly, string helpers are
// local and marked no_builtin so the compiler does not turn them back into memcpy calls.

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef PR_SET_PDEATHSIG
#define PR_SET_PDEATHSIG 1
#endif

#if defined(__clang__)
#define CHILD static __attribute__((no_builtin)) __attribute__((no_stack_protector))
#else  // GCC (the arm64 tier's cross build of Tests/vm/arm64/spawntest.c)
#define CHILD static __attribute__((optimize("no-tree-loop-distribute-patterns"))) __attribute__((no_stack_protector))
#endif

/// A system call that returns -errno on failure and touches no memory of its own.
CHILD long child_syscall(long n, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
#else
#error "actiond's spawn needs a raw system call for this architecture"
#endif
}
#define SYS0(n) child_syscall((n), 0, 0, 0, 0, 0, 0)
#define SYS1(n, a) child_syscall((n), (long)(a), 0, 0, 0, 0, 0)
#define SYS2(n, a, b) child_syscall((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define SYS3(n, a, b, c) child_syscall((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS4(n, a, b, c, d) child_syscall((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

CHILD size_t child_strlen(const char *s) {
  size_t n = 0;
  while (s[n] != 0) n++;
  return n;
}

CHILD void child_copy(char *to, const char *from, size_t n) {
  for (size_t i = 0; i < n; i++) to[i] = from[i];
}

/// The steps a child can fail at, by index (what `failed_step` names).
enum {
  STEP_CLONE, STEP_SETPGID, STEP_SIGPROCMASK, STEP_DEVNULL, STEP_DUP, STEP_CHDIR,
  STEP_SETGROUPS, STEP_SETGID, STEP_SETUID, STEP_EXECVE, STEP_PRCTL, STEP_PIPE,
};
static const char *const actiond_spawn_steps[] = {
  "clone", "setpgid", "sigprocmask", "open /dev/null", "dup2", "chdir", "setgroups", "setgid", "setuid", "execve",
  "prctl", "pipe2",
};

static const char *step_name(int step) {
  return (step >= 0 && step < (int)(sizeof(actiond_spawn_steps) / sizeof(actiond_spawn_steps[0])))
             ? actiond_spawn_steps[step]
             : "spawn";
}

/// Where a child reports the step that failed; the parent reads it once the child has
/// exited (after the exec the child no longer shares this memory).
typedef struct child_result {
  int result_errno;
  int result_step;
} child_result;

__attribute__((noreturn)) CHILD void child_fail(child_result *res, int step, long rc) {
  res->result_errno = (int)-rc;
  res->result_step = step;
  for (;;) SYS1(SYS_exit, 127);
}

/// Everything between clone and exec except unblocking signals: own process group (so a
/// timeout can signal the whole tree), default dispositions, stdin on /dev/null, stdout
/// and stderr on the request's fds, every other fd close-on-exec, chdir, credentials.
CHILD void child_prepare(const actiond_spawn_request *r, child_result *res) {
  long rc;
  if ((rc = SYS2(SYS_setpgid, 0, 0)) < 0) child_fail(res, STEP_SETPGID, rc);
  // The parent blocked every signal around clone, and the child keeps them blocked until
  // just before the exec, so no handler of the daemon ever runs here. An ignored signal
  // would stay ignored across the exec: back to the defaults (a zeroed kernel sigaction
  // is SIG_DFL; EINVAL for the reserved ones is fine).
  unsigned long kernel_sigaction[4] = {0, 0, 0, 0};
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    (void)SYS4(SYS_rt_sigaction, s, kernel_sigaction, 0, _NSIG / 8);
  }
  int null_fd = (int)SYS4(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC, 0);
  if (null_fd < 0) child_fail(res, STEP_DEVNULL, null_fd);
  int out = r->stdout_fd >= 0 ? r->stdout_fd : null_fd;
  int err = r->stderr_fd >= 0 ? r->stderr_fd : null_fd;
  // dup3 clears FD_CLOEXEC on the target; when source == target there is nothing to
  // dup, but the flag must still go.
  const int sources[3] = {null_fd, out, err};
  for (int target = 0; target < 3; target++) {
    rc = sources[target] == target ? SYS3(SYS_fcntl, target, F_SETFD, 0) : SYS3(SYS_dup3, sources[target], target, 0);
    if (rc < 0) child_fail(res, STEP_DUP, rc);
  }
  // Everything else (sockets, devices, the epoll fd, the go pipe) must not leak into
  // the command.
  if (SYS3(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 1024; fd++) (void)SYS3(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
  }
  if (r->working_directory != NULL && (rc = SYS1(SYS_chdir, r->working_directory)) < 0)
    child_fail(res, STEP_CHDIR, rc);
  if (r->change_user) {
    // Raw calls: glibc's setgid/setuid would try to change every thread of the parent.
    if ((rc = SYS2(SYS_setgroups, r->group_count, r->groups)) < 0) child_fail(res, STEP_SETGROUPS, rc);
    if ((rc = SYS3(SYS_setresgid, r->gid, r->gid, r->gid)) < 0) child_fail(res, STEP_SETGID, rc);
    if ((rc = SYS3(SYS_setresuid, r->uid, r->uid, r->uid)) < 0) child_fail(res, STEP_SETUID, rc);
  }
}

/// Unblocks every signal and execs; returns only to report the failure.
CHILD void child_exec(const actiond_spawn_request *r, child_result *res) {
  unsigned long none = 0;
  long rc = SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, _NSIG / 8);
  if (rc < 0) child_fail(res, STEP_SIGPROCMASK, rc);
  const char *program = r->argv[0];
  int has_slash = 0;
  for (const char *c = program; *c; c++) has_slash |= *c == '/';
  if (has_slash) child_fail(res, STEP_EXECVE, SYS3(SYS_execve, program, r->argv, r->envp));
  // execvpe would search the daemon's PATH; the command's environment decides instead.
  const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (char *const *e = r->envp; *e != NULL; e++) {
    const char *v = *e;
    if (v[0] == 'P' && v[1] == 'A' && v[2] == 'T' && v[3] == 'H' && v[4] == '=') {
      path = v + 5;
      break;
    }
  }
  long first_error = -ENOENT;
  char buf[4096];
  size_t name_len = child_strlen(program);
  const char *p = path;
  for (;;) {
    const char *end = p;
    while (*end && *end != ':') end++;
    size_t dir_len = (size_t)(end - p);
    const char *dir = dir_len == 0 ? "." : p;
    if (dir_len == 0) dir_len = 1;
    if (dir_len + 1 + name_len + 1 <= sizeof(buf)) {
      child_copy(buf, dir, dir_len);
      buf[dir_len] = '/';
      child_copy(buf + dir_len + 1, program, name_len + 1);
      rc = SYS3(SYS_execve, buf, r->argv, r->envp);
      if (rc != -ENOENT && rc != -ENOTDIR && first_error == -ENOENT) first_error = rc;
    }
    if (*end == 0) break;
    p = end + 1;
  }
  child_fail(res, STEP_EXECVE, first_error);
}

typedef struct spawn_args {
  const actiond_spawn_request *request;
  child_result result;
} spawn_args;

CHILD int spawn_child(void *arg) {
  spawn_args *a = (spawn_args *)arg;
  child_prepare(a->request, &a->result);
  child_exec(a->request, &a->result);
  return 127;
}

/// The child's stack: untouched pages cost nothing (MAP_NORESERVE); the PATH search
/// buffer needs 4 KiB and the rest a few hundred bytes.
static const size_t child_stack_size = 64 * 1024;

/// A zeroed mapping of `size` bytes whose top serves as a child's stack; NULL with errno.
static void *child_mapping(size_t size) {
  void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  return map == MAP_FAILED ? NULL : map;
}

/// clone with every signal blocked around it: no handler of the parent may run in the
/// child (it shares the memory); the child unblocks just before its exec.
static pid_t clone_blocked(int (*fn)(void *), void *stack_top, int flags, void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = clone(fn, stack_top, flags, arg);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = clone_errno;
  return pid;
}

pid_t actiond_spawn(const actiond_spawn_request *request, int *child_errno, const char **failed_step) {
  void *stack = child_mapping(child_stack_size);
  if (stack == NULL) {
    *child_errno = errno;
    *failed_step = "mmap";
    return -1;
  }
  spawn_args args = {.request = request, .result = {.result_errno = 0, .result_step = -1}};
  pid_t pid = clone_blocked(spawn_child, (char *)stack + child_stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  int clone_errno = errno;
  // CLONE_VFORK: the child has exec'ed or exited by now, so its stack is free.
  munmap(stack, child_stack_size);
  if (pid < 0) {
    *child_errno = clone_errno;
    *failed_step = step_name(STEP_CLONE);
    return -1;
  }
  if (args.result.result_step >= 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    *child_errno = args.result.result_errno;
    *failed_step = step_name(args.result.result_step);
    return -1;
  }
  return pid;
}

// MARK: armed children

/// One armed child and everything it reads, at the bottom of one mapping whose top is the
/// child's stack. The parent unmaps it only after the child is gone (it may read any of it
/// until its exec); no malloc, so nothing of it stays behind in the heap.
struct actiond_armed {
  actiond_spawn_request request;
  child_result result;
  /// The parent's end of the go pipe; the child reads one byte from the other end.
  int go_fd;
  int child_go_fd;
  pid_t parent;
  size_t map_size;
};

/// The byte that makes the child exec; anything else (or EOF) makes it exit.
static const char actiond_go = 'g';
static const char actiond_stop = 's';

CHILD int armed_child(void *arg) {
  actiond_armed *a = (actiond_armed *)arg;
  // Keep the go pipe out of the way of stdin/stdout/stderr (>= 3), then prepare.
  long go = SYS3(SYS_fcntl, a->child_go_fd, F_DUPFD_CLOEXEC, 3);
  if (go < 0) child_fail(&a->result, STEP_DUP, go);
  child_prepare(&a->request, &a->result);
  // This child may wait for a long time (the whole press): it must not keep the daemon's
  // files open meanwhile (a closed client connection would not reach its peer, a removed
  // device would stay referenced). Keep 0-2 and the go pipe as 3, close everything else.
  long rc;
  if (go != 3) {
    if ((rc = SYS3(SYS_dup3, go, 3, O_CLOEXEC)) < 0) child_fail(&a->result, STEP_DUP, rc);
    go = 3;
  }
  if (SYS3(SYS_close_range, 4U, ~0U, 0) != 0) {
    for (int fd = 4; fd < 65536; fd++) (void)SYS1(SYS_close, fd);
  }
  // Die with the daemon while waiting: otherwise a waiting child would outlive a crashed
  // daemon (a sibling cloned at the same moment may still hold the go pipe's other end,
  // so EOF alone cannot be relied on). Set after setresuid, which would clear it.
  rc = SYS2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
  if (rc < 0) child_fail(&a->result, STEP_PRCTL, rc);
  if (SYS0(SYS_getppid) != a->parent) SYS1(SYS_exit, 0);
  char byte = 0;
  do {
    rc = SYS3(SYS_read, go, &byte, 1);
  } while (rc == -EINTR);
  if (rc != 1 || byte != actiond_go) SYS1(SYS_exit, 0);
  // The command must not die with the daemon (a restart keeps it running, as for a
  // command started by actiond_spawn).
  if ((rc = SYS2(SYS_prctl, PR_SET_PDEATHSIG, 0)) < 0) child_fail(&a->result, STEP_PRCTL, rc);
  child_exec(&a->request, &a->result);
  return 127;
}

static size_t strv_bytes(char *const *v, size_t *count) {
  size_t bytes = 0, n = 0;
  for (; v[n] != NULL; n++) bytes += strlen(v[n]) + 1;
  *count = n;
  return bytes;
}

/// Copies a NULL-terminated vector: pointers into `*slots`, strings into `*chars`.
static char **strv_copy(char *const *v, size_t count, char ***slots, char **chars) {
  char **copy = *slots;
  for (size_t i = 0; i < count; i++) {
    size_t len = strlen(v[i]) + 1;
    memcpy(*chars, v[i], len);
    copy[i] = *chars;
    *chars += len;
  }
  copy[count] = NULL;
  *slots += count + 1;
  return copy;
}

actiond_armed *actiond_arm(const actiond_spawn_request *request, pid_t *pid, int *child_errno,
                           const char **failed_step) {
  size_t argc, envc;
  size_t chars = strv_bytes(request->argv, &argc) + strv_bytes(request->envp, &envc);
  size_t dir = request->working_directory ? strlen(request->working_directory) + 1 : 0;
  size_t size = sizeof(actiond_armed) + (argc + envc + 2) * sizeof(char *) +
                request->group_count * sizeof(uint32_t) + chars + dir;
  size_t page = 4096;
  size_t map_size = (size + page - 1) / page * page + child_stack_size;
  void *map = child_mapping(map_size);
  if (map == NULL) {
    *child_errno = errno;
    *failed_step = "mmap";
    return NULL;
  }
  actiond_armed *a = map;
  a->map_size = map_size;
  char **slots = (char **)(a + 1);
  uint32_t *groups = (uint32_t *)(slots + argc + envc + 2);
  char *text = (char *)(groups + request->group_count);
  a->request = *request;
  a->request.argv = strv_copy(request->argv, argc, &slots, &text);
  a->request.envp = strv_copy(request->envp, envc, &slots, &text);
  if (request->group_count > 0) memcpy(groups, request->groups, request->group_count * sizeof(uint32_t));
  a->request.groups = groups;
  if (request->working_directory) {
    memcpy(text, request->working_directory, dir);
    a->request.working_directory = text;
  }
  a->result.result_step = -1;
  a->parent = getpid();
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) {
    *child_errno = errno;
    *failed_step = step_name(STEP_PIPE);
    munmap(map, map_size);
    return NULL;
  }
  a->go_fd = go[1];
  a->child_go_fd = go[0];
  *pid = clone_blocked(armed_child, (char *)map + map_size, CLONE_VM | SIGCHLD, a);
  int clone_errno = errno;
  // The child has its own copy of the read end (a new fd table, not shared).
  close(go[0]);
  if (*pid < 0) {
    *child_errno = clone_errno;
    *failed_step = step_name(STEP_CLONE);
    close(go[1]);
    munmap(map, map_size);
    return NULL;
  }
  return a;
}

static int armed_send(actiond_armed *armed, char byte) {
  if (armed->go_fd < 0) return EBADF;
  ssize_t n;
  do {
    n = write(armed->go_fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  int rc = n == 1 ? 0 : errno;
  close(armed->go_fd);
  armed->go_fd = -1;
  return rc;
}

int actiond_armed_fire(actiond_armed *armed) { return armed_send(armed, actiond_go); }

int actiond_armed_discard(actiond_armed *armed) { return armed_send(armed, actiond_stop); }

int actiond_armed_release(actiond_armed *armed, int *child_errno, const char **failed_step) {
  int failed = armed->result.result_step >= 0;
  if (failed) {
    *child_errno = armed->result.result_errno;
    *failed_step = step_name(armed->result.result_step);
  }
  if (armed->go_fd >= 0) close(armed->go_fd);
  munmap(armed, armed->map_size);
  return failed;
}
