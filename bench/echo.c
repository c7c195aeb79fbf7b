/* The floor of the loopback path: answers every DNS query by echoing it back with QR set.
 * UDP and TCP (RFC 1035 2-byte framing, pipelining) on one loopback port, single-threaded, epoll.
 * UDP is batched like pigsty-dns's receive loop: one recvmmsg takes up to BATCH queued datagrams and one
 * sendmmsg returns them, so the floor pays the same two system calls per batch (not two per packet).
 * Usage: echo PORT [SECONDS]   -- listens on 127.0.0.1:PORT and exits by itself after SECONDS (default 600).
 * Build: gcc -O2 -o echo bench/echo.c */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXCONN 1024
#define BUFSZ 65538
#define BATCH 32
#define PKTSZ 65536

struct conn {
  int fd;
  size_t len;
  unsigned char buf[BUFSZ];
};

static struct conn *conns[MAXCONN];

static void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static void close_conn(int ep, struct conn *c) {
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  for (int i = 0; i < MAXCONN; i++)
    if (conns[i] == c) conns[i] = NULL;
  free(c);
}

/* Answers every complete framed message in the buffer; keeps a partial one. */
static int tcp_read(struct conn *c) {
  for (;;) {
    ssize_t n = read(c->fd, c->buf + c->len, BUFSZ - c->len);
    if (n == 0) return -1;
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    c->len += (size_t)n;
    size_t off = 0;
    while (c->len - off >= 2) {
      size_t m = ((size_t)c->buf[off] << 8) | c->buf[off + 1];
      if (c->len - off < 2 + m) break;
      if (m >= 3) c->buf[off + 4] |= 0x80;
      /* Loopback socket buffers are large; a blocking-free write of a small answer does not fail short
       * in practice, and a short write closes the connection (this is a benchmark floor, not a server). */
      if (write(c->fd, c->buf + off, 2 + m) != (ssize_t)(2 + m)) return -1;
      off += 2 + m;
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PORT [SECONDS]\n", argv[0]);
    return 2;
  }
  int port = atoi(argv[1]);
  alarm(argc > 2 ? (unsigned)atoi(argv[2]) : 600); /* bounded: never outlives a benchmark */
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  int u = socket(AF_INET, SOCK_DGRAM, 0);
  int t = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(u, (struct sockaddr *)&sa, sizeof sa) || bind(t, (struct sockaddr *)&sa, sizeof sa) ||
      listen(t, 1024)) {
    perror("bind");
    return 1;
  }
  nonblock(u);
  nonblock(t);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  ev.data.fd = u;
  ev.data.u64 = 1;
  epoll_ctl(ep, EPOLL_CTL_ADD, u, &ev);
  ev.data.u64 = 2;
  epoll_ctl(ep, EPOLL_CTL_ADD, t, &ev);
  static unsigned char pkt[BATCH][PKTSZ];
  static struct sockaddr_storage peer[BATCH];
  static struct iovec riov[BATCH], siov[BATCH];
  static struct mmsghdr rmsg[BATCH], smsg[BATCH];
  for (int i = 0; i < BATCH; i++) {
    riov[i] = (struct iovec){.iov_base = pkt[i], .iov_len = PKTSZ};
    rmsg[i].msg_hdr.msg_iov = &riov[i];
    rmsg[i].msg_hdr.msg_iovlen = 1;
    rmsg[i].msg_hdr.msg_name = &peer[i];
  }
  struct epoll_event evs[64];
  for (;;) {
    int k = epoll_wait(ep, evs, 64, -1);
    for (int i = 0; i < k; i++) {
      if (evs[i].data.u64 == 1) {
        for (;;) {
          for (int j = 0; j < BATCH; j++) rmsg[j].msg_hdr.msg_namelen = sizeof peer[j];
          int got = recvmmsg(u, rmsg, BATCH, 0, NULL); /* non-blocking: what is queued, up to BATCH */
          if (got <= 0) break;
          int k = 0;
          for (int j = 0; j < got; j++) {
            if (rmsg[j].msg_len < 12) continue;
            pkt[j][2] |= 0x80;
            siov[k] = (struct iovec){.iov_base = pkt[j], .iov_len = rmsg[j].msg_len};
            smsg[k].msg_hdr = (struct msghdr){.msg_name = &peer[j],
                                              .msg_namelen = rmsg[j].msg_hdr.msg_namelen,
                                              .msg_iov = &siov[k],
                                              .msg_iovlen = 1};
            k++;
          }
          /* A datagram that cannot be sent is skipped, as a failed sendto was. */
          for (int at = 0; at < k;) {
            int sent = sendmmsg(u, smsg + at, (unsigned)(k - at), 0);
            at += sent > 0 ? sent : 1;
          }
          if (got < BATCH) break; /* drained: back to epoll */
        }
      } else if (evs[i].data.u64 == 2) {
        for (;;) {
          int fd = accept(t, NULL, NULL);
          if (fd < 0) break;
          int slot = -1;
          for (int j = 0; j < MAXCONN; j++)
            if (!conns[j]) {
              slot = j;
              break;
            }
          if (slot < 0) {
            close(fd);
            continue;
          }
          nonblock(fd);
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          struct conn *c = calloc(1, sizeof *c);
          c->fd = fd;
          conns[slot] = c;
          struct epoll_event cev = {.events = EPOLLIN};
          cev.data.ptr = c;
          epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
        }
      } else {
        struct conn *c = evs[i].data.ptr;
        if (tcp_read(c) < 0) close_conn(ep, c);
      }
    }
  }
}
