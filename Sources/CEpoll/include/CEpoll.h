#ifndef CEPOLL_H
#define CEPOLL_H

#include <stdint.h>

/* epoll and eventfd for Swift (Linux; elsewhere every call fails with ENOSYS): <sys/epoll.h> is
   not visible through Glibc, and its event struct is packed on x86-64, so events are passed as
   two plain arrays instead. */

extern const uint32_t cepoll_in;
extern const uint32_t cepoll_out;
extern const uint32_t cepoll_err;
extern const uint32_t cepoll_hup;

/* An epoll set (close-on-exec); -1 and errno on failure. */
int cepoll_create(void);
/* op: 0 add, 1 modify, 2 delete. */
int cepoll_control(int epfd, int op, int fd, uint32_t events, uint64_t data);
/* Waits for up to `capacity` events; fills `events` and `data`; returns the count or -1. */
int cepoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout_ms);
/* A non-blocking, close-on-exec eventfd. */
int cepoll_eventfd(void);

#endif
