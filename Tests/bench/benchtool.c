// SPDX-License-Identifier: Apache-2.0
// benchtool: the measuring side of `make bench` (Tests/bench/README.md). One static
// binary so the VM guest needs no libraries for it. It measures and prints samples; it
// judges nothing (the report does).
//
//   benchtool record TAG FILE            appends "TAG <CLOCK_MONOTONIC ns>" to FILE, taken
//                                        first thing in main: the recording command every
//                                        peer (actiond, thd, python, reactor) starts; run
//                                        by actiond, " <ACTIOND_PRESS_TIME us>" follows (the
//                                        key-down of the press that started it)
//   benchtool spawnfloor N FILE [fork]   posix_spawn (or fork + execve) of `record spawn FILE`
//                                        alone, N times; prints "spawn <t0 ns>" per spawn (t0
//                                        just before it)
//   benchtool device NAME OUT [--leds]   a uinput device with KEY_PROG1; commands on stdin:
//                                          press COUNT HOLD_MS GAP_MS [TAG]   presses; after
//                                            each, "TAG <kernel ts ns>" of its key-down and
//                                            "TAG-up <ns>" of its key-up go to OUT (TAG: down)
//                                          double COUNT FIRST_MS GAP_MS SECOND_MS PAUSE_MS
//                                            double presses (down, up, down, up, pause); after
//                                            each, "first", "first-up", "second", "second-up"
//                                            <ns>: the kernel stamps of its four key events
//                                          blast PRESSES SOCK           press/release pairs as
//                                            fast as actiond at SOCK announces them: at most
//                                            8 presses ahead of its `released` events, so no
//                                            reader's evdev buffer overflows; prints
//                                            "blast sent N released N seconds S"
//                                          sleep MS | quit
//                                        prints "node /dev/input/eventN" once created.
//                                        --leds: the device has EV_LED (LED_NUML, LED_CAPSL,
//                                        LED_SCROLLL), and every EV_LED event the kernel
//                                        delivers to it (an evdev client's write, e.g. an
//                                        `led:` feedback output) goes to OUT as "led <ns>
//                                        CODE VALUE", <ns> uinput's stamp of the delivery
//                                        (CLOCK_MONOTONIC, taken in the writer's write(2));
//                                        read only after each command's presses (in the gap
//                                        after each press), never waited for: a reader woken
//                                        by the change would take the one vCPU from the
//                                        daemon it measures. uinput keeps 16 events.
//   benchtool fifopress FIFO COUNT HOLD_MS GAP_MS OUT   the host's stand-in for `device`
//                                        (its kernel has no uinput): COUNT presses written to
//                                        FIFO as evdev's input_event records (KEY_PROG1 down,
//                                        SYN, up, SYN), stamped on CLOCK_MONOTONIC when
//                                        written; "down <ns>" per key-down goes to OUT
//   benchtool subscribe SOCK OUT [MAX]   an actiond subscriber: for every event line prints
//                                        "<event> <time us> <deadline us> <receipt ns>" to OUT
//                                        (receipt = CLOCK_MONOTONIC right after read());
//                                        ends after MAX performed/released events or on SIGTERM
//   benchtool reactor DEV THRESH_MS N OUT [--subscriber EVENTS] [--noblock] CMD...
//                                        the limit: a minimal C reactor (epoll on the evdev fd,
//                                        or on a FIFO `fifopress` writes to
//                                        + one timerfd + posix_spawn) with a subscriber over a
//                                        socketpair; prints "rt <ns>" (key-down ts -> subscriber
//                                        read), "overshoot <ns>" (timerfd expiry read -
//                                        deadline), "deadline <ns>", "returned <ns>" (posix_spawn
//                                        returned). --subscriber: the subscriber is `subscribe`'s
//                                        code writing EVENTS, fed actiond's lines (`pressed` at
//                                        key-down, `held` and `performing` just before the
//                                        spawn); --noblock: back to epoll_wait after the spawn,
//                                        the child reaped through its pidfd, as actiond does;
//                                        the command gets ACTIOND_PRESS_TIME (the key-down, us);
//                                        --spawn: actiond's posix_spawn (its own process group,
//                                        signals unblocked and default, stdout/stderr on pipes,
//                                        stdin /dev/null, closefrom 3, chdir /), the pipes and
//                                        file actions readied at the key-down, as actiond does
//   benchtool sched NICE CMD...          runs CMD at nice NICE with SCHED_RESET_ON_FORK (what a
//                                        unit's Nice= with CPUSchedulingResetOnFork=yes gives)
//   benchtool idle CMD...                runs CMD (a name looked up in PATH) at SCHED_IDLE,
//                                        what util-linux's `chrt --idle 0` does (the guest's
//                                        busybox has no chrt): a reader that must not run
//                                        before the process it watches
//   benchtool timerfd N MS               timerfd overshoot alone: "overshoot <ns>" N times
//   benchtool statusload SOCK CLIENTS SECONDS   closed-loop `status` requests, one in flight
//                                        per client; prints "requests N seconds S"
//   benchtool fanout SOCK SUBSCRIBERS ROUNDS KIND   SUBSCRIBERS connections subscribed to
//                                        `performed`; per round one `perform KIND` from another
//                                        connection; prints "round <send->first ns>
//                                        <send->last ns>"
//   benchtool ready N -- ACTIOND ARGS... start -> READY=1 (sd_notify) of ACTIOND, N times;
//                                        prints "ready <ns>"; SIGTERM after each
//   benchtool statusrtt SOCK N           one well-behaved client: N `status` requests one
//                                        after the other; prints "rtt <ns>" per round trip
//   benchtool abuse SOCK CLIENTS SECONDS CLIENTS abusive connections at once for SECONDS,
//                                        by index mod 4: garbage lines never reading, one
//                                        10 MB line, connect/close storms, subscribed slow
//                                        readers pipelining requests; each reconnects when
//                                        the daemon drops it; prints "abuse connects N"
//                                        at the end or on SIGTERM
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "benchtool: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void fail(const char *what) {
  fprintf(stderr, "benchtool: %s\n", what);
  exit(1);
}

static void sleep_until(int64_t t) {
  struct timespec ts = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static void write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd pfd = {.fd = fd, .events = POLLOUT};
      poll(&pfd, 1, 1000);
      continue;
    }
    if (n < 0) die("write");
    p += n;
    len -= (size_t)n;
  }
}

static int64_t event_ns(const struct input_event *ev) {
  return (int64_t)ev->input_event_sec * 1000000000 + (int64_t)ev->input_event_usec * 1000;
}

// --- record, spawnfloor -------------------------------------------------------------------

static int cmd_record(int argc, char **argv) {
  int64_t t = now_ns();
  if (argc != 4) fail("usage: record TAG FILE");
  char line[160];
  // The gesture's identity, so the report pairs this sample with its own press.
  const char *press = getenv("ACTIOND_PRESS_TIME");
  int n = press != NULL && strlen(press) < 24 ? snprintf(line, sizeof line, "%s %lld %s\n", argv[2], (long long)t, press)
                                              : snprintf(line, sizeof line, "%s %lld\n", argv[2], (long long)t);
  int fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) die(argv[3]);
  write_all(fd, line, (size_t)n);
  close(fd);
  return 0;
}

static int cmd_spawnfloor(int argc, char **argv) {
  if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "fork"))) fail("usage: spawnfloor N FILE [fork]");
  int use_fork = argc == 5;
  int count = atoi(argv[2]);
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len < 0) die("readlink /proc/self/exe");
  self[len] = 0;
  char *child[] = {self, "record", "spawn", argv[3], NULL};
  for (int i = 0; i < count; i++) {
    int64_t t0 = now_ns();
    pid_t pid;
    if (use_fork) {
      // What a daemon without posix_spawn does: fork, then execve in the child.
      pid = fork();
      if (pid < 0) die("fork");
      if (pid == 0) {
        execve(self, child, environ);
        _exit(127);
      }
    } else {
      int rc = posix_spawn(&pid, self, NULL, NULL, child, environ);
      if (rc != 0) {
        errno = rc;
        die("posix_spawn");
      }
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    printf("spawn %lld\n", (long long)t0);
    sleep_until(now_ns() + 5000000);
  }
  return 0;
}

// --- device ---------------------------------------------------------------------------------

static void emit(int fd, int type, int code, int value) {
  struct input_event ev = {.type = (unsigned short)type, .code = (unsigned short)code, .value = value};
  write_all(fd, &ev, sizeof ev);
}

static void key(int fd, int value) {
  emit(fd, EV_KEY, KEY_PROG1, value);
  emit(fd, EV_SYN, SYN_REPORT, 0);
}

static void blast(int ui, long count, const char *sock);

// The EV_LED events the kernel delivered to the uinput device since the last call, to OUT
// with uinput's own stamp (uinput_dev_event: ktime_get_ts64, CLOCK_MONOTONIC, when the
// writer's event passes through the input core). Non-blocking: called after the presses,
// never woken by a change. Other events (EV_UINPUT force-feedback requests) are skipped.
static void drain_leds(int ui, FILE *out) {
  struct input_event ev[16];
  ssize_t n;
  while ((n = read(ui, ev, sizeof ev)) > 0) {
    for (size_t k = 0; k < (size_t)n / sizeof ev[0]; k++) {
      if (ev[k].type == EV_LED) {
        fprintf(out, "led %lld %u %d\n", (long long)event_ns(&ev[k]), (unsigned)ev[k].code, ev[k].value);
      }
    }
  }
  if (n < 0 && errno != EAGAIN && errno != EINTR) die("read uinput");
}

static int cmd_device(int argc, char **argv) {
  int leds = argc == 5 && !strcmp(argv[4], "--leds");
  if (argc != 4 && !leds) fail("usage: device NAME OUT [--leds]");
  // Read and write: the EV_LED events written to the device come back through read(2).
  int ui = open("/dev/uinput", (leds ? O_RDWR : O_WRONLY) | O_NONBLOCK | O_CLOEXEC);
  if (ui < 0) die("/dev/uinput");
  if (ioctl(ui, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(ui, UI_SET_KEYBIT, KEY_PROG1) < 0) die("UI_SET_*BIT");
  if (leds && (ioctl(ui, UI_SET_EVBIT, EV_LED) < 0 || ioctl(ui, UI_SET_LEDBIT, LED_NUML) < 0 ||
               ioctl(ui, UI_SET_LEDBIT, LED_CAPSL) < 0 || ioctl(ui, UI_SET_LEDBIT, LED_SCROLLL) < 0)) {
    die("UI_SET_LEDBIT");
  }
  struct uinput_setup setup = {.id = {.bustype = BUS_HOST, .vendor = 0x1209, .product = 0xac7d, .version = 1}};
  snprintf(setup.name, sizeof setup.name, "%s", argv[2]);
  if (ioctl(ui, UI_DEV_SETUP, &setup) < 0 || ioctl(ui, UI_DEV_CREATE) < 0) die("UI_DEV_CREATE");
  char sysname[64] = {0};
  if (ioctl(ui, UI_GET_SYSNAME(sizeof sysname), sysname) < 0) die("UI_GET_SYSNAME");
  // The event node of the new input device: /sys/devices/virtual/input/inputN/eventM.
  char node[128] = {0};
  for (int attempt = 0; attempt < 500 && !node[0]; attempt++) {
    for (int m = 0; m < 64; m++) {
      char path[256];
      snprintf(path, sizeof path, "/sys/devices/virtual/input/%s/event%d", sysname, m);
      if (access(path, F_OK) == 0) {
        snprintf(node, sizeof node, "/dev/input/event%d", m);
        break;
      }
    }
    if (!node[0]) usleep(10000);
  }
  if (!node[0]) fail("no event node for the uinput device");
  int self = -1;
  for (int attempt = 0; attempt < 500 && self < 0; attempt++) {
    self = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (self < 0) usleep(10000);
  }
  if (self < 0) die(node);
  // Kernel timestamps on CLOCK_MONOTONIC, like actiond's (evdev defaults to CLOCK_REALTIME).
  int clock = CLOCK_MONOTONIC;
  if (ioctl(self, EVIOCSCLOCKID, &clock) < 0) die("EVIOCSCLOCKID");
  FILE *out = fopen(argv[3], "a");
  if (!out) die(argv[3]);
  printf("node %s\n", node);
  fflush(stdout);

  char line[512], sock[256];
  while (fgets(line, sizeof line, stdin)) {
    int count, hold, gap, second, pause;
    char tag[32] = "down";
    if (sscanf(line, "press %d %d %d %31s", &count, &hold, &gap, tag) >= 3) {
      for (int i = 0; i < count; i++) {
        int64_t t = now_ns();
        key(ui, 1);
        sleep_until(t + (int64_t)hold * 1000000);
        key(ui, 0);
        sleep_until(t + (int64_t)(hold + gap) * 1000000);
        // Read back the kernel's timestamp of the key-down during the gap, when the
        // programs under test are idle again (4 events: down, SYN, up, SYN).
        struct input_event ev[16];
        ssize_t n;
        while ((n = read(self, ev, sizeof ev)) > 0) {
          for (size_t k = 0; k < (size_t)n / sizeof ev[0]; k++) {
            if (ev[k].type == EV_KEY && ev[k].code == KEY_PROG1 && ev[k].value == 1) {
              fprintf(out, "%s %lld\n", tag, (long long)event_ns(&ev[k]));
            } else if (ev[k].type == EV_KEY && ev[k].code == KEY_PROG1 && ev[k].value == 0) {
              fprintf(out, "%s-up %lld\n", tag, (long long)event_ns(&ev[k]));
            }
          }
        }
        // The LED changes of this press (2 for a tick: on, off) in the same gap: well
        // within uinput's 16 events.
        if (leds) drain_leds(ui, out);
      }
      fflush(out);
    } else if (sscanf(line, "double %d %d %d %d %d", &count, &hold, &gap, &second, &pause) == 5) {
      // Double presses: down FIRST_MS, up GAP_MS, down SECOND_MS, up PAUSE_MS; the kernel's
      // stamps of both key-downs are read back during the pause ("first", "second").
      for (int i = 0; i < count; i++) {
        int64_t t = now_ns();
        key(ui, 1);
        sleep_until(t + (int64_t)hold * 1000000);
        key(ui, 0);
        sleep_until(t + (int64_t)(hold + gap) * 1000000);
        key(ui, 1);
        sleep_until(t + (int64_t)(hold + gap + second) * 1000000);
        key(ui, 0);
        sleep_until(t + (int64_t)(hold + gap + second + pause) * 1000000);
        struct input_event ev[16];
        ssize_t n;
        int downs = 0, ups = 0;
        while ((n = read(self, ev, sizeof ev)) > 0) {
          for (size_t k = 0; k < (size_t)n / sizeof ev[0]; k++) {
            if (ev[k].type == EV_KEY && ev[k].code == KEY_PROG1 && ev[k].value == 1) {
              fprintf(out, "%s %lld\n", downs++ % 2 ? "second" : "first", (long long)event_ns(&ev[k]));
            } else if (ev[k].type == EV_KEY && ev[k].code == KEY_PROG1 && ev[k].value == 0) {
              fprintf(out, "%s %lld\n", ups++ % 2 ? "second-up" : "first-up", (long long)event_ns(&ev[k]));
            }
          }
        }
        if (leds) drain_leds(ui, out);
      }
      fflush(out);
    } else if (sscanf(line, "blast %d %255s", &count, sock) == 2) {
      blast(ui, count, sock);
      struct input_event ev[64];
      while (read(self, ev, sizeof ev) > 0) {
      }
      if (leds) drain_leds(ui, out);
    } else if (sscanf(line, "sleep %d", &count) == 1) {
      usleep((useconds_t)count * 1000);
      if (leds) drain_leds(ui, out);
    } else if (strncmp(line, "quit", 4) == 0) {
      break;
    } else {
      fprintf(stderr, "benchtool device: unknown command: %s", line);
      return 1;
    }
    fflush(out);
    printf("ok\n");
    fflush(stdout);
  }
  if (leds) drain_leds(ui, out);
  ioctl(ui, UI_DEV_DESTROY);
  fclose(out);
  return 0;
}

// --- actiond clients --------------------------------------------------------------------------

static int connect_unix(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die(path);
  return fd;
}

// A line reader per connection (the daemon writes one JSON object per line).
struct conn {
  int fd;
  size_t len;
  char buf[65536];
};

// Reads what is there; calls on_line for each complete line. Returns 0 at EOF.
static int conn_read(struct conn *c, void (*on_line)(struct conn *, char *, int64_t, void *), void *ctx) {
  ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len - 1);
  int64_t t = now_ns();
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 1;
  if (n < 0) die("read");
  if (n == 0) return 0;
  c->len += (size_t)n;
  char *start = c->buf, *nl;
  while ((nl = memchr(start, '\n', c->len - (size_t)(start - c->buf)))) {
    *nl = 0;
    on_line(c, start, t, ctx);
    start = nl + 1;
  }
  c->len -= (size_t)(start - c->buf);
  memmove(c->buf, start, c->len);
  if (c->len >= sizeof c->buf - 1) fail("line longer than 64 KiB from the daemon");
  return 1;
}

// Reads one line synchronously (set-up steps: hello, subscribe reply).
static void conn_wait_line(struct conn *c, const char *needle) {
  for (;;) {
    char *nl = memchr(c->buf, '\n', c->len);
    if (nl) {
      *nl = 0;
      int found = strstr(c->buf, needle) != NULL;
      if (!found && strstr(c->buf, "\"type\":\"error\"")) {
        fprintf(stderr, "benchtool: daemon error: %s\n", c->buf);
        exit(1);
      }
      size_t used = (size_t)(nl + 1 - c->buf);
      c->len -= used;
      memmove(c->buf, nl + 1, c->len);
      if (found) return;
      continue;
    }
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    if (poll(&pfd, 1, 10000) <= 0) fail("no reply from the daemon within 10 s");
    ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len - 1);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) fail("the daemon closed the connection");
    c->len += (size_t)n;
  }
}

// The device's `blast`: the daemon's own `released` announcements pace the presses.
struct blast_ctx {
  long released;
};

static void blast_line(struct conn *c, char *line, int64_t t, void *ctx_) {
  (void)c;
  (void)t;
  if (strstr(line, "\"event\":\"released\"")) ((struct blast_ctx *)ctx_)->released++;
}

static void blast(int ui, long count, const char *sock) {
  static struct conn c;
  c.fd = connect_unix(sock);
  c.len = 0;
  conn_wait_line(&c, "\"type\":\"hello\"");
  static const char sub[] = "{\"id\":1,\"request\":\"subscribe\",\"events\":[\"released\"]}\n";
  write_all(c.fd, sub, sizeof sub - 1);
  conn_wait_line(&c, "\"request\":\"subscribe\"");
  struct blast_ctx ctx = {0};
  long sent = 0;
  int64_t start = now_ns();
  while (ctx.released < count) {
    if (sent < count && sent - ctx.released < 8) {
      key(ui, 1);
      key(ui, 0);
      sent++;
      continue;
    }
    struct pollfd pfd = {.fd = c.fd, .events = POLLIN};
    if (poll(&pfd, 1, 5000) <= 0) break;  // the daemon lost presses: report what arrived
    if (!conn_read(&c, blast_line, &ctx)) break;
  }
  printf("blast sent %ld released %ld seconds %.3f\n", sent, ctx.released, (double)(now_ns() - start) / 1e9);
  close(c.fd);
}

static long long json_int(const char *line, const char *member) {
  const char *p = strstr(line, member);
  return p ? atoll(p + strlen(member)) : -1;
}

static int json_event(const char *line, char *out, size_t size) {
  const char *p = strstr(line, "\"event\":\"");
  if (!p) return 0;
  p += 9;
  size_t i = 0;
  while (p[i] && p[i] != '"' && i + 1 < size) {
    out[i] = p[i];
    i++;
  }
  out[i] = 0;
  return 1;
}

static volatile sig_atomic_t stopping;
static void on_term(int sig) {
  (void)sig;
  stopping = 1;
}

struct subscribe_ctx {
  FILE *out;
  long max, finished;
};

static void subscribe_line(struct conn *c, char *line, int64_t t, void *ctx_) {
  (void)c;
  struct subscribe_ctx *ctx = ctx_;
  char event[32];
  if (!json_event(line, event, sizeof event)) return;
  fprintf(ctx->out, "%s %lld %lld %lld\n", event, json_int(line, "\"time\":"), json_int(line, "\"deadline\":"),
    (long long)t);
  if (!strcmp(event, "performed") || !strcmp(event, "released") || !strcmp(event, "failed")) ctx->finished++;
}

static int cmd_subscribe(int argc, char **argv) {
  if (argc < 4) fail("usage: subscribe SOCK OUT [MAX]");
  struct subscribe_ctx ctx = {.max = argc > 4 ? atol(argv[4]) : -1};
  ctx.out = fopen(argv[3], "w");
  if (!ctx.out) die(argv[3]);
  struct sigaction sa = {.sa_handler = on_term};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  static struct conn c;
  c.fd = connect_unix(argv[2]);
  conn_wait_line(&c, "\"type\":\"hello\"");
  const char *req = "{\"id\":1,\"request\":\"subscribe\"}\n";
  write_all(c.fd, req, strlen(req));
  conn_wait_line(&c, "\"request\":\"subscribe\"");
  printf("subscribed\n");
  fflush(stdout);
  // Blocking reads: the receipt time is taken right after read() returns.
  while (!stopping && (ctx.max < 0 || ctx.finished < ctx.max)) {
    if (!conn_read(&c, subscribe_line, &ctx)) break;
  }
  fclose(ctx.out);
  return 0;
}

// --- reactor: the limit ---------------------------------------------------------------------

// The reactor's options (between OUT and CMD): what it does at the deadline besides the
// posix_spawn, so that each of actiond's extra steps can be measured alone, in one boot.
struct reactor_opts {
  int announce;  // writes actiond's `held` and `performing` lines to its subscriber first
  int noblock;   // back to epoll_wait after the spawn (reaped through a pidfd), not waitpid
  int sock;      // the subscriber's end (announce)
  int ep;        // the epoll instance (noblock: the pidfd joins it)
  int64_t threshold;
  int spawn;     // actiond's spawn: attributes, pipes and file actions (readied at key-down)
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  int ready;                 // pipes and file actions are readied
  int out[2], err[2];        // the readied pipes
  int outputs[1024][2];      // by pidfd: the read ends of its command's pipes, closed at reap
};

// actiond's spawn attributes: own process group, nothing blocked, every signal default.
static void spawn_init(struct reactor_opts *o) {
  posix_spawnattr_init(&o->attr);
  sigset_t none, all;
  sigemptyset(&none);
  memset(&all, 0xff, sizeof all);
  posix_spawnattr_setsigmask(&o->attr, &none);
  posix_spawnattr_setsigdefault(&o->attr, &all);
  posix_spawnattr_setpgroup(&o->attr, 0);
  posix_spawnattr_setflags(&o->attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

// At a key-down, what actiond readies then: two pipes (read ends non-blocking), the file
// actions that put them on 1 and 2, /dev/null on 0, close the rest and enter /.
static void spawn_ready(struct reactor_opts *o) {
  if (!o->spawn || o->ready) return;
  if (pipe2(o->out, O_CLOEXEC) < 0 || pipe2(o->err, O_CLOEXEC) < 0) die("pipe2");
  fcntl(o->out[0], F_SETFL, fcntl(o->out[0], F_GETFL) | O_NONBLOCK);
  fcntl(o->err[0], F_SETFL, fcntl(o->err[0], F_GETFL) | O_NONBLOCK);
  posix_spawn_file_actions_init(&o->fa);
  posix_spawn_file_actions_adddup2(&o->fa, o->out[1], 1);
  posix_spawn_file_actions_adddup2(&o->fa, o->err[1], 2);
  posix_spawn_file_actions_addopen(&o->fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&o->fa, 3);
  posix_spawn_file_actions_addchdir_np(&o->fa, "/");
  o->ready = 1;
}

// A short press: what was readied goes (`keep_read`: the read ends stay, a command has them).
static void spawn_unready(struct reactor_opts *o, int keep_read) {
  if (!o->ready) return;
  posix_spawn_file_actions_destroy(&o->fa);
  close(o->out[1]);
  close(o->err[1]);
  if (!keep_read) {
    close(o->out[0]);
    close(o->err[0]);
  }
  o->ready = 0;
}

static void announce(int fd, const char *line) { write_all(fd, line, strlen(line)); }

// The hold decision of the reactor: the command starts at once (posix_spawn), then the
// timer's lateness is noted and the child reaped (at once, or when its pidfd says so).
static int fire(const int64_t *deadline, char **cmd, FILE *out, struct reactor_opts *o) {
  int64_t t = now_ns();
  if (o->announce) {
    // As actiond does: one send per announcement, both before the spawn.
    char line[256];
    snprintf(line, sizeof line, "{\"type\":\"event\",\"event\":\"held\",\"button\":\"action\","
             "\"kind\":\"org.actiond.bench.record\",\"time\":%lld}\n", (long long)(*deadline / 1000));
    announce(o->sock, line);
    announce(o->sock, "{\"type\":\"event\",\"event\":\"performing\",\"kind\":\"org.actiond.bench.record\","
             "\"button\":\"action\",\"source\":\"button\",\"value\":true}\n");
  }
  // The press's identity, as actiond gives its commands (`ACTIOND_PRESS_TIME`, the key-down
  // in microseconds): `record` writes it, so the report pairs each command with its press.
  char press[32];
  snprintf(press, sizeof press, "%lld", (long long)((*deadline - o->threshold) / 1000));
  setenv("ACTIOND_PRESS_TIME", press, 1);
  pid_t pid;
  int rc;
  if (o->spawn) {
    // Readied at this press's key-down (a hold is decided only after its key-down was read).
    rc = posix_spawn(&pid, cmd[0], &o->fa, &o->attr, cmd, environ);
  } else {
    rc = posix_spawn(&pid, cmd[0], NULL, NULL, cmd, environ);
  }
  int64_t back = now_ns();
  if (rc != 0) {
    errno = rc;
    die("posix_spawn");
  }
  int reads[2] = {o->out[0], o->err[0]};
  if (o->spawn) spawn_unready(o, 1);
  fprintf(out, "overshoot %lld\ndeadline %lld\nreturned %lld\n", (long long)(t - *deadline), (long long)*deadline,
          (long long)back);
  if (o->noblock) {
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0) die("pidfd_open");
    if (o->spawn) {
      if (pfd >= 1024) fail("reactor: pidfd >= 1024");
      o->outputs[pfd][0] = reads[0];
      o->outputs[pfd][1] = reads[1];
    }
    struct epoll_event ee = {.events = EPOLLIN, .data.u64 = (uint64_t)1 << 32 | (uint32_t)pfd};
    if (epoll_ctl(o->ep, EPOLL_CTL_ADD, pfd, &ee) < 0) die("epoll_ctl pidfd");
    return 1;
  }
  int status;
  waitpid(pid, &status, 0);
  if (o->spawn) {
    close(reads[0]);
    close(reads[1]);
  }
  return 1;
}

static int cmd_reactor(int argc, char **argv) {
  if (argc < 7) fail("usage: reactor DEV THRESH_MS N OUT [--subscriber EVENTS] [--noblock] [--spawn] CMD...");
  int64_t threshold = atoll(argv[3]) * 1000000;
  long holds = atol(argv[4]);
  // Parent and subscriber child share this file: appends of whole lines only (line
  // buffering), so their lines never split each other.
  FILE *out = fopen(argv[5], "a");
  if (!out) die(argv[5]);
  setvbuf(out, NULL, _IOLBF, 0);
  static struct reactor_opts o;  // large (the pidfd table): not on the stack
  o.threshold = threshold;
  const char *events = NULL;
  int a = 6;
  for (; a < argc && !strncmp(argv[a], "--", 2); a++) {
    if (!strcmp(argv[a], "--noblock")) {
      o.noblock = 1;
    } else if (!strcmp(argv[a], "--spawn")) {
      o.spawn = 1;
      spawn_init(&o);
    } else if (!strcmp(argv[a], "--subscriber") && a + 1 < argc) {
      o.announce = 1;
      events = argv[++a];
    } else {
      fail("reactor: unknown option");
    }
  }
  if (a >= argc) fail("reactor: no command");
  char **cmd = argv + a;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) die("socketpair");
  fflush(NULL);
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close(pair[0]);
    if (events) {
      // The subscriber of `benchtool subscribe`, reading the reactor's JSON lines: the same
      // code, the same output (fully buffered), the same work per announcement as actiond's.
      struct subscribe_ctx ctx = {.max = -1};
      ctx.out = fopen(events, "w");
      if (!ctx.out) die(events);
      static struct conn c;
      c.fd = pair[1];
      while (conn_read(&c, subscribe_line, &ctx)) {
      }
      fclose(ctx.out);
      _exit(0);
    }
    // The subscriber: blocking reads, the receipt time right after each.
    int64_t down;
    for (;;) {
      ssize_t n = read(pair[1], &down, sizeof down);
      int64_t t = now_ns();
      if (n != sizeof down) break;
      fprintf(out, "rt %lld\n", (long long)(t - down));
    }
    fclose(out);
    _exit(0);
  }
  close(pair[1]);
  o.sock = pair[0];
  struct stat st;
  if (stat(argv[2], &st) < 0) die(argv[2]);
  int fifo = S_ISFIFO(st.st_mode);
  // A FIFO (the host runs): read-write, so that it never reports a hangup between writers.
  int dev = open(argv[2], (fifo ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
  if (dev < 0) die(argv[2]);
  int clock = CLOCK_MONOTONIC;
  if (!fifo && ioctl(dev, EVIOCSCLOCKID, &clock) < 0) die("EVIOCSCLOCKID");
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  o.ep = ep;
  struct epoll_event ee = {.events = EPOLLIN, .data.u64 = (uint32_t)dev};
  epoll_ctl(ep, EPOLL_CTL_ADD, dev, &ee);
  ee.data.u64 = (uint32_t)tfd;
  epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ee);
  printf("ready\n");
  fflush(stdout);
  struct sigaction sa = {.sa_handler = on_term};
  sigaction(SIGTERM, &sa, NULL);
  int64_t deadline = 0;
  int armed = 0;
  long done = 0;
  while (done < holds && !stopping) {
    struct epoll_event got[4];
    int n = epoll_wait(ep, got, 4, 30000);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (int i = 0; i < n; i++) {
      if (got[i].data.u64 >> 32) {
        // --noblock: a command's pidfd; reap it.
        int pfd = (int)(uint32_t)got[i].data.u64;
        siginfo_t info;
        waitid((idtype_t)P_PIDFD, (id_t)pfd, &info, WEXITED);
        epoll_ctl(ep, EPOLL_CTL_DEL, pfd, NULL);
        if (o.spawn) {
          close(o.outputs[pfd][0]);
          close(o.outputs[pfd][1]);
        }
        close(pfd);
        continue;
      }
      if (got[i].data.u64 == (uint32_t)dev) {
        struct input_event ev[32];
        ssize_t r;
        while ((r = read(dev, ev, sizeof ev)) > 0) {
          for (size_t k = 0; k < (size_t)r / sizeof ev[0]; k++) {
            if (ev[k].type != EV_KEY || ev[k].code != KEY_PROG1) continue;
            if (ev[k].value == 1) {
              int64_t down = event_ns(&ev[k]);
              deadline = down + threshold;
              if (o.announce) {
                char line[256];
                snprintf(line, sizeof line, "{\"type\":\"event\",\"event\":\"pressed\",\"button\":\"action\","
                         "\"kind\":\"org.actiond.bench.record\",\"time\":%lld,\"deadline\":%lld}\n",
                         (long long)(down / 1000), (long long)(deadline / 1000));
                announce(pair[0], line);
              } else {
                write_all(pair[0], &down, sizeof down);
              }
              armed = 1;
              spawn_ready(&o);
              struct itimerspec its = {.it_value = {deadline / 1000000000, deadline % 1000000000}};
              timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
            } else if (ev[k].value == 0 && armed) {
              struct itimerspec off = {0};
              timerfd_settime(tfd, TFD_TIMER_ABSTIME, &off, NULL);
              armed = 0;
              // Read late (the key-up in the same batch): the kernel's timestamps decide,
              // as they do in actiond's recognizer, so a hold is never lost to a stall.
              if (event_ns(&ev[k]) >= deadline) {
                done += fire(&deadline, cmd, out, &o);
              } else {
                spawn_unready(&o, 0);
              }
            }
          }
        }
      } else {
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) != sizeof expirations || !armed) continue;
        armed = 0;
        done += fire(&deadline, cmd, out, &o);
      }
    }
  }
  close(pair[0]);
  while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
  }
  fclose(out);
  return 0;
}

// --- the host's presses: input_event records into a FIFO ------------------------------------

// Whether the reader is still there: the reactor exits after its last hold, before the
// last key-up is written.
static int fifo_event(int fd, int type, int code, int value, int64_t t) {
  struct input_event ev = {.type = (unsigned short)type, .code = (unsigned short)code, .value = value};
  ev.input_event_sec = t / 1000000000;
  ev.input_event_usec = (t % 1000000000) / 1000;
  ssize_t n;
  while ((n = write(fd, &ev, sizeof ev)) < 0 && errno == EINTR) {
  }
  if (n < 0 && errno == EPIPE) return 0;
  if (n != (ssize_t)sizeof ev) die("write FIFO");  // blocking, and 24 bytes < PIPE_BUF: whole
  return 1;
}

static int cmd_fifopress(int argc, char **argv) {
  if (argc != 7) fail("usage: fifopress FIFO COUNT HOLD_MS GAP_MS OUT");
  int count = atoi(argv[3]);
  int64_t hold = atoll(argv[4]) * 1000000, gap = atoll(argv[5]) * 1000000;
  signal(SIGPIPE, SIG_IGN);
  int fd = open(argv[2], O_WRONLY | O_CLOEXEC);
  if (fd < 0) die(argv[2]);
  FILE *out = fopen(argv[6], "a");
  if (!out) die(argv[6]);
  int64_t t = now_ns() + 100000000;
  for (int i = 0; i < count; i++) {
    sleep_until(t);
    // Stamped as evdev stamps: the time the event is produced, microsecond resolution.
    int64_t down = now_ns() / 1000 * 1000;
    if (!fifo_event(fd, EV_KEY, KEY_PROG1, 1, down) || !fifo_event(fd, EV_SYN, SYN_REPORT, 0, down)) break;
    fprintf(out, "down %lld\n", (long long)down);
    sleep_until(down + hold);
    int64_t up = now_ns() / 1000 * 1000;
    if (!fifo_event(fd, EV_KEY, KEY_PROG1, 0, up) || !fifo_event(fd, EV_SYN, SYN_REPORT, 0, up)) break;
    t = up + gap;
  }
  fclose(out);
  close(fd);
  return 0;
}

static int cmd_timerfd(int argc, char **argv) {
  if (argc != 4) fail("usage: timerfd N MS");
  int count = atoi(argv[2]);
  int64_t ms = atoll(argv[3]);
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ee = {.events = EPOLLIN, .data.fd = tfd};
  epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ee);
  for (int i = 0; i < count; i++) {
    int64_t deadline = now_ns() + ms * 1000000;
    struct itimerspec its = {.it_value = {deadline / 1000000000, deadline % 1000000000}};
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
    struct epoll_event got;
    while (epoll_wait(ep, &got, 1, -1) < 0 && errno == EINTR) {
    }
    uint64_t expirations;
    if (read(tfd, &expirations, sizeof expirations) < 0) die("read timerfd");
    printf("overshoot %lld\n", (long long)(now_ns() - deadline));
  }
  return 0;
}

// --- host load: status requests, fan-out ------------------------------------------------------

static void raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

struct load_ctx {
  long replies;
};

static void load_line(struct conn *c, char *line, int64_t t, void *ctx_) {
  (void)t;
  struct load_ctx *ctx = ctx_;
  if (!strstr(line, "\"type\":\"reply\"")) {
    if (strstr(line, "\"type\":\"error\"")) {
      fprintf(stderr, "benchtool: daemon error: %s\n", line);
      exit(1);
    }
    return;
  }
  ctx->replies++;
  static const char req[] = "{\"id\":1,\"request\":\"status\"}\n";
  write_all(c->fd, req, sizeof req - 1);
}

static int cmd_statusload(int argc, char **argv) {
  if (argc != 5) fail("usage: statusload SOCK CLIENTS SECONDS");
  int clients = atoi(argv[3]);
  double seconds = atof(argv[4]);
  raise_nofile();
  struct conn *conns = calloc((size_t)clients, sizeof *conns);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  for (int i = 0; i < clients; i++) {
    conns[i].fd = connect_unix(argv[2]);
    conn_wait_line(&conns[i], "\"type\":\"hello\"");
    fcntl(conns[i].fd, F_SETFL, O_NONBLOCK);
    struct epoll_event ee = {.events = EPOLLIN, .data.ptr = &conns[i]};
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ee);
  }
  struct load_ctx ctx = {0};
  static const char req[] = "{\"id\":1,\"request\":\"status\"}\n";
  int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
  for (int i = 0; i < clients; i++) write_all(conns[i].fd, req, sizeof req - 1);
  while (now_ns() < end) {
    struct epoll_event got[64];
    int n = epoll_wait(ep, got, 64, 1000);
    for (int i = 0; i < n; i++) {
      if (!conn_read(got[i].data.ptr, load_line, &ctx)) fail("the daemon closed a connection");
    }
  }
  double took = (double)(now_ns() - start) / 1e9;
  printf("requests %ld seconds %.3f\n", ctx.replies, took);
  return 0;
}

struct fanout_ctx {
  long received;
  int64_t first, last;
};

static void fanout_line(struct conn *c, char *line, int64_t t, void *ctx_) {
  (void)c;
  struct fanout_ctx *ctx = ctx_;
  if (!strstr(line, "\"event\":\"performed\"")) return;
  if (ctx->received++ == 0) ctx->first = t;
  ctx->last = t;
}

static int cmd_fanout(int argc, char **argv) {
  if (argc != 6) fail("usage: fanout SOCK SUBSCRIBERS ROUNDS KIND");
  int subscribers = atoi(argv[3]);
  int rounds = atoi(argv[4]);
  raise_nofile();
  struct conn *conns = calloc((size_t)subscribers, sizeof *conns);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  static const char sub[] = "{\"id\":1,\"request\":\"subscribe\",\"events\":[\"performed\"]}\n";
  for (int i = 0; i < subscribers; i++) {
    conns[i].fd = connect_unix(argv[2]);
    conn_wait_line(&conns[i], "\"type\":\"hello\"");
    write_all(conns[i].fd, sub, sizeof sub - 1);
    conn_wait_line(&conns[i], "\"request\":\"subscribe\"");
    fcntl(conns[i].fd, F_SETFL, O_NONBLOCK);
    struct epoll_event ee = {.events = EPOLLIN, .data.ptr = &conns[i]};
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ee);
  }
  static struct conn actor;
  actor.fd = connect_unix(argv[2]);
  conn_wait_line(&actor, "\"type\":\"hello\"");
  char req[512];
  int len = snprintf(req, sizeof req, "{\"id\":2,\"request\":\"perform\",\"kind\":\"%s\"}\n", argv[5]);
  for (int r = 0; r < rounds; r++) {
    struct fanout_ctx ctx = {0};
    int64_t sent = now_ns();
    write_all(actor.fd, req, (size_t)len);
    while (ctx.received < subscribers) {
      struct epoll_event got[256];
      int n = epoll_wait(ep, got, 256, 10000);
      if (n <= 0) fail("fan-out: subscribers stopped receiving");
      for (int i = 0; i < n; i++) {
        if (!conn_read(got[i].data.ptr, fanout_line, &ctx)) fail("the daemon closed a subscriber");
      }
    }
    conn_wait_line(&actor, "\"request\":\"perform\"");
    printf("round %lld %lld\n", (long long)(ctx.first - sent), (long long)(ctx.last - sent));
    fflush(stdout);
  }
  return 0;
}

// --- start-up: READY=1 ------------------------------------------------------------------------

static int cmd_ready(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[3], "--") != 0) fail("usage: ready N -- ACTIOND ARGS...");
  int count = atoi(argv[2]);
  char **cmd = argv + 4;
  char path[108];
  snprintf(path, sizeof path, "/tmp/benchtool-notify-%d.sock", (int)getpid());
  unlink(path);
  int ns = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
  if (bind(ns, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind notify socket");
  setenv("NOTIFY_SOCKET", path, 1);
  for (int i = 0; i < count; i++) {
    int64_t t0 = now_ns();
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&pid, cmd[0], &fa, NULL, cmd, environ);
    if (rc != 0) {
      errno = rc;
      die(cmd[0]);
    }
    int64_t ready = -1;
    while (ready < 0) {
      struct pollfd pfd = {.fd = ns, .events = POLLIN};
      if (poll(&pfd, 1, 20000) <= 0) fail("no READY=1 within 20 s");
      char msg[4096];
      ssize_t n = recv(ns, msg, sizeof msg - 1, 0);
      int64_t t = now_ns();
      if (n <= 0) continue;
      msg[n] = 0;
      if (strstr(msg, "READY=1")) ready = t - t0;
    }
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    printf("ready %lld\n", (long long)ready);
  }
  unlink(path);
  return 0;
}

// --- a well-behaved client under abuse ------------------------------------------------------

static int cmd_statusrtt(int argc, char **argv) {
  if (argc != 4) fail("usage: statusrtt SOCK N");
  long n = atol(argv[3]);
  static struct conn c;
  c.fd = connect_unix(argv[2]);
  conn_wait_line(&c, "\"type\":\"hello\"");
  static const char req[] = "{\"id\":7,\"request\":\"status\"}\n";
  for (long i = 0; i < n; i++) {
    int64_t t0 = now_ns();
    write_all(c.fd, req, sizeof req - 1);
    conn_wait_line(&c, "\"type\":\"reply\"");
    printf("rtt %lld\n", (long long)(now_ns() - t0));
  }
  return 0;
}

enum abuse_kind { ABUSE_GARBAGE, ABUSE_HUGE, ABUSE_STORM, ABUSE_SLOW };

struct abuser {
  int fd;
  enum abuse_kind kind;
  long sent;  // bytes of the current huge line
};

// A non-blocking connect: -1 while the daemon's backlog is full (try again later).
static int connect_nb(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket");
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Writes what the socket takes; returns 0 once the daemon dropped the connection.
static int abuse_write(int fd, const char *buf, size_t len) {
  ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && errno != EAGAIN && errno != EINTR) return 0;
  return 1;
}

static int cmd_abuse(int argc, char **argv) {
  if (argc != 5) fail("usage: abuse SOCK CLIENTS SECONDS");
  const char *sock = argv[2];
  int count = atoi(argv[3]);
  double seconds = atof(argv[4]);
  raise_nofile();
  signal(SIGPIPE, SIG_IGN);
  // SIGTERM ends it early, still printing its count (the VM bench stops it after its holds).
  struct sigaction sa = {.sa_handler = on_term};
  sigaction(SIGTERM, &sa, NULL);
  struct abuser *a = calloc((size_t)count, sizeof *a);
  static char garbage[16384], chunk[65536], sink[65536];
  for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (i % 97 == 96) ? '\n' : (char)('!' + i % 90);
  memset(chunk, 'x', sizeof chunk);
  static const char slow[] =
      "{\"request\":\"subscribe\"}\n{\"id\":1,\"request\":\"status\"}\n{\"id\":2,\"request\":\"list\"}\n";
  for (int i = 0; i < count; i++) {
    a[i].fd = -1;
    a[i].kind = (enum abuse_kind)(i % 4);
  }
  long connects = 0;
  int64_t end = now_ns() + (int64_t)(seconds * 1e9);
  while (!stopping && now_ns() < end) {
    for (int i = 0; i < count; i++) {
      struct abuser *x = &a[i];
      if (x->kind == ABUSE_STORM) {
        // Connect, and close before the daemon's hello is read.
        int fd = connect_nb(sock);
        if (fd >= 0) {
          connects++;
          close(fd);
        }
        continue;
      }
      if (x->fd < 0) {
        x->fd = connect_nb(sock);
        x->sent = 0;
        if (x->fd < 0) continue;
        connects++;
      }
      int alive = 1;
      switch (x->kind) {
        case ABUSE_GARBAGE:
          alive = abuse_write(x->fd, garbage, sizeof garbage);
          break;
        case ABUSE_HUGE:
          alive = abuse_write(x->fd, chunk, sizeof chunk);
          x->sent += (long)sizeof chunk;
          // The daemon answers line-too-long and closes long before 10 MB; drain that
          // answer, then start over on a new connection.
          if (x->sent >= 10L << 20) alive = 0;
          while (alive && recv(x->fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {}
          break;
        case ABUSE_SLOW:
          alive = abuse_write(x->fd, slow, sizeof slow - 1);
          break;
        case ABUSE_STORM:
          break;
      }
      if (!alive) {
        close(x->fd);
        x->fd = -1;
      }
    }
    struct timespec pause = {0, 1000000};  // 1 ms between rounds: abuse, not a busy spin
    nanosleep(&pause, NULL);
  }
  printf("abuse connects %ld\n", connects);
  return 0;
}

// What a unit's Nice=N with CPUSchedulingResetOnFork=yes gives the daemon: its own nice N,
// and SCHED_RESET_ON_FORK, so that every child it starts (posix_spawn's clone included)
// begins at nice 0 again.
static int cmd_sched(int argc, char **argv) {
  if (argc < 4) fail("usage: sched NICE CMD...");
  errno = 0;
  if (setpriority(PRIO_PROCESS, 0, atoi(argv[2])) < 0) die("setpriority");
  struct sched_param param = {0};
  if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &param) < 0) die("sched_setscheduler");
  execv(argv[3], argv + 3);
  die(argv[3]);
  return 1;
}

static int cmd_idle(int argc, char **argv) {
  if (argc < 3) fail("usage: idle CMD...");
  struct sched_param param = {0};
  if (sched_setscheduler(0, SCHED_IDLE, &param) < 0) die("sched_setscheduler SCHED_IDLE");
  execvp(argv[2], argv + 2);
  die(argv[2]);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) fail("usage: benchtool record|sched|idle|spawnfloor|device|fifopress|subscribe|reactor|timerfd|statusload|fanout|ready|statusrtt|abuse ...");
  const char *c = argv[1];
  if (!strcmp(c, "record")) return cmd_record(argc, argv);
  if (!strcmp(c, "sched")) return cmd_sched(argc, argv);
  if (!strcmp(c, "idle")) return cmd_idle(argc, argv);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(c, "spawnfloor")) return cmd_spawnfloor(argc, argv);
  if (!strcmp(c, "device")) return cmd_device(argc, argv);
  if (!strcmp(c, "subscribe")) return cmd_subscribe(argc, argv);
  if (!strcmp(c, "reactor")) return cmd_reactor(argc, argv);
  if (!strcmp(c, "timerfd")) return cmd_timerfd(argc, argv);
  if (!strcmp(c, "statusload")) return cmd_statusload(argc, argv);
  if (!strcmp(c, "fanout")) return cmd_fanout(argc, argv);
  if (!strcmp(c, "ready")) return cmd_ready(argc, argv);
  if (!strcmp(c, "statusrtt")) return cmd_statusrtt(argc, argv);
  if (!strcmp(c, "abuse")) return cmd_abuse(argc, argv);
  if (!strcmp(c, "fifopress")) return cmd_fifopress(argc, argv);
  fprintf(stderr, "benchtool: unknown command %s\n", c);
  return 2;
}
