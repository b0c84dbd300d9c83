/*
 * stream-client: opens one event stream per line of a file, then times one write against all of them.
 *
 *   cc -O2 -o stream-client bench/stream-client.c
 *   stream-client PORT PATHS_FILE WRITE_PATH WRITE_BODY [SOURCES]
 *
 * PATHS_FILE holds one request target per line (`/v1/sessions/<id>/events`). The client opens a connection
 * per line, sends the GET and reads until the stream has started (its `200` head and first comment), then
 * prints `ready N` and waits for a line on standard input: the caller checks that the server holds every
 * stream and measures its memory with every stream idle. Then it sends `POST WRITE_PATH` with WRITE_BODY on
 * one more connection and reads every stream with one epoll loop until each has delivered an event (a
 * line starting `event: `). It prints, in milliseconds after the write was sent: the first delivery, the
 * median and the last, and how many streams delivered. Loopback only: with SOURCES n, the streams come from
 * 127.0.0.2 … 127.0.0.(n + 1) in turn (one address's ephemeral ports hold about 28,000), else from 127.0.0.1. Heartbeat comments are read and
 * skipped; a stream that ends or is refused counts as not delivered. `ready` says why streams were refused: how
 * many with each status, and how many connections ended before their head came.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loopback.h"

enum phase { OPENING, IDLE, DELIVERED, FAILED };

struct stream {
    int fd;
    enum phase phase;
    int status; /* the head's status; 0: the connection ended (or failed) before a head came */
    size_t used;
    char buffer[2048]; /* a sliding window over the stream: only the marker searched for matters */
};

/* Reads what is there; moves the stream to its next phase when its marker has arrived. */
static void pump(struct stream *s) {
    for (;;) {
        if (s->used > sizeof s->buffer - 512) { /* keep the tail: a marker may straddle two reads */
            memmove(s->buffer, s->buffer + s->used - 256, 256);
            s->used = 256;
        }
        ssize_t got = recv(s->fd, s->buffer + s->used, sizeof s->buffer - 1 - s->used, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            s->phase = FAILED;
            return;
        }
        if (got < 0) return;
        s->used += (size_t) got;
        s->buffer[s->used] = 0;
        if (s->phase == OPENING) {
            char *end = memmem(s->buffer, s->used, "\r\n\r\n", 4);
            if (end == NULL) continue;
            s->status = atoi(s->buffer + 9);
            if (s->status != 200) {
                s->phase = FAILED;
                return;
            }
            /* The head is in: what follows belongs to the stream. */
            size_t head = (size_t) (end - s->buffer) + 4;
            memmove(s->buffer, s->buffer + head, s->used - head);
            s->used -= head;
            s->buffer[s->used] = 0;
            s->phase = IDLE;
        }
        if (s->phase == IDLE && memmem(s->buffer, s->used, "\nevent: ", 8) != NULL) {
            s->phase = DELIVERED;
            return;
        }
    }
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
    struct stream **streams = malloc(capacity * sizeof *streams);
    char line[1024], request[1200];
    while (fgets(line, sizeof line, paths) != NULL) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == 0) continue;
        if (count == capacity) streams = realloc(streams, (capacity *= 2) * sizeof *streams);
        struct stream *s = calloc(1, sizeof *s);
        s->fd = connect_loopback_from(port, source_of(count, sources));
        int length = snprintf(request, sizeof request,
                              "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", line);
        send_all(s->fd, request, (size_t) length);
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = s};
        epoll_ctl(epoll, EPOLL_CTL_ADD, s->fd, &event);
        streams[count++] = s;
    }
    /* Every stream started (or refused) before the caller measures. */
    struct epoll_event events[256];
    size_t opened = 0, refused = 0;
    double deadline = now_ms() + 120000;
    while (opened + refused < count && now_ms() < deadline) {
        int ready = epoll_wait(epoll, events, 256, 1000);
        for (int index = 0; index < ready; index++) {
            struct stream *s = events[index].data.ptr;
            if (s->phase != OPENING) {
                pump(s); /* a heartbeat, or the end */
                continue;
            }
            pump(s);
            if (s->phase == IDLE || s->phase == DELIVERED) opened++;
            if (s->phase == FAILED) {
                refused++;
                epoll_ctl(epoll, EPOLL_CTL_DEL, s->fd, NULL);
            }
        }
    }
    /* Why streams were refused: a count per status, and those that ended before their head came. */
    size_t by_status[600] = {0};
    for (size_t index = 0; index < count; index++) {
        const struct stream *s = streams[index];
        if (s->phase == FAILED) by_status[s->status >= 0 && s->status < 600 ? s->status : 0]++;
    }
    printf("ready %zu of %zu (%zu refused", opened, count, refused);
    const char *separator = ": ";
    for (int status = 0; status < 600; status++) {
        if (by_status[status] == 0) continue;
        if (status == 0) printf("%s%zu ended before a head", separator, by_status[status]);
        else printf("%s%zu with status %d", separator, by_status[status], status);
        separator = ", ";
    }
    printf(")\n");
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
    size_t delivered = 0, failed = refused;
    while (delivered + failed < count) {
        int ready = epoll_wait(epoll, events, 256, 30000);
        if (ready <= 0) break; /* nothing for 30 s: report what arrived */
        for (int index = 0; index < ready; index++) {
            struct stream *s = events[index].data.ptr;
            enum phase before = s->phase;
            pump(s);
            if (s->phase == before) continue;
            if (s->phase == DELIVERED) times[delivered++] = now_ms() - start;
            if (s->phase == FAILED) failed++;
            epoll_ctl(epoll, EPOLL_CTL_DEL, s->fd, NULL);
        }
    }
    qsort(times, delivered, sizeof *times, compare_doubles);
    printf("delivered %zu of %zu: first %.0f ms, median %.0f ms, last %.0f ms; %zu ended or refused\n", delivered,
           count, delivered ? times[0] : -1.0, delivered ? times[delivered / 2] : -1.0,
           delivered ? times[delivered - 1] : -1.0, failed);
    for (size_t index = 0; index < count; index++) close(streams[index]->fd);
    return delivered == count ? 0 : 1;
}
