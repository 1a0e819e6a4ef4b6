// libmicrohttpd for Swift. MHD_start_daemon, MHD_get_daemon_info and MHD_get_connection_info are variadic, which
// Swift cannot call: these fixed-argument wrappers are why this header exists, with two small POSIX socket helpers
// (resolving the address to bind, and asking whether a client has closed its side) that read the same on Linux
// and macOS without per-platform Swift.
#ifndef RUNANYWHERE_CMICROHTTPD_SHIM_H
#define RUNANYWHERE_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netdb.h>
#include <netinet/in.h>
#include <microhttpd.h>

// Starts a daemon bound to `addr` (port inside it; 0 = any free port) with a request-completed callback.
// `timeout_seconds` closes connections idle that long (0 = never); `connection_limit` bounds open connections.
static inline struct MHD_Daemon *ra_mhd_start(unsigned int flags, const struct sockaddr *addr,
                                              MHD_AccessHandlerCallback handler, MHD_RequestCompletedCallback completed,
                                              void *cls, unsigned int connection_limit, unsigned int timeout_seconds) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, cls,
                            MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_END);
}

// The port the daemon listens on (the one the system chose when asked for port 0), or 0 when unknown.
static inline uint16_t ra_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

// The socket of a connection, or -1.
static inline int ra_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int) info->connect_fd : -1;
}

// 1 when the peer of `fd` has closed its side or reset the connection, 0 while it is open (without blocking and
// without consuming bytes it may have sent).
static inline int ra_socket_peer_closed(int fd) {
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return 1;
    if (n > 0) return 0;
    return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : 1;
}

// Resolves `host` (a name or an IPv4/IPv6 literal) and `port` into `out` for binding.
// Returns 0 and sets *is_ipv6 and *is_loopback, or getaddrinfo's error code (gai_strerror names it).
static inline int ra_resolve_bind_address(const char *host, uint16_t port, struct sockaddr_storage *out,
                                          int *is_ipv6, int *is_loopback) {
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int rc = getaddrinfo(host, NULL, &hints, &found);
    if (rc != 0) return rc;
    if (found == NULL) return EAI_NONAME;
    memset(out, 0, sizeof *out);
    memcpy(out, found->ai_addr, found->ai_addrlen);
    freeaddrinfo(found);
    if (out->ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *) out;
        a->sin6_port = htons(port);
        *is_ipv6 = 1;
        *is_loopback = memcmp(&a->sin6_addr, &in6addr_loopback, sizeof a->sin6_addr) == 0;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *) out;
        a->sin_port = htons(port);
        *is_ipv6 = 0;
        *is_loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    return 0;
}
#endif
