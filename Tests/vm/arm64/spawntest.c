// The spawn code of Sources/CActiondShim/shim.c on arm64: its child makes raw system calls
// through inline assembly, one version per architecture, and the x86_64 one is what the
// Swift tests exercise. This program runs both ways of starting a command (actiond_spawn,
// actiond_arm + fire/discard) on Debian's arm64 kernel in the arm64 tier and checks what
// the daemon relies on: the command runs only when fired, with the given environment,
// stdin on /dev/null, no inherited descriptors, no blocked or ignored signals, its own
// process group; failures before and at the exec are reported with their step and errno.
// Prints "SPAWN: ok ..." per check and exits 0, or "SPAWN: FAIL ..." and exits 1.
#define _GNU_SOURCE 1
#include "actiond_shim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void fail(const char *what) {
  printf("SPAWN: FAIL %s\n", what);
  fflush(stdout);
  exit(1);
}

static void ok(const char *what) { printf("SPAWN: ok %s\n", what); }

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/// Reads everything from `fd` into `buf` (NUL-terminated).
static void slurp(int fd, char *buf, size_t size) {
  size_t used = 0;
  for (;;) {
    ssize_t n = read(fd, buf + used, size - 1 - used);
    if (n <= 0) break;
    used += (size_t)n;
  }
  buf[used] = 0;
}

static int wait_status(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) fail("waitpid");
  }
  return status;
}

static actiond_spawn_request request(char *const *argv, char *const *envp, int out) {
  actiond_spawn_request r;
  memset(&r, 0, sizeof r);
  r.argv = argv;
  r.envp = envp;
  r.working_directory = "/";
  r.stdout_fd = out;
  r.stderr_fd = -1;
  return r;
}

int main(void) {
  // The daemon ignores SIGPIPE and blocks what it reads through signalfd; a command must
  // inherit neither.
  signal(SIGPIPE, SIG_IGN);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGHUP);
  sigprocmask(SIG_BLOCK, &blocked, NULL);
  int leaked = open("/dev/null", O_RDONLY);  // not close-on-exec: must still not leak
  if (leaked < 0) fail("open");

  char *probe_argv[] = {"sh", "-c",
                        "echo \"X=$X pgid=$(cut -d' ' -f5 /proc/self/stat) pid=$$\"; "
                        "grep -E '^Sig(Blk|Ign)' /proc/self/status; ls /proc/self/fd | wc -l; cat",
                        NULL};
  char *probe_env[] = {"X=1", "PATH=/usr/bin:/bin", NULL};
  const char *expected_signals = "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n";
  char out[4096];

  // actiond_spawn (CLONE_VFORK), with a PATH search for "sh".
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) fail("pipe2");
  actiond_spawn_request r = request(probe_argv, probe_env, p[1]);
  int child_errno = 0;
  const char *step = NULL;
  pid_t pid = actiond_spawn(&r, &child_errno, &step);
  if (pid < 0) fail(step);
  close(p[1]);
  slurp(p[0], out, sizeof out);
  close(p[0]);
  if (wait_status(pid) != 0) fail("spawned probe exit status");
  char want[256];
  snprintf(want, sizeof want, "X=1 pgid=%d pid=%d\n", pid, pid);
  if (strncmp(out, want, strlen(want)) != 0) fail(out);
  if (strstr(out, expected_signals) == NULL) fail(out);
  // 0, 1, 2 and the one `ls` opens to read the directory.
  if (strstr(out, expected_signals) == NULL || strcmp(out + strlen(out) - 2, "4\n") != 0) fail(out);
  ok("actiond_spawn: environment, PATH search, own process group, signals, descriptors");

  // actiond_arm: nothing runs until fired; then the same checks.
  if (pipe2(p, O_CLOEXEC) != 0) fail("pipe2");
  r = request(probe_argv, probe_env, p[1]);
  pid_t armed_pid = -1;
  actiond_armed *armed = actiond_arm(&r, &armed_pid, &child_errno, &step);
  if (armed == NULL) fail(step);
  close(p[1]);
  usleep(300 * 1000);
  if (waitpid(armed_pid, NULL, WNOHANG) != 0) fail("the armed child did not wait");
  char comm[64];
  snprintf(comm, sizeof comm, "/proc/%d/comm", armed_pid);
  FILE *f = fopen(comm, "r");
  if (f == NULL || fgets(comm, sizeof comm, f) == NULL) fail("comm");
  fclose(f);
  if (strcmp(comm, "spawntest\n") != 0) fail("the armed child exec'ed before it was fired");
  // While it waits it holds stdin, stdout, stderr and its go pipe, nothing of ours.
  char fd_dir[64];
  snprintf(fd_dir, sizeof fd_dir, "/proc/%d/fd", armed_pid);
  DIR *fds = opendir(fd_dir);
  if (fds == NULL) fail("opendir /proc/PID/fd");
  int held = 0;
  for (struct dirent *e; (e = readdir(fds)) != NULL;) held += e->d_name[0] != '.';
  closedir(fds);
  if (held != 4) fail("the waiting child holds other descriptors than 0-3");
  if (actiond_armed_fire(armed) != 0) fail("fire");
  slurp(p[0], out, sizeof out);
  close(p[0]);
  if (wait_status(armed_pid) != 0) fail("armed probe exit status");
  if (actiond_armed_release(armed, &child_errno, &step) != 0) fail("armed probe reported a failure");
  snprintf(want, sizeof want, "X=1 pgid=%d pid=%d\n", armed_pid, armed_pid);
  if (strncmp(out, want, strlen(want)) != 0) fail(out);
  if (strstr(out, expected_signals) == NULL || strcmp(out + strlen(out) - 2, "4\n") != 0) fail(out);
  ok("actiond_arm + fire: waited holding only 0-3, then the same environment, group, signals, descriptors");

  // Discarded: exits 0 and never runs the command.
  char *touch_argv[] = {"/bin/touch", "/tmp/spawntest-ran", NULL};
  char *no_env[] = {NULL};
  r = request(touch_argv, no_env, -1);
  armed = actiond_arm(&r, &armed_pid, &child_errno, &step);
  if (armed == NULL) fail(step);
  usleep(100 * 1000);
  if (actiond_armed_discard(armed) != 0) fail("discard");
  if (wait_status(armed_pid) != 0) fail("a discarded child did not exit 0");
  if (actiond_armed_release(armed, &child_errno, &step) != 0) fail("a discarded child reported a failure");
  if (exists("/tmp/spawntest-ran")) fail("a discarded child ran its command");
  ok("actiond_arm + discard: exits without running anything");

  // A failed exec after the fire is reported with its step and errno.
  char *missing_argv[] = {"/nonexistent/program", NULL};
  r = request(missing_argv, no_env, -1);
  armed = actiond_arm(&r, &armed_pid, &child_errno, &step);
  if (armed == NULL) fail(step);
  if (actiond_armed_fire(armed) != 0) fail("fire");
  int status = wait_status(armed_pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 127) fail("a failed exec did not exit 127");
  if (actiond_armed_release(armed, &child_errno, &step) != 1 || strcmp(step, "execve") != 0 || child_errno != ENOENT)
    fail("a failed exec was not reported as execve ENOENT");
  ok("actiond_arm: a failed exec is reported (execve, ENOENT)");

  // A failed preparation ends the child before any fire.
  r = request(touch_argv, no_env, -1);
  r.working_directory = "/nonexistent";
  armed = actiond_arm(&r, &armed_pid, &child_errno, &step);
  if (armed == NULL) fail(step);
  status = wait_status(armed_pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 127) fail("a failed chdir did not exit 127");
  if (actiond_armed_fire(armed) != EPIPE) fail("firing an exited child is not EPIPE");
  if (actiond_armed_release(armed, &child_errno, &step) != 1 || strcmp(step, "chdir") != 0 || child_errno != ENOENT)
    fail("a failed chdir was not reported as chdir ENOENT");
  if (exists("/tmp/spawntest-ran")) fail("a failed preparation ran its command");
  ok("actiond_arm: a failed preparation is reported (chdir, ENOENT)");

  // The waiting child dies with its parent (PR_SET_PDEATHSIG): a middle process arms one
  // and exits; the armed child must be gone soon after.
  int report[2];
  if (pipe(report) != 0) fail("pipe");
  pid_t middle = fork();
  if (middle == 0) {
    close(report[0]);
    r = request(touch_argv, no_env, -1);
    armed = actiond_arm(&r, &armed_pid, &child_errno, &step);
    if (armed == NULL) _exit(1);
    if (write(report[1], &armed_pid, sizeof armed_pid) != sizeof armed_pid) _exit(1);
    usleep(100 * 1000);
    _exit(0);
  }
  close(report[1]);
  if (read(report[0], &armed_pid, sizeof armed_pid) != sizeof armed_pid) fail("no armed pid from the middle process");
  wait_status(middle);
  int gone = 0;
  for (int i = 0; i < 200 && !gone; i++) {
    char stat_path[64], stat[512] = "";
    snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", armed_pid);
    FILE *sf = fopen(stat_path, "r");
    if (sf == NULL) {
      gone = 1;
      break;
    }
    if (fgets(stat, sizeof stat, sf) == NULL) stat[0] = 0;
    fclose(sf);
    char *close_paren = strrchr(stat, ')');
    if (close_paren != NULL && (close_paren[2] == 'Z' || close_paren[2] == 'X')) gone = 1;
    usleep(10 * 1000);
  }
  if (!gone) fail("an armed child outlived its parent");
  if (exists("/tmp/spawntest-ran")) fail("an orphaned armed child ran its command");
  ok("actiond_arm: the waiting child dies with its parent");
  close(leaked);
  printf("SPAWN-PASS\n");
  return 0;
}
