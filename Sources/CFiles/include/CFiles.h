#ifndef CFILES_H
#define CFILES_H

/* Atomically swaps two existing paths (Linux renameat2 RENAME_EXCHANGE, macOS renamex_np
   RENAME_SWAP), which Glibc does not expose to Swift. Returns 0, or -1 with errno (EINVAL or
   ENOSYS where the file system or kernel cannot swap, ENOENT when either path is missing).
   Where the system has neither call, it renames `first` over `second` instead (then `first` no
   longer exists). */
int cfiles_exchange(const char *first, const char *second);

#endif
