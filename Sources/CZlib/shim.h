#ifndef QUIRE_ZLIB_SHIM_H
#define QUIRE_ZLIB_SHIM_H

/*
 * zlib for QuireHTTP: deflateInit2 and inflateInit2 are macros (they pass the library's version and the
 * stream's size), which Swift cannot call; these `static inline` functions, prefixed `quire_z_`, can.
 */
#include <zlib.h>

static inline int quire_z_deflate_init(z_streamp stream, int level, int window_bits, int memory_level) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, memory_level, Z_DEFAULT_STRATEGY);
}

static inline int quire_z_inflate_init(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

#endif
