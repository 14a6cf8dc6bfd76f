/* push.h - profiles sent to a continuous-profiling backend's HTTP ingest
 * (Pyroscope's POST /ingest) with libcurl: timeouts, retries with backoff,
 * credentials read from files, a bounded spool directory for what could
 * not be sent, and a sender thread so a live view never waits on the net. */
#ifndef EMBER_PUSH_H
#define EMBER_PUSH_H

#include <stddef.h>

#include "common/common.h"

enum push_format { PUSH_PPROF, PUSH_FOLDED };

struct push_opts {
	const char *url;           /* http(s)://HOST[:PORT][/PREFIX]; "/ingest"
				      is added unless the path ends in it */
	const char *name;          /* application name and labels:
				      "app.cpu{env=prod,host=a}" */
	const char *basic_auth;    /* "USER:TOKENFILE", or NULL */
	const char *bearer_file;   /* a file holding a bearer token, or NULL */
	const char *tenant;        /* X-Scope-OrgID, or NULL */
	const char *ca_file;       /* PEM certificates to trust for https
				      instead of the system's, or NULL */
	double timeout;            /* seconds per request (0: 10) */
	int retries;               /* attempts after the first (-1: 3) */
	double backoff;            /* first wait between attempts, doubled
				      each time (0: 1 s) */
};

struct push_profile {
	enum push_format format;
	const void *data;          /* pprof: gzipped profile.proto; folded:
				      "a;b;c 42" lines */
	size_t len;
	u64 from, until;           /* unix seconds */
	u64 sample_rate;           /* Hz, sent with folded (0: not sent) */
};

/* ---- One backend (client.c) ------------------------------------------- */
struct push_client;
/* Checks the URL (no credentials in it: they would be on a command line)
 * and reads the credentials' files.  NULL with err_set(). */
struct push_client *push_client_new(const struct push_opts *o);
void push_client_free(struct push_client *c);
/* Sends p in at most `attempts` tries (0: 1 + the retries), waiting the
 * backoff between them.  A 4xx but 408 and 429 is not retried.  0 when
 * the backend took it, else -1 with err_set(): one line, "HTTP 500
 * Internal Server Error from URL: the server's message (truncated)" or
 * the transfer's error. */
int push_send(struct push_client *c, const struct push_profile *p, int attempts);
/* The last attempt's HTTP status, 0 when no answer came. */
long push_last_status(const struct push_client *c);
/* From any thread: requests and waits end by deadline (now_ns(); 0: no
 * deadline), an upload in flight then cut short. */
void push_client_set_deadline(struct push_client *c, u64 deadline);
/* The request URL push_send posts p to (query included), for messages
 * and tests; valid until the next call. */
const char *push_request_url(struct push_client *c, const struct push_profile *p);

/* ---- The spool directory (spool.c) ------------------------------------ */
struct push_spool;
/* Opens (creates) DIR and takes up the profiles already in it, oldest
 * first; at most max are kept.  NULL with err_set(). */
struct push_spool *push_spool_open(const char *dir, size_t max);
void push_spool_close(struct push_spool *s);
/* Writes p as the newest; the oldest beyond max are deleted, *dropped
 * counting them.  -1 with err_set() (p not kept). */
int push_spool_put(struct push_spool *s, const struct push_profile *p, u64 *dropped);
size_t push_spool_count(const struct push_spool *s);
/* The oldest profile, its bytes read into *buf (p->data points there)
 * and its id for push_spool_remove: 1, 0 when empty, -1 with err_set()
 * (an unreadable file is deleted and counted in *dropped). */
int push_spool_oldest(struct push_spool *s, struct push_profile *p, struct strbuf *buf,
		      u64 *id, u64 *dropped);
/* Deletes profile id (gone already: nothing). */
void push_spool_remove(struct push_spool *s, u64 id);

/* ---- The sender thread (sender.c) ------------------------------------- */
struct push_stats {
	u64 queued;                /* profiles handed to push_sender_put */
	u64 sent;                  /* taken by the backend (spooled ones too) */
	u64 sent_from_spool;
	u64 failed;                /* uploads given up on (then spooled) */
	u64 spooled;               /* written to the spool */
	u64 dropped;               /* lost: spool full (oldest first), no
				      spool, or queue full without one */
	size_t in_spool;           /* waiting in the spool now */
	char last_error[256];      /* the last failure's line, "" if none */
};

struct push_sender;
/* Starts the thread: it sends the profiles put in order, each failed one
 * into the spool (NULL: dropped and counted), and the spool's oldest
 * whenever the backend answers again.  c and s stay the caller's. */
struct push_sender *push_sender_start(struct push_client *c, struct push_spool *s);
/* Hands over a copy of p and returns at once: the queue holds a few;
 * when it is full the oldest waiting goes to the spool (or is dropped). */
void push_sender_put(struct push_sender *ps, const struct push_profile *p);
void push_sender_stats(struct push_sender *ps, struct push_stats *st);
/* Sends what is pending for at most `seconds`, spools what is left, stops
 * the thread and frees ps; *st the final counts. */
void push_sender_finish(struct push_sender *ps, double seconds, struct push_stats *st);

/* ---- Helpers (client.c) ------------------------------------------------ */
/* "10s", "500ms", "2m", "1h" or plain seconds: -1 with err_set(). */
int push_parse_duration(const char *s, double *secs);
/* A gzipped profile.proto's time_nanos and duration_nanos (0 when
 * absent): 0, or -1 with err_set() when it is not one. */
int push_pprof_times(const void *gz, size_t len, u64 *time_ns, u64 *duration_ns);

#endif
