// What `import Glibc` does not expose to Swift on Debian 12: epoll, timerfd, signalfd,
// eventfd, struct ucred, accept4 and the CMSG_* macros. Kept tiny on purpose: each
// wrapper exists only because Swift cannot see the macro or declaration.
#ifndef ACTIOND_SHIM_H
#define ACTIOND_SHIM_H

#define _GNU_SOURCE 1
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <time.h>

#endif
