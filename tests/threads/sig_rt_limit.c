/*
 * Realtime signals queued for the process are all delivered, in order,
 * even when the user's queued signals reach RLIMIT_SIGPENDING between
 * the send and the delivery (signal(7), getrlimit(2)): a sigqueue() that
 * succeeded has allocated its signal, and the kernel delivers it when it
 * is unblocked, whatever else has been queued since. 8 SIGRTMIN+2 (values
 * 1..8) are sent while main blocks them; then a child (a plain process,
 * no preload) queues signals to itself until the user's count is at the
 * limit; main unblocks, and 100 ms later the child ends and is reaped,
 * which frees its signals. Within 10 s the handler must have run 8
 * times, each value once. (Their order is that of the sends on NPTL; under
 * flexsc-run those the signal thread had not taken yet when main unblocked
 * may come first: docs/threads.md, Known limits.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "sig_rt_limit"
#include "check.h"

#define SENT 8

extern char **environ;

static _Atomic int got;
static int values[SENT];

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	int i = atomic_fetch_add(&got, 1);
	if (i < SENT)
		values[i] = si->si_value.sival_int;
}

/* The child: fills the user's queue, says so, and waits for the end of its stdin. */
static int fill(void)
{
	sigset_t all;
	long n = 0;
	char c;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	while (sigqueue(getpid(), SIGRTMIN + 3, (union sigval){ .sival_int = 0 }) == 0)
		n++;
	printf("%ld %s\n", n, strerror(errno));
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

/* The user's queued signals now, from SigQ in /proc/self/status; -1 if not found. */
static long queued_now(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long n = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "SigQ: %ld/", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "fill"))
		return fill();

	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 2, &sa, NULL);
	pthread_join(spawn(nothing, NULL), NULL); /* the runtime starts at the first pthread_create */

	/* a limit a little above what the user has queued now: the child can reach it */
	long now = queued_now();
	struct rlimit rl;
	getrlimit(RLIMIT_SIGPENDING, &rl);
	if (now < 0 || (rl.rlim_max != RLIM_INFINITY && (rlim_t)now + 64 > rl.rlim_max)) {
		fprintf(stderr, "SigQ %ld, hard limit %llu: no room for the test\n", now,
			(unsigned long long)rl.rlim_max);
		return 1;
	}
	rl.rlim_cur = (rlim_t)now + 64;
	setrlimit(RLIMIT_SIGPENDING, &rl);

	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN + 2);
	pthread_sigmask(SIG_BLOCK, &rt, NULL);
	int sent = 0;
	for (int v = 1; v <= SENT; v++)
		sent += sigqueue(getpid(), SIGRTMIN + 2, (union sigval){ .sival_int = v }) == 0;
	result("8 realtime signals queued while blocked", sent == SENT);
	sleep_ms(50);

	/* the child, without the preload: a plain process that fills the user's queue */
	char **env = calloc(1024, sizeof(*env));
	int ne = 0;
	for (char **e = environ; *e && ne < 1023; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11))
			env[ne++] = *e;
	int to_child[2], from_child[2];
	if (pipe(to_child) || pipe(from_child)) {
		perror("pipe");
		return 1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
	posix_spawn_file_actions_addclose(&fa, to_child[1]);
	posix_spawn_file_actions_addclose(&fa, from_child[0]);
	char *args[] = { argv[0], "fill", NULL };
	pid_t child;
	int err = posix_spawn(&child, "/proc/self/exe", &fa, NULL, args, env);
	if (err) {
		fprintf(stderr, "posix_spawn: %s\n", strerror(err));
		return 1;
	}
	close(to_child[0]);
	close(from_child[1]);
	char line[128] = { 0 };
	ssize_t n = read(from_child[0], line, sizeof(line) - 1);
	fprintf(stderr, "child queued %s", n > 0 ? line : "nothing?\n");
	EXPECT(n > 0 && strstr(line, "Resource temporarily unavailable"),
	       "the child did not fill the queue: %s", line);

	pthread_sigmask(SIG_UNBLOCK, &rt, NULL);
	sleep_ms(100);
	close(to_child[1]);
	wait_bounded(child, 10000);
	close(from_child[0]);

	uint64_t t0 = now_ms();
	while (atomic_load(&got) < SENT && now_ms() - t0 < 10000)
		sleep_ms(10);
	/* each value once; their order is not checked here (docs/threads.md, Known limits) */
	int seen[SENT + 1] = { 0 }, each_once = atomic_load(&got) == SENT, in_order = each_once;
	for (int i = 0; i < SENT && each_once; i++) {
		each_once = values[i] >= 1 && values[i] <= SENT && !seen[values[i]]++;
		in_order = in_order && values[i] == i + 1;
	}
	if (!in_order) {
		fprintf(stderr, "handled %d:", atomic_load(&got));
		for (int i = 0; i < SENT && i < atomic_load(&got); i++)
			fprintf(stderr, " %d", values[i]);
		fputc('\n', stderr);
	}
	result("every one delivered, once, when the queue had room", each_once);
	result("the child filled the user's queue", misses() == 0);
	return failed;
}
