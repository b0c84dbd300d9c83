#ifndef QUIRE_FRAMING_H
#define QUIRE_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Strict request framing (RFC 9110 §5, RFC 9112 §3.2, §5, §6), checked once per request when its headers
 * have arrived, before any body byte is read. libmicrohttpd 0.9.75 accepts what the RFCs tell a server to
 * refuse: differing duplicate Content-Length, whitespace or control characters in a field name, HTTP/1.1
 * without Host, control characters (NUL included) in a field value, obsolete line folding, and a
 * Transfer-Encoding it does not know (it then reads the body until the client closes, so the request
 * hangs). Each of these is how a request is smuggled past a proxy that frames it differently.
 *
 * Written in C because it runs on every request (the read path is held to the cost of a C server on
 * libmicrohttpd) and walks bytes without allocating.
 *
 * Two refusals need libmicrohttpd's parsing as 0.9.75 does it (src/microhttpd/connection.c), in place in
 * the connection's read buffer:
 * - a value's length is its strlen, so a NUL cuts the value short: the bytes that follow it are still in
 *   the buffer, before the next field's name. A field's value must be followed by nothing but the
 *   NULs that replaced its line end (CR LF, or a bare LF, which RFC 9112 §2.2 lets a server accept and
 *   libmicrohttpd does) and then the next field's name;
 * - a folded line (obs-fold) makes libmicrohttpd copy the field's name elsewhere in its pool (and glue the
 *   continuation to the name): the name then no longer precedes its value in the buffer.
 * Fields are reported in the order they arrived, each name before its value, so these layout checks hold
 * for every well-formed request; the framing tests send both kinds of line ends and every refusal.
 */

struct MHD_Connection;

enum quire_framing_refusal {
    QUIRE_FRAMING_OK = 0,
    /** Two Content-Length fields with different values (RFC 9112 §6.3). */
    QUIRE_FRAMING_DUPLICATE_CONTENT_LENGTH = 1,
    /** A field name with whitespace (before the colon, too), a control character or another non-token
     * byte (RFC 9110 §5.1, RFC 9112 §5.1). */
    QUIRE_FRAMING_INVALID_FIELD_NAME = 2,
    /** A control character, NUL included, in a field value (RFC 9110 §5.5). */
    QUIRE_FRAMING_INVALID_FIELD_VALUE = 3,
    /** An obsolete line folding (RFC 9112 §5.2). */
    QUIRE_FRAMING_OBSOLETE_LINE_FOLDING = 4,
    /** HTTP/1.1 without Host, or more than one Host (RFC 9112 §3.2). */
    QUIRE_FRAMING_HOST = 5,
    /** Transfer-Encoding together with Content-Length (RFC 9112 §6.1: a server may refuse; it is the
     * classic smuggling pair, so it does). */
    QUIRE_FRAMING_CONTENT_LENGTH_WITH_TRANSFER_ENCODING = 6,
    /** Transfer-Encoding given twice, chunked more than once, or in an HTTP/1.0 request (RFC 9112 §6.1). */
    QUIRE_FRAMING_INVALID_TRANSFER_ENCODING = 7,
    /** A transfer coding the server does not implement (anything but chunked): 501 (RFC 9112 §6.1). */
    QUIRE_FRAMING_UNKNOWN_TRANSFER_CODING = 8,
};

/**
 * The fields the server reads itself, as the scan found them: pointers into libmicrohttpd's copy of the
 * request (valid until the request completes), NULL when the request has no such field or the scan stopped
 * at a refusal before it. Found in the scan that checks the framing, so that no second walk over the fields
 * looks them up.
 */
struct quire_framing_fields {
    /** The Content-Length field's value (any duplicates are equal, or the request is refused). */
    const char *content_length;
    size_t content_length_size;
    /** The first X-Request-Id field's value. */
    const char *request_id;
    size_t request_id_size;
    /** The first Accept-Encoding field's value, and how many such fields there are. */
    const char *accept_encoding;
    size_t accept_encoding_size;
    unsigned int accept_encodings;
    /** The first If-None-Match field's value, and how many such fields there are. */
    const char *if_none_match;
    size_t if_none_match_size;
    unsigned int if_none_matches;
    /** How many Content-Encoding fields there are. */
    unsigned int content_encodings;
    /** The bytes the request's header fields, and its query items, take as records (quire_fields_copy). */
    size_t header_bytes;
    size_t query_bytes;
};

/**
 * Checks the framing of the request whose headers have arrived on `connection` (call it on the access
 * handler's first call), and fills `fields`. `http11`: the request line said HTTP/1.1. The last-reported
 * value of the request's last field is followed by the empty line's NULs in the buffer, which the scan
 * checks too.
 */
enum quire_framing_refusal quire_framing_check(
    struct MHD_Connection *connection, bool http11, struct quire_framing_fields *fields);


/**
 * A request's header fields and query items (as libmicrohttpd decoded them) as records in one buffer, in the
 * order they arrived: the name's size and the value's size as two native uint32_t, then the name's bytes, then
 * the value's (a query item without `=` has a value of 0 bytes). One buffer holds what libmicrohttpd keeps in its
 * connection's memory only until the request completes.
 *
 * The framing scan gives the bytes each kind's records take (`header_bytes`, `query_bytes`). quire_fields_copy writes the header fields' records from
 * `buffer` and the query items' from `buffer + header_capacity`, in one walk, each kind stopping before a record
 * that does not fit in its capacity, and gives the bytes written of each.
 */
static inline size_t quire_fields_record_size(size_t name_size, size_t value_size) {
    return 2 * sizeof(uint32_t) + name_size + value_size;
}
void quire_fields_copy(
    struct MHD_Connection *connection, unsigned char *buffer, size_t header_capacity, size_t query_capacity,
    size_t *header_written, size_t *query_written);
/**
 * libmicrohttpd's unescape callback (MHD_OPTION_UNESCAPE_CALLBACK): what its default does (`MHD_http_unescape`,
 * `%HH` sequences decoded in place), with the bytes before the first `%` left where they are without being copied
 * onto themselves one by one. Most paths and query items have no `%`: found with one `strchrnul`.
 * Returns the length of the unescaped text.
 */
size_t quire_unescape(void *cls, struct MHD_Connection *connection, char *text);

/*
 * One pointer per thread for QuireHTTP's ThreadRequestCache: what a libmicrohttpd thread keeps from one request
 * for the next. A C thread-local variable read through a plain call: Swift has no thread-locals, and
 * pthread_getspecific behind a lazily made key would cost every request the key's `swift_once` and a call
 * through libc, where this is a load.
 */

/** The calling thread's pointer, or NULL when none was set. */
void *quire_thread_request_cache(void);

/**
 * Sets the calling thread's pointer (once per thread: it must be NULL), and has `release` called with it when
 * the thread ends. Returns 0, or an errno when the thread's end cannot be told (the pointer is set all the same).
 */
int quire_thread_set_request_cache(void *cache, void (*release)(void *cache));

#endif
