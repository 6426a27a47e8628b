/*
 * A blocking connect that signals keep interrupting. signal(7): connect
 * is restarted after a handler with SA_RESTART; connect(2): without it,
 * it fails with EINTR and the connection is still made, in the
 * background. On Linux a blocking connect made again meanwhile waits for
 * that connection, as the restarted one does.
 *
 * The listener's accept queue is full (backlog 0 and one connection not
 * accepted), so the kernel drops the connect's SYN and sends it again a
 * second later; another thread accepts the first connection after
 * 400 ms, and a third sends the connecting thread SIGUSR1 every 20 ms.
 *   1. with SA_RESTART: connect returns 0;
 *   2. without: connect fails with EINTR, and connect again (until it
 *      does not fail with EINTR) returns 0 or EISCONN; a byte goes
 *      through the connection.
 * Under flexsc-run the connect went to io_uring, and the one made after
 * the signal failed at once with EALREADY (connect(2): only for a
 * non-blocking socket); under --engine uring it then waited on its carrier
 * and held up the thread that would accept.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>

#define CHECK_NAME "connect_restart"
#include "check.h"

static struct sockaddr_in addr;
static int listener, restarted_ok;
static pthread_t target;
static _Atomic int connected;
static _Atomic long handled;
static int ret, err, sock;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void *connector(void *arg)
{
	bool retry = arg != NULL;

	sock = socket(AF_INET, SOCK_STREAM, 0);
	ret = connect(sock, (struct sockaddr *)&addr, sizeof(addr));
	err = errno;
	if (retry && ret < 0 && err == EINTR) {
		restarted_ok = 1;
		do {
			ret = connect(sock, (struct sockaddr *)&addr, sizeof(addr));
			err = errno;
		} while (ret < 0 && err == EINTR);
	}
	atomic_store(&connected, 1);
	return NULL;
}

static void *signaller(void *arg)
{
	sleep_ms(50);
	while (!atomic_load(&connected)) {
		pthread_kill(target, SIGUSR1);
		sleep_ms(20);
	}
	return arg;
}

static void *acceptor(void *arg)
{
	(void)arg;
	sleep_ms(400);
	return (void *)(long)accept(listener, NULL, NULL);
}

/* One round, with or without SA_RESTART; its checks' lines. */
static void round_with(bool sa_restart)
{
	socklen_t len = sizeof(addr);
	int one = 1;

	on_signal(SIGUSR1, on_usr1, sa_restart ? SA_RESTART : 0);
	listener = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) || listen(listener, 0) ||
	    getsockname(listener, (struct sockaddr *)&addr, &len)) {
		perror("bind, listen");
		exit(1);
	}
	int filler = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(filler, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("connect (the one that fills the queue)");
		exit(1);
	}
	atomic_store(&connected, 0);
	atomic_store(&handled, 0);
	restarted_ok = 0;
	pthread_t a = spawn(acceptor, NULL);
	pthread_t c = spawn(connector, sa_restart ? NULL : (void *)1);
	target = c;
	pthread_t s = spawn(signaller, NULL);
	pthread_join(s, NULL); /* first: it signals c until c says it is done, never after c is gone */
	pthread_join(c, NULL);
	void *first;
	pthread_join(a, &first);

	if (sa_restart) {
		if (ret)
			fprintf(stderr, "%s: SA_RESTART: connect %d (%s), %ld handlers\n", CHECK_NAME, ret,
				strerror(err), atomic_load(&handled));
		result("SA_RESTART: the interrupted connect is restarted and returns 0", ret == 0);
	} else {
		if (!restarted_ok || (ret && err != EISCONN))
			fprintf(stderr, "%s: no SA_RESTART: first EINTR %d, then %d (%s)\n", CHECK_NAME, restarted_ok,
				ret, strerror(err));
		result("no SA_RESTART: connect fails with EINTR", restarted_ok);
		result("no SA_RESTART: connect made again waits for the connection (0 or EISCONN)",
		       ret == 0 || err == EISCONN);
	}
	int conn = accept(listener, NULL, NULL);
	char b = 0;
	result(sa_restart ? "SA_RESTART: a byte goes through" : "no SA_RESTART: a byte goes through",
	       conn >= 0 && write(sock, "x", 1) == 1 && read(conn, &b, 1) == 1 && b == 'x');
	result(sa_restart ? "SA_RESTART: the handler ran" : "no SA_RESTART: the handler ran", atomic_load(&handled) > 0);
	close(conn);
	close(sock);
	close(filler);
	close((int)(long)first);
	close(listener);
}

int main(void)
{
	round_with(true);
	round_with(false);
	return failed;
}
