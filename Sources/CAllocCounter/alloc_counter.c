// SPDX-License-Identifier: Apache-2.0
// Interposes the C allocator to count allocations (see include/alloc_counter.h).
#include "alloc_counter.h"

#include <errno.h>
#include <stddef.h>

// glibc's real implementations, exported for exactly this purpose (no dlsym, which
// itself allocates).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static uint64_t allocations;
static uint64_t frees;

static inline void count_allocation(void) { __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED); }

void *malloc(size_t size) {
  count_allocation();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  count_allocation();
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  count_allocation();
  return __libc_realloc(pointer, size);
}

void free(void *pointer) {
  if (pointer != NULL) __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
  __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
  count_allocation();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  count_allocation();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  // POSIX: a power of two and a multiple of sizeof(void *).
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void *) != 0) return EINVAL;
  count_allocation();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) return ENOMEM;
  *result = pointer;
  return 0;
}

uint64_t alloc_counter_allocations(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }

uint64_t alloc_counter_frees(void) { return __atomic_load_n(&frees, __ATOMIC_RELAXED); }
