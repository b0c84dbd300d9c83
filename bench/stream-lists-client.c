/*
 * stream-lists-client: event streams over many lists, each list written once a second: how soon each write's event
 * reaches the streams of its list.
 *
 *   cc -O2 -pthread -o stream-lists-client bench/stream-lists-client.c
 *   stream-lists-client PORT PATHS_FILE LISTS SECONDS SOURCES
 *
 * PATHS_FILE holds one line per stream: the index of its list (0 … LISTS - 1) and its request target
 * (`/v1/sessions/<id>/events`). The client opens every stream (from SOURCES loopback addresses in turn,
 * 127.0.0.2 …, as stream-client does), prints `ready N of M` and waits for a line on standard input. Then a
 * writer thread, for SECONDS seconds, writes every list once a second (`POST /v1/lists/l<i>/ops`, one item
 * updated, over four keep-alive connections), while one epoll loop reads every stream. Each event a stream
 * delivers (`event: changes`) carries its list's writes up to the largest `round` in its data (each write sets
 * `round` in one item's data): it is timed against the first of them not yet delivered (events carry what changed
 * since the last one, so two writes may arrive as one event). A write not followed by an event on a stream within 1 s counts as late; at the end,
 * a stream whose last event came before its list's last write missed it. It prints the events, the share
 * delivered within 1 s of their write, the median, p99 and largest delay, the late and the missed, and the writes
 * sent (and refused) against those asked for, and how far behind its second the latest was sent (a server that
 * answers writes slower than asked; the streams are read until the writers are done). Loopback only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loopback.h"

#define WRITERS 4

struct stream {
    int fd;
    int list;
    int opened;
    int failed;
    /* The first write of its list not yet answered by an event: the index into the list's write times. */
    size_t awaited;
    double last_event;
    size_t used;
    char buffer[2048];
};

static int port, lists, seconds;
/* Per list, the times its writes were sent (ms), seconds entries each, and how many were sent. */
static double *write_times;
static atomic_size_t *writes_sent;
static atomic_size_t refused_writes;
static atomic_int writers_done;
/* How far behind its schedule (round r at r s) the latest write was sent, in ms. */
static _Atomic double write_lag;
static double started;

/* One keep-alive connection that writes lists `first`, `first + WRITERS`, … once a second. */
static void *writer(void *argument) {
    int first = (int) (long) argument;
    int fd = connect_loopback(port);
    char request[1024], answer[65536];
    for (int round = 0; round < seconds; round++) {
        double due = started + round * 1000.0;
        while (now_ms() < due) usleep(1000);
        for (int list = first; list < lists; list += WRITERS) {
            char body[256];
            int body_length = snprintf(body, sizeof body,
                                       "{\"ops\":[{\"op\":\"updateItems\",\"items\":[{\"id\":\"i0\",\"type\":\"row\","
                                       "\"data\":{\"round\":%d}}]}]}", round);
            int length = snprintf(request, sizeof request,
                                  "POST /v1/lists/l%d/ops HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                  "application/json\r\nContent-Length: %d\r\n\r\n%s", list, body_length, body);
            double sent_at = now_ms();
            write_times[(size_t) list * (size_t) seconds + (size_t) round] = sent_at;
            if (sent_at - due > atomic_load(&write_lag)) atomic_store(&write_lag, sent_at - due);
            send_all(fd, request, (size_t) length);
            /* The whole answer: head, then Content-Length bytes. */
            size_t used = 0;
            char *end = NULL;
            while (end == NULL) {
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
            if (atoi(answer + 9) / 100 != 2) atomic_fetch_add(&refused_writes, 1);
            atomic_fetch_add(&writes_sent[list], 1);
        }
    }
    close(fd);
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

static double *delays;
static size_t delay_count, delay_capacity, late;

static void record(double delay) {
    if (delay_count == delay_capacity) delays = realloc(delays, (delay_capacity = delay_capacity * 2 + 1024) * sizeof *delays);
    delays[delay_count++] = delay;
    if (delay > 1000) late++;
}

/* Reads what is there: the head first, then every event, each timed against the write it answers. */
static void pump(struct stream *s) {
    for (;;) {
        if (s->used > sizeof s->buffer - 512) {
            memmove(s->buffer, s->buffer + s->used - 256, 256);
            s->used = 256;
        }
        ssize_t got = recv(s->fd, s->buffer + s->used, sizeof s->buffer - 1 - s->used, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            s->failed = 1;
            return;
        }
        if (got < 0) return;
        s->used += (size_t) got;
        s->buffer[s->used] = 0;
        if (!s->opened) {
            char *end = memmem(s->buffer, s->used, "\r\n\r\n", 4);
            if (end == NULL) continue;
            if (atoi(s->buffer + 9) != 200) {
                s->failed = 1;
                return;
            }
            size_t head = (size_t) (end - s->buffer) + 4;
            memmove(s->buffer, s->buffer + head, s->used - head);
            s->used -= head;
            s->buffer[s->used] = 0;
            s->opened = 1;
        }
        /* Every whole event (a block ending in an empty line): the writes it carries are its list's up to the
         * largest `round` in its data (each list is written once a round, so a round is the index of its write). */
        char *block_end;
        while ((block_end = memmem(s->buffer, s->used, "\n\n", 2)) != NULL) {
            size_t block = (size_t) (block_end - s->buffer) + 2;
            char kept = s->buffer[block];
            s->buffer[block] = 0;
            if (strstr(s->buffer, "event: changes") != NULL) {
                int round = -1;
                for (const char *at = s->buffer; (at = strstr(at, "\"round\":")) != NULL; at += 8) {
                    int value = atoi(at + 8);
                    if (value > round) round = value;
                }
                if (round >= 0 && (size_t) round >= s->awaited) {
                    double now = now_ms();
                    record(now - write_times[(size_t) s->list * (size_t) seconds + s->awaited]);
                    s->awaited = (size_t) round + 1;
                    s->last_event = now;
                }
            }
            s->buffer[block] = kept;
            memmove(s->buffer, s->buffer + block, s->used - block);
            s->used -= block;
            s->buffer[s->used] = 0;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s PORT PATHS_FILE LISTS SECONDS SOURCES\n", argv[0]);
        return 64;
    }
    port = atoi(argv[1]);
    lists = atoi(argv[3]);
    seconds = atoi(argv[4]);
    int sources = atoi(argv[5]);
    FILE *paths = fopen(argv[2], "r");
    if (paths == NULL || lists <= 0 || seconds <= 0) {
        perror(argv[2]);
        return 1;
    }
    write_times = calloc((size_t) lists * (size_t) seconds, sizeof *write_times);
    writes_sent = calloc((size_t) lists, sizeof *writes_sent);
    int epoll = epoll_create1(0);
    size_t capacity = 1024, count = 0;
    struct stream **streams = malloc(capacity * sizeof *streams);
    char line[1024], request[1200];
    while (fgets(line, sizeof line, paths) != NULL) {
        int list;
        char target[1000];
        if (sscanf(line, "%d %999s", &list, target) != 2 || list < 0 || list >= lists) continue;
        if (count == capacity) streams = realloc(streams, (capacity *= 2) * sizeof *streams);
        struct stream *s = calloc(1, sizeof *s);
        s->list = list;
        s->fd = connect_loopback_from(port, source_of(count, sources));
        int length = snprintf(request, sizeof request,
                              "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", target);
        send_all(s->fd, request, (size_t) length);
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = s};
        epoll_ctl(epoll, EPOLL_CTL_ADD, s->fd, &event);
        streams[count++] = s;
    }
    struct epoll_event events[256];
    size_t opened = 0, failed = 0;
    double deadline = now_ms() + 120000;
    while (opened + failed < count && now_ms() < deadline) {
        int ready = epoll_wait(epoll, events, 256, 1000);
        for (int index = 0; index < ready; index++) {
            struct stream *s = events[index].data.ptr;
            int was_open = s->opened, had_failed = s->failed;
            pump(s);
            if (s->opened && !was_open) opened++;
            if (s->failed && !had_failed) {
                failed++;
                epoll_ctl(epoll, EPOLL_CTL_DEL, s->fd, NULL);
            }
        }
    }
    printf("ready %zu of %zu (%zu refused)\n", opened, count, failed);
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL) return 1;

    started = now_ms() + 100;
    pthread_t threads[WRITERS];
    for (long index = 0; index < WRITERS; index++) pthread_create(&threads[index], NULL, writer, (void *) index);
    /* The writes' seconds (or until the writers are done, when the server answers them slower than asked), then
     * 2 s for the last events. */
    double end = started + seconds * 1000.0 + 2000;
    while (now_ms() < end || atomic_load(&writers_done) < WRITERS) {
        if (atomic_load(&writers_done) < WRITERS && now_ms() > end - 2000) end = now_ms() + 2000;
        int ready = epoll_wait(epoll, events, 256, 100);
        for (int index = 0; index < ready; index++) {
            struct stream *s = events[index].data.ptr;
            int had_failed = s->failed;
            pump(s);
            if (s->failed && !had_failed) {
                failed++;
                epoll_ctl(epoll, EPOLL_CTL_DEL, s->fd, NULL);
            }
        }
    }
    for (int index = 0; index < WRITERS; index++) pthread_join(threads[index], NULL);
    /* A write a stream never answered: late, and missed when it is the stream's last. */
    size_t missed = 0, sent = 0;
    for (int list = 0; list < lists; list++) sent += atomic_load(&writes_sent[list]);
    for (size_t index = 0; index < count; index++) {
        struct stream *s = streams[index];
        if (!s->opened || s->failed) continue;
        if (s->awaited < atomic_load(&writes_sent[s->list])) {
            missed++;
            late++;
        }
    }
    qsort(delays, delay_count, sizeof *delays, compare_doubles);
    size_t in_time = delay_count - (late - missed);
    double share = delay_count + missed ? 100.0 * (double) in_time / (double) (delay_count + missed) : 0;
    printf("events %zu: %.2f%% within 1 s of their write (median %.0f ms, p99 %.0f ms, largest %.0f ms); %zu late, "
           "%zu streams missed their list's last write, %zu ended; writes %zu of %zu (%zu refused, the latest sent %.0f ms "
           "behind its second)\n",
           delay_count, share, delay_count ? delays[delay_count / 2] : -1.0,
           delay_count ? delays[(size_t) ((double) delay_count * 0.99)] : -1.0,
           delay_count ? delays[delay_count - 1] : -1.0, late, missed, failed, sent, (size_t) lists * (size_t) seconds,
           (size_t) atomic_load(&refused_writes), atomic_load(&write_lag));
    for (size_t index = 0; index < count; index++) close(streams[index]->fd);
    return missed == 0 && failed == 0 ? 0 : 1;
}
