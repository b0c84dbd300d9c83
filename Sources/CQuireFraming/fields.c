/*
 * A request's header fields and query items copied into one buffer of records (quire_framing.h,
 * quire_fields_size and quire_fields_copy). In C: it runs on every request, once per field, as libmicrohttpd's
 * callback; the Swift side decodes a field into strings only when a handler looks it up.
 */
#include <stdint.h>
#include <string.h>
#include <microhttpd.h>
#include "quire_framing.h"

struct quire_fields_copying {
    unsigned char *next;
    unsigned char *end;
};

static inline size_t quire_fields_record_size(size_t name_size, size_t value_size) {
    return 2 * sizeof(uint32_t) + name_size + value_size;
}

static enum MHD_Result quire_fields_count(
    void *cls, enum MHD_ValueKind kind, const char *name, size_t name_size, const char *value, size_t value_size) {
    (void) kind;
    (void) name;
    *(size_t *) cls += quire_fields_record_size(name_size, NULL == value ? 0 : value_size);
    return MHD_YES;
}

static enum MHD_Result quire_fields_write(
    void *cls, enum MHD_ValueKind kind, const char *name, size_t name_size, const char *value, size_t value_size) {
    (void) kind;
    struct quire_fields_copying *copying = (struct quire_fields_copying *) cls;
    if (NULL == value) value_size = 0;
    const size_t size = quire_fields_record_size(name_size, value_size);
    if (name_size > UINT32_MAX || value_size > UINT32_MAX || (size_t) (copying->end - copying->next) < size) {
        return MHD_NO;
    }
    const uint32_t sizes[2] = {(uint32_t) name_size, (uint32_t) value_size};
    memcpy(copying->next, sizes, sizeof sizes);
    copying->next += sizeof sizes;
    if (0 != name_size) memcpy(copying->next, name, name_size);
    copying->next += name_size;
    if (0 != value_size) memcpy(copying->next, value, value_size);
    copying->next += value_size;
    return MHD_YES;
}

size_t quire_fields_size(struct MHD_Connection *connection, int kind) {
    size_t size = 0;
    MHD_get_connection_values_n(connection, (enum MHD_ValueKind) kind, &quire_fields_count, &size);
    return size;
}

size_t quire_fields_copy(struct MHD_Connection *connection, int kind, unsigned char *buffer, size_t capacity) {
    struct quire_fields_copying copying = {buffer, buffer + capacity};
    MHD_get_connection_values_n(connection, (enum MHD_ValueKind) kind, &quire_fields_write, &copying);
    return (size_t) (copying.next - buffer);
}
