#ifndef STORAGE_EMULATOR_CZLIB_SHIM_H
#define STORAGE_EMULATOR_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro, which Swift cannot call: a function that opens a gzip stream.
static inline int se_inflate_init_gzip(z_stream *stream) {
  return inflateInit2(stream, 16 + MAX_WBITS);
}
#endif
