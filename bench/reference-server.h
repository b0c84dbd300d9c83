/*
 * What the C reference servers of bench/ share (stream-reference.c, tls-reference.c): stop signals blocked
 * before libmicrohttpd starts its threads (which inherit the mask), then, once the daemon runs, its bound port
 * printed on standard output (`port N`, so that a benchmark can start it on port 0) and a wait for SIGINT or
 * SIGTERM.
 */
#ifndef QUIRE_BENCH_REFERENCE_SERVER_H
#define QUIRE_BENCH_REFERENCE_SERVER_H

#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

/* Blocks SIGINT and SIGTERM in this thread and every thread started after; returns them as a set. */
static sigset_t block_stop_signals(void) {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    return stop;
}

/* Says where `daemon` (NULL: it did not start, which is reported) listens, then waits for a stop signal.
 * Returns 0 when stopped by a signal, 1 when the daemon did not start. */
static int serve_until_stopped(struct MHD_Daemon *daemon, unsigned port, sigset_t stop) {
    if (NULL == daemon) {
        fprintf(stderr, "cannot start on port %u\n", port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", NULL == info ? port : (unsigned) info->port);
    fflush(stdout);
    int signal_number;
    sigwait(&stop, &signal_number);
    return 0;
}

#endif
