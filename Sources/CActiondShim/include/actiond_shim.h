// SPDX-License-Identifier: Apache-2.0
// What `import Glibc` does not expose to Swift on Debian 12: epoll, timerfd, signalfd,
// eventfd, struct ucred, accept4, the CMSG_* macros, posix_spawn's GNU file actions and getaddrinfo_a. Kept tiny on purpose: each
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
#include <spawn.h>
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

/// SIOCOUTQ on a connected AF_UNIX stream socket: the bytes sent on it that the peer has
/// not read yet (ioctl is variadic, which Swift cannot call); -1 with errno set.
int actiond_socket_unread_bytes(int fd);

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

/// posix_spawn_file_actions_addchdir_np (a GNU extension, glibc >= 2.29): the child
/// chdirs to `path` before its exec.
int actiond_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path);
/// posix_spawn_file_actions_addclosefrom_np (a GNU extension, glibc >= 2.34): the child
/// closes every fd from `from` up before its exec.
int actiond_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int from);

// MARK: evdev LEDs (feedback)

/// EVIOCGLED on the evdev descriptor `fd` (ioctl is variadic, which Swift cannot call):
/// 1 when LED `code` is lit, 0 when not, -1 with errno set.
int actiond_evdev_led_state(int fd, unsigned int code);
/// Sets LED `code` of the evdev descriptor `fd`: one write(2) of EV_LED `code` `on` and
/// SYN_REPORT. 0, or -1 with errno set (EAGAIN included).
int actiond_evdev_write_led(int fd, unsigned int code, int on);

// MARK: evdev beeper and rumble (feedback)

/// Whether the evdev descriptor `fd` has event `code` of `type` (EVIOCGBIT; `type` 0 asks
/// for the event type `code` itself): 1 or 0, -1 with errno set.
int actiond_evdev_has_code(int fd, unsigned int type, unsigned int code);
/// One write(2) of event `type` `code` `value` and SYN_REPORT. 0, or -1 with errno set.
int actiond_evdev_write_event(int fd, unsigned int type, unsigned int code, int value);
/// Uploads an FF_RUMBLE effect (EVIOCSFF) of both magnitudes `strong` and `weak`, playing
/// `length_ms` (0: until stopped): its effect id, or -1 with errno set.
int actiond_evdev_upload_rumble(int fd, unsigned short strong, unsigned short weak, unsigned short length_ms);
/// Removes effect `id` (EVIOCRMFF). 0, or -1 with errno set.
int actiond_evdev_erase_effect(int fd, int id);

// MARK: name resolution off the caller's thread

/// A host name being resolved by glibc's getaddrinfo_a (its own threads), so that an event
/// loop never waits for a DNS server. Opaque: the request must outlive glibc's use of it,
/// which actiond_resolution_free arranges.
typedef struct actiond_resolution actiond_resolution;

/// What actiond_resolution_status returns while the answer is not in yet.
extern const int actiond_EAI_INPROGRESS;

/// Starts resolving `host` for a TCP connection (any address family, as libmosquitto asks);
/// when the answer is in, glibc's notification thread adds 1 to the eventfd `notify_fd`.
/// NULL when it cannot start, with the EAI_* code in *error (EAI_MEMORY, EAI_AGAIN, EAI_SYSTEM).
actiond_resolution *actiond_resolve_start(const char *host, int notify_fd, int *error);

/// actiond_EAI_INPROGRESS while resolving, 0 when the addresses are in, else the EAI_* code
/// (gai_strerror(3) names it).
int actiond_resolution_status(actiond_resolution *r);

/// The `index`th address of a finished request as a numeric host string (getnameinfo
/// NI_NUMERICHOST, with an IPv6 scope as `%if`): 0, or -1 past the last one or on error.
int actiond_resolution_numeric_host(actiond_resolution *r, size_t index, char *out, size_t out_length);

/// Frees the request. One still being resolved is cancelled, or, when glibc has already
/// begun it, freed by its notification, which then leaves `notify_fd` alone (it may be
/// closed by then).
void actiond_resolution_free(actiond_resolution *r);

#endif
