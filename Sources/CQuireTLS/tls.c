/*
 * The GnuTLS side of HTTPS (quire_tls.h). A C target of its own, as CQuireFraming is, rather than `static inline`
 * functions in the CMicroHTTPD system module's header: this is a program of its own (certificates, the reads
 * and the cork of every TLS connection, a client), not a shim over a variadic call. Here SwiftPM compiles it
 * once, with -O2 in release.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <gnutls/abstract.h>
#include "quire_tls.h"

/* ---- Certificates and keys. ---- */

/** Hexadecimal, lower case, without the leading zero bytes of a DER integer (as openssl prints serials). */
static void quire_tls_hex(const unsigned char *bytes, size_t count, char *out, size_t capacity) {
    static const char digits[] = "0123456789abcdef";
    size_t written = 0;
    while (count > 1 && 0 == bytes[0]) {
        bytes++;
        count--;
    }
    for (size_t index = 0; index < count && written + 2 < capacity; index++) {
        out[written++] = digits[bytes[index] >> 4];
        out[written++] = digits[bytes[index] & 15];
    }
    out[written] = 0;
}

static void quire_tls_describe_leaf(gnutls_x509_crt_t leaf, struct quire_tls_loaded *out) {
    unsigned char serial[40];
    size_t serial_size = sizeof serial;
    out->not_before = gnutls_x509_crt_get_activation_time(leaf);
    out->not_after = gnutls_x509_crt_get_expiration_time(leaf);
    out->serial[0] = 0;
    if (gnutls_x509_crt_get_serial(leaf, serial, &serial_size) == 0) {
        quire_tls_hex(serial, serial_size, out->serial, sizeof out->serial);
    }
    gnutls_datum_t dn = { NULL, 0 };
    out->subject[0] = 0;
    if (gnutls_x509_crt_get_dn2(leaf, &dn) == 0) {
        snprintf(out->subject, sizeof out->subject, "%.*s", (int) dn.size, (const char *) dn.data);
        gnutls_free(dn.data);
    }
}

enum quire_tls_stage quire_tls_load(const unsigned char *certificate_pem, unsigned int certificate_size,
                                    const unsigned char *key_pem, unsigned int key_size, const char *password,
                                    struct quire_tls_loaded *out, int *error) {
    gnutls_datum_t certificate = { (unsigned char *) certificate_pem, certificate_size };
    gnutls_datum_t key = { (unsigned char *) key_pem, key_size };
    gnutls_x509_crt_t *chain = NULL;
    unsigned int count = 0;
    memset(out, 0, sizeof *out);
    *error = gnutls_x509_crt_list_import2(&chain, &count, &certificate, GNUTLS_X509_FMT_PEM, 0);
    if (*error < 0 || 0 == count) {
        if (*error >= 0) *error = GNUTLS_E_NO_CERTIFICATE_FOUND;
        return QUIRE_TLS_CERTIFICATE;
    }
    out->chain_length = count;
    quire_tls_describe_leaf(chain[0], out);
    for (unsigned int index = 0; index < count; index++) gnutls_x509_crt_deinit(chain[index]);
    gnutls_free(chain);

    gnutls_x509_privkey_t parsed;
    if ((*error = gnutls_x509_privkey_init(&parsed)) < 0) return QUIRE_TLS_MEMORY;
    *error = gnutls_x509_privkey_import2(parsed, &key, GNUTLS_X509_FMT_PEM, password, 0);
    gnutls_x509_privkey_deinit(parsed);
    if (*error < 0) return QUIRE_TLS_KEY;

    if ((*error = gnutls_certificate_allocate_credentials(&out->credentials)) < 0) return QUIRE_TLS_MEMORY;
    *error = gnutls_certificate_set_x509_key_mem2(out->credentials, &certificate, &key, GNUTLS_X509_FMT_PEM,
                                                  password, 0);
    if (*error < 0) {
        gnutls_certificate_free_credentials(out->credentials);
        out->credentials = NULL;
        return QUIRE_TLS_PAIR;
    }
    *error = 0;
    return QUIRE_TLS_OK;
}

int quire_tls_check_priorities(const char *priorities, int *error_offset) {
    gnutls_priority_t cache;
    const char *error_position = NULL;
    int result = gnutls_priority_init(&cache, priorities, &error_position);
    *error_offset = error_position ? (int) (error_position - priorities) : -1;
    if (result == 0) gnutls_priority_deinit(cache);
    return result;
}

/** libmicrohttpd's fallback certificate callback: refuses the handshake (see
 * quire_tls_refusing_certificate_callback). */
static int quire_tls_refuse_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                                        const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                                        gnutls_pcert_st **pcert, unsigned int *pcert_length,
                                        gnutls_privkey_t *privkey) {
    (void) session; (void) req_ca_rdn; (void) nreqs; (void) pk_algos; (void) pk_algos_length;
    *pcert = NULL;
    *pcert_length = 0;
    *privkey = NULL;
    return -1;
}

void *quire_tls_refusing_certificate_callback(void) {
    return (void *) &quire_tls_refuse_certificate;
}

gnutls_datum_t *quire_tls_ticket_key_new(void) {
    gnutls_datum_t *key = calloc(1, sizeof *key);
    if (NULL == key) return NULL;
    if (gnutls_session_ticket_key_generate(key) < 0) {
        free(key);
        return NULL;
    }
    return key;
}

void quire_tls_ticket_key_free(gnutls_datum_t *key) {
    if (NULL == key) return;
    gnutls_memset(key->data, 0, key->size);
    gnutls_free(key->data);
    free(key);
}

/** The GnuTLS session of a libmicrohttpd connection, or NULL. */
static gnutls_session_t quire_tls_session_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    return NULL == info ? NULL : (gnutls_session_t) info->tls_session;
}

/* ---- What Quire keeps per TLS connection. ---- */

struct quire_tls_connection *quire_tls_connection_new(void *credentials, int socket) {
    struct quire_tls_connection *state = calloc(1, sizeof *state);
    if (NULL == state) return NULL;
    state->credentials = credentials;
    state->socket = socket;
    return state;
}

void *quire_tls_connection_free(struct quire_tls_connection *state) {
    void *credentials = state->credentials;
    free(state->kept);
    free(state);
    return credentials;
}

/* ---- One read per record. ----
 *
 * GnuTLS reads a record in two system calls: its 5-byte header, then exactly the rest. quire_tls_pull, the
 * pull function of every TLS connection, reads what the socket holds (up to QUIRE_TLS_READ_AHEAD bytes) in one
 * call instead, hands GnuTLS what it asks for and keeps the rest in the connection's state for its next ask:
 * a request in one record costs one read.
 *
 * Kept bytes are never stranded. With libmicrohttpd's edge-triggered epoll, a TLS connection stays read-ready
 * until a read answers EAGAIN (it does not take a short read as the end, as it does for plain sockets), and
 * quire_tls_pull answers EAGAIN only when it keeps nothing: kept bytes are read like bytes still in the socket.
 * A resumed connection is marked read-ready by libmicrohttpd. */

/** The most a read takes from the socket: a full record (16 KiB of data and GnuTLS's allowance). */
#define QUIRE_TLS_READ_AHEAD (16384 + 512)

/** GnuTLS's pull function for a connection whose state is `pointer`: kept bytes first, else one read. */
static ssize_t quire_tls_pull(gnutls_transport_ptr_t pointer, void *data, size_t size) {
    struct quire_tls_connection *state = pointer;
    if (state->kept_length > 0) {
        const size_t count = size < state->kept_length ? size : state->kept_length;
        memcpy(data, state->kept + state->kept_offset, count);
        state->kept_offset += count;
        state->kept_length -= count;
        if (0 == state->kept_length) {
            free(state->kept);
            state->kept = NULL;
            state->kept_offset = 0;
        }
        return (ssize_t) count;
    }
    /* Per thread: a connection is served by one libmicrohttpd thread, and the buffer is emptied before return. */
    static __thread unsigned char ahead[QUIRE_TLS_READ_AHEAD];
    const ssize_t received = recv(state->socket, ahead, sizeof ahead, 0);
    if (received <= 0) return received;
    const size_t count = (size_t) received < size ? (size_t) received : size;
    memcpy(data, ahead, count);
    const size_t rest = (size_t) received - count;
    if (rest > 0) {
        unsigned char *kept = malloc(rest);
        if (NULL == kept) {
            /* The rest cannot be kept, and it has left the socket: the connection cannot go on. */
            errno = ENOMEM;
            return -1;
        }
        memcpy(kept, ahead + count, rest);
        state->kept = kept;
        state->kept_offset = 0;
        state->kept_length = rest;
    }
    return (ssize_t) count;
}

/** GnuTLS's wait for data on a connection whose state is `pointer` (used where GnuTLS blocks with a timeout):
 * ready at once when bytes are kept, else the socket's own readiness. */
static int quire_tls_pull_timeout(gnutls_transport_ptr_t pointer, unsigned int milliseconds) {
    struct quire_tls_connection *state = pointer;
    if (state->kept_length > 0) return 1;
    struct pollfd ready = { state->socket, POLLIN, 0 };
    const int timeout = GNUTLS_INDEFINITE_TIMEOUT == milliseconds ? -1 : (int) milliseconds;
    return poll(&ready, 1, timeout);
}

/** The credentials and tickets of a new connection, and its reads through quire_tls_pull. */
int quire_tls_prepare_connection(struct MHD_Connection *connection, struct quire_tls_connection *state,
                                 gnutls_certificate_credentials_t credentials, const gnutls_datum_t *ticket_key) {
    gnutls_session_t session = quire_tls_session_of(connection);
    if (NULL == session || state->socket < 0) return GNUTLS_E_INVALID_REQUEST;
    state->session = session;
    /* The receiving side's pointer is the state; the sending side's stays the socket, as libmicrohttpd set it. */
    gnutls_transport_ptr_t receiving = NULL, sending = NULL;
    gnutls_transport_get_ptr2(session, &receiving, &sending);
    gnutls_transport_set_ptr2(session, state, sending);
    gnutls_transport_set_pull_function(session, quire_tls_pull);
    gnutls_transport_set_pull_timeout_function(session, quire_tls_pull_timeout);
    int result = gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, credentials);
    if (result < 0 || NULL == ticket_key) return result;
    return gnutls_session_ticket_enable_server(session, ticket_key);
}

/* ---- One record per response. ----
 *
 * libmicrohttpd 0.9.75 hands GnuTLS a response's header and its body in two calls, so they leave as two TLS
 * records, in two TCP segments (the header is pushed alone), and a client decrypts, reads and wakes twice.
 * Corked, GnuTLS holds both and quire_tls_flush, called from the completion callback (libmicrohttpd calls
 * it before it shuts a connection down), sends them as one record in one segment.
 *
 * The hazard of a cork is a flush that meets a full send buffer: GnuTLS keeps the rest and nothing would send
 * it. So a response is corked only when it is small and the socket's send buffer has room for it twice over
 * (a client that sends requests and does not read fills it, and is then answered uncorked); a flush that
 * still meets a full buffer (memory pressure) waits for room, bounded, and else drops the connection.
 *
 * System calls are most of what TLS adds to a small request, so the cork and its flush make none of their
 * own in the steady state: the send buffer's room is asked once
 * and then spent by the responses corked after it (room only grows as the client reads; a response sent
 * uncorked, too large or a stream, is not counted, so the next cork asks again), and the socket's TCP_CORK is
 * taken off once, so that a flush's one send leaves at once. */

/** The largest response (header and body) sent corked: one record (GnuTLS's records carry 16 KiB). */
#define QUIRE_TLS_CORK_MAX_BYTES 12288
/** What a response's header is reckoned at, beside its body. */
#define QUIRE_TLS_HEADER_ALLOWANCE 1024
/** Corks between two questions to the kernel at most, whatever room is left (its send buffer can shrink under
 * memory pressure). */
#define QUIRE_TLS_CORKS_PER_CHECK 64

/**
 * The room in the send buffer is reckoned as the kernel counts it (its `sk_wmem_queued` and `sk_sndbuf`, the two
 * it compares before taking a write): one `SO_MEMINFO` call, whose answer then serves the next responses until
 * their bytes have used the room it found.
 */
int quire_tls_cork(struct quire_tls_connection *state, size_t body_bytes) {
    const int socket = state->socket;
    if (socket < 0 || NULL == state->session) return 0;
    if (body_bytes > QUIRE_TLS_CORK_MAX_BYTES - QUIRE_TLS_HEADER_ALLOWANCE) {
        /* Sent uncorked, and not counted: the room found before is no longer known. */
        state->corks_left = 0;
        return 0;
    }
    const size_t bytes = body_bytes + QUIRE_TLS_HEADER_ALLOWANCE;
    /* Twice the bytes and a page: the kernel counts a segment's bookkeeping against the buffer too. */
    const int64_t needed = 2 * (int64_t) bytes + 4096;
    if (state->corks_left <= 0 || state->cork_budget < needed) {
        uint32_t memory[SK_MEMINFO_VARS] = { 0 };
        socklen_t length = sizeof memory;
        state->corks_left = 0;
        state->cork_budget = 0;
        if (getsockopt(socket, SOL_SOCKET, SO_MEMINFO, memory, &length) != 0 || length < sizeof memory) return 0;
        state->cork_budget = (int64_t) memory[SK_MEMINFO_SNDBUF] - (int64_t) memory[SK_MEMINFO_WMEM_QUEUED];
        state->corks_left = QUIRE_TLS_CORKS_PER_CHECK;
        if (state->cork_budget < needed) return 0;
    }
    state->cork_budget -= 2 * (int64_t) bytes;
    state->corks_left -= 1;
    gnutls_record_cork(state->session);
    return 1;
}

void quire_tls_uncorked(struct quire_tls_connection *state) {
    state->corks_left = 0;
}

int quire_tls_flush(struct quire_tls_connection *state, int wait_ms) {
    if (NULL == state->session) return 0;
    const int socket = state->socket;
    gnutls_session_t session = state->session;
    if (socket >= 0 && !state->socket_uncorked) {
        /* libmicrohttpd corks the socket (TCP_CORK) before the first header it does not push and never uncorks
         * it over TLS: it pushes each response with TCP_NODELAY after its last send, here before the bytes it
         * thought it sent. Taken off once, the cork no longer holds this flush's send (the socket has
         * TCP_NODELAY from its acceptance), which then leaves at once with no system call of its own; and
         * libmicrohttpd, which believes the socket still corked, never sets it again. */
        const int off = 0;
        (void) setsockopt(socket, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
        state->socket_uncorked = 1;
    }
    for (int waited = 0;; waited += 10) {
        int result = gnutls_record_uncork(session, 0);
        if (result >= 0) return 0;
        if (result != GNUTLS_E_AGAIN && result != GNUTLS_E_INTERRUPTED) return result;
        if (waited >= wait_ms || socket < 0) break;
        struct pollfd ready = { socket, POLLOUT, 0 };
        (void) poll(&ready, 1, 10);
    }
    if (socket >= 0) shutdown(socket, SHUT_RDWR);
    return GNUTLS_E_AGAIN;
}

/* ---- The client side: `quire health` and the tests' HTTPS connections. ---- */

int quire_tls_client_start(struct quire_tls_client *client, int socket, const char *ca_file, const char *host,
                           int host_is_name, char *message, size_t capacity) {
    int result;
    message[0] = 0;
    memset(client, 0, sizeof *client);
    if ((result = gnutls_certificate_allocate_credentials(&client->credentials)) < 0) return result;
    result = ca_file ? gnutls_certificate_set_x509_trust_file(client->credentials, ca_file, GNUTLS_X509_FMT_PEM)
                     : gnutls_certificate_set_x509_system_trust(client->credentials);
    if (result <= 0) {
        gnutls_certificate_free_credentials(client->credentials);
        return result < 0 ? result : GNUTLS_E_NO_CERTIFICATE_FOUND;
    }
    if ((result = gnutls_init(&client->session, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL)) < 0) {
        gnutls_certificate_free_credentials(client->credentials);
        return result;
    }
    gnutls_set_default_priority(client->session);
    gnutls_credentials_set(client->session, GNUTLS_CRD_CERTIFICATE, client->credentials);
    if (host_is_name) gnutls_server_name_set(client->session, GNUTLS_NAME_DNS, host, strlen(host));
    gnutls_session_set_verify_cert(client->session, host, 0);
    gnutls_transport_set_int(client->session, socket);
    do {
        result = gnutls_handshake(client->session);
    } while (result == GNUTLS_E_INTERRUPTED);
    if (result < 0) {
        if (result == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
            gnutls_datum_t text = { NULL, 0 };
            unsigned int status = gnutls_session_get_verify_cert_status(client->session);
            if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) == 0) {
                snprintf(message, capacity, "%.*s", (int) text.size, (const char *) text.data);
                gnutls_free(text.data);
            }
        }
        gnutls_deinit(client->session);
        gnutls_certificate_free_credentials(client->credentials);
        memset(client, 0, sizeof *client);
    }
    return result;
}

void quire_tls_client_end(struct quire_tls_client *client) {
    if (NULL == client->session) return;
    gnutls_bye(client->session, GNUTLS_SHUT_WR);
    gnutls_deinit(client->session);
    gnutls_certificate_free_credentials(client->credentials);
    memset(client, 0, sizeof *client);
}

void quire_tls_client_peer_serial(const struct quire_tls_client *client, char *out, size_t capacity) {
    unsigned int count = 0;
    out[0] = 0;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(client->session, &count);
    if (NULL == peers || 0 == count) return;
    gnutls_x509_crt_t leaf;
    if (gnutls_x509_crt_init(&leaf) < 0) return;
    if (gnutls_x509_crt_import(leaf, &peers[0], GNUTLS_X509_FMT_DER) == 0) {
        unsigned char serial[40];
        size_t serial_size = sizeof serial;
        if (gnutls_x509_crt_get_serial(leaf, serial, &serial_size) == 0) {
            quire_tls_hex(serial, serial_size, out, capacity);
        }
    }
    gnutls_x509_crt_deinit(leaf);
}

const char *quire_tls_client_protocol(const struct quire_tls_client *client) {
    const char *name = gnutls_protocol_get_name(gnutls_protocol_get_version(client->session));
    return name ? name : "";
}
