/*
 * A census of the heap blocks a process allocates while a benchmark watches, for `scripts/bench.py streams`:
 * loaded with LD_PRELOAD into a server, it passes every malloc, calloc, realloc, free and aligned allocation on to
 * the allocator the process would use without it (the next definition: mimalloc for quire, glibc's for the C
 * reference), so the figures are the real allocator's. While the benchmark has recording on, each block allocated
 * is entered in a table (its address, the size asked for, the size the allocator gave, and who asked), and taken
 * out again when it is freed: when recording stops, the table holds what the watched interval left allocated,
 * which the benchmark reads, classifies (by the caller's module and function) and matches with the pages the
 * kernel holds for it (/proc/PID/pagemap).
 *
 *   cc -O2 -shared -fPIC -o heap-census.so heap-census.c -ldl
 *   HEAP_CENSUS_FILE=/tmp/census LD_PRELOAD=./heap-census.so quire serve
 *
 * The file (created here, mapped shared, every page touched at start so that it adds nothing to the resident
 * memory measured later): a header of 64-bit words, then the table.
 *
 *   word 0  recording: the benchmark sets 1 to start and 0 to stop
 *   word 1  capacity of the table (entries)
 *   word 2  entries in use
 *   word 3  entries that did not fit (the census is then incomplete, and says so)
 *   word 4  the page size
 *   then    `capacity` entries of four words: address (0: free, 1: removed), size asked, usable size, caller
 *
 * The caller is the return address of the allocation call; when that is inside the C library (strdup, tsearch:
 * libmicrohttpd copies its header names with strdup), the first frame outside it, found with backtrace(3); when
 * that is in libmicrohttpd, the libmicrohttpd function the server called (read from the server's call
 * instruction: its name says what the block is for). Only while recording is anything done beyond the call
 * passed on: a load and a branch per call otherwise. Loopback benchmarks only (x86-64 for the last step); not for
 * production.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HEADER_WORDS 8
#define ENTRY_WORDS 4
#define REMOVED ((uint64_t) 1)

static void *(*real_malloc) (size_t);
static void *(*real_calloc) (size_t, size_t);
static void *(*real_realloc) (void *, size_t);
static void (*real_free) (void *);
static int (*real_posix_memalign) (void **, size_t, size_t);
static void *(*real_aligned_alloc) (size_t, size_t);
static void *(*real_memalign) (size_t, size_t);
static size_t (*real_usable_size) (void *);

static _Atomic uint64_t *header;
static uint64_t *table;
static uint64_t capacity;
static atomic_flag table_lock = ATOMIC_FLAG_INIT;
static __thread int inside; /* this thread is in the census (or in dlsym): pass straight through */

/* dlsym may allocate before the real functions are known: from here, never freed. */
static char bootstrap[16384] __attribute__ ((aligned (16)));
static size_t bootstrap_used;

static void *
bootstrap_alloc (size_t size)
{
  size = (size + 15) & ~(size_t) 15;
  if (bootstrap_used + size > sizeof bootstrap)
    return NULL;
  void *block = bootstrap + bootstrap_used;
  bootstrap_used += size;
  return block;
}

static int
is_bootstrap (void *pointer)
{
  return (char *) pointer >= bootstrap && (char *) pointer < bootstrap + sizeof bootstrap;
}

static void
resolve (void)
{
  if (NULL != real_free)
    return;
  inside++;
  real_malloc = dlsym (RTLD_NEXT, "malloc");
  real_calloc = dlsym (RTLD_NEXT, "calloc");
  real_realloc = dlsym (RTLD_NEXT, "realloc");
  real_posix_memalign = dlsym (RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = dlsym (RTLD_NEXT, "aligned_alloc");
  real_memalign = dlsym (RTLD_NEXT, "memalign");
  real_usable_size = dlsym (RTLD_NEXT, "malloc_usable_size");
  real_free = dlsym (RTLD_NEXT, "free");
  inside--;
}

static void list_modules (void);

__attribute__ ((constructor)) static void
open_census (void)
{
  resolve ();
  const char *path = getenv ("HEAP_CENSUS_FILE");
  if (NULL == path)
    return;
  const char *entries = getenv ("HEAP_CENSUS_ENTRIES");
  uint64_t wanted = NULL != entries ? strtoull (entries, NULL, 10) : (1u << 20);
  size_t bytes = (HEADER_WORDS + wanted * ENTRY_WORDS) * sizeof (uint64_t);
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    return;
  if (0 == ftruncate (fd, (off_t) bytes)) {
    void *mapped = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (MAP_FAILED != mapped) {
      memset (mapped, 0, bytes); /* resident now, not while the benchmark measures */
      header = mapped;
      table = (uint64_t *) mapped + HEADER_WORDS;
      capacity = wanted;
      atomic_store (&header[1], wanted);
      atomic_store (&header[4], (uint64_t) sysconf (_SC_PAGESIZE));
      void *frames[4];
      inside++;
      backtrace (frames, 4); /* its first call loads the unwinder (and allocates): not while recording */
      inside--;
      list_modules (); /* every module is loaded by now */
    }
  }
  close (fd);
}

static inline int
recording (void)
{
  return NULL != header && 0 != atomic_load_explicit (&header[0], memory_order_relaxed) && 0 == inside;
}

static inline uint64_t
slot_of (uint64_t address)
{
  return ((address >> 4) * 0x9E3779B97F4A7C15ull) % capacity;
}

static void
lock (void)
{
  while (atomic_flag_test_and_set_explicit (&table_lock, memory_order_acquire))
    ;
}

static void
unlock (void)
{
  atomic_flag_clear_explicit (&table_lock, memory_order_release);
}

/* The executable segments of the loaded modules, listed once when recording starts (dladdr would look each
 * caller up in the symbol tables on every allocation, slow enough in quire's that the server would starve its own
 * connections). */
#define MAX_SEGMENTS 256
static struct segment {
  uintptr_t start, end, base;
} segments[MAX_SEGMENTS];
static int segment_count;
static uintptr_t libc_base, own_base, microhttpd_base;

static int
list_segment (struct dl_phdr_info *info, size_t size, void *data)
{
  (void) size;
  (void) data;
  if (NULL != info->dlpi_name && NULL != strstr (info->dlpi_name, "libmicrohttpd"))
    microhttpd_base = info->dlpi_addr;
  for (int index = 0; index < info->dlpi_phnum && segment_count < MAX_SEGMENTS; index++) {
    const ElfW (Phdr) *header = &info->dlpi_phdr[index];
    if (PT_LOAD == header->p_type && (header->p_flags & PF_X)) {
      uintptr_t start = info->dlpi_addr + header->p_vaddr;
      segments[segment_count++] = (struct segment) {start, start + header->p_memsz, info->dlpi_addr};
    }
  }
  return 0;
}

/* The load address of the module whose code holds `address`, or 0. */
static uintptr_t
module_of (void *address)
{
  uintptr_t value = (uintptr_t) address;
  for (int index = 0; index < segment_count; index++)
    if (value >= segments[index].start && value < segments[index].end)
      return segments[index].base;
  return 0;
}

static void
list_modules (void)
{
  if (0 != segment_count)
    return;
  dl_iterate_phdr (list_segment, NULL);
  libc_base = module_of ((void *) &strdup);
  own_base = module_of ((void *) &module_of);
}

/* The function a call instruction ending at `returned_to` called, when it reads as one (x86-64: `call rel32`, or
 * `call *[rip+disp32]` through the global offset table), through a PLT stub (`jmp *[rip+disp32]`, after an
 * endbr64 and a bnd prefix where present) to what the stub jumps to; else NULL. */
static void *
called_by (void *returned_to)
{
#if defined(__x86_64__)
  const unsigned char *end = returned_to;
  const unsigned char *target;
  int32_t displacement;
  if (0xFF == end[-6] && 0x15 == end[-5]) {
    memcpy (&displacement, end - 4, 4);
    memcpy (&target, end + displacement, sizeof target);
  } else if (0xE8 == end[-5]) {
    memcpy (&displacement, end - 4, 4);
    target = end + displacement;
  } else {
    return NULL;
  }
  if (module_of ((void *) target) != module_of (returned_to))
    return (void *) target; /* into another module already */
  const unsigned char *stub = target;
  if (0xF3 == stub[0] && 0x0F == stub[1] && 0x1E == stub[2] && 0xFA == stub[3])
    stub += 4;
  if (0xF2 == stub[0])
    stub++;
  if (0xFF != stub[0] || 0x25 != stub[1])
    return NULL;
  memcpy (&displacement, stub + 2, 4);
  memcpy (&target, stub + 6 + displacement, sizeof target);
  return (void *) target;
#else
  (void) returned_to;
  return NULL;
#endif
}

/* Who asked for a block: the return address of the allocation call, or, when that is in the C library (strdup,
 * tsearch) or in this file, the first frame of the stack outside both. For a block libmicrohttpd allocated
 * while the server called it, the libmicrohttpd function the server called (MHD_add_response_header,
 * MHD_add_connection: its name says what the block is for; libmicrohttpd's own frames may be tail calls); for one
 * it allocated on its own thread, its outermost frame there. */
static uint64_t
caller (void *returned_to)
{
  uintptr_t module = module_of (returned_to);
  if (module != libc_base && module != own_base && (0 == microhttpd_base || module != microhttpd_base))
    return (uint64_t) (uintptr_t) returned_to;
  void *frames[24];
  int count = backtrace (frames, 24);
  int index = 0;
  while (index < count && (module_of (frames[index]) == libc_base || module_of (frames[index]) == own_base))
    index++;
  if (index == count)
    return (uint64_t) (uintptr_t) returned_to;
  if (0 == microhttpd_base || module_of (frames[index]) != microhttpd_base)
    return (uint64_t) (uintptr_t) frames[index];
  while (index + 1 < count && module_of (frames[index + 1]) == microhttpd_base)
    index++;
  if (index + 1 < count && 0 != module_of (frames[index + 1])) {
    void *called = called_by (frames[index + 1]);
    if (NULL != called && module_of (called) == microhttpd_base)
      return (uint64_t) (uintptr_t) called;
  }
  return (uint64_t) (uintptr_t) frames[index];
}

static void
record (void *pointer, size_t size, void *returned_to)
{
  if (NULL == pointer || ! recording ())
    return;
  inside++;
  uint64_t who = caller (returned_to);
  uint64_t usable = NULL != real_usable_size ? real_usable_size (pointer) : size;
  uint64_t address = (uint64_t) (uintptr_t) pointer;
  lock ();
  uint64_t slot = slot_of (address);
  uint64_t probes = 0;
  for (; probes < capacity; probes++, slot = (slot + 1) % capacity) {
    uint64_t *entry = table + slot * ENTRY_WORDS;
    if (entry[0] <= REMOVED || entry[0] == address) {
      if (entry[0] != address)
        atomic_fetch_add_explicit (&header[2], 1, memory_order_relaxed);
      entry[0] = address;
      entry[1] = size;
      entry[2] = usable;
      entry[3] = who;
      break;
    }
  }
  if (probes == capacity)
    atomic_fetch_add_explicit (&header[3], 1, memory_order_relaxed);
  unlock ();
  inside--;
}

static void
forget (void *pointer)
{
  /* Only while recording: the benchmark reads the table when it stops, and the server's frees after that cost
   * nothing here. */
  if (NULL == pointer || NULL == header || 0 == atomic_load_explicit (&header[0], memory_order_relaxed))
    return;
  uint64_t address = (uint64_t) (uintptr_t) pointer;
  lock ();
  uint64_t slot = slot_of (address);
  for (uint64_t probes = 0; probes < capacity; probes++, slot = (slot + 1) % capacity) {
    uint64_t *entry = table + slot * ENTRY_WORDS;
    if (0 == entry[0])
      break;
    if (entry[0] == address) {
      entry[0] = REMOVED;
      atomic_fetch_sub_explicit (&header[2], 1, memory_order_relaxed);
      break;
    }
  }
  unlock ();
}

void *
malloc (size_t size)
{
  if (NULL == real_malloc) {
    resolve ();
    if (NULL == real_malloc)
      return bootstrap_alloc (size);
  }
  void *pointer = real_malloc (size);
  record (pointer, size, __builtin_return_address (0));
  return pointer;
}

void *
calloc (size_t count, size_t size)
{
  if (NULL == real_calloc) {
    if (inside) { /* dlsym's own calloc, before the real one is known */
      void *block = bootstrap_alloc (count * size);
      if (NULL != block)
        memset (block, 0, count * size);
      return block;
    }
    resolve ();
  }
  void *pointer = real_calloc (count, size);
  record (pointer, count * size, __builtin_return_address (0));
  return pointer;
}

void *
realloc (void *pointer, size_t size)
{
  if (is_bootstrap (pointer)) {
    void *moved = malloc (size);
    if (NULL != moved)
      memcpy (moved, pointer, size);
    return moved;
  }
  if (NULL == real_realloc)
    resolve ();
  forget (pointer);
  void *moved = real_realloc (pointer, size);
  record (moved, size, __builtin_return_address (0));
  return moved;
}

void
free (void *pointer)
{
  if (NULL == pointer || is_bootstrap (pointer))
    return;
  if (NULL == real_free)
    resolve ();
  forget (pointer);
  real_free (pointer);
}

int
posix_memalign (void **result, size_t alignment, size_t size)
{
  if (NULL == real_posix_memalign)
    resolve ();
  int status = real_posix_memalign (result, alignment, size);
  if (0 == status)
    record (*result, size, __builtin_return_address (0));
  return status;
}

void *
aligned_alloc (size_t alignment, size_t size)
{
  if (NULL == real_aligned_alloc)
    resolve ();
  void *pointer = real_aligned_alloc (alignment, size);
  record (pointer, size, __builtin_return_address (0));
  return pointer;
}

void *
memalign (size_t alignment, size_t size)
{
  if (NULL == real_memalign)
    resolve ();
  void *pointer = real_memalign (alignment, size);
  record (pointer, size, __builtin_return_address (0));
  return pointer;
}

size_t
malloc_usable_size (void *pointer)
{
  if (NULL == real_usable_size)
    resolve ();
  return NULL == pointer || is_bootstrap (pointer) ? 0 : real_usable_size (pointer);
}
