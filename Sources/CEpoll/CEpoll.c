#include "CEpoll.h"

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
