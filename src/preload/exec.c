/* SPDX-License-Identifier: MIT */
/*
 * The exec family: the new image starts as it would from NPTL's thread.
 *
 * A program image inherits the CPUs and the signal mask of the thread
 * that execs. Here that thread is a carrier, pinned to its one CPU, whose
 * kernel mask may also block signals the runtime holds for the uthread
 * (kextra): `flexsc-run -- sh -c 'exec cmd'` ran cmd on one CPU, and so
 * did every program a process under the preload exec'd without a fork
 * (its own runtime then saw one CPU, and made one carrier). So each exec
 * first gives the thread the CPUs the process had at start and the
 * uthread's own mask, and puts back what it had if the exec fails
 * (fx_rt_exec_prepare, src/threads/carrier.c).
 * glibc's exec functions call its internal execve, not this one, so each
 * is wrapped; the variadic ones pass their list on as an array, as
 * glibc's do. Without the runtime, each is libc's, unchanged.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <unistd.h>

#include "preload/real.h"

/* Runs call (an exec) with the start CPUs and the uthread's mask; what it returns, errno kept. */
#define AROUND_EXEC(call)                                                       \
	({                                                                      \
		struct fx_exec_saved saved_;                                    \
		struct fx_carrier *c_ = fx_rt_active ? fx_carrier_self() : NULL; \
		bool changed_ = fx_rt_exec_prepare(&saved_, c_);                \
		int r_ = (call);                                                \
		if (changed_) {                                                 \
			int err_ = errno;                                       \
			fx_rt_exec_failed(&saved_, c_);                         \
			errno = err_;                                           \
		}                                                               \
		r_;                                                             \
	})

FX_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return AROUND_EXEC(REAL(execve)(path, argv, envp));
}

FX_EXPORT int execv(const char *path, char *const argv[])
{
	return AROUND_EXEC(REAL(execv)(path, argv));
}

FX_EXPORT int execvp(const char *file, char *const argv[])
{
	return AROUND_EXEC(REAL(execvp)(file, argv));
}

FX_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return AROUND_EXEC(REAL(execvpe)(file, argv, envp));
}

FX_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return AROUND_EXEC(REAL(fexecve)(fd, argv, envp));
}

FX_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	return AROUND_EXEC(REAL(execveat)(dirfd, path, argv, envp, flags));
}

/* The number of argv entries the list from arg0 makes: the arguments and the NULL that ends them. */
static size_t count_args(const char *arg0, va_list ap)
{
	size_t n = 1;

	for (const char *a = arg0; a; a = va_arg(ap, const char *))
		n++;
	return n;
}

/* Fills argv (count_args entries) from arg0 and *ap, which is left after the NULL. */
static void fill_args(char **argv, const char *arg0, va_list *ap)
{
	size_t i = 0;

	argv[0] = (char *)arg0;
	while (argv[i])
		argv[++i] = va_arg(*ap, char *);
}

/*
 * Declares argv, an array of the arguments from arg0 to the NULL that ends
 * them, in the calling function; ap (started) is then past the NULL.
 */
#define LIST_TO_ARGV(argv, arg0, ap)                    \
	va_start(ap, arg0);                             \
	size_t argc_ = count_args(arg0, ap);            \
	va_end(ap);                                     \
	char *argv[argc_];                              \
	va_start(ap, arg0);                             \
	fill_args(argv, arg0, &ap)

FX_EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;

	LIST_TO_ARGV(argv, arg0, ap);
	va_end(ap);
	return execv(path, argv);
}

FX_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;

	LIST_TO_ARGV(argv, arg0, ap);
	va_end(ap);
	return execvp(file, argv);
}

FX_EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;

	LIST_TO_ARGV(argv, arg0, ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
