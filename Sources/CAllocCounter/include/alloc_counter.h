// SPDX-License-Identifier: Apache-2.0
// Counts heap allocations made through malloc and friends, for actiond-bench only.
//
// The benchmark executable defines malloc, calloc, realloc, free, posix_memalign,
// aligned_alloc and memalign itself (alloc_counter.c); the dynamic linker resolves the
// Swift runtime's calls to these definitions before glibc's, and each one counts,
// then forwards to glibc's own implementation (__libc_malloc, ...). Linked into no
// other target: the daemon uses the system allocator untouched.
#ifndef ACTIOND_ALLOC_COUNTER_H
#define ACTIOND_ALLOC_COUNTER_H

#include <stdint.h>

/// Allocations so far: malloc, calloc, posix_memalign, aligned_alloc, memalign, and
/// realloc (a realloc may move the block, so it counts as one).
uint64_t alloc_counter_allocations(void);

/// Calls to free with a non-NULL pointer so far.
uint64_t alloc_counter_frees(void);

#endif
