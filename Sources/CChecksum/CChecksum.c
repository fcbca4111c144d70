#include "CChecksum.h"

#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const unsigned char *p, size_t n) {
  uint64_t wide = crc;
  while (n >= 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    wide = _mm_crc32_u64(wide, word);
    p += 8;
    n -= 8;
  }
  crc = (uint32_t)wide;
  while (n > 0) {
    crc = _mm_crc32_u8(crc, *p++);
    n--;
  }
  return crc;
}

int cchecksum_crc32c(uint32_t *state, const void *bytes, size_t count) {
  static int supported = -1;
  if (supported < 0) {
    __builtin_cpu_init();
    supported = __builtin_cpu_supports("sse4.2") ? 1 : 0;
  }
  if (!supported) return 0;
  *state = crc32c_sse42(*state, (const unsigned char *)bytes, count);
  return 1;
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

int cchecksum_crc32c(uint32_t *state, const void *bytes, size_t count) {
  const unsigned char *p = (const unsigned char *)bytes;
  uint32_t crc = *state;
  while (count >= 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    crc = __crc32cd(crc, word);
    p += 8;
    count -= 8;
  }
  while (count > 0) {
    crc = __crc32cb(crc, *p++);
    count--;
  }
  *state = crc;
  return 1;
}

#else

int cchecksum_crc32c(uint32_t *state, const void *bytes, size_t count) {
  (void)state;
  (void)bytes;
  (void)count;
  return 0;
}

#endif
