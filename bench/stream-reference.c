/*
 * stream-reference: the memory floor of an idle event stream on this stack. Plain C on libmicrohttpd,
 * configured as Quire is (epoll, a thread pool, keep-alive, the same per-connection memory pool), answering
 * every GET with an endless chunked stream, and every POST by waking every stream once. No session, no
 * routing, no JSON: what is left per idle stream is what libmicrohttpd itself holds for it. Used by
 * `scripts/bench.py streams` beside Quire, with the same client (`bench/stream-client.c`).
 *
 *   cc -O2 -o stream-reference bench/stream-reference.c $(pkg-config --cflags --libs libmicrohttpd)
 *   stream-reference PORT POOL_BYTES [THREADS]
 *
 * A stream sends its head and one comment, then waits as Quire's does: the reader gives the whole pages
 * of the buffer libmicrohttpd lends it back to the kernel (MADV_DONTNEED) and suspends the connection,
 * holding no thread. A POST resumes every waiting stream, which then sends `event: changes` and waits
 * again. With PORT 0 the bound port is printed on standard output (`port N`).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "reference-server.h"

/* One stream: its connection, and whether it has an event to send. Kept on a list while suspended. */
struct stream {
  struct MHD_Connection *connection;
  bool opened;    /* the first comment is sent */
  bool pending;   /* a write woke it: send one event */
  struct stream *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct stream *waiting;
static bool stopping;
static struct MHD_Response *written;
static int request_marker;

static void
release_pages (void *buffer, size_t size)
{
  const uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  const uintptr_t start = ((uintptr_t) buffer + page - 1) & ~(page - 1);
  const uintptr_t end = ((uintptr_t) buffer + size) & ~(page - 1);
  if (end > start)
    madvise ((void *) start, end - start, MADV_DONTNEED);
}

static ssize_t
read_stream (void *cls, uint64_t position, char *buffer, size_t max)
{
  static const char comment[] = ": stream open\n\n";
  static const char event[] = "event: changes\ndata: {}\n\n";
  struct stream *s = cls;
  (void) position;
  if (! s->opened) {
    s->opened = true;
    if (max < sizeof comment - 1) return MHD_CONTENT_READER_END_WITH_ERROR;
    memcpy (buffer, comment, sizeof comment - 1);
    return (ssize_t) (sizeof comment - 1);
  }
  pthread_mutex_lock (&lock);
  if (stopping) {
    pthread_mutex_unlock (&lock);
    return MHD_CONTENT_READER_END_OF_STREAM;
  }
  if (s->pending) {
    s->pending = false;
    pthread_mutex_unlock (&lock);
    if (max < sizeof event - 1) return MHD_CONTENT_READER_END_WITH_ERROR;
    memcpy (buffer, event, sizeof event - 1);
    return (ssize_t) (sizeof event - 1);
  }
  release_pages (buffer, max);
  MHD_suspend_connection (s->connection);
  s->next = waiting;
  waiting = s;
  pthread_mutex_unlock (&lock);
  return 0;
}

static void
free_stream (void *cls)
{
  struct stream *s = cls;
  pthread_mutex_lock (&lock);
  for (struct stream **link = &waiting; *link != NULL; link = &(*link)->next) {
    if (*link == s) {
      *link = s->next;
      break;
    }
  }
  pthread_mutex_unlock (&lock);
  free (s);
}

/* Resumes every waiting stream with one event to send. */
static void
wake_all (void)
{
  pthread_mutex_lock (&lock);
  struct stream *list = waiting;
  waiting = NULL;
  for (struct stream *s = list; s != NULL; s = s->next) {
    s->pending = true;
    MHD_resume_connection (s->connection);
  }
  pthread_mutex_unlock (&lock);
}

static enum MHD_Result
answer (void *cls, struct MHD_Connection *connection, const char *url, const char *method,
        const char *version, const char *upload_data, size_t *upload_data_size, void **request_cls)
{
  (void) cls; (void) url; (void) version; (void) upload_data;
  if (NULL == *request_cls) {
    *request_cls = &request_marker;
    return MHD_YES;
  }
  if (0 != *upload_data_size) {
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (0 == strcmp (method, "POST")) {
    wake_all ();
    return MHD_queue_response (connection, MHD_HTTP_OK, written);
  }
  struct stream *s = calloc (1, sizeof *s);
  if (NULL == s) return MHD_NO;
  s->connection = connection;
  /* 256: the block Quire's streams ask for (used only for an HTTP/1.0 client). */
  struct MHD_Response *response =
    MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 256, &read_stream, s, &free_stream);
  if (NULL == response) {
    free (s);
    return MHD_NO;
  }
  MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
  MHD_add_response_header (response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header (response, "X-Accel-Buffering", "no");
  enum MHD_Result result = MHD_queue_response (connection, MHD_HTTP_OK, response);
  MHD_destroy_response (response);
  return result;
}

int
main (int argc, char **argv)
{
  if (argc < 3) {
    fprintf (stderr, "usage: %s PORT POOL_BYTES [THREADS]\n", argv[0]);
    return 2;
  }
  unsigned port = (unsigned) atoi (argv[1]);
  size_t pool = (size_t) atol (argv[2]);
  long cores = sysconf (_SC_NPROCESSORS_ONLN);
  unsigned threads = argc > 3 ? (unsigned) atoi (argv[3]) : (unsigned) (cores > 0 ? cores : 1);
  written = MHD_create_response_from_buffer (2, "{}", MHD_RESPMEM_PERSISTENT);
  /* As many connections as the process may hold descriptors (the benchmark raises the limit to its count). */
  struct rlimit files;
  unsigned connections = 60000;
  if (0 == getrlimit (RLIMIT_NOFILE, &files) && files.rlim_cur != RLIM_INFINITY && files.rlim_cur > 64)
    connections = (unsigned) (files.rlim_cur - 64);

  const sigset_t stop = block_stop_signals ();

  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) port)};
  inet_pton (AF_INET, "127.0.0.1", &address.sin_addr);
  struct MHD_Daemon *daemon = MHD_start_daemon (
    MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, (uint16_t) port, NULL, NULL,
    &answer, NULL,
    MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &address,
    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 0,
    MHD_OPTION_CONNECTION_LIMIT, connections,
    MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
    threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads,
    MHD_OPTION_END);
  if (0 != serve_until_stopped (daemon, port, stop)) return 1;
  /* libmicrohttpd refuses to stop with suspended connections: wake them, and let each end its stream. */
  pthread_mutex_lock (&lock);
  stopping = true;
  pthread_mutex_unlock (&lock);
  wake_all ();
  usleep (200 * 1000);
  MHD_stop_daemon (daemon);
  MHD_destroy_response (written);
  return 0;
}
