#ifndef QUIRE_MICROHTTPD_FRAMING_H
#define QUIRE_MICROHTTPD_FRAMING_H

/*
 * Strict request framing (RFC 9110 §5, RFC 9112 §3.2, §5, §6), checked once per request when its headers
 * have arrived, before any body byte is read. libmicrohttpd 0.9.75 accepts what the RFCs tell a server to
 * refuse: differing duplicate Content-Length, whitespace or control characters in a field name, HTTP/1.1
 * without Host, control characters (NUL included) in a field value, obsolete line folding, and a
 * Transfer-Encoding it does not know (it then reads the body until the client closes, so the request
 * hangs). Each of these is how a request is smuggled past a proxy that frames it differently.
 *
 * Written in C because it runs on every request (the read path's cost is measured against a C server) and
 * walks bytes without allocating.
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
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <microhttpd.h>

/** Why a request's framing is refused; 0 when it is not. */
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

/** What one pass over the fields finds. */
struct quire_framing_scan {
    enum quire_framing_refusal refusal;
    /** The previous field, for the layout checks. */
    const char *previous_value_end;
    const char *previous_name;
    unsigned int hosts;
    unsigned int content_lengths;
    const char *content_length;
    size_t content_length_size;
    unsigned int transfer_encodings;
    /** The one Transfer-Encoding field, when there is one. */
    const char *transfer_encoding;
    size_t transfer_encoding_size;
};

/** RFC 9110 §5.6.2 tchar. */
static inline bool quire_framing_is_tchar(unsigned char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return NULL != memchr("!#$%&'*+-.^_`|~", c, 15) && c != 0;
}

static inline bool quire_framing_equal_caseless(const char *text, size_t size, const char *literal) {
    return strlen(literal) == size && 0 == strncasecmp(text, literal, size);
}

/** Whether the bytes between the end of the previous value and this field's name are only the NULs of a
 * line end: one (bare LF) or two (CR LF). */
static inline bool quire_framing_line_end_only(const char *from, const char *to) {
    if (to <= from || to - from > 2) return false;
    for (const char *p = from; p < to; p++) {
        if (0 != *p) return false;
    }
    return true;
}

static enum MHD_Result quire_framing_visit(
    void *cls, enum MHD_ValueKind kind, const char *name, size_t name_size, const char *value, size_t value_size) {
    (void) kind;
    struct quire_framing_scan *scan = (struct quire_framing_scan *) cls;
    if (NULL == name || 0 == name_size) {
        scan->refusal = QUIRE_FRAMING_INVALID_FIELD_NAME;
        return MHD_NO;
    }
    for (size_t i = 0; i < name_size; i++) {
        if (!quire_framing_is_tchar((unsigned char) name[i])) {
            scan->refusal = QUIRE_FRAMING_INVALID_FIELD_NAME;
            return MHD_NO;
        }
    }
    if (NULL == value) value = name + name_size + 1;  /* not reached with 0.9.75: a value is never NULL */
    /* The layout: this name after the previous field's line end, this value after this name. */
    if (value <= name || (NULL != scan->previous_name && name <= scan->previous_name)) {
        scan->refusal = QUIRE_FRAMING_OBSOLETE_LINE_FOLDING;
        return MHD_NO;
    }
    if (NULL != scan->previous_value_end && !quire_framing_line_end_only(scan->previous_value_end, name)) {
        scan->refusal = QUIRE_FRAMING_INVALID_FIELD_VALUE;  /* a NUL cut the previous value short */
        return MHD_NO;
    }
    for (size_t i = 0; i < value_size; i++) {
        const unsigned char c = (unsigned char) value[i];
        if ((c < 0x20 && c != '\t') || c == 0x7F) {
            scan->refusal = QUIRE_FRAMING_INVALID_FIELD_VALUE;
            return MHD_NO;
        }
    }
    scan->previous_name = name;
    scan->previous_value_end = value + value_size;
    if (quire_framing_equal_caseless(name, name_size, "Host")) {
        scan->hosts++;
    } else if (quire_framing_equal_caseless(name, name_size, "Content-Length")) {
        if (0 != scan->content_lengths &&
            (value_size != scan->content_length_size || 0 != memcmp(value, scan->content_length, value_size))) {
            scan->refusal = QUIRE_FRAMING_DUPLICATE_CONTENT_LENGTH;
            return MHD_NO;
        }
        scan->content_lengths++;
        scan->content_length = value;
        scan->content_length_size = value_size;
    } else if (quire_framing_equal_caseless(name, name_size, "Transfer-Encoding")) {
        scan->transfer_encodings++;
        scan->transfer_encoding = value;
        scan->transfer_encoding_size = value_size;
    }
    return MHD_YES;
}

/** The codings of a Transfer-Encoding value other than chunked (a comma-separated list, RFC 9112 §6.1):
 * whether there is one, and how many times chunked appears. */
static inline void quire_framing_codings(const char *value, size_t size, bool *other, unsigned int *chunked) {
    size_t i = 0;
    while (i <= size) {
        size_t start = i;
        while (i < size && value[i] != ',') i++;
        size_t end = i;
        while (start < end && (value[start] == ' ' || value[start] == '\t')) start++;
        while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t')) end--;
        if (end > start) {
            if (quire_framing_equal_caseless(value + start, end - start, "chunked")) {
                (*chunked)++;
            } else {
                *other = true;
            }
        }
        i++;
    }
}

/**
 * Checks the framing of the request whose headers have arrived on `connection` (call it on the access
 * handler's first call). `http11`: the request line said HTTP/1.1. The last-reported value of the
 * request's last field is followed by the empty line's NULs in the buffer, which the scan checks too.
 */
static inline enum quire_framing_refusal quire_framing_check(struct MHD_Connection *connection, bool http11) {
    struct quire_framing_scan scan;
    memset(&scan, 0, sizeof scan);
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, &quire_framing_visit, &scan);
    if (QUIRE_FRAMING_OK != scan.refusal) return scan.refusal;
    /* The last field: its line end, then the empty line (CR LF or LF), all NULs by now. */
    if (NULL != scan.previous_value_end && (0 != scan.previous_value_end[0] || 0 != scan.previous_value_end[1])) {
        return QUIRE_FRAMING_INVALID_FIELD_VALUE;
    }
    if ((http11 && 0 == scan.hosts) || scan.hosts > 1) return QUIRE_FRAMING_HOST;
    if (0 == scan.transfer_encodings) return QUIRE_FRAMING_OK;
    if (!http11) return QUIRE_FRAMING_INVALID_TRANSFER_ENCODING;
    if (scan.transfer_encodings > 1) {
        /* libmicrohttpd reads only the first field, a proxy may read the last or join them: refused. */
        return QUIRE_FRAMING_INVALID_TRANSFER_ENCODING;
    }
    bool other = false;
    unsigned int chunked = 0;
    quire_framing_codings(scan.transfer_encoding, scan.transfer_encoding_size, &other, &chunked);
    if (other) return QUIRE_FRAMING_UNKNOWN_TRANSFER_CODING;
    if (0 != scan.content_lengths) return QUIRE_FRAMING_CONTENT_LENGTH_WITH_TRANSFER_ENCODING;
    /* Exactly the one token libmicrohttpd compares with: "chunked", nothing around it. */
    if (1 != chunked || !quire_framing_equal_caseless(scan.transfer_encoding, scan.transfer_encoding_size, "chunked")) {
        return QUIRE_FRAMING_INVALID_TRANSFER_ENCODING;
    }
    return QUIRE_FRAMING_OK;
}

#endif
