/*
 * long-poll-client: long polls re-armed as they are answered, one list written once a second: whether every
 * answer comes in time.
 *
 *   cc -O2 -pthread -o long-poll-client bench/long-poll-client.c
 *   long-poll-client PORT PATHS_FILE LIST ITEM_ID ITEM_TYPE SECONDS SOURCES
 *
 * PATHS_FILE holds one line per session: `/v1/sessions/<id>/changes?since=<version>`. The client parks a long
 * poll (`&wait=25`) for each on its own keep-alive connection (from SOURCES loopback addresses in turn, 127.0.0.2
 * …), prints `ready N` and waits for a line on standard input. Then a writer thread updates ITEM_ID of LIST once
 * a second for SECONDS seconds, while one epoll loop reads every answer and parks the next poll at once, since the
 * answer's `version`. An answer is timed against the first write sent after its poll was parked (or against the
 * parking itself when none was: the poll's version was behind already), and is in time within 1 s. A poll parked
 * before a write and not answered by the end (2 s after the last write) is missed. It prints the answers, the share
 * in time, the median, p99 and largest delay, the count of `503` and of other statuses, the connections closed,
 * the polls missed and the writes sent. Loopback only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loopback.h"

struct poll_connection {
    int fd;
    int closed;
    char target[160]; /* the session's changes path, without `since` */
    long since;
    double parked_at;
    size_t writes_before; /* writes sent when it was parked */
    size_t used;
    char buffer[8192];
};

static int port, seconds;
static const char *list, *item_id, *item_type;
static double *write_times;
static atomic_size_t writes_sent, writes_refused;
static double started;

static void *writer(void *unused) {
    (void) unused;
    int fd = connect_loopback(port);
    char request[1024], answer[65536];
    for (int round = 0; round < seconds; round++) {
        while (now_ms() < started + round * 1000.0) usleep(1000);
        char body[256];
        int body_length = snprintf(body, sizeof body,
                                   "{\"ops\":[{\"op\":\"updateItems\",\"items\":[{\"id\":\"%s\",\"type\":\"%s\","
                                   "\"data\":{\"round\":%d}}]}]}", item_id, item_type, round);
        int length = snprintf(request, sizeof request,
                              "POST /v1/lists/%s/ops HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Content-Length: %d\r\n\r\n%s", list, body_length, body);
        /* Counted before it is sent: a poll parked from now on may be answered by this write. */
        write_times[round] = now_ms();
        atomic_fetch_add(&writes_sent, 1);
        send_all(fd, request, (size_t) length);
        size_t used = 0;
        char *end = NULL;
        while (end == NULL || used < (size_t) (end - answer) + 4) {
            ssize_t got = recv(fd, answer + used, sizeof answer - 1 - used, 0);
            if (got <= 0) {
                perror("writer recv");
                exit(1);
            }
            used += (size_t) got;
            answer[used] = 0;
            end = strstr(answer, "\r\n\r\n");
        }
        char *field = strcasestr(answer, "\ncontent-length:");
        size_t body_bytes = field != NULL && field < end ? (size_t) atol(field + 16) : 0;
        while (used < (size_t) (end - answer) + 4 + body_bytes) {
            ssize_t got = recv(fd, answer + used, sizeof answer - 1 - used, 0);
            if (got <= 0) {
                perror("writer recv");
                exit(1);
            }
            used += (size_t) got;
        }
        if (atoi(answer + 9) / 100 != 2) atomic_fetch_add(&writes_refused, 1);
    }
    close(fd);
    return NULL;
}

static void park(struct poll_connection *c, long since) {
    char request[512];
    int length = snprintf(request, sizeof request, "GET %s?since=%ld&wait=25 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                          c->target, since);
    c->since = since;
    c->parked_at = now_ms();
    c->writes_before = atomic_load(&writes_sent);
    c->used = 0;
    send_all(c->fd, request, (size_t) length);
}

/* The status of the whole response in the buffer, and its body's top-level `version`; 0 while incomplete. */
static int complete(struct poll_connection *c, long *version) {
    const char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    size_t head = (size_t) (end - c->buffer) + 4;
    long length = 0;
    for (const char *at = c->buffer; at + 16 <= end; at++) {
        if (strncasecmp(at, "\ncontent-length:", 16) == 0) length = strtol(at + 16, NULL, 10);
    }
    if (c->used < head + (size_t) length) return 0;
    const char *found = memmem(end, c->used - head + 4, "\"version\":", 10);
    *version = found != NULL ? strtol(found + 10, NULL, 10) : -1;
    return atoi(c->buffer + 9);
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s PORT PATHS_FILE LIST ITEM_ID ITEM_TYPE SECONDS SOURCES\n", argv[0]);
        return 64;
    }
    port = atoi(argv[1]);
    list = argv[3];
    item_id = argv[4];
    item_type = argv[5];
    seconds = atoi(argv[6]);
    int sources = atoi(argv[7]);
    FILE *paths = fopen(argv[2], "r");
    if (paths == NULL || seconds <= 0) {
        perror(argv[2]);
        return 1;
    }
    write_times = calloc((size_t) seconds, sizeof *write_times);
    int epoll = epoll_create1(0);
    size_t capacity = 1024, count = 0;
    struct poll_connection **connections = malloc(capacity * sizeof *connections);
    char line[1024];
    while (fgets(line, sizeof line, paths) != NULL) {
        line[strcspn(line, "\r\n")] = 0;
        char *query = strstr(line, "?since=");
        if (query == NULL || (size_t) (query - line) >= sizeof connections[0]->target) continue;
        if (count == capacity) connections = realloc(connections, (capacity *= 2) * sizeof *connections);
        struct poll_connection *c = calloc(1, sizeof *c);
        memcpy(c->target, line, (size_t) (query - line));
        c->fd = connect_loopback_from(port, source_of(count, sources));
        park(c, strtol(query + 7, NULL, 10));
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event);
        connections[count++] = c;
    }
    printf("ready %zu\n", count);
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL) return 1;

    started = now_ms() + 100;
    pthread_t thread;
    pthread_create(&thread, NULL, writer, NULL);
    double *delays = NULL;
    size_t answers = 0, delay_capacity = 0, late = 0, unavailable = 0, other = 0, closed = 0;
    struct epoll_event events[256];
    double stop = started + seconds * 1000.0 + 2000;
    while (now_ms() < stop) {
        int ready = epoll_wait(epoll, events, 256, 100);
        for (int index = 0; index < ready; index++) {
            struct poll_connection *c = events[index].data.ptr;
            ssize_t got = recv(c->fd, c->buffer + c->used, sizeof c->buffer - 1 - c->used, MSG_DONTWAIT);
            if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
            if (got <= 0 || c->used + (size_t) got >= sizeof c->buffer - 1) {
                closed++;
                c->closed = 1;
                epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
                continue;
            }
            c->used += (size_t) got;
            long version = -1;
            int status = complete(c, &version);
            if (status == 0) continue;
            double now = now_ms();
            size_t sent = atomic_load(&writes_sent);
            double since = sent > c->writes_before ? write_times[c->writes_before] : c->parked_at;
            double delay = now - since;
            if (answers == delay_capacity) delays = realloc(delays, (delay_capacity = delay_capacity * 2 + 4096) * sizeof *delays);
            delays[answers++] = delay;
            if (delay > 1000) late++;
            if (status == 503) unavailable++;
            else if (status != 200) other++;
            park(c, status == 200 && version >= 0 ? version : c->since);
        }
    }
    /* Parked before a write and never answered. */
    size_t missed = 0, sent = atomic_load(&writes_sent);
    for (size_t index = 0; index < count; index++) {
        const struct poll_connection *c = connections[index];
        if (!c->closed && c->writes_before < sent) missed++;
    }
    pthread_join(thread, NULL);
    qsort(delays, answers, sizeof *delays, compare_doubles);
    size_t in_time = answers - late;
    printf("answered %zu: %.2f%% in time (within 1 s of their write; median %.0f ms, p99 %.0f ms, largest %.0f ms), "
           "%zu late, %zu missed; 503 %zu, other statuses %zu, %zu connections closed; writes %zu of %d (%zu refused)\n",
           answers, answers + missed ? 100.0 * (double) in_time / (double) (answers + missed) : 0.0,
           answers ? delays[answers / 2] : -1.0, answers ? delays[(size_t) ((double) answers * 0.99)] : -1.0,
           answers ? delays[answers - 1] : -1.0, late, missed, unavailable, other, closed, sent, seconds,
           (size_t) atomic_load(&writes_refused));
    return late == 0 && missed == 0 && unavailable == 0 && other == 0 && closed == 0 ? 0 : 1;
}
