/*
 * Counts a process's heap allocations, for `scripts/bench.py allocations`: loaded with LD_PRELOAD, it
 * counts every malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign call, and every free,
 * into three 64-bit counters (allocations, frees, bytes asked for) kept in the file named by
 * MALLOC_COUNT_FILE, which the benchmark maps too and reads before and after a load run. Without that
 * variable the counters stay in this library. The real work is glibc's (__libc_malloc and its kin), so
 * nothing here allocates or recurses.
 *
 *   cc -O2 -shared -fPIC -o malloc-count.so malloc-count.c
 *   MALLOC_COUNT_FILE=/tmp/counts LD_PRELOAD=./malloc-count.so quire serve
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc (size_t);
extern void *__libc_calloc (size_t, size_t);
extern void *__libc_realloc (void *, size_t);
extern void *__libc_memalign (size_t, size_t);
extern void __libc_free (void *);

static _Atomic uint64_t own[3];
static _Atomic uint64_t *counters = own;

__attribute__ ((constructor)) static void
map_counters (void)
{
  const char *path = getenv ("MALLOC_COUNT_FILE");
  if (NULL == path)
    return;
  int fd = open (path, O_RDWR | O_CREAT, 0600);
  if (fd < 0)
    return;
  if (0 == ftruncate (fd, 4096)) {
    void *mapped = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED != mapped)
      counters = mapped;
  }
  close (fd);
}

static inline void
counted (size_t size)
{
  atomic_fetch_add_explicit (&counters[0], 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&counters[2], size, memory_order_relaxed);
}

void *
malloc (size_t size)
{
  counted (size);
  return __libc_malloc (size);
}

void *
calloc (size_t count, size_t size)
{
  counted (count * size);
  return __libc_calloc (count, size);
}

void *
realloc (void *pointer, size_t size)
{
  counted (size);
  return __libc_realloc (pointer, size);
}

void
free (void *pointer)
{
  if (NULL != pointer)
    atomic_fetch_add_explicit (&counters[1], 1, memory_order_relaxed);
  __libc_free (pointer);
}

void *
memalign (size_t alignment, size_t size)
{
  counted (size);
  return __libc_memalign (alignment, size);
}

void *
aligned_alloc (size_t alignment, size_t size)
{
  counted (size);
  return __libc_memalign (alignment, size);
}

int
posix_memalign (void **result, size_t alignment, size_t size)
{
  if (0 == alignment || 0 != (alignment & (alignment - 1)) || 0 != alignment % sizeof (void *))
    return EINVAL;
  counted (size);
  void *pointer = __libc_memalign (alignment, size);
  if (NULL == pointer)
    return ENOMEM;
  *result = pointer;
  return 0;
}
