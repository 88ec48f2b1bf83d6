// SPDX-License-Identifier: Apache-2.0
/* Linked only into the arm64 cross build (scripts/cross-arm64), never into a native one.

   The cross build links trixie's Swift runtime (libswiftCore.a of swiftlang 6.0.3, compiled
   against glibc 2.41's headers) against bookworm's glibc 2.36, so that one package runs on
   Debian 12 / Raspberry Pi OS 12 and on Debian 13. glibc >= 2.38's headers redirect strtol,
   strtoll and sscanf to their C23 names (__isoc23_*, symbol version GLIBC_2.38), which
   bookworm's libc lacks: they are the only symbols the link misses. Here they are, each the
   pre-C23 function it stands for. The one difference C23 makes, "0b" binary prefixes when
   the base is 0 or 2, does not matter to the runtime: it parses decimal numbers (environment
   variables, /proc files). fmod/fmodf, the runtime's other GLIBC_2.38 references, bind to
   their older versions in bookworm's libm without help. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

long __isoc23_strtol(const char *nptr, char **endptr, int base);
long long __isoc23_strtoll(const char *nptr, char **endptr, int base);
int __isoc23_sscanf(const char *str, const char *format, ...);

long __isoc23_strtol(const char *nptr, char **endptr, int base) { return strtol(nptr, endptr, base); }

long long __isoc23_strtoll(const char *nptr, char **endptr, int base) {
  return strtoll(nptr, endptr, base);
}

int __isoc23_sscanf(const char *str, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int result = vsscanf(str, format, args);
  va_end(args);
  return result;
}
