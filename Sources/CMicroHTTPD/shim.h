#ifndef QUIRE_MICROHTTPD_SHIM_H
#define QUIRE_MICROHTTPD_SHIM_H

/*
 * The small C layer Swift needs around libmicrohttpd: its start and info functions are variadic,
 * and its logger receives a va_list. Everything here is `static inline`, prefixed `quire_mhd_`.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <unistd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <microhttpd.h>

/** Receives one formatted libmicrohttpd log line. */
typedef void (*quire_mhd_log_callback)(void *context, const char *message);

/** What the logger trampoline calls; owned by the Swift server for the daemon's lifetime. */
struct quire_mhd_logger {
    quire_mhd_log_callback callback;
    void *context;
};

static void quire_mhd_external_logger(void *cls, const char *format, va_list arguments) {
    struct quire_mhd_logger *logger = (struct quire_mhd_logger *) cls;
    char message[1024];
    vsnprintf(message, sizeof message, format, arguments);
    logger->callback(logger->context, message);
}

/** Everything `quire_mhd_start` passes to `MHD_start_daemon`, as plain fields. */
struct quire_mhd_settings {
    unsigned int flags;
    unsigned int connection_timeout_seconds;
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit;
    size_t connection_memory_limit;
    unsigned int thread_pool_size;
    MHD_AccessHandlerCallback access_handler;
    void *access_context;
    MHD_RequestCompletedCallback completed_handler;
    void *completed_context;
    /** Called when a request line has arrived, before its headers; returns the request's context. */
    void *(*request_started_handler)(void *cls, const char *uri, struct MHD_Connection *connection);
    void *request_started_context;
    /** Told when a connection starts and when it closes. */
    MHD_NotifyConnectionCallback connection_handler;
    void *connection_context;
    struct quire_mhd_logger *logger;
    /** Decodes the path's and the query items' `%HH` in place (NULL: libmicrohttpd's own). */
    size_t (*unescape)(void *cls, struct MHD_Connection *connection, char *text);
    /** HTTPS: a GnuTLS priority string, or NULL for plain HTTP. Each connection gets its credentials when
     * it starts (CQuireTLS's `quire_tls_prepare_connection`); the daemon's own certificate callback refuses. */
    const char *tls_priorities;
    /** HTTPS: the daemon's own certificate callback (MHD_OPTION_HTTPS_CERT_CALLBACK), a GnuTLS
     * `gnutls_certificate_retrieve_function2`: `quire_tls_refusing_certificate_callback()`. */
    void *tls_certificate_callback;
};

/** `MHD_start_daemon` without the variadic arguments. Returns NULL when the daemon cannot start. */
static inline struct MHD_Daemon *quire_mhd_start(const struct quire_mhd_settings *settings) {
    struct MHD_OptionItem options[16];
    unsigned int count = 0;
#define QUIRE_MHD_OPTION(option, value, pointer) \
    options[count++] = (struct MHD_OptionItem) { (option), (intptr_t) (value), (pointer) }
    QUIRE_MHD_OPTION(MHD_OPTION_CONNECTION_TIMEOUT, settings->connection_timeout_seconds, NULL);
    QUIRE_MHD_OPTION(MHD_OPTION_CONNECTION_LIMIT, settings->connection_limit, NULL);
    QUIRE_MHD_OPTION(MHD_OPTION_PER_IP_CONNECTION_LIMIT, settings->per_ip_connection_limit, NULL);
    QUIRE_MHD_OPTION(MHD_OPTION_CONNECTION_MEMORY_LIMIT, settings->connection_memory_limit, NULL);
    QUIRE_MHD_OPTION(MHD_OPTION_NOTIFY_COMPLETED, settings->completed_handler, settings->completed_context);
    QUIRE_MHD_OPTION(MHD_OPTION_URI_LOG_CALLBACK, settings->request_started_handler,
                     settings->request_started_context);
    QUIRE_MHD_OPTION(MHD_OPTION_NOTIFY_CONNECTION, settings->connection_handler, settings->connection_context);
    if (NULL != settings->unescape) {
        QUIRE_MHD_OPTION(MHD_OPTION_UNESCAPE_CALLBACK, settings->unescape, NULL);
    }
    if (settings->thread_pool_size > 1) {
        QUIRE_MHD_OPTION(MHD_OPTION_THREAD_POOL_SIZE, settings->thread_pool_size, NULL);
    }
    unsigned int flags = settings->flags;
    if (NULL != settings->tls_priorities) {
        flags |= MHD_USE_TLS;
        QUIRE_MHD_OPTION(MHD_OPTION_HTTPS_PRIORITIES, 0, (void *) settings->tls_priorities);
        QUIRE_MHD_OPTION(MHD_OPTION_HTTPS_CERT_CALLBACK, 0, settings->tls_certificate_callback);
    }
    QUIRE_MHD_OPTION(MHD_OPTION_END, 0, NULL);
#undef QUIRE_MHD_OPTION
    return MHD_start_daemon(flags, 0, NULL, NULL,
                            settings->access_handler, settings->access_context,
                            /* The logger must come first, or early messages go to stderr. */
                            MHD_OPTION_EXTERNAL_LOGGER, &quire_mhd_external_logger, settings->logger,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/** The number of connections open (0 when unknown). */
static inline unsigned int quire_mhd_connection_count(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return NULL == info ? 0 : info->num_connections;
}

/** What the server keeps for a connection (libmicrohttpd's socket context), or NULL. */
static inline void *quire_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return NULL == info ? NULL : info->socket_context;
}

/** The socket of a connection, or -1. */
static inline int quire_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return NULL == info ? -1 : info->connect_fd;
}

/**
 * Gives the whole memory pages inside [buffer, buffer + size) back to the kernel (`MADV_DONTNEED`): they read as
 * zeros afterwards and take memory again only when written. For a buffer whose content no longer matters: the
 * room libmicrohttpd lends a streaming response's reader, in the connection's memory pool, when the stream
 * goes idle. That pool is allocated with malloc (or mmap for large pools): private anonymous memory, for which
 * this is the same as writing zeros, lazily. Pages only partly inside the buffer are left alone. Returns the
 * bytes released.
 */
static inline size_t quire_release_pages(void *buffer, size_t size) {
    const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    const uintptr_t start = ((uintptr_t) buffer + page - 1) & ~(page - 1);
    const uintptr_t end = ((uintptr_t) buffer + size) & ~(page - 1);
    if (end <= start) return 0;
    return 0 == madvise((void *) start, end - start, MADV_DONTNEED) ? (size_t) (end - start) : 0;
}

/* glibc's accept4 (a GNU extension, declared by <sys/socket.h> only under _GNU_SOURCE, which this module is not
 * compiled with). */
extern int accept4(int socket, struct sockaddr *address, socklen_t *length, int flags);

/**
 * Accepts a connection already non-blocking and close-on-exec: libmicrohttpd 0.9.75 reads a new connection's
 * flags and sets O_NONBLOCK only when it is missing, so the connection costs no `fcntl` of ours and one of its
 * (instead of three).
 */
static inline int quire_accept(int socket, struct sockaddr *address, socklen_t *length) {
    return accept4(socket, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* Atomic access to the 64-bit words of a plain array (Swift's `Atomic` cannot live in one): the
 * request deadlines keep one word per socket number. */
static inline uint64_t quire_atomic_load_u64(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

static inline void quire_atomic_store_u64(uint64_t *word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/** Replaces `expected` by `desired`; false (nothing written) when the word held something else. */
static inline int quire_atomic_replace_u64(uint64_t *word, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/** The client's address of a connection, or NULL. */
static inline const struct sockaddr *quire_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return NULL == info ? NULL : info->client_addr;
}

/* Flag values, spelled once here so Swift need not combine C enum cases. The daemon has no listening
 * socket: QuireHTTP accepts and hands connections over with MHD_add_connection (which needs the
 * inter-thread channel that MHD_ALLOW_SUSPEND_RESUME includes). */
static const unsigned int quire_mhd_flags_default =
    MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;

#endif
