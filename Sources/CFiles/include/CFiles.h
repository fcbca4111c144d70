#ifndef CFILES_H
#define CFILES_H

/* Atomically swaps two existing paths (Linux renameat2 RENAME_EXCHANGE, macOS renamex_np
   RENAME_SWAP), which Glibc does not expose to Swift. Returns 0, or -1 with errno (EINVAL or
   ENOSYS where the file system or kernel cannot swap, ENOENT when either path is missing).
   Where the system has neither call, it renames `first` over `second` instead (then `first` no
   longer exists). */
int cfiles_exchange(const char *first, const char *second);

/* Copies up to `count` bytes from `in`'s file offset to `out`'s (both advance) inside the kernel
   (Linux copy_file_range): no copy through user memory. Returns the bytes copied (0 at the end of
   `in`), or -1 with errno; ENOSYS where the system has no such call, EXDEV or EINVAL where the
   two files do not allow it (the caller then reads and writes). */
long cfiles_copy_range(int in, int out, unsigned long count);

/* Fills `buffer` with `count` bytes from the system's random generator (Linux getrandom, which
   Glibc's Swift module does not expose; Darwin arc4random_buf). Returns 0, or -1 with errno. */
int cfiles_random_bytes(void *buffer, unsigned long count);

#endif
