#include "CChecksum.h"

#include <string.h>

/* The loop both instructions share: 8 bytes a step, then the tail byte by byte. */
#define CRC32C_LOOP(crc, p, n, step64, step8) \
  do {                                          \
    while ((n) >= 8) {                          \
      uint64_t word;                            \
      memcpy(&word, (p), 8);                    \
      (crc) = step64((crc), word);              \
      (p) += 8;                                 \
      (n) -= 8;                                 \
    }                                           \
    while ((n) > 0) {                           \
      (crc) = step8((crc), *(p)++);             \
      (n)--;                                    \
    }                                           \
  } while (0)

#if defined(__x86_64__)
#include <nmmintrin.h>

#define SSE42_STEP64(crc, word) ((uint32_t)_mm_crc32_u64((crc), (word)))

__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const unsigned char *p, size_t n) {
  CRC32C_LOOP(crc, p, n, SSE42_STEP64, _mm_crc32_u8);
  return crc;
}

/* Whether the CPU has SSE4.2: -1 until the first call finds out. Threads may race to find out
   (they all store the same answer); the loads and stores are atomic, so that race is defined
   (ThreadSanitizer reported the plain int). */
static int crc32c_supported = -1;

int cchecksum_crc32c(uint32_t *state, const void *bytes, size_t count) {
  int supported = __atomic_load_n(&crc32c_supported, __ATOMIC_RELAXED);
  if (supported < 0) {
    __builtin_cpu_init();
    supported = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    __atomic_store_n(&crc32c_supported, supported, __ATOMIC_RELAXED);
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
  CRC32C_LOOP(crc, p, count, __crc32cd, __crc32cb);
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
