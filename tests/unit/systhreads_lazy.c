// SPDX-License-Identifier: MIT
/*
 * threads_per_cpu 0 (flexsc_register(3)): the pool starts no syscall
 * thread at registration; the first call sent to it starts one, and the
 * pool grows as usual when that one blocks: a read left waiting on an
 * empty pipe, then the write that ends it, both through the queue. A
 * process whose calls never go there keeps no such thread (FlexSC-Threads
 * registers so: a thread alone makes its own calls).
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

int main(void)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	char buf[4];
	int p[2];
	int64_t r;

	flexsc_config_init(&cfg);
	cfg.threads_per_cpu = 0;
	t_open(FLEXSC_ENGINE_THREADS, &fx, &q, &cfg);
	CHECK_EQ(flexsc_engine_in_use(fx), FLEXSC_ENGINE_THREADS);
	CHECK_EQ(t_count_threads_named("flexsc-sys"), 0);

	CHECK_EQ(flexsc_syscall(q, SYS_getppid, 0, NULL), getppid());
	CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_THREADS), 1);
	CHECK_EQ(t_count_threads_named("flexsc-sys"), 1);

	CHECK_EQ(pipe(p), 0);
	flexsc_call_t rd = t_post_io(q, SYS_read, p[0], buf, sizeof(buf), NULL);
	CHECK_EQ(flexsc_flush(q) >= 0, 1);
	t_wait_thread_in_read(p[0]);
	CHECK_EQ(flexsc_syscall(q, SYS_write, 3, (uint64_t[]){ (uint64_t)p[1], (uint64_t)(uintptr_t)"ab", 2 }), 2);
	CHECK_EQ(flexsc_wait_one(q, rd, &r, NULL), 0);
	CHECK_EQ(r, 2);
	CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_THREADS), 3);
	CHECK_EQ(t_count_threads_named("flexsc-sys"), 2);
	close(p[0]);
	close(p[1]);
	t_close(fx, q);
	printf("systhreads_lazy: none at registration, one at the first call, two when it blocked\n");
	return 0;
}
