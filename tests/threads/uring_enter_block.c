/*
 * liburing's own io_uring_enter (an inline system call the runtime does
 * not see), waiting for a completion another thread triggers: a read of a
 * pipe submitted through the program's own ring, the writer another
 * thread. MariaDB's InnoDB waits so with innodb_use_native_aio=1. Under
 * FlexSC-Threads with one carrier this hung before carriers blocked in the
 * kernel handed their core over. Skipped (77) when liburing was not
 * available at build time (the `liburing` directive).
 */
// flexsc-test: liburing
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "uring_enter_block"
#include "check.h"

#ifndef HAVE_LIBURING
int main(void)
{
	printf("skip: liburing was not available at build time\n");
	return 77;
}
#else
#include <liburing.h>

#define ROUNDS 5

static int p[2];

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		char b = (char)('0' + i);
		sleep_ms(20); /* the main thread waits in io_uring_enter by now, most often */
		if (write(p[1], &b, 1) != 1)
			break;
	}
	return NULL;
}

int main(void)
{
	struct io_uring ring;
	int got = 0, err;

	alarm(30); /* the watchdog */
	if (pipe(p)) {
		perror("pipe");
		return 1;
	}
	err = io_uring_queue_init(8, &ring, 0);
	if (err) {
		printf("skip: io_uring_queue_init: %s\n", strerror(-err));
		return 77;
	}
	pthread_t t = spawn(writer, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		char b = 0;
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, p[0], &b, 1, 0);
		if (io_uring_submit(&ring) != 1)
			break;
		struct io_uring_cqe *cqe;
		do
			err = io_uring_wait_cqe(&ring, &cqe);
		while (err == -EINTR);
		if (err || cqe->res != 1 || b != '0' + i)
			break;
		io_uring_cqe_seen(&ring, cqe);
		got++;
	}
	pthread_join(t, NULL);
	io_uring_queue_exit(&ring);
	result("every read completed through the program's own ring", got == ROUNDS);
	return failed;
}
#endif
