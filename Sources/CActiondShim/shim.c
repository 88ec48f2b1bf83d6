#define _GNU_SOURCE 1
#include "actiond_shim.h"

#include <errno.h>
#include <linux/input.h>
#include <linux/sockios.h>
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
  struct input_event events[2];
  memset(events, 0, sizeof(events));
  events[0].type = EV_LED;
  events[0].code = (unsigned short)code;
  events[0].value = on ? 1 : 0;
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
