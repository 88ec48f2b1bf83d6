// SPDX-License-Identifier: Apache-2.0
#include <mosquitto.h>
#include <openssl/ssl.h>

/// Bytes OpenSSL has decrypted and buffered for a TLS connection, which epoll cannot see
/// (the kernel's socket buffer may be empty): the bridge reads on while this is > 0.
static inline int actiond_mosquitto_tls_pending(struct mosquitto *mosq) {
  SSL *ssl = (SSL *)mosquitto_ssl_get(mosq);
  return ssl ? SSL_pending(ssl) : 0;
}
