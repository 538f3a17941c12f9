#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stddef.h>
#include <microhttpd.h>

/* The callbacks and limits of a daemon (MHD_start_daemon is variadic, which Swift cannot call). */
struct tl_mhd_config {
    MHD_AccessHandlerCallback handler;
    MHD_RequestCompletedCallback completed;
    /* Called with the raw request target, before the headers are read. */
    void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection);
    MHD_NotifyConnectionCallback notify_connection;
    void *context;
    unsigned int connection_limit;
    unsigned int connection_timeout;
    size_t memory_limit;
    const char *tls_key;
    const char *tls_cert;
};

static inline struct MHD_Daemon *tl_mhd_start(unsigned int flags, const struct sockaddr *bind_addr,
        const struct tl_mhd_config *c) {
    struct MHD_OptionItem options[] = {
        { MHD_OPTION_SOCK_ADDR, 0, (void *)bind_addr },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)c->completed, c->context },
        { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)c->uri_log, c->context },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)c->notify_connection, c->context },
        { MHD_OPTION_CONNECTION_LIMIT, c->connection_limit, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)c->memory_limit, NULL },
        { MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)c->tls_key },
        { MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)c->tls_cert },
        { MHD_OPTION_END, 0, NULL },
    };
    if (c->tls_key == NULL || c->tls_cert == NULL) {
        options[7].option = MHD_OPTION_END;
    } else {
        flags |= MHD_USE_TLS;
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, c->handler, c->context,
        MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* The port the daemon is bound to (MHD_get_daemon_info is variadic). */
static inline uint16_t tl_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

/* The socket of a connection, or -1 (MHD_get_connection_info is variadic). */
static inline int tl_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? (int)info->connect_fd : -1;
}

/* Whether this build of the library supports TLS. */
static inline int tl_mhd_has_tls(void) {
    return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}
