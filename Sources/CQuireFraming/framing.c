/*
 * The framing checks of quire_framing.h. A C target of its own, not a `static inline` header of the
 * CMicroHTTPD system module: the importer compiles such header functions without loop vectorization or
 * inlining, and this runs over every byte of every request's header fields (a bearer token's few hundred
 * bytes included). Here SwiftPM compiles it with -O2 in release.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <microhttpd.h>
#include "quire_framing.h"


/** What one pass over the fields finds. */
struct quire_framing_scan {
    enum quire_framing_refusal refusal;
    /** The previous field, for the layout checks. */
    const char *previous_value_end;
    const char *previous_name;
    unsigned int hosts;
    unsigned int content_lengths;
    unsigned int transfer_encodings;
    /** The one Transfer-Encoding field, when there is one. */
    const char *transfer_encoding;
    size_t transfer_encoding_size;
    /** The fields the server reads itself (Content-Length, X-Request-Id, Accept-Encoding, …). */
    struct quire_framing_fields found;
};

/** RFC 9110 §5.6.2 tchar, as a table: one load a byte of every field name, where a switch would branch. */
static const bool quire_framing_tchars[256] = {
    ['a' ... 'z'] = true, ['A' ... 'Z'] = true, ['0' ... '9'] = true,
    ['!'] = true, ['#'] = true, ['$'] = true, ['%'] = true, ['&'] = true, ['\''] = true, ['*'] = true, ['+'] = true,
    ['-'] = true, ['.'] = true, ['^'] = true, ['_'] = true, ['`'] = true, ['|'] = true, ['~'] = true,
};

static inline bool quire_framing_is_tchar(unsigned char c) {
    return quire_framing_tchars[c];
}

static inline bool quire_framing_equal_caseless(const char *text, size_t size, const char *literal) {
    return strlen(literal) == size && 0 == strncasecmp(text, literal, size);
}

/** Whether a field name of `size` bytes, already checked to be tchars, is the one whose lowercase spelling is
 * `lowercase` (of the same size: the caller switched on it). Setting the 0x20 bit lowercases a letter; the only
 * other bytes it maps onto a letter or `-` (the bytes of the names looked for) are control characters, which are
 * no tchars. Cheaper than strlen and strncasecmp, which every field name would go through. */
static inline bool quire_framing_name_is(const char *name, const char *lowercase, size_t size) {
    for (size_t i = 0; i < size; i++) {
        if ((unsigned char) (name[i] | 0x20) != (unsigned char) lowercase[i]) return false;
    }
    return true;
}

/** The bytes of `word` that are a control character but horizontal tab, or DEL: 0x80 in each such byte, zero
 * elsewhere, exactly (each test is the exact zero-byte test of its own word, with no carry between bytes). */
static inline uint64_t quire_framing_bad_bytes(uint64_t word) {
    const uint64_t low = 0x7F7F7F7F7F7F7F7FULL;
    const uint64_t ones = 0x0101010101010101ULL;
#define QUIRE_ZERO_BYTES(x) (~((((x) & low) + low) | (x) | low))
    const uint64_t control = QUIRE_ZERO_BYTES(word & (0xE0 * ones));  /* below 0x20 */
    const uint64_t tab = QUIRE_ZERO_BYTES(word ^ (0x09 * ones));
    const uint64_t del = QUIRE_ZERO_BYTES(word ^ (0x7F * ones));
#undef QUIRE_ZERO_BYTES
    return (control & ~tab) | del;
}

/** No control character (NUL included) but horizontal tab in a field value (RFC 9110 §5.5). The whole 16-byte
 * blocks go through a loop with no early exit, which the compiler vectorizes (a bearer token of a few hundred
 * bytes is read 16 bytes a step instead of one compare-and-branch per byte); the last 15 bytes or fewer, all of
 * a short value such as `Host`'s, are read 8 at a time as words rather than a byte at a time. */
static inline bool quire_framing_value_is_clean(const char *value, size_t size) {
    const size_t blocks = size & ~(size_t) 15;
    unsigned char bad = 0;
    for (size_t i = 0; i < blocks; i++) {
        const unsigned char c = (unsigned char) value[i];
        bad |= (unsigned char) (((c < 0x20) & (c != '\t')) | (c == 0x7F));
    }
    uint64_t bad_bytes = 0;
    size_t i = blocks;
    uint64_t word;
    if (size - i >= 8) {
        memcpy(&word, value + i, 8);
        bad_bytes |= quire_framing_bad_bytes(word);
        i += 8;
    }
    if (i < size) {
        word = 0x2020202020202020ULL;  /* spaces past the end: clean */
        memcpy(&word, value + i, size - i);
        bad_bytes |= quire_framing_bad_bytes(word);
    }
    return 0 == bad && 0 == bad_bytes;
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

/** Counts a field the server reads by its first value, keeping that first value. */
static inline void quire_framing_keep_first(
    const char *value, size_t size, const char **first, size_t *first_size, unsigned int *count) {
    if (0 == (*count)++) {
        *first = value;
        *first_size = size;
    }
}

static enum MHD_Result quire_framing_visit(
    void *cls, enum MHD_ValueKind kind, const char *name, size_t name_size, const char *value, size_t value_size) {
    struct quire_framing_scan *scan = (struct quire_framing_scan *) cls;
    if (MHD_GET_ARGUMENT_KIND == kind) {  /* a query item: only its size, for the copy (quire_fields_copy) */
        scan->found.query_bytes += quire_fields_record_size(name_size, NULL == value ? 0 : value_size);
        return MHD_YES;
    }
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
    if (!quire_framing_value_is_clean(value, value_size)) {
        scan->refusal = QUIRE_FRAMING_INVALID_FIELD_VALUE;
        return MHD_NO;
    }
    scan->previous_name = name;
    scan->previous_value_end = value + value_size;
    scan->found.header_bytes += quire_fields_record_size(name_size, value_size);
    /* By length first: most names are told apart without comparing a byte. */
    switch (name_size) {
    case 4:
        if (quire_framing_name_is(name, "host", name_size)) scan->hosts++;
        break;
    case 12:
        if (NULL == scan->found.request_id && quire_framing_name_is(name, "x-request-id", name_size)) {
            scan->found.request_id = value;
            scan->found.request_id_size = value_size;
        }
        break;
    case 13:
        if (quire_framing_name_is(name, "if-none-match", name_size)) {
            quire_framing_keep_first(
                value, value_size, &scan->found.if_none_match, &scan->found.if_none_match_size,
                &scan->found.if_none_matches);
        }
        break;
    case 14:
        if (quire_framing_name_is(name, "content-length", name_size)) {
            if (0 != scan->content_lengths && (value_size != scan->found.content_length_size ||
                                               0 != memcmp(value, scan->found.content_length, value_size))) {
                scan->refusal = QUIRE_FRAMING_DUPLICATE_CONTENT_LENGTH;
                return MHD_NO;
            }
            scan->content_lengths++;
            scan->found.content_length = value;
            scan->found.content_length_size = value_size;
        }
        break;
    case 15:
        if (quire_framing_name_is(name, "accept-encoding", name_size)) {
            quire_framing_keep_first(
                value, value_size, &scan->found.accept_encoding, &scan->found.accept_encoding_size,
                &scan->found.accept_encodings);
        }
        break;
    case 16:
        if (quire_framing_name_is(name, "content-encoding", name_size)) scan->found.content_encodings++;
        break;
    case 17:
        if (quire_framing_name_is(name, "transfer-encoding", name_size)) {
            scan->transfer_encodings++;
            scan->transfer_encoding = value;
            scan->transfer_encoding_size = value_size;
        }
        break;
    default:
        break;
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
enum quire_framing_refusal quire_framing_check(
    struct MHD_Connection *connection, bool http11, struct quire_framing_fields *fields) {
    struct quire_framing_scan scan;
    memset(&scan, 0, sizeof scan);
    /* The query items too (libmicrohttpd parsed them from the request line, before the fields): their size. */
    MHD_get_connection_values_n(
        connection, (enum MHD_ValueKind) (MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND), &quire_framing_visit, &scan);
    *fields = scan.found;
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

