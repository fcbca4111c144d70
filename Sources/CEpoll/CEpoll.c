#include "CEpoll.h"

#ifdef __linux__

#include <sys/epoll.h>
#include <sys/eventfd.h>

const uint32_t cepoll_in = EPOLLIN;
const uint32_t cepoll_out = EPOLLOUT;
const uint32_t cepoll_err = EPOLLERR;
const uint32_t cepoll_hup = EPOLLHUP;

int cepoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cepoll_control(int epfd, int op, int fd, uint32_t events, uint64_t data) {
  static const int ops[] = {EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLL_CTL_DEL};
  struct epoll_event event = {.events = events, .data = {.u64 = data}};
  return epoll_ctl(epfd, ops[op], fd, &event);
}

int cepoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout_ms) {
  struct epoll_event ready[256];
  if (capacity > 256) capacity = 256;
  int count = epoll_wait(epfd, ready, capacity, timeout_ms);
  for (int i = 0; i < count; i++) {
    events[i] = ready[i].events;
    data[i] = ready[i].data.u64;
  }
  return count;
}

int cepoll_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

#else

/* No epoll here: the Swift side selects the poll(2) loop and never calls these; if it did, each
   fails with ENOSYS. */
#include <errno.h>

const uint32_t cepoll_in = 0;
const uint32_t cepoll_out = 0;
const uint32_t cepoll_err = 0;
const uint32_t cepoll_hup = 0;

int cepoll_create(void) {
  errno = ENOSYS;
  return -1;
}

int cepoll_control(int epfd, int op, int fd, uint32_t events, uint64_t data) {
  (void)epfd, (void)op, (void)fd, (void)events, (void)data;
  errno = ENOSYS;
  return -1;
}

int cepoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout_ms) {
  (void)epfd, (void)events, (void)data, (void)capacity, (void)timeout_ms;
  errno = ENOSYS;
  return -1;
}

int cepoll_eventfd(void) {
  errno = ENOSYS;
  return -1;
}

#endif
