#define _GNU_SOURCE
#include "CFiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

int cfiles_exchange(const char *first, const char *second) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
  return renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE);
#elif defined(__APPLE__)
  return renamex_np(first, second, RENAME_SWAP);
#else
  /* No atomic swap on this system: replace `second` with `first` (atomic too, but `first` is
     then gone instead of holding the old contents, which the caller only removes anyway). */
  return rename(first, second);
#endif
}

#include <unistd.h>

long cfiles_copy_range(int in, int out, unsigned long count) {
#if defined(__linux__)
  return (long)copy_file_range(in, NULL, out, NULL, count, 0);
#else
  (void)in;
  (void)out;
  (void)count;
  errno = ENOSYS;
  return -1;
#endif
}

#if defined(__linux__)
#include <sys/random.h>
#elif defined(__APPLE__)
#include <stdlib.h>
#endif

int cfiles_random_bytes(void *buffer, unsigned long count) {
#if defined(__linux__)
  unsigned char *next = buffer;
  while (count > 0) {
    ssize_t got = getrandom(next, count, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    next += got;
    count -= (unsigned long)got;
  }
  return 0;
#elif defined(__APPLE__)
  arc4random_buf(buffer, count);
  return 0;
#else
  (void)buffer;
  (void)count;
  errno = ENOSYS;
  return -1;
#endif
}
