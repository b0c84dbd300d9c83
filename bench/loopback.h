/*
 * What the C load clients of bench/ share: a loopback connection with TCP_NODELAY, sending a whole buffer,
 * a monotonic clock in milliseconds, and the comparison qsort needs for their latency lists. Any failure
 * ends the client (they are benchmark tools: a half-measured run is worse than none).
 *
 * A client holding more connections than one source address has ephemeral ports toward one server port
 * (about 28,000 with Linux's default ip_local_port_range) spreads them over several loopback source addresses
 * with connect_loopback_from: Linux routes all of 127.0.0.0/8 to lo without configuration.
 */
#ifndef QUIRE_BENCH_LOOPBACK_H
#define QUIRE_BENCH_LOOPBACK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A connection to 127.0.0.1:port from source address `source` (0: whatever the kernel picks, 127.0.0.1;
 * n >= 1: 127.0.0.(n + 1)). The source port is left to connect() (IP_BIND_ADDRESS_NO_PORT), which needs it
 * unique only per destination, not per source address as bind() would. */
static int connect_loopback_from(int port, int source) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        perror("socket");
        exit(1);
    }
    if (source > 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in from = {.sin_family = AF_INET};
        from.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (unsigned) source);
        if (bind(fd, (struct sockaddr *) &from, sizeof from) != 0) {
            perror("bind");
            exit(1);
        }
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short) port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *) &address, sizeof address) != 0) {
        perror("connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int connect_loopback(int port) { return connect_loopback_from(port, 0); }

/* The source of the `index`th of a client's connections over `sources` addresses (127.0.0.2, 127.0.0.3, …;
 * `sources` 0: 127.0.0.1 alone). */
static int source_of(size_t index, int sources) { return sources > 0 ? 1 + (int) (index % (size_t) sources) : 0; }

static void send_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, data, length, 0);
        if (sent <= 0) {
            perror("send");
            exit(1);
        }
        data += sent;
        length -= (size_t) sent;
    }
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

#endif
