/*
 * fan-out-client: parks one long poll per line of a file, then times one write against all of them.
 *
 *   cc -O2 -o fan-out-client bench/fan-out-client.c
 *   fan-out-client PORT PATHS_FILE WRITE_PATH WRITE_BODY [SOURCES]
 *
 * PATHS_FILE holds one request target per line (`/v1/sessions/<id>/changes?since=<v>&wait=60`). The client
 * opens a connection per line, sends the GET, prints `ready` and waits for a line on standard input (the
 * caller checks that the server holds every poll). Then it sends `POST WRITE_PATH` with WRITE_BODY on one
 * more connection, and reads every answer with one epoll loop. It prints, in milliseconds after the write
 * was sent: the first answer, the median and the last, and the count of each status. Loopback only: it
 * connects to 127.0.0.1, with SOURCES n from 127.0.0.2 … 127.0.0.(n + 1) in turn. A Python client reading 10,000 sockets spends more time than the server does;
 * this one does not.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loopback.h"

struct poll_connection {
    int fd;
    size_t used;
    char buffer[4096];
};

/* The status and whether the whole response (headers and Content-Length bytes) is in the buffer. */
static int complete(const struct poll_connection *c, int *status) {
    const char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    size_t head = (size_t) (end - c->buffer) + 4;
    long length = 0;
    for (const char *at = c->buffer; at + 16 <= end; at++) {
        if (strncasecmp(at, "\ncontent-length:", 16) == 0) length = strtol(at + 16, NULL, 10);
    }
    *status = atoi(c->buffer + 9);
    return c->used >= head + (size_t) length;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s PORT PATHS_FILE WRITE_PATH WRITE_BODY [SOURCES]\n", argv[0]);
        return 64;
    }
    int port = atoi(argv[1]);
    int sources = argc == 6 ? atoi(argv[5]) : 0;
    FILE *paths = fopen(argv[2], "r");
    if (paths == NULL) {
        perror(argv[2]);
        return 1;
    }
    int epoll = epoll_create1(0);
    size_t capacity = 1024, count = 0;
    struct poll_connection **connections = malloc(capacity * sizeof *connections);
    char line[1024], request[1200];
    while (fgets(line, sizeof line, paths) != NULL) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == 0) continue;
        if (count == capacity) connections = realloc(connections, (capacity *= 2) * sizeof *connections);
        struct poll_connection *c = calloc(1, sizeof *c);
        c->fd = connect_loopback_from(port, source_of(count, sources));
        int length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", line);
        send_all(c->fd, request, (size_t) length);
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event);
        connections[count++] = c;
    }
    printf("ready %zu\n", count);
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL) return 1;

    int writer = connect_loopback(port);
    size_t body_length = strlen(argv[4]);
    int head = snprintf(request, sizeof request,
                        "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Content-Length: %zu\r\n\r\n", argv[3], body_length);
    double start = now_ms();
    send_all(writer, request, (size_t) head);
    send_all(writer, argv[4], body_length);

    double *times = malloc(count * sizeof *times);
    size_t done = 0, statuses[6] = {0};
    struct epoll_event events[256];
    while (done < count) {
        int ready = epoll_wait(epoll, events, 256, 120000);
        if (ready <= 0) break; /* nothing for two minutes: report what arrived */
        for (int index = 0; index < ready; index++) {
            struct poll_connection *c = events[index].data.ptr;
            ssize_t got = recv(c->fd, c->buffer + c->used, sizeof c->buffer - 1 - c->used, 0);
            int status = 0;
            if (got > 0) c->used += (size_t) got;
            if (got > 0 && !complete(c, &status) && c->used < sizeof c->buffer - 1) continue;
            if (got <= 0 || status == 0) status = 599; /* closed, or an answer too large for the buffer */
            times[done++] = now_ms() - start;
            statuses[status / 100 < 6 ? status / 100 : 5]++;
            epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
            close(c->fd);
        }
    }
    qsort(times, done, sizeof *times, compare_doubles);
    printf("answered %zu of %zu: first %.0f ms, median %.0f ms, last %.0f ms; 2xx %zu, 4xx %zu, 5xx/closed %zu\n",
           done, count, done ? times[0] : -1.0, done ? times[done / 2] : -1.0, done ? times[done - 1] : -1.0,
           statuses[2], statuses[4], statuses[5]);
    return done == count ? 0 : 1;
}
