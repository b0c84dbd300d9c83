/*
 * mhd-reference: the physical limit of the HTTP stack on this machine. Plain C on libmicrohttpd,
 * answering every GET with one fixed body held in memory (no routing, no JSON work). The benchmarks
 * measure Quire's endpoints against it in the same run, as a ratio (`scripts/bench.py http`, `load`,
 * `wire`, `allocations`, `instructions`), sending it the bytes Quire answers.
 *
 *   cc -O2 -o mhd-reference bench/mhd-reference.c $(pkg-config --cflags --libs libmicrohttpd)
 *   mhd-reference PORT [BODY_FILE] [THREADS]
 *
 * Configured as Quire is: epoll, an internal thread pool of THREADS (default: the number of cores),
 * keep-alive, the response queued on the final call of the access handler (queueing it on the first
 * call forces Connection: close). Without BODY_FILE it answers a small page of its own.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *body_response;
static int request_marker;

static enum MHD_Result
answer (void *cls, struct MHD_Connection *connection, const char *url, const char *method,
        const char *version, const char *upload_data, size_t *upload_data_size, void **request_cls)
{
  (void) cls; (void) url; (void) method; (void) version; (void) upload_data;
  if (NULL == *request_cls) {            /* headers only: wait for the end of the request */
    *request_cls = &request_marker;
    return MHD_YES;
  }
  if (0 != *upload_data_size) {          /* ignore any body */
    *upload_data_size = 0;
    return MHD_YES;
  }
  return MHD_queue_response (connection, MHD_HTTP_OK, body_response);
}

static char *
read_body (const char *path, size_t *size)
{
  static const char fallback[] =
    "{\"sections\":[{\"id\":\"s1\",\"items\":[{\"id\":\"a\",\"type\":\"row\",\"data\":{\"title\":\"hello\"}},"
    "{\"id\":\"b\",\"type\":\"row\",\"data\":{\"title\":\"world\"}}]}],\"page\":{\"hasNext\":true,"
    "\"next\":\"cursor-abc123\",\"total\":2},\"version\":42}";
  if (NULL == path) {
    *size = sizeof (fallback) - 1;
    return strdup (fallback);
  }
  FILE *f = fopen (path, "rb");
  if (NULL == f) { perror (path); exit (2); }
  fseek (f, 0, SEEK_END);
  long n = ftell (f);
  fseek (f, 0, SEEK_SET);
  char *buffer = malloc ((size_t) n + 1);
  if (NULL == buffer || fread (buffer, 1, (size_t) n, f) != (size_t) n) { fprintf (stderr, "cannot read %s\n", path); exit (2); }
  fclose (f);
  *size = (size_t) n;
  return buffer;
}

int
main (int argc, char **argv)
{
  if (argc < 2) { fprintf (stderr, "usage: %s PORT [BODY_FILE] [THREADS]\n", argv[0]); return 2; }
  unsigned port = (unsigned) atoi (argv[1]);
  size_t size;
  char *body = read_body (argc > 2 && argv[2][0] ? argv[2] : NULL, &size);
  long cores = sysconf (_SC_NPROCESSORS_ONLN);
  unsigned threads = argc > 3 ? (unsigned) atoi (argv[3]) : (unsigned) (cores > 0 ? cores : 1);

  body_response = MHD_create_response_from_buffer (size, body, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header (body_response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");

  sigset_t stop;
  sigemptyset (&stop);
  sigaddset (&stop, SIGINT);
  sigaddset (&stop, SIGTERM);
  pthread_sigmask (SIG_BLOCK, &stop, NULL);   /* MHD threads inherit this mask */

  struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  inet_pton (AF_INET, "127.0.0.1", &address.sin_addr);
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
  struct MHD_Daemon *daemon = MHD_start_daemon (
    flags, (uint16_t) port, NULL, NULL, &answer, NULL,
    MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &address,
    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 30,
    MHD_OPTION_CONNECTION_LIMIT, (unsigned int) 4096,
    threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads,
    MHD_OPTION_END);
  if (NULL == daemon) { fprintf (stderr, "cannot start on port %u\n", port); return 1; }
  fprintf (stderr, "mhd-reference: 127.0.0.1:%u, %zu-byte body, %u thread(s)\n", port, size, threads);

  int signal_number;
  sigwait (&stop, &signal_number);
  MHD_stop_daemon (daemon);
  MHD_destroy_response (body_response);
  free (body);
  return 0;
}
