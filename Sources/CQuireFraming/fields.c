/*
 * A request's header fields and query items copied into one buffer of records (quire_framing.h,
 * quire_fields_copy). In C: the copy runs on every request, once per field, as libmicrohttpd's callback (one walk
 * for both kinds, sized by the framing scan); the Swift side decodes a field into strings only when a handler looks
 * it up.
 */
#include <stdint.h>
#include <string.h>
#include <microhttpd.h>
#include "quire_framing.h"

/** Where the next record of one kind goes, and where that kind's space ends. */
struct quire_fields_cursor {
    unsigned char *next;
    unsigned char *end;
};

struct quire_fields_copying {
    struct quire_fields_cursor headers;
    struct quire_fields_cursor query;
};

static enum MHD_Result quire_fields_write(
    void *cls, enum MHD_ValueKind kind, const char *name, size_t name_size, const char *value, size_t value_size) {
    struct quire_fields_copying *copying = (struct quire_fields_copying *) cls;
    struct quire_fields_cursor *cursor = MHD_GET_ARGUMENT_KIND == kind ? &copying->query : &copying->headers;
    if (NULL == value) value_size = 0;
    const size_t size = quire_fields_record_size(name_size, value_size);
    if (name_size > UINT32_MAX || value_size > UINT32_MAX || (size_t) (cursor->end - cursor->next) < size) {
        cursor->end = cursor->next;  /* full: this kind's later records are skipped too, never written out of order */
        return MHD_YES;
    }
    const uint32_t sizes[2] = {(uint32_t) name_size, (uint32_t) value_size};
    memcpy(cursor->next, sizes, sizeof sizes);
    cursor->next += sizeof sizes;
    if (0 != name_size) memcpy(cursor->next, name, name_size);
    cursor->next += name_size;
    if (0 != value_size) memcpy(cursor->next, value, value_size);
    cursor->next += value_size;
    return MHD_YES;
}

void quire_fields_copy(
    struct MHD_Connection *connection, unsigned char *buffer, size_t header_capacity, size_t query_capacity,
    size_t *header_written, size_t *query_written) {
    unsigned char *query = buffer + header_capacity;
    struct quire_fields_copying copying = {{buffer, query}, {query, query + query_capacity}};
    MHD_get_connection_values_n(
        connection, (enum MHD_ValueKind) (MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND), &quire_fields_write, &copying);
    *header_written = (size_t) (copying.headers.next - buffer);
    *query_written = (size_t) (copying.query.next - query);
}
