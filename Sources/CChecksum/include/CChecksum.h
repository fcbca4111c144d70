#ifndef CCHECKSUM_H
#define CCHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C (Castagnoli) with the processor's own instruction: SSE4.2 `crc32` on x86-64 (checked
   at run time), the ARMv8 CRC32 extension on arm64 when the compiler targets it. `*state` is the
   running register (the checksum's bitwise complement, as in the table code) and is updated.
   Returns 1 when it did the work, 0 when this processor has no such instruction (then `*state`
   is untouched and the caller uses its tables). */
int cchecksum_crc32c(uint32_t *state, const void *bytes, size_t count);

#endif
