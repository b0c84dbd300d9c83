/*
 * tls-reference: what TLS costs this stack without Quire. Plain C on libmicrohttpd answering every GET with one
 * fixed body held in memory, as bench/mhd-reference.c does, but with HTTPS through libmicrohttpd's
 * GnuTLS (MHD_USE_TLS) when given a certificate and key, configured as Quire is: epoll, a thread pool, keep-alive,
 * its 16 KiB connection pool and its default TLS priorities. Started once with TLS and once without, it gives the
 * stack's own ratio of TLS to plain-HTTP rate, which `scripts/bench.py tls` prints beside Quire's.
 *
 *   cc -O2 -o tls-reference bench/tls-reference.c $(pkg-config --cflags --libs libmicrohttpd)
 *   tls-reference PORT BODY_FILE THREADS [CERT_PEM KEY_PEM]
 *
 * With PORT 0 the bound port is printed on standard output (`port N`).
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "reference-server.h"

/* Quire's `server.tls.priorities` default (TLSConfiguration.defaultPriorities). */
static const char priorities[] =
  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM";

static struct MHD_Response *body_response;
static int request_marker;

static enum MHD_Result
answer (void *cls, struct MHD_Connection *connection, const char *url, const char *method,
        const char *version, const char *upload_data, size_t *upload_data_size, void **request_cls)
{
  (void) cls; (void) url; (void) method; (void) version; (void) upload_data;
  if (NULL == *request_cls) { /* headers only: wait for the end of the request */
    *request_cls = &request_marker;
    return MHD_YES;
  }
  if (0 != *upload_data_size) { /* ignore any body */
    *upload_data_size = 0;
    return MHD_YES;
  }
  return MHD_queue_response (connection, MHD_HTTP_OK, body_response);
}

/* The whole file, NUL-terminated (libmicrohttpd takes PEM as a C string); exits when it cannot be read. */
static char *
read_file (const char *path, size_t *size)
{
  FILE *f = fopen (path, "rb");
  if (NULL == f) { perror (path); exit (2); }
  fseek (f, 0, SEEK_END);
  long n = ftell (f);
  fseek (f, 0, SEEK_SET);
  char *buffer = malloc ((size_t) n + 1);
  if (NULL == buffer || fread (buffer, 1, (size_t) n, f) != (size_t) n) {
    fprintf (stderr, "cannot read %s\n", path);
    exit (2);
  }
  fclose (f);
  buffer[n] = 0;
  if (NULL != size) *size = (size_t) n;
  return buffer;
}

int
main (int argc, char **argv)
{
  if (4 != argc && 6 != argc) {
    fprintf (stderr, "usage: %s PORT BODY_FILE THREADS [CERT_PEM KEY_PEM]\n", argv[0]);
    return 2;
  }
  unsigned port = (unsigned) atoi (argv[1]);
  size_t size;
  char *body = read_file (argv[2], &size);
  unsigned threads = (unsigned) atoi (argv[3]);
  const int tls = 6 == argc;
  char *certificate = tls ? read_file (argv[4], NULL) : NULL;
  char *key = tls ? read_file (argv[5], NULL) : NULL;

  body_response = MHD_create_response_from_buffer (size, body, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header (body_response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");

  const sigset_t stop = block_stop_signals ();

  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) port)};
  inet_pton (AF_INET, "127.0.0.1", &address.sin_addr);
  struct MHD_OptionItem options[] = {
    {MHD_OPTION_SOCK_ADDR, 0, &address},
    {MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL},
    {MHD_OPTION_CONNECTION_LIMIT, 4096, NULL},
    {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 16 << 10, NULL},
    {threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL},
    {MHD_OPTION_END, 0, NULL}, /* the TLS options, when asked */
    {MHD_OPTION_END, 0, NULL},
    {MHD_OPTION_END, 0, NULL},
    {MHD_OPTION_END, 0, NULL},
  };
  if (tls) {
    const size_t first = threads > 1 ? 5 : 4;
    options[first] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_CERT, 0, certificate};
    options[first + 1] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_MEM_KEY, 0, key};
    options[first + 2] = (struct MHD_OptionItem) {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *) priorities};
  }
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0);
  struct MHD_Daemon *daemon = MHD_start_daemon (flags, (uint16_t) port, NULL, NULL, &answer, NULL,
                                                MHD_OPTION_ARRAY, options, MHD_OPTION_END);
  if (0 != serve_until_stopped (daemon, port, stop)) return 1;
  MHD_stop_daemon (daemon);
  MHD_destroy_response (body_response);
  free (body);
  free (certificate);
  free (key);
  return 0;
}
