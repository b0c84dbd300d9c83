/*
 * The unescape callback of quire_framing.h. libmicrohttpd calls its default (a loop that copies every byte onto
 * itself until the end, decoding `%HH`) for the path and for every query item's name and value, a cost every
 * page request would pay. Everything before the first `%` is the same after decoding, so the default runs only
 * from there.
 */
#define _GNU_SOURCE
#include <string.h>
#include <microhttpd.h>
#include "quire_framing.h"

size_t quire_unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void) cls;
    (void) connection;
    char *escape = strchrnul(text, '%');
    const size_t plain = (size_t) (escape - text);
    if ('\0' == *escape) return plain;
    return plain + MHD_http_unescape(escape);
}
