/* SPDX-License-Identifier: MIT */
/*
 * A thread-per-connection HTTP/1.1 server: plain pthreads, blocking calls.
 *
 * The benchmark program for FlexSC-Threads. It knows nothing of flexsc:
 * compiled with -pthread only, it runs on NPTL as is, and under
 * `flexsc-run` the same binary runs on user-level threads with its
 * accept/read/write made exception-less by the runtime's interposers.
 *
 *   server [--port PORT] [--body BYTES] [--stack KIB] [--quit]
 *
 * Listens on 127.0.0.1:PORT only (default 8080). main() accepts in a loop
 * and starts one detached thread per connection (stack: --stack KiB,
 * default 64, so thousands of connections fit). A connection thread reads
 * requests (pipelined ones too), answers each GET/HEAD with the same
 * static body of --body bytes (default 128), keeps the connection alive
 * unless the client asks otherwise (HTTP/1.0 without keep-alive, or
 * "Connection: close"), and closes on EOF or error. Partial reads and
 * writes are handled; request bodies (Content-Length) are read and dropped.
 *
 * Ending: SIGTERM or SIGINT end the process at once (_exit(0)); with
 * --quit, a request for /quit is answered, then the listening socket is
 * shut down, which ends main's accept, and main calls exit(0): atexit
 * handlers and destructors run on the main thread (a preloaded runtime
 * prints its counters then). Prints "listening on
 * 127.0.0.1:PORT" on stdout when ready.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ_BUF 8192   /* the largest request head we accept */
#define OUT_BUF 16384  /* responses to pipelined requests are gathered up to this */

static char *response;  /* the whole 200 response: head and body */
static size_t response_len, head_only_len;
static bool quit_enabled;
static _Atomic bool quitting;
static int listen_fd = -1;
static pthread_attr_t conn_attr;

static const char bad_request[] =
	"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
static const char too_large[] =
	"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
static const char not_allowed[] =
	"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Length: 0\r\n\r\n";

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Writes all of buf; false on error (the peer went away). */
static bool write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* The value of header name (lower case, with ':') in head[0..len), or NULL. */
static const char *find_header(const char *head, size_t len, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = memchr(head, '\n', len), *end = head + len;

	while (p && p + 1 < end) {
		const char *line = p + 1;
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			break;
		if ((size_t)(eol - line) > nl && !strncasecmp(line, name, nl)) {
			const char *v = line + nl;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			const char *ve = eol;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			*vlen = (size_t)(ve - v);
			return v;
		}
		p = eol;
	}
	return NULL;
}

static bool has_token(const char *v, size_t vlen, const char *token)
{
	size_t tl = strlen(token);

	for (size_t i = 0; i + tl <= vlen; i++)
		if (!strncasecmp(v + i, token, tl))
			return true;
	return false;
}

static void *connection(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char in[REQ_BUF], out[OUT_BUF];
	size_t have = 0, outlen = 0;
	long long body_left = 0; /* request body bytes still to drop */
	bool open = true;

	while (open) {
		ssize_t n = read(fd, in + have, sizeof(in) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF or error: close */
		have += (size_t)n;

		/* every complete request in the buffer */
		size_t off = 0;
		for (;;) {
			if (body_left) {
				size_t drop = have - off < (size_t)body_left ? have - off : (size_t)body_left;
				off += drop;
				body_left -= (long long)drop;
				if (body_left)
					break;
			}
			char *start = in + off;
			size_t avail = have - off;
			char *eoh = memmem(start, avail, "\r\n\r\n", 4);
			if (!eoh) {
				if (avail == sizeof(in)) {
					write_all(fd, too_large, sizeof(too_large) - 1);
					open = false;
				}
				break;
			}
			size_t head_len = (size_t)(eoh - start) + 4;
			const char *sp1 = memchr(start, ' ', head_len);
			const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', head_len - (size_t)(sp1 + 1 - start)) : NULL;
			const char *eol = memchr(start, '\r', head_len);
			if (!sp1 || !sp2 || sp2 > eol) {
				write_all(fd, bad_request, sizeof(bad_request) - 1);
				open = false;
				break;
			}
			bool http10 = eol - sp2 - 1 == 8 && !memcmp(sp2 + 1, "HTTP/1.0", 8);
			bool keep = !http10;
			size_t vlen;
			const char *v = find_header(start, head_len, "connection:", &vlen);
			if (v && has_token(v, vlen, "close"))
				keep = false;
			else if (v && has_token(v, vlen, "keep-alive"))
				keep = true;
			v = find_header(start, head_len, "content-length:", &vlen);
			if (v)
				body_left = strtoll(v, NULL, 10);
			if (body_left < 0) {
				write_all(fd, bad_request, sizeof(bad_request) - 1);
				open = false;
				break;
			}

			const char *reply = response;
			size_t reply_len = response_len;
			bool get = sp1 - start == 3 && !memcmp(start, "GET", 3);
			bool head = sp1 - start == 4 && !memcmp(start, "HEAD", 4);
			bool quit = quit_enabled && sp2 - sp1 - 1 == 5 && !memcmp(sp1 + 1, "/quit", 5);
			if (head)
				reply_len = head_only_len;
			else if (!get) {
				reply = not_allowed;
				reply_len = sizeof(not_allowed) - 1;
			}
			if (outlen + reply_len > sizeof(out)) {
				if (!write_all(fd, out, outlen)) {
					open = false;
					break;
				}
				outlen = 0;
			}
			if (reply_len > sizeof(out)) {
				if (!write_all(fd, reply, reply_len)) {
					open = false;
					break;
				}
			} else {
				memcpy(out + outlen, reply, reply_len);
				outlen += reply_len;
			}
			off += head_len;
			if (quit) {
				/* main ends the process: its accept fails once the socket is shut down */
				write_all(fd, out, outlen);
				outlen = 0;
				atomic_store(&quitting, true);
				shutdown(listen_fd, SHUT_RDWR);
				open = false;
				break;
			}
			if (!keep) {
				open = false;
				break;
			}
		}
		if (outlen && !write_all(fd, out, outlen))
			open = false;
		outlen = 0;
		memmove(in, in + off, have - off);
		have -= off;
	}
	close(fd);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	_exit(0);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: server [--port PORT] [--body BYTES] [--stack KIB] [--quit]\n");
}

int main(int argc, char **argv)
{
	int port = 8080;
	long body = 128, stack_kib = 64;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--quit")) {
			quit_enabled = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		const char *v = argv[++i];
		if (!strcmp(a, "--port"))
			port = atoi(v);
		else if (!strcmp(a, "--body"))
			body = atol(v);
		else if (!strcmp(a, "--stack"))
			stack_kib = atol(v);
		else {
			usage(stderr);
			return 2;
		}
	}
	if (port < 0 || port > 65535 || body < 0 || body > (1 << 24) || stack_kib < 16 ||
	    stack_kib > (1 << 20)) {
		usage(stderr);
		return 2;
	}

	/* the static response */
	char head[256];
	int hl = snprintf(head, sizeof(head),
			  "HTTP/1.1 200 OK\r\nServer: flexsc-bench\r\nContent-Type: text/plain\r\n"
			  "Content-Length: %ld\r\n\r\n", body);
	head_only_len = (size_t)hl;
	response_len = (size_t)hl + (size_t)body;
	response = malloc(response_len);
	if (!response)
		return 1;
	memcpy(response, head, (size_t)hl);
	for (long i = 0; i < body; i++)
		response[hl + i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);

	/* as many descriptors as allowed: one per connection */
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a peer that went away is a write error, not a death */

	pthread_attr_init(&conn_attr);
	pthread_attr_setdetachstate(&conn_attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&conn_attr, (size_t)stack_kib * 1024);

	int ls = listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0) {
		perror("server: socket");
		return 1;
	}
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(ls, (struct sockaddr *)&addr, sizeof(addr)) || listen(ls, 65535)) {
		fprintf(stderr, "server: 127.0.0.1:%d: %s\n", port, strerror(errno));
		return 1;
	}
	socklen_t alen = sizeof(addr);
	getsockname(ls, (struct sockaddr *)&addr, &alen);
	printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
	fflush(stdout);

	for (;;) {
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (atomic_load(&quitting)) {
			if (fd >= 0)
				close(fd);
			exit(0); /* on the main thread: atexit handlers and destructors run */
		}
		if (fd < 0) {
			switch (errno) {
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
				break;
			case EMFILE:
			case ENFILE:
			case ENOBUFS:
			case ENOMEM:
				sleep_ms(1); /* out of resources: let connections end */
				break;
			default:
				perror("server: accept");
				return 1;
			}
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pthread_t t;
		int err, tries = 0;
		/* out of threads or memory for a while: retry for up to a second */
		while ((err = pthread_create(&t, &conn_attr, connection, (void *)(intptr_t)fd)) == EAGAIN &&
		       ++tries < 1000)
			sleep_ms(1);
		if (err) {
			fprintf(stderr, "server: pthread_create: %s\n", strerror(err));
			close(fd);
		}
	}
}
