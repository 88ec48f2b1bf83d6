// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE 1
#include "actiond_shim.h"

#include <errno.h>
#include <linux/input.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <spawn.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int actiond_socket_unread_bytes(int fd) {
  int n = 0;
  if (ioctl(fd, SIOCOUTQ, &n) < 0) return -1;
  return n;
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

int actiond_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path) {
  return posix_spawn_file_actions_addchdir_np(actions, path);
}

int actiond_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int from) {
  return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int actiond_evdev_led_state(int fd, unsigned int code) {
  unsigned char bits[(LED_MAX + 8) / 8] = {0};
  if (code > LED_MAX) {
    errno = EINVAL;
    return -1;
  }
  if (ioctl(fd, EVIOCGLED(sizeof(bits)), bits) < 0) return -1;
  return (bits[code / 8] >> (code % 8)) & 1;
}

int actiond_evdev_write_led(int fd, unsigned int code, int on) {
  return actiond_evdev_write_event(fd, EV_LED, code, on ? 1 : 0);
}

int actiond_evdev_has_code(int fd, unsigned int type, unsigned int code) {
  unsigned char bits[(KEY_MAX + 8) / 8] = {0};
  if (type > EV_MAX || code >= sizeof(bits) * 8) {
    errno = EINVAL;
    return -1;
  }
  if (ioctl(fd, EVIOCGBIT(type, sizeof(bits)), bits) < 0) return -1;
  return (bits[code / 8] >> (code % 8)) & 1;
}

int actiond_evdev_write_event(int fd, unsigned int type, unsigned int code, int value) {
  struct input_event events[2];
  memset(events, 0, sizeof(events));
  events[0].type = (unsigned short)type;
  events[0].code = (unsigned short)code;
  events[0].value = value;
  events[1].type = EV_SYN;
  events[1].code = SYN_REPORT;
  ssize_t n = write(fd, events, sizeof(events));
  if (n < 0) return -1;
  if ((size_t)n != sizeof(events)) {
    errno = EIO;
    return -1;
  }
  return 0;
}

int actiond_evdev_upload_rumble(int fd, unsigned short strong, unsigned short weak, unsigned short length_ms) {
  struct ff_effect effect;
  memset(&effect, 0, sizeof(effect));
  effect.type = FF_RUMBLE;
  effect.id = -1;
  effect.u.rumble.strong_magnitude = strong;
  effect.u.rumble.weak_magnitude = weak;
  effect.replay.length = length_ms;
  effect.replay.delay = 0;
  if (ioctl(fd, EVIOCSFF, &effect) < 0) return -1;
  return effect.id;
}

int actiond_evdev_erase_effect(int fd, int id) { return ioctl(fd, EVIOCRMFF, id) < 0 ? -1 : 0; }

// MARK: name resolution

struct actiond_resolution {
  struct gaicb request;
  struct addrinfo hints;
  char *host;
  int notify_fd;
  pthread_mutex_t lock;
  int notified;   // glibc's notification ran
  int abandoned;  // actiond_resolution_free was called before it did
};

const int actiond_EAI_INPROGRESS = EAI_INPROGRESS;

static void resolution_destroy(actiond_resolution *r) {
  if (r->request.ar_result) freeaddrinfo(r->request.ar_result);
  pthread_mutex_destroy(&r->lock);
  free(r->host);
  free(r);
}

// Runs in a thread of glibc's (SIGEV_THREAD), once the request is done.
static void resolution_notify(union sigval value) {
  actiond_resolution *r = value.sival_ptr;
  pthread_mutex_lock(&r->lock);
  r->notified = 1;
  int abandoned = r->abandoned;
  if (!abandoned) {
    uint64_t one = 1;
    // A full eventfd counter (never, with one request at a time) only loses a wake-up
    // that is already pending.
    (void)!write(r->notify_fd, &one, sizeof(one));
  }
  pthread_mutex_unlock(&r->lock);
  if (abandoned) resolution_destroy(r);
}

actiond_resolution *actiond_resolve_start(const char *host, int notify_fd, int *error) {
  actiond_resolution *r = calloc(1, sizeof(*r));
  char *copy = strdup(host);
  if (!r || !copy) {
    free(r);
    free(copy);
    *error = EAI_MEMORY;
    return NULL;
  }
  r->host = copy;
  r->notify_fd = notify_fd;
  pthread_mutex_init(&r->lock, NULL);
  r->hints.ai_family = AF_UNSPEC;
  r->hints.ai_socktype = SOCK_STREAM;
  r->request.ar_name = r->host;
  r->request.ar_request = &r->hints;
  struct sigevent event;
  memset(&event, 0, sizeof(event));
  event.sigev_notify = SIGEV_THREAD;
  event.sigev_notify_function = resolution_notify;
  event.sigev_value.sival_ptr = r;
  struct gaicb *list[1] = {&r->request};
  int rc = getaddrinfo_a(GAI_NOWAIT, list, 1, &event);
  if (rc != 0) {
    *error = rc;
    resolution_destroy(r);
    return NULL;
  }
  return r;
}

int actiond_resolution_status(actiond_resolution *r) { return gai_error(&r->request); }

int actiond_resolution_numeric_host(actiond_resolution *r, size_t index, char *out, size_t out_length) {
  if (gai_error(&r->request) != 0) return -1;
  struct addrinfo *a = r->request.ar_result;
  for (size_t i = 0; a && i < index; i++) a = a->ai_next;
  if (!a) return -1;
  return getnameinfo(a->ai_addr, a->ai_addrlen, out, (socklen_t)out_length, NULL, 0, NI_NUMERICHOST) == 0 ? 0 : -1;
}

void actiond_resolution_free(actiond_resolution *r) {
  // Still queued: removed, and glibc never notifies it.
  if (gai_cancel(&r->request) == EAI_CANCELED) {
    resolution_destroy(r);
    return;
  }
  // Done or being resolved: the notification comes (or came); whoever is second frees.
  pthread_mutex_lock(&r->lock);
  int notified = r->notified;
  r->abandoned = 1;
  pthread_mutex_unlock(&r->lock);
  if (notified) resolution_destroy(r);
}
