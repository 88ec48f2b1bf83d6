// SPDX-License-Identifier: Apache-2.0
// benchmqtt: the MQTT subscriber of `make bench` (Tests/vm/bench/07-mqtt.sh), what a Home
// Assistant would be, stamping receipt on the guest's CLOCK_MONOTONIC like `benchtool
// subscribe`. Not part of benchtool: benchtool is static, and Debian ships libmosquitto as a
// shared library only. It measures and prints samples; it judges nothing.
//
//   benchmqtt HOST PORT OUT MAX TOPIC...
//
// Subscribes to the TOPICs at QoS 1 (MQTT 3.1.1, as actiond-mqtt); prints "subscribed" once
// the broker acknowledged them. For every message carrying a gesture event (actiond-mqtt's
// {"event_type":...,"time_us":...}) writes "<event_type> <time_us> <receipt ns>" to OUT,
// the receipt taken first thing in libmosquitto's message callback, i.e. right after the
// library read the packet; any other message is printed as "message TOPIC PAYLOAD" (its
// first 200 bytes) on stdout (e.g. the bridge's `<base>/daemon` = online: it is ready).
// Ends after MAX `long_press` events (0: never), or on SIGTERM.
#define _GNU_SOURCE
#include <mosquitto.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stopping;
static void on_term(int sig) {
  (void)sig;
  stopping = 1;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct ctx {
  char **topics;
  int ntopics;
  FILE *out;
  long max, presses;
  int subscribed;
};

static void on_connect(struct mosquitto *m, void *ctx_, int rc) {
  struct ctx *ctx = ctx_;
  if (rc != 0) {
    fprintf(stderr, "benchmqtt: the broker refused the connection: %s\n", mosquitto_connack_string(rc));
    exit(1);
  }
  if (mosquitto_subscribe_multiple(m, NULL, ctx->ntopics, ctx->topics, 1, 0, NULL) != MOSQ_ERR_SUCCESS) {
    fprintf(stderr, "benchmqtt: cannot subscribe\n");
    exit(1);
  }
}

static void on_subscribe(struct mosquitto *m, void *ctx_, int mid, int count, const int *granted) {
  (void)m;
  (void)mid;
  struct ctx *ctx = ctx_;
  int refused = count != ctx->ntopics;
  for (int i = 0; i < count; i++) refused |= granted[i] > 2;
  if (refused) {
    fprintf(stderr, "benchmqtt: the broker refused a subscription (%d answers for %d topics)\n", count, ctx->ntopics);
    exit(1);
  }
  ctx->subscribed = 1;
  printf("subscribed\n");
  fflush(stdout);
}

// The payload is not NUL-terminated: copies a string member's value into out.
static int member(const char *p, int len, const char *name, char *out, size_t size) {
  size_t n = strlen(name);
  for (int i = 0; i + (int)n <= len; i++) {
    if (memcmp(p + i, name, n)) continue;
    size_t j = 0;
    for (i += (int)n; i < len && p[i] != '"' && p[i] != ',' && p[i] != '}' && j + 1 < size; i++) out[j++] = p[i];
    out[j] = 0;
    return 1;
  }
  return 0;
}

static void on_message(struct mosquitto *m, void *ctx_, const struct mosquitto_message *msg) {
  int64_t t = now_ns();
  (void)m;
  struct ctx *ctx = ctx_;
  char event[32], time_us[24];
  if (!member(msg->payload, msg->payloadlen, "\"event_type\":\"", event, sizeof event) ||
      !member(msg->payload, msg->payloadlen, "\"time_us\":", time_us, sizeof time_us)) {
    printf("message %s %.*s\n", msg->topic, msg->payloadlen < 200 ? msg->payloadlen : 200, (const char *)msg->payload);
    fflush(stdout);
    return;
  }
  fprintf(ctx->out, "%s %s %lld\n", event, time_us, (long long)t);
  if (!strcmp(event, "long_press")) ctx->presses++;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: benchmqtt HOST PORT OUT MAX TOPIC...\n");
    return 2;
  }
  struct ctx ctx = {.topics = argv + 5, .ntopics = argc - 5, .max = atol(argv[4])};
  ctx.out = fopen(argv[3], "w");
  if (!ctx.out) {
    perror(argv[3]);
    return 1;
  }
  struct sigaction sa = {.sa_handler = on_term};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  mosquitto_lib_init();
  struct mosquitto *m = mosquitto_new(NULL, 1, &ctx);
  if (!m) {
    fprintf(stderr, "benchmqtt: mosquitto_new failed\n");
    return 1;
  }
  mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_connect_callback_set(m, on_connect);
  mosquitto_subscribe_callback_set(m, on_subscribe);
  mosquitto_message_callback_set(m, on_message);
  int rc = mosquitto_connect(m, argv[1], atoi(argv[2]), 60);
  if (rc != MOSQ_ERR_SUCCESS) {
    fprintf(stderr, "benchmqtt: cannot connect to %s:%s: %s\n", argv[1], argv[2], mosquitto_strerror(rc));
    return 1;
  }
  // mosquitto_loop blocks in select until the broker's socket is readable (1 s at most, so
  // SIGTERM is seen); the message callback runs within it, right after the read.
  while (!stopping && (ctx.max <= 0 || ctx.presses < ctx.max)) {
    rc = mosquitto_loop(m, 1000, 1);
    if (rc != MOSQ_ERR_SUCCESS && !stopping) {
      fprintf(stderr, "benchmqtt: lost the broker: %s\n", mosquitto_strerror(rc));
      break;
    }
  }
  fclose(ctx.out);
  mosquitto_destroy(m);
  mosquitto_lib_cleanup();
  return rc == MOSQ_ERR_SUCCESS || stopping ? 0 : 1;
}
