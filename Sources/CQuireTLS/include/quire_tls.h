#ifndef QUIRE_TLS_H
#define QUIRE_TLS_H

/*
 * The GnuTLS side of HTTPS, for QuireHTTP: loading and checking a certificate chain and its key, the
 * credentials each new TLS connection handshakes with (so that a reloaded certificate serves every
 * later handshake while open connections keep theirs), a read per record and a record per response on
 * every TLS connection, session-ticket keys, and a small TLS client for `quire health` and the tests.
 * libmicrohttpd (Debian's build) links the same GnuTLS. The functions are in tls.c, prefixed `quire_tls_`.
 *
 * GnuTLS's own header comes with this one: QuireHTTP calls a few of its functions directly
 * (gnutls_strerror, gnutls_record_send and gnutls_record_recv on a client's session).
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <gnutls/gnutls.h>

struct MHD_Connection;

/* ---- Certificates and keys. ---- */

/** Where loading a certificate and key failed. */
enum quire_tls_stage {
    QUIRE_TLS_OK = 0,
    QUIRE_TLS_CERTIFICATE = 1, /* the certificate file holds no readable PEM certificate */
    QUIRE_TLS_KEY = 2,         /* the key file holds no readable PEM private key (or the password is wrong) */
    QUIRE_TLS_PAIR = 3,        /* GnuTLS refused the pair (the key does not match the certificate, …) */
    QUIRE_TLS_MEMORY = 4,
};

/** A loaded certificate chain and key, ready for handshakes, and what the logs say of its leaf. */
struct quire_tls_loaded {
    gnutls_certificate_credentials_t credentials;
    time_t not_before;
    time_t not_after;
    unsigned int chain_length;
    char serial[80];   /* hex, lower case */
    char subject[512]; /* RFC 4514 */
};

/**
 * Parses a PEM certificate chain (leaf first) and a PEM private key (optionally encrypted with
 * `password`, NULL for none) and builds credentials from them. Returns QUIRE_TLS_OK and fills `out`
 * (whose credentials the caller frees with gnutls_certificate_free_credentials), or the stage that
 * failed with its GnuTLS error code in `*error`.
 */
enum quire_tls_stage quire_tls_load(const unsigned char *certificate_pem, unsigned int certificate_size,
                                    const unsigned char *key_pem, unsigned int key_size, const char *password,
                                    struct quire_tls_loaded *out, int *error);

/** Checks a GnuTLS priority string. Returns 0, or a GnuTLS error with the offset of the bad part. */
int quire_tls_check_priorities(const char *priorities, int *error_offset);

/** libmicrohttpd's fallback certificate callback (MHD_OPTION_HTTPS_CERT_CALLBACK, a GnuTLS
 * `gnutls_certificate_retrieve_function2`), which refuses the handshake. Every connection is given the current
 * credentials when it starts (`quire_tls_prepare_connection`), so it runs only for a connection that could not
 * be, which is then refused rather than served with anything else. */
void *quire_tls_refusing_certificate_callback(void);

/** A session-ticket key (for resumption), or NULL. Free it with `quire_tls_ticket_key_free`. */
gnutls_datum_t *quire_tls_ticket_key_new(void);

/** Wipes and frees a session-ticket key (NULL: nothing). */
void quire_tls_ticket_key_free(gnutls_datum_t *key);

/* ---- What Quire keeps per TLS connection. ----
 *
 * A TLS connection's context (QuireHTTP's `ConnectionContext`, in libmicrohttpd's socket context) holds one of
 * these from the connection's start to its close: the credentials it handshakes with (a retained Swift object,
 * released at close), and the state of its reads and of its cork (see tls.c). Plain HTTP connections hold
 * none. */
struct quire_tls_connection {
    void *credentials;
    /* The connection's GnuTLS session, looked up once (by quire_tls_prepare_connection). */
    gnutls_session_t session;
    /* Bytes of responses that may still be corked before the socket's send buffer is asked again (see
     * quire_tls_cork), and how many corks may still use it. */
    int64_t cork_budget;
    int corks_left;
    /* libmicrohttpd's TCP_CORK has been taken off the socket (see quire_tls_flush). */
    int socket_uncorked;
    /* The connection's socket (-1 when unknown): the pull function reads it, the cork and its flush write it. */
    int socket;
    /* Bytes read from the socket that GnuTLS has not asked for yet: `kept_length` of them from
     * `kept + kept_offset`. NULL when none. */
    unsigned char *kept;
    size_t kept_offset;
    size_t kept_length;
};

/** The state of a connection on `socket` holding `credentials`, or NULL when out of memory. */
struct quire_tls_connection *quire_tls_connection_new(void *credentials, int socket);

/** Frees a connection's state; returns the credentials it held, for the caller to release. */
void *quire_tls_connection_free(struct quire_tls_connection *state);

/**
 * Gives a new TLS connection the credentials it handshakes with, and session tickets with `ticket_key`
 * (NULL: none), keeps its GnuTLS session in `state`, and has GnuTLS read the state's socket a record at a
 * time (writes stay libmicrohttpd's). Called when libmicrohttpd announces the connection, on its worker
 * thread, before any byte of the handshake. Returns 0 or a GnuTLS error.
 */
int quire_tls_prepare_connection(struct MHD_Connection *connection, struct quire_tls_connection *state,
                                 gnutls_certificate_credentials_t credentials, const gnutls_datum_t *ticket_key);

/**
 * Corks the connection's TLS session for a response whose body is `body_bytes` long, when the response is
 * small and the socket's send buffer has room for it twice over beside what it holds (see tls.c).
 * Returns 1 when corked: the caller then calls quire_tls_flush when the response is complete.
 */
int quire_tls_cork(struct quire_tls_connection *state, size_t body_bytes);

/**
 * A response is sent uncorked (an event stream): its bytes are not counted against the room found before, so
 * the next cork asks the kernel again rather than trust a room this response may have filled.
 */
void quire_tls_uncorked(struct quire_tls_connection *state);

/**
 * Sends what a corked session holds. Returns 0, or a GnuTLS error (the connection is closing anyway); after
 * `wait_ms` without room in the send buffer it shuts the socket down, so that the client sees the end of
 * the connection rather than waiting for bytes that will never come.
 */
int quire_tls_flush(struct quire_tls_connection *state, int wait_ms);

/* ---- The client side: `quire health` and the tests' HTTPS connections. ---- */

/** A client's TLS session over a connected, blocking socket. */
struct quire_tls_client {
    gnutls_session_t session;
    gnutls_certificate_credentials_t credentials;
};

/**
 * Handshakes as a client over `socket`, trusting the PEM certificates of `ca_file` (NULL: the system's),
 * checking that the server's certificate names `host` (a DNS name or an IP literal). Returns 0, or a
 * GnuTLS error (the client is then already released). A socket read timeout ends the handshake with
 * GNUTLS_E_AGAIN. On a verification failure `message` explains it.
 */
int quire_tls_client_start(struct quire_tls_client *client, int socket, const char *ca_file, const char *host,
                           int host_is_name, char *message, size_t capacity);

/** Sends close_notify (best effort) and releases the session. */
void quire_tls_client_end(struct quire_tls_client *client);

/** The serial number of the server's certificate (hex), or an empty string. */
void quire_tls_client_peer_serial(const struct quire_tls_client *client, char *out, size_t capacity);

/** The negotiated protocol's name ("TLS1.3"), never NULL. */
const char *quire_tls_client_protocol(const struct quire_tls_client *client);

#endif
