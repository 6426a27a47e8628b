/* SPDX-License-Identifier: MIT */
/*
 * The io_uring engine: each queue's syscall pages feed a private ring.
 *
 * The ring's submission queue is the shared page the kernel reads: a flush
 * translates each pending entry into an SQE and ends with one
 * io_uring_enter for the whole batch (none with SQPOLL while its thread is
 * awake; liburing adds IORING_ENTER_SQ_WAKEUP when it has gone idle).
 * Completions come back through the CQ, which only the owner reads.
 *
 * Which calls: the system table names the opcode that serves a call, the
 * probe says whether this kernel has it, and map() decides whether these
 * particular arguments mean the same thing to io_uring as to the system
 * call (pread at offset -1, recvfrom with an address, lengths wider than 32
 * bits and so on do not, and take the fallback route). The result must be
 * bit for bit what the system call would return.
 *
 * Who runs the calls (core/identity.c): without SQPOLL the submitting
 * owner, with its current credentials, inline and in io-wq workers alike;
 * its current descriptors and fs context inline, but a worker resolves
 * paths and descriptors with those the owner had when the worker started
 * (an unshare since leaves it behind): calls that may run there
 * (FX_DEP_FS, FX_DEP_FILES) use the ring only while the owner shares the
 * process's (fx_uring_shares_context). An SQPOLL thread runs them with its
 * creator's credentials, or those of the personality an SQE carries, and
 * with the descriptor table and fs context it shared with its creator.
 * So the ring keeps the identity its SQEs carry, and fx_uring_runs_as, at
 * each flush, either finds the owner the same, or
 * registers the owner's current credentials as the personality every
 * later SQE carries (the kernel takes them from the owner itself), or
 * says no: then the owner runs the batch itself.
 *
 * Calls that wait for a descriptor, as a POLL_ADD linked to a timeout at
 * the call's deadline when it has one; the entry completes once both
 * completions are in (they come in either order):
 * - poll(2) of one descriptor, as poll would return: revents written, 1;
 *   0 when the timeout cancelled the poll; POLLNVAL for a closed
 *   descriptor;
 * - epoll_wait(2): the POLL_ADD waits on the epoll descriptor itself, and
 *   the events are then taken on the owner with epoll_wait(..., 0), which
 *   also runs first, before any wait (bad arguments fail at once, ready
 *   events come without a ring round trip).
 * A wait woken with nothing for the caller (another thread took the
 * events; io_uring wakes for POLLRDHUP even when not asked) is armed
 * again to the same deadline, as the system call would go on waiting.
 *
 * Waking for syscall-thread completions while asleep in io_uring_enter: an
 * eventfd read is armed on the ring, and the syscall threads write to the
 * eventfd when the owner says it sleeps that way.
 *
 * Completions that come later than the submit (a read that waited for
 * data) are task work the kernel runs on the owner's thread. By default
 * the kernel announces it as a signal would (TIF_NOTIFY_SIGNAL), which
 * ends any wait the owner is in and the kernel never restarts: a
 * semtimedop, an epoll_pwait2, a msgrcv that a uthread made on that
 * carrier failed with EINTR as soon as another uthread's read completed.
 * So FlexSC-Threads' rings without SQPOLL are made with
 * IORING_SETUP_DEFER_TASKRUN (Linux 6.1; it needs SINGLE_ISSUER, which the
 * owner is): the work waits until the owner asks for completions (its
 * harvest, its sleep in io_uring_enter), and IORING_SETUP_TASKRUN_FLAG
 * sets IORING_SQ_TASKRUN meanwhile, which the harvest looks at. Only the
 * owner may then wait for completions, which the library's API allows
 * any thread (a queue passed on with a lock): its rings do without. Under
 * SQPOLL the kernel's thread submits, and the task work is its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/systab.h"
#include "engine/engine.h"

#define UD_WAKE (~0ull)
#define UD_IGNORE (~0ull - 1)
#define UD_POLL_TIMEOUT (1ull << 48) /* | the entry's index */

/* A call waiting for a descriptor (see the top of the file). */
struct fx_uring_poll {
	struct __kernel_timespec deadline; /* CLOCK_MONOTONIC; the kernel reads it at submission */
	int32_t res;                       /* the POLL_ADD's result, once it came */
	uint8_t cqes;                      /* completions still to come */
	bool timed_out;                    /* the linked timeout fired */
};

/* What an entry whose result the engine makes from io_uring's keeps in flight. */
union fx_uring_scratch {
	struct fx_uring_poll poll;
	struct statx stx; /* newfstatat: what STATX fills, to convert into struct stat */
};

struct fx_uring {
	struct io_uring ring;
	bool sqpoll;
	bool direct;           /* a sparse table of direct descriptors, one slot per entry */
	bool wake_armed;       /* an eventfd read is in flight */
	unsigned personality;  /* 0: the creator's credentials are current */
	int anchor;            /* the context anchor it holds (identity.h), or -1 */
	bool anchor_taken;     /* take_anchor ran: before the first SQE */
	bool anchored;         /* its owner shared the anchor's context when it took it */
	int owner_tid;         /* the one task that submits (IORING_SETUP_SINGLE_ISSUER) */
	struct fx_identity sq_id; /* SQPOLL: the identity its SQEs run with */
	uint64_t wake_buf;
	union fx_uring_scratch *scratch; /* one per entry */
	uint8_t *nb;           /* per entry: NB_* (a read that may wait on a cached "blocking") */
	uint64_t *written;     /* per entry: bytes a write continued after a short one moved so far */
	uint16_t *to_check;    /* entries NB_CHECK, added since the last harvest */
	unsigned nto_check;
};

/*
 * A read, receive or accept goes to the ring only when the descriptor
 * facts (core/fdfacts.c) say its descriptor blocks, and io_uring would wait
 * where an O_NONBLOCK descriptor fails with EAGAIN. Facts can be stale
 * (a number closed and made again where nothing saw it, a flag set by
 * another process), so such a call that has not completed by the next
 * harvest, that is one that waits, is checked once with fcntl(F_GETFL);
 * if its descriptor is O_NONBLOCK now it is cancelled and completes with
 * -EAGAIN, as the system call would have. A call that completes at once
 * costs nothing.
 */
enum { NB_NONE = 0, NB_CHECK, NB_CANCELLED };

static bool op_supported(const struct flexsc *fx, unsigned op)
{
	return op < 8 * sizeof(fx->uring_ops) && (fx->uring_ops[op / 8] & (1u << (op % 8)));
}

/*
 * The kernel's opcodes, asked once per process with a ring of its own
 * (io_uring_get_probe: seven system calls, a ring made and torn down): a
 * fork child, whose kernel is its parent's, keeps the answer, and so does
 * every instance after the first. 0: not asked yet; 1: no io_uring; 2: ops.
 */
static _Atomic int probed;
static uint8_t kernel_ops[sizeof(((struct flexsc *)0)->uring_ops)];

static void probe_kernel(void)
{
	struct io_uring_probe *p = io_uring_get_probe();
	uint8_t ops[sizeof(kernel_ops)] = { 0 };

	if (!p) {
		atomic_store_explicit(&probed, 1, memory_order_release);
		return;
	}
	for (unsigned op = 0; op <= p->last_op && op < 8 * sizeof(ops); op++)
		if (p->ops[op].flags & IO_URING_OP_SUPPORTED)
			ops[op / 8] |= (uint8_t)(1u << (op % 8));
	io_uring_free_probe(p);
	/* two threads that register at once may both ask: they write the same answer */
	memcpy(kernel_ops, ops, sizeof(ops));
	atomic_store_explicit(&probed, 2, memory_order_release);
}

void fx_uring_probe(struct flexsc *fx)
{
	if (!atomic_load_explicit(&probed, memory_order_acquire))
		probe_kernel();
	fx->uring_ok = false;
	if (atomic_load_explicit(&probed, memory_order_acquire) != 2)
		return;
	memcpy(fx->uring_ops, kernel_ops, sizeof(kernel_ops));
	/* io_uring would bypass the caller's filter; flexsc_register says so */
	fx->uring_ok = !fx_seccomp_filtered();
}

/*
 * The context anchor (core/identity.c), taken before the ring's first SQE:
 * the io-wq workers that resolve the ring's calls start at a submission
 * and keep the owner's context of then, so an anchor taken later could
 * vouch for a context they never had. Not at creation: its thread shares
 * the process's descriptor table, and a process whose only thread makes
 * every call itself (FlexSC-Threads, "A thread alone") and never uses its
 * ring then keeps the kernel's single-user descriptor lookups. An SQPOLL
 * ring takes it at creation, when its thread starts.
 */
static void take_anchor(struct fx_uring *r)
{
	if (fx_likely(r->anchor_taken))
		return;
	r->anchor_taken = true;
	r->anchor = fx_context_anchor_get();
	r->anchored = fx_task_shares(r->owner_tid, r->anchor, FX_SHARE_FILES | FX_SHARE_FS);
}

/*
 * The ring's size. Its memory counts against the locked-memory limit of
 * the user (RLIMIT_MEMLOCK, 8 MiB on Debian, shared by all of the user's
 * processes) unless the process has CAP_IPC_LOCK: sized after the queue
 * (two SQEs for each of 4,096 entries, four CQEs each), a ring took 800
 * KiB, and Apache's children, as www-data, got ten rings between them;
 * the others' calls all went to syscall threads (0.39x NPTL at 1,024
 * connections). The SQ only bounds what one io_uring_enter submits (a
 * longer batch is submitted in parts: get_sqe); the CQ holds what
 * completed and is not reaped yet, and what does not fit waits in the
 * kernel (IORING_FEAT_NODROP) for the harvest to fetch. So the sizes
 * are small: 128 SQEs and 1,024 CQEs, about 28 KiB a ring.
 */
#define FX_URING_SQ_MAX 128u
#define FX_URING_CQ_PER_SQ 8u

int fx_uring_create(struct flexsc_queue *q)
{
	const struct flexsc_config *c = &q->fx->cfg;
	struct fx_uring *r = calloc(1, sizeof(*r));
	unsigned sq = 2 * q->nentries < FX_URING_SQ_MAX ? 2 * q->nentries : FX_URING_SQ_MAX;
	struct io_uring_params p;
	int err;

	if (r) {
		r->scratch = calloc(q->nentries, sizeof(*r->scratch));
		r->nb = calloc(q->nentries, sizeof(*r->nb));
		r->to_check = calloc(q->nentries, sizeof(*r->to_check));
		r->written = calloc(q->nentries, sizeof(*r->written));
	}
	if (!r || !r->scratch || !r->nb || !r->to_check || !r->written) {
		if (r) {
			free(r->scratch);
			free(r->nb);
			free(r->to_check);
			free(r->written);
		}
		free(r);
		return -ENOMEM;
	}
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = FX_URING_CQ_PER_SQ * sq;
	if (c->sqpoll) {
		p.flags |= IORING_SETUP_SQPOLL;
		p.sq_thread_idle = c->sqpoll_idle_ms;
		if (c->nr_syscall_cpus) {
			p.flags |= IORING_SETUP_SQ_AFF;
			p.sq_thread_cpu = (unsigned)c->syscall_cpus[0];
		}
	} else {
		p.flags |= IORING_SETUP_SINGLE_ISSUER;
		/* only the owner may then reap: the runtime's queues; a library user's may be passed on */
		if (q->fx->rings_later)
			p.flags |= IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	}
	err = io_uring_queue_init_params(sq, &r->ring, &p);
	if (err == -EINVAL && (p.flags & IORING_SETUP_DEFER_TASKRUN)) {
		/* Linux 6.0 */
		p.flags &= ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
		err = io_uring_queue_init_params(sq, &r->ring, &p);
	}
	if (err == -EINVAL && (p.flags & IORING_SETUP_SINGLE_ISSUER)) {
		/* kernels before 6.0 */
		p.flags &= ~IORING_SETUP_SINGLE_ISSUER;
		err = io_uring_queue_init_params(sq, &r->ring, &p);
	}
	if (err) {
		fx_warn(q->fx, "io_uring setup failed (%s); this queue uses the fallback engine",
			strerror(-err));
		free(r->scratch);
		free(r->nb);
		free(r->to_check);
		free(r->written);
		free(r);
		return err;
	}
	r->ring.ring_fd = r->ring.enter_ring_fd = fx_fd_keep(r->ring.ring_fd);
	r->sqpoll = c->sqpoll;
	r->owner_tid = (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	r->anchor = -1;
	if (r->sqpoll) {
		take_anchor(r); /* its thread has the owner's context from now on */
		fx_identity_read(&r->sq_id);
		if (!r->anchored)
			fx_warn(q->fx, "this thread has a descriptor table or fs context of its own, "
				       "which an SQPOLL thread may not follow; its calls run on it");
	}
	unsigned workers[2] = { c->iowq_max_workers, c->iowq_max_workers };
	io_uring_register_iowq_max_workers(&r->ring, workers);
	/* without it (RLIMIT_NOFILE below the entries, say) descriptor-passing chains go elsewhere */
	r->direct = io_uring_register_files_sparse(&r->ring, q->nentries) == 0;
	if (!q->tq && q->own_wake.fd < 0)
		q->own_wake.fd = fx_fd_keep(eventfd(0, EFD_CLOEXEC)); /* blocking: the armed read must wait */
	q->ring = r;
	return 0;
}

/* Whether a chain may pass op 0's descriptor on through this queue's ring. */
bool fx_uring_has_direct(const struct flexsc_queue *q)
{
	return q->ring && q->ring->direct;
}

void fx_uring_destroy(struct flexsc_queue *q)
{
	fx_context_anchor_put(q->ring->anchor);
	fx_fd_unkeep(q->ring->ring.ring_fd); /* liburing closes it */
	io_uring_queue_exit(&q->ring->ring);
	free(q->ring->scratch);
	free(q->ring->nb);
	free(q->ring->to_check);
	free(q->ring->written);
	free(q->ring);
	q->ring = NULL;
}

static bool fits32(uint64_t v)
{
	return v <= UINT32_MAX;
}

static bool nonneg(uint64_t off)
{
	return (int64_t)off >= 0;
}

/*
 * Translates entry e into sqe. Returns false when io_uring would not give
 * exactly the system call's result for these arguments.
 */
static bool map(const struct flexsc_entry *e, struct io_uring_sqe *sqe)
{
	const uint64_t *a = e->args;
	void *p0 = (void *)(uintptr_t)a[0], *p1 = (void *)(uintptr_t)a[1];
	void *p2 = (void *)(uintptr_t)a[2], *p3 = (void *)(uintptr_t)a[3];
	int fd = (int)a[0];

	switch (e->sysnum) {
	case SYS_read:
		if (!fits32(a[2]))
			return false;
		io_uring_prep_read(sqe, fd, p1, (unsigned)a[2], -1);
		return true;
	case SYS_write:
		if (!fits32(a[2]))
			return false;
		io_uring_prep_write(sqe, fd, p1, (unsigned)a[2], -1);
		return true;
	case SYS_pread64:
		if (!fits32(a[2]) || !nonneg(a[3]))
			return false;
		io_uring_prep_read(sqe, fd, p1, (unsigned)a[2], a[3]);
		return true;
	case SYS_pwrite64:
		if (!fits32(a[2]) || !nonneg(a[3]))
			return false;
		io_uring_prep_write(sqe, fd, p1, (unsigned)a[2], a[3]);
		return true;
	case SYS_readv:
		io_uring_prep_readv(sqe, fd, p1, (unsigned)a[2], -1);
		return fits32(a[2]);
	case SYS_writev:
		io_uring_prep_writev(sqe, fd, p1, (unsigned)a[2], -1);
		return fits32(a[2]);
	case SYS_preadv:
	case SYS_pwritev:
		if (!fits32(a[2]) || !nonneg(a[3]))
			return false;
		io_uring_prep_rw(e->sysnum == SYS_preadv ? IORING_OP_READV : IORING_OP_WRITEV,
				 sqe, fd, p1, (unsigned)a[2], a[3]);
		return true;
	case SYS_preadv2:
	case SYS_pwritev2:
		/* offset -1 means the file position for both; a ring without IOPOLL refuses RWF_HIPRI */
		if (!fits32(a[2]) || ((int64_t)a[3] < -1) || (a[5] & RWF_HIPRI))
			return false;
		io_uring_prep_rw(e->sysnum == SYS_preadv2 ? IORING_OP_READV : IORING_OP_WRITEV,
				 sqe, fd, p1, (unsigned)a[2], a[3]);
		sqe->rw_flags = (int)a[5];
		return true;
	case SYS_poll: {
		/*
		 * One descriptor only: POLL_ADD waits for one; timeout 0 runs on
		 * the caller. And only a wait for input: io_uring always wakes
		 * for POLLRDHUP, which sockets report with POLLIN, so a wait for
		 * output alone on a half-closed socket would be woken again and
		 * again for an event poll does not report.
		 */
		struct pollfd *pfd = p0;
		if (a[1] != 1 || (int)a[2] == 0 || !fx_mem_rw_ok(pfd, sizeof(*pfd)) || pfd->fd < 0 ||
		    !(pfd->events & (POLLIN | POLLRDNORM)))
			return false;
		io_uring_prep_poll_add(sqe, pfd->fd, (uint16_t)pfd->events);
		return true;
	}
	case SYS_epoll_wait:
		/* timeout 0 runs on the caller */
		io_uring_prep_poll_add(sqe, fd, POLLIN);
		return (int)a[3] != 0;
	case SYS_fsync:
		io_uring_prep_fsync(sqe, fd, 0);
		return true;
	case SYS_fdatasync:
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		return true;
	case SYS_sync_file_range:
		if (!fits32(a[2]))
			return false;
		io_uring_prep_sync_file_range(sqe, fd, (unsigned)a[2], a[1], (int)a[3]);
		return true;
	case SYS_open:
		io_uring_prep_openat(sqe, AT_FDCWD, p0, (int)a[1], (mode_t)a[2]);
		return true;
	case SYS_creat:
		io_uring_prep_openat(sqe, AT_FDCWD, p0, O_CREAT | O_WRONLY | O_TRUNC, (mode_t)a[1]);
		return true;
	case SYS_openat:
		io_uring_prep_openat(sqe, fd, p1, (int)a[2], (mode_t)a[3]);
		return true;
	case SYS_openat2:
		io_uring_prep_rw(IORING_OP_OPENAT2, sqe, fd, p1, (unsigned)a[3], (uint64_t)a[2]);
		return fits32(a[3]);
	case SYS_close:
		io_uring_prep_close(sqe, fd);
		return true;
	case SYS_newfstatat:
		/*
		 * As STATX into the entry's scratch, converted at completion (the
		 * engine then writes the caller's struct stat, so it must be
		 * writable); the statx buffer is set by fx_uring_add.
		 */
		if (!a[1] || (a[3] & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)) ||
		    !fx_mem_rw_ok(p2, sizeof(struct stat)))
			return false;
		io_uring_prep_statx(sqe, fd, p1, (int)a[3], STATX_BASIC_STATS, NULL);
		return true;
	case SYS_statx:
		if (!a[1])
			return false; /* NULL with AT_EMPTY_PATH: the system call accepts it, io_uring faults */
		io_uring_prep_statx(sqe, fd, p1, (int)a[2], (unsigned)a[3], (void *)(uintptr_t)a[4]);
		return true;
	case SYS_accept:
		io_uring_prep_accept(sqe, fd, p1, p2, 0);
		return true;
	case SYS_accept4:
		io_uring_prep_accept(sqe, fd, p1, p2, (int)a[3]);
		return true;
	case SYS_connect:
		io_uring_prep_connect(sqe, fd, p1, (socklen_t)a[2]);
		return true;
	case SYS_recvfrom:
		if (a[4] || !fits32(a[2]))
			return false; /* io_uring's recv reports no source address */
		io_uring_prep_recv(sqe, fd, p1, (size_t)a[2], (int)a[3]);
		return true;
	case SYS_sendto:
		if (a[4] || !fits32(a[2]))
			return false;
		io_uring_prep_send(sqe, fd, p1, (size_t)a[2], (int)a[3]);
		return true;
	case SYS_recvmsg:
		io_uring_prep_recvmsg(sqe, fd, p1, (unsigned)a[2]);
		return true;
	case SYS_sendmsg:
		io_uring_prep_sendmsg(sqe, fd, p1, (unsigned)a[2]);
		return true;
	case SYS_shutdown:
		io_uring_prep_shutdown(sqe, fd, (int)a[1]);
		return true;
	case SYS_fallocate:
		io_uring_prep_fallocate(sqe, fd, (int)a[1], (off_t)a[2], (off_t)a[3]);
		return true;
	case SYS_fadvise64:
		if (!fits32(a[2]))
			return false;
		io_uring_prep_fadvise(sqe, fd, a[1], (off_t)a[2], (int)a[3]);
		return true;
	case SYS_madvise:
		if (!fits32(a[1]))
			return false;
		io_uring_prep_madvise(sqe, p0, (off_t)a[1], (int)a[2]);
		return true;
	case SYS_rename:
		io_uring_prep_renameat(sqe, AT_FDCWD, p0, AT_FDCWD, p1, 0);
		return true;
	case SYS_renameat:
		io_uring_prep_renameat(sqe, fd, p1, (int)a[2], p3, 0);
		return true;
	case SYS_renameat2:
		io_uring_prep_renameat(sqe, fd, p1, (int)a[2], p3, (unsigned)a[4]);
		return true;
	case SYS_unlink:
		io_uring_prep_unlinkat(sqe, AT_FDCWD, p0, 0);
		return true;
	case SYS_rmdir:
		io_uring_prep_unlinkat(sqe, AT_FDCWD, p0, AT_REMOVEDIR);
		return true;
	case SYS_unlinkat:
		io_uring_prep_unlinkat(sqe, fd, p1, (int)a[2]);
		return true;
	case SYS_mkdir:
		io_uring_prep_mkdirat(sqe, AT_FDCWD, p0, (mode_t)a[1]);
		return true;
	case SYS_mkdirat:
		io_uring_prep_mkdirat(sqe, fd, p1, (mode_t)a[2]);
		return true;
	case SYS_symlink:
		io_uring_prep_symlinkat(sqe, p0, AT_FDCWD, p1);
		return true;
	case SYS_symlinkat:
		io_uring_prep_symlinkat(sqe, p0, (int)a[1], p2);
		return true;
	case SYS_link:
		io_uring_prep_linkat(sqe, AT_FDCWD, p0, AT_FDCWD, p1, 0);
		return true;
	case SYS_linkat:
		io_uring_prep_linkat(sqe, fd, p1, (int)a[2], p3, (int)a[4]);
		return true;
	case SYS_splice:
		/* the system call updates the offsets it points to; io_uring takes them by value */
		if (a[1] || a[3] || !fits32(a[4]))
			return false;
		io_uring_prep_splice(sqe, fd, -1, (int)a[2], -1, (unsigned)a[4], (unsigned)a[5]);
		return true;
	case SYS_tee:
		if (!fits32(a[2]))
			return false;
		io_uring_prep_tee(sqe, fd, (int)a[1], (unsigned)a[2], (unsigned)a[3]);
		return true;
	case SYS_epoll_ctl:
		io_uring_prep_epoll_ctl(sqe, fd, (int)a[2], (int)a[1], p3);
		return true;
	case SYS_socket:
		io_uring_prep_socket(sqe, fd, (int)a[1], (int)a[2], 0);
		return true;
	case SYS_setxattr:
		io_uring_prep_setxattr(sqe, p1, p2, p0, (int)a[4], (unsigned)a[3]);
		return fits32(a[3]);
	case SYS_fsetxattr:
		io_uring_prep_fsetxattr(sqe, fd, p1, p2, (int)a[4], (unsigned)a[3]);
		return fits32(a[3]);
	case SYS_getxattr:
		io_uring_prep_getxattr(sqe, p1, p2, p0, (unsigned)a[3]);
		return fits32(a[3]);
	case SYS_fgetxattr:
		io_uring_prep_fgetxattr(sqe, fd, p1, p2, (unsigned)a[3]);
		return fits32(a[3]);
	case SYS_ftruncate:
		io_uring_prep_rw(FX_IORING_OP_FTRUNCATE, sqe, fd, NULL, 0, a[1]);
		return true;
	case SYS_bind:
		/* the kernel reads the address length from sqe->addr2 */
		io_uring_prep_rw(FX_IORING_OP_BIND, sqe, fd, p1, 0, a[2]);
		return true;
	case SYS_listen:
		io_uring_prep_rw(FX_IORING_OP_LISTEN, sqe, fd, NULL, (unsigned)a[1], 0);
		return true;
	default:
		return false;
	}
}

/* Calls that a socket timeout (SO_RCVTIMEO, SO_SNDTIMEO) would cut short; io_uring would not. */
static bool obeys_socket_timeout(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev:
	case SYS_recvfrom: case SYS_sendto: case SYS_recvmsg: case SYS_sendmsg:
	case SYS_accept: case SYS_accept4: case SYS_connect:
		return true;
	default:
		return false;
	}
}

/* Calls whose first argument is a descriptor that io_uring can take as a direct one. */
static bool takes_fixed_fd(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev:
	case SYS_preadv2: case SYS_pwritev2: case SYS_fsync: case SYS_fdatasync:
	case SYS_recvfrom: case SYS_sendto: case SYS_recvmsg: case SYS_sendmsg:
	case SYS_connect: case SYS_accept: case SYS_accept4: case SYS_shutdown:
	case SYS_fallocate: case SYS_close:
		return true;
	default:
		return false;
	}
}

/*
 * What the arguments do not say. io_uring polls and waits where a
 * nonblocking descriptor fails with EAGAIN (or connect with EINPROGRESS),
 * it reads or writes a pipe or socket at its head where a positioned
 * call fails with ESPIPE, and a read of a device that must wait waits for
 * data, where a terminal's would end by its VTIME timer (a read with
 * VMIN 0 never returned). And a file's: io_uring reads and writes at its
 * position without the lock the system calls take (threads writing lines
 * to one redirected stdout lost some, readers read data twice), and after
 * a short write (a full disk, RLIMIT_FSIZE) it returned counts of bytes
 * never written (6.18); so a file's reads at its position, and all its
 * writes, are system calls; a read at an offset stays. src/core/fdfacts.c
 * knows, mostly without asking the kernel; such calls take the fallback
 * route.
 */
static bool fd_fits(const struct flexsc_entry *e)
{
	const unsigned at_position_read = FX_FD_NONBLOCK | FX_FD_DEVICE | FX_FD_FILE;
	const unsigned at_position_write = FX_FD_NONBLOCK | FX_FD_FILE;
	bool at_position = (int64_t)e->args[3] == -1;
	unsigned unfit; /* the facts that keep the call off the ring: looked up once */

	switch (e->sysnum) {
	case SYS_read: case SYS_readv:
		unfit = at_position_read;
		break;
	case SYS_write: case SYS_writev:
		unfit = at_position_write;
		break;
	case SYS_preadv2:
		unfit = at_position ? at_position_read : FX_FD_UNSEEKABLE;
		break;
	case SYS_pwritev2:
		unfit = at_position ? at_position_write : FX_FD_UNSEEKABLE | FX_FD_FILE;
		break;
	case SYS_pwrite64: case SYS_pwritev:
		unfit = FX_FD_UNSEEKABLE | FX_FD_FILE;
		break;
	case SYS_pread64: case SYS_preadv:
		unfit = FX_FD_UNSEEKABLE;
		break;
	case SYS_recvfrom: case SYS_sendto: case SYS_recvmsg: case SYS_sendmsg:
	case SYS_accept: case SYS_accept4: case SYS_connect:
		unfit = FX_FD_NONBLOCK;
		break;
	default:
		return true;
	}
	return !(fx_fd_facts((int)e->args[0]) & unfit);
}

/*
 * recvmsg with room for ancillary data. On a UNIX stream socket with
 * SO_PASSCRED the kernel writes SCM_CREDENTIALS into the control buffer
 * even when the call fails with EAGAIN; io_uring, retrying after its poll,
 * goes on from where that write left the buffer: the credentials twice,
 * and SCM_RIGHTS cut off while its descriptors are installed (and leak).
 * Such a call takes the fallback route, where each attempt starts at the
 * buffer's head as the system call's does. A msghdr the library may not
 * read goes there too: the kernel fails it with EFAULT.
 */
static bool control_fits(const struct flexsc_entry *e)
{
	struct msghdr *m = (struct msghdr *)(uintptr_t)e->args[1];

	if (e->sysnum != SYS_recvmsg)
		return true;
	return fx_mem_rw_ok(m, sizeof(*m)) && (!m->msg_control || !m->msg_controllen);
}

/* Whether io_uring serves call nr by polling a descriptor (see the top of the file). */
static bool waits_by_poll(long nr)
{
	return nr == SYS_poll || nr == SYS_epoll_wait;
}

bool fx_uring_can(const struct flexsc *fx, const struct flexsc_entry *e, bool chained_fd)
{
	const struct fx_sysdesc *d = fx_sysdesc(e->sysnum);
	struct io_uring_sqe scratch;

	if (!d || d->uring_op == FX_NO_OPCODE || !op_supported(fx, d->uring_op))
		return false;
	if (waits_by_poll(e->sysnum) && !op_supported(fx, IORING_OP_LINK_TIMEOUT))
		return false;
	if (chained_fd) {
		for (unsigned a = 1; a < FLEXSC_MAX_ARGS; a++)
			if (e->args[a] == FLEXSC_CHAIN_FD)
				return false;
		if (e->args[0] == FLEXSC_CHAIN_FD && !takes_fixed_fd(e->sysnum))
			return false;
	}
	if (obeys_socket_timeout(e->sysnum) && e->args[0] != FLEXSC_CHAIN_FD &&
	    fx_fd_timed((int)e->args[0]))
		return false;
	memset(&scratch, 0, sizeof(scratch));
	if (!map(e, &scratch) || !control_fits(e))
		return false;
	/* a chain's own descriptor does not exist yet */
	return (chained_fd && e->args[0] == FLEXSC_CHAIN_FD) || fd_fits(e);
}

static struct io_uring_sqe *get_sqe(struct flexsc_queue *q)
{
	take_anchor(q->ring);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring->ring);

	if (!sqe) {
		/* SQ full: hand what we have to the kernel and take a slot again */
		io_uring_submit(&q->ring->ring);
		sqe = io_uring_get_sqe(&q->ring->ring);
	}
	/* under SQPOLL the slots free up once the kernel's thread has taken them */
	while (!sqe && q->ring->sqpoll && io_uring_sqring_wait(&q->ring->ring) >= 0)
		sqe = io_uring_get_sqe(&q->ring->ring);
	return sqe;
}

static void set_creds(struct fx_uring *r, struct io_uring_sqe *sqe)
{
	sqe->personality = (uint16_t)r->personality;
}

/* epoll_wait's events, without waiting: on the owner, before and after a wait. */
static int64_t epoll_take(const struct flexsc_entry *e)
{
	return fx_raw_syscall6(SYS_epoll_wait, (long)e->args[0], (long)e->args[1], (long)e->args[2],
			       0, 0, 0);
}

/* The kernel's new_encode_dev: how stat(2) packs a device number. */
static uint64_t encode_dev(uint32_t major, uint32_t minor)
{
	return (minor & 0xff) | ((uint64_t)major << 8) | ((uint64_t)(minor & ~0xffu) << 12);
}

/* newfstatat's result from STATX's, field by field as the kernel's cp_new_stat fills it. */
static void stat_from_statx(struct stat *st, const struct statx *x)
{
	struct stat s;

	memset(&s, 0, sizeof(s));
	s.st_dev = encode_dev(x->stx_dev_major, x->stx_dev_minor);
	s.st_ino = x->stx_ino;
	s.st_mode = x->stx_mode;
	s.st_nlink = x->stx_nlink;
	s.st_uid = x->stx_uid;
	s.st_gid = x->stx_gid;
	s.st_rdev = encode_dev(x->stx_rdev_major, x->stx_rdev_minor);
	s.st_size = (off_t)x->stx_size;
	s.st_blksize = x->stx_blksize;
	s.st_blocks = (blkcnt_t)x->stx_blocks;
	s.st_atim = (struct timespec){ x->stx_atime.tv_sec, x->stx_atime.tv_nsec };
	s.st_mtim = (struct timespec){ x->stx_mtime.tv_sec, x->stx_mtime.tv_nsec };
	s.st_ctim = (struct timespec){ x->stx_ctime.tv_sec, x->stx_ctime.tv_nsec };
	memcpy(st, &s, sizeof(s));
}

/*
 * Whether call nr may be an op of a chain of hard-linked SQEs: not when the
 * engine makes its result from more than one completion, or from scratch
 * memory of its own entry (newfstatat).
 */
bool fx_uring_chainable(long nr)
{
	return !waits_by_poll(nr) && nr != SYS_newfstatat;
}

/* The call's timeout in milliseconds, negative: none. */
static int poll_timeout_ms(const struct flexsc_entry *e)
{
	return (int)e->args[e->sysnum == SYS_poll ? 2 : 3];
}

/* A waiting call's POLL_ADD and, with a deadline, its linked timeout (two SQEs side by side). */
static void add_poll(struct flexsc_queue *q, unsigned idx, struct io_uring_sqe *sqe)
{
	struct fx_uring *r = q->ring;
	struct fx_uring_poll *p = &r->scratch[idx].poll;
	int timeout = poll_timeout_ms(&q->entries[idx]);

	map(&q->entries[idx], sqe);
	set_creds(r, sqe);
	io_uring_sqe_set_data64(sqe, idx + 1);
	p->cqes = 1;
	p->timed_out = false;
	if (timeout < 0)
		return;
	if (!p->deadline.tv_sec && !p->deadline.tv_nsec) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		p->deadline.tv_sec = now.tv_sec + timeout / 1000;
		p->deadline.tv_nsec = now.tv_nsec + (long)(timeout % 1000) * 1000000;
		if (p->deadline.tv_nsec >= 1000000000) {
			p->deadline.tv_sec++;
			p->deadline.tv_nsec -= 1000000000;
		}
	}
	struct io_uring_sqe *t = io_uring_get_sqe(&r->ring);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_link_timeout(t, &p->deadline, IORING_TIMEOUT_ABS);
	set_creds(r, t);
	io_uring_sqe_set_data64(t, UD_POLL_TIMEOUT | idx);
	p->cqes = 2;
}

/* A read, receive or accept the ring took because its descriptor is cached as blocking. */
static bool waits_on_cached_fact(const struct flexsc_entry *e)
{
	switch (e->sysnum) {
	case SYS_read: case SYS_readv: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_accept: case SYS_accept4:
		return true;
	case SYS_preadv2:
		return (int64_t)e->args[3] == -1;
	default:
		return false;
	}
}

/* The calls added since the last harvest that have not completed: those that wait. */
static void check_waiting(struct flexsc_queue *q)
{
	struct fx_uring *r = q->ring;
	bool cancelled = false;

	for (unsigned i = 0; i < r->nto_check; i++) {
		unsigned idx = r->to_check[i];
		const struct flexsc_entry *e = &q->entries[idx];
		if (r->nb[idx] != NB_CHECK)
			continue; /* completed meanwhile */
		r->nb[idx] = NB_NONE;
		int fd = (int)e->args[0];
		long fl = fx_raw_syscall6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
		if (fl < 0 || !(fl & O_NONBLOCK))
			continue;
		fx_fd_new(fd); /* the next call on it is asked again: it runs on the owner */
		struct io_uring_sqe *sqe = get_sqe(q);
		if (!sqe)
			continue;
		io_uring_prep_cancel64(sqe, idx + 1, 0);
		io_uring_sqe_set_data64(sqe, UD_IGNORE);
		r->nb[idx] = NB_CANCELLED;
		cancelled = true;
	}
	r->nto_check = 0;
	if (cancelled)
		io_uring_submit(&r->ring);
}

void fx_uring_add(struct flexsc_queue *q, unsigned idx)
{
	struct flexsc_entry *e = &q->entries[idx];
	bool poll = waits_by_poll(e->sysnum);
	struct io_uring_sqe *sqe;

	if (e->sysnum == SYS_epoll_wait) {
		int64_t ready = epoll_take(e);
		if (ready) {
			fx_queue_complete(q, idx, ready);
			return;
		}
	}

	/* a linked pair must go to the kernel in one submission */
	if (poll && io_uring_sq_space_left(&q->ring->ring) < 2)
		io_uring_submit(&q->ring->ring);
	sqe = poll && io_uring_sq_space_left(&q->ring->ring) < 2 ? NULL : get_sqe(q);
	if (fx_unlikely(!sqe)) {
		/* the kernel took nothing: run it here rather than lose it */
		fx_queue_complete(q, idx, fx_sync_run(e));
		return;
	}
	__atomic_store_n(&e->status, FLEXSC_BUSY, __ATOMIC_RELAXED);
	if (poll) {
		q->ring->scratch[idx].poll.deadline = (struct __kernel_timespec){ 0 };
		add_poll(q, idx, sqe);
		return;
	}
	map(e, sqe);
	if (e->sysnum == SYS_newfstatat)
		sqe->off = (uint64_t)(uintptr_t)&q->ring->scratch[idx].stx;
	set_creds(q->ring, sqe);
	io_uring_sqe_set_data64(sqe, idx + 1);
	struct fx_uring *r = q->ring;
	r->nb[idx] = NB_NONE;
	if (waits_on_cached_fact(e) && r->nto_check < q->nentries) {
		r->nb[idx] = NB_CHECK;
		r->to_check[r->nto_check++] = (uint16_t)idx;
	}
}

/*
 * A chain as hard-linked SQEs. The descriptor that op 0 opens goes into the
 * direct descriptor slot numbered like op 0's entry, which no other chain in
 * flight can hold.
 */
void fx_uring_add_chain(struct flexsc_queue *q, unsigned first)
{
	struct fx_uring *r = q->ring;
	bool fd = q->slots[first].chain_fd;
	unsigned slot = first, len = 0;

	/* one submission: a link that ended at the SQ's end would end the chain there */
	for (unsigned i = first; i != FX_NIL; i = q->link[i])
		len++;
	if (io_uring_sq_space_left(&r->ring) < len)
		io_uring_submit(&r->ring);
	while (io_uring_sq_space_left(&r->ring) < len && r->sqpoll && io_uring_sqring_wait(&r->ring) >= 0)
		;
	for (unsigned i = first; i != FX_NIL; i = q->link[i]) {
		struct io_uring_sqe *sqe = get_sqe(q);
		struct flexsc_entry *e = &q->entries[i];
		struct flexsc_entry local = *e;

		if (!sqe) {
			/* the SQ (twice the entries, or 128) had no room even after a submission: keep the results coherent */
			fx_queue_complete(q, i, -ECANCELED);
			continue;
		}
		if (fd && i == first) {
			if (e->sysnum == SYS_socket)
				io_uring_prep_socket_direct(sqe, (int)e->args[0], (int)e->args[1],
							    (int)e->args[2], slot, 0);
			else if (e->sysnum == SYS_open)
				io_uring_prep_openat_direct(sqe, AT_FDCWD, (void *)(uintptr_t)e->args[0],
							    (int)e->args[1], (mode_t)e->args[2], slot);
			else
				io_uring_prep_openat_direct(sqe, (int)e->args[0],
							    (void *)(uintptr_t)e->args[1],
							    (int)e->args[2], (mode_t)e->args[3], slot);
		} else if (fd && e->args[0] == FLEXSC_CHAIN_FD && e->sysnum == SYS_close) {
			io_uring_prep_close_direct(sqe, slot);
		} else if (fd && e->args[0] == FLEXSC_CHAIN_FD) {
			local.args[0] = slot;
			map(&local, sqe);
			sqe->flags |= IOSQE_FIXED_FILE;
		} else {
			map(e, sqe);
		}
		if (q->link[i] != FX_NIL)
			sqe->flags |= IOSQE_IO_HARDLINK;
		set_creds(r, sqe);
		io_uring_sqe_set_data64(sqe, i + 1);
		__atomic_store_n(&e->status, FLEXSC_BUSY, __ATOMIC_RELAXED);
	}
}

int fx_uring_commit(struct flexsc_queue *q)
{
	int r = io_uring_submit(&q->ring->ring);

	/* -EAGAIN/-EBUSY: the SQEs stay queued and go with the next submit or wait */
	return r < 0 ? r : 0;
}

/*
 * One of a poll's completions is in; with the last, the entry completes as
 * poll(2) would return. Returns whether it completed.
 */
static int poll_part_done(struct flexsc_queue *q, unsigned idx, bool *rearmed)
{
	struct fx_uring_poll *p = &q->ring->scratch[idx].poll;
	struct flexsc_entry *e = &q->entries[idx];
	struct pollfd *pfd = (struct pollfd *)(uintptr_t)e->args[0];
	bool is_poll = e->sysnum == SYS_poll;
	int64_t ret;

	if (--p->cqes)
		return 0;
	if (p->res >= 0) {
		/* what the caller gets: the events poll reports, or epoll_wait's */
		ret = is_poll ? p->res & (pfd->events | POLLERR | POLLHUP | POLLNVAL) : epoll_take(e);
		if (ret == 0 && !p->timed_out && io_uring_sq_space_left(&q->ring->ring) < 2)
			io_uring_submit(&q->ring->ring); /* the rearms so far: room for this one */
		if (ret == 0 && !p->timed_out && io_uring_sq_space_left(&q->ring->ring) >= 2) {
			add_poll(q, idx, io_uring_get_sqe(&q->ring->ring));
			*rearmed = true;
			return 0;
		}
		if (is_poll) {
			pfd->revents = (short)ret;
			ret = ret != 0;
		}
	} else if (p->res == -ECANCELED && p->timed_out) {
		if (is_poll)
			pfd->revents = 0;
		ret = 0;
	} else if (p->res == -EBADF && is_poll) {
		pfd->revents = POLLNVAL;
		ret = 1;
	} else {
		ret = p->res; /* -ECANCELED: interrupted by flexsc_cancel or the runtime */
	}
	fx_queue_complete(q, idx, ret);
	return 1;
}

/*
 * Short writes. A blocking write, writev, send or sendmsg to a pipe or a
 * stream socket moves everything before it returns, unless an error or a
 * signal stops it (then it returns what it moved); io_uring returns what
 * one attempt moved. So a short result goes in again for the rest, as a
 * plain write (send, with the call's flags) of what is left of the data,
 * one buffer of the vector at a time, and the entry completes with the
 * sum; an error after some bytes completes it with those bytes, as the
 * kernel counts. On an O_NONBLOCK descriptor the next attempt says EAGAIN
 * at once. Chained entries are left as they are (a chain's ops are linked
 * SQEs). Returns whether the entry went in again.
 */
static bool write_rest(struct flexsc_queue *q, unsigned idx, int64_t *res)
{
	struct fx_uring *r = q->ring;
	const struct flexsc_entry *e = &q->entries[idx];
	const struct iovec *iov = NULL;
	uint64_t len = 0, cnt = 1, *written = &r->written[idx];
	int flags = 0;
	bool send = false;

	switch (e->sysnum) {
	case SYS_write: case SYS_sendto: case SYS_writev: case SYS_sendmsg:
		break;
	default:
		return false;
	}
	if (q->slots[idx].chained)
		return false;
	uint64_t total = *written + (uint64_t)(*res > 0 ? *res : 0);
	if (*res <= 0) {
		if (*written)
			*res = (int64_t)*written; /* an error after some bytes: the bytes */
		goto done;
	}
	/* the kernel read the arguments and moved bytes: they are valid memory */
	switch (e->sysnum) {
	case SYS_write: len = e->args[2]; break;
	case SYS_sendto: len = e->args[2], flags = (int)e->args[3], send = true; break;
	case SYS_writev: iov = (const struct iovec *)(uintptr_t)e->args[1], cnt = e->args[2]; break;
	default: {
		const struct msghdr *m = (const struct msghdr *)(uintptr_t)e->args[1];
		iov = m->msg_iov, cnt = m->msg_iovlen, flags = (int)e->args[2], send = true;
	}
	}
	if (flags & MSG_DONTWAIT)
		goto done;
	/* the rest: the unwritten part of the first buffer not written in full */
	const void *base = (const void *)(uintptr_t)e->args[1];
	uint64_t at = total;
	if (iov) {
		uint64_t i = 0;
		while (i < cnt && at >= iov[i].iov_len)
			at -= iov[i++].iov_len;
		if (i == cnt)
			goto all;
		base = iov[i].iov_base, len = iov[i].iov_len;
	} else if (at >= len) {
		goto all;
	}
	struct io_uring_sqe *sqe = get_sqe(q);
	if (!sqe)
		goto all;
	if (send)
		io_uring_prep_send(sqe, (int)e->args[0], (const char *)base + at, (size_t)(len - at), flags);
	else
		io_uring_prep_write(sqe, (int)e->args[0], (const char *)base + at, (unsigned)(len - at), -1);
	set_creds(r, sqe);
	io_uring_sqe_set_data64(sqe, idx + 1);
	*written = total;
	return true;
all:
	*res = (int64_t)total;
done:
	*written = 0;
	return false;
}

/*
 * io_uring's connect does not wait for a connection already under way (an
 * earlier connect cut short by a signal, then restarted or made again):
 * it fails with EALREADY, which connect(2) gives only on a non-blocking
 * socket, and those never come here (fd_fits). On a blocking one the call
 * waits until the connection is made or fails: it goes out again by the
 * route that waits as the call does (fx_queue_reroute). True if it did.
 */
static bool connect_retried(struct flexsc_queue *q, unsigned idx, int64_t res)
{
	if (res != -EALREADY || q->entries[idx].sysnum != SYS_connect || q->slots[idx].chained)
		return false;
	fx_queue_reroute(q, idx, -1);
	return true;
}

/*
 * io_uring tries an open with O_NONBLOCK first and keeps that result
 * unless it is EAGAIN, and a FIFO obeys the flag: opened for reading it
 * does not wait for a writer, for writing it fails with ENXIO while there
 * is no reader, where open(2) without O_NONBLOCK waits for the other end
 * (fifo(7)). Such an open goes out again by the route that waits as the
 * call does (fx_queue_reroute). The read end it made stays open meanwhile,
 * which is what a waiting open(2) does too (a writer that comes finds a
 * reader), and the retry's descriptor takes its number. Costs an fstat
 * per open for reading that io_uring completed; a write-only open only
 * when it fails with ENXIO. True if the entry went out again.
 */
static bool fifo_open_retried(struct flexsc_queue *q, unsigned idx, int64_t res)
{
	const struct flexsc_entry *e = &q->entries[idx];
	struct stat st;

	uint8_t op = fx_systab[e->sysnum].uring_op; /* every completion comes here: the table's one load first */

	if ((op != IORING_OP_OPENAT && op != IORING_OP_OPENAT2) || (res < 0 && res != -ENXIO) ||
	    q->slots[idx].chained)
		return false; /* not read before: openat2's open_how may be what failed */
	int flags = fx_open_flags(e->sysnum, e->args);
	if (flags < 0 || (flags & (O_NONBLOCK | O_PATH)))
		return false;
	if (res == -ENXIO && (flags & O_ACCMODE) == O_WRONLY) {
		fx_queue_reroute(q, idx, -1);
		return true;
	}
	if (res < 0 || (flags & O_ACCMODE) != O_RDONLY ||
	    fx_raw_syscall6(SYS_fstat, res, (long)&st, 0, 0, 0, 0) || !S_ISFIFO(st.st_mode))
		return false;
	/*
	 * A writer came already (its data is there, or it came and went: HUP):
	 * open(2) would have returned once it came. So would the open if io-wq
	 * ran it (O_CREAT, a path not cached), waiting as the call does. Else
	 * the retry waits for one; a writer that comes and goes between this
	 * look and the retry's start is not seen by it (docs/design.md).
	 */
	struct pollfd p = { (int)res, POLLIN, 0 };
	if (fx_raw_syscall6(SYS_poll, (long)&p, 1, 0, 0, 0, 0) == 1)
		return false;
	fx_raw_syscall6(SYS_fcntl, res, F_SETFD, FD_CLOEXEC, 0, 0, 0); /* not into a child meanwhile */
	fx_queue_reroute(q, idx, (int)res);
	return true;
}

static int harvest_cq(struct flexsc_queue *q)
{
	struct fx_uring *r = q->ring;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int n = 0;

	bool rearmed = false;

	io_uring_for_each_cqe(&r->ring, head, cqe) {
		uint64_t ud = cqe->user_data;

		seen++;
		if (ud == UD_WAKE) {
			r->wake_armed = false;
		} else if (ud == UD_IGNORE) {
			continue;
		} else if ((ud & ~0xffffull) == UD_POLL_TIMEOUT) {
			unsigned idx = (unsigned)(ud & 0xffff);
			r->scratch[idx].poll.timed_out = cqe->res == -ETIME;
			n += poll_part_done(q, idx, &rearmed);
		} else if (waits_by_poll(q->entries[ud - 1].sysnum)) {
			r->scratch[ud - 1].poll.res = cqe->res;
			n += poll_part_done(q, (unsigned)(ud - 1), &rearmed);
		} else {
			const struct flexsc_entry *e = &q->entries[ud - 1];
			int64_t res = cqe->res;
			if (e->sysnum == SYS_newfstatat && cqe->res == 0)
				stat_from_statx((struct stat *)(uintptr_t)e->args[2], &r->scratch[ud - 1].stx);
			/* cancelled because its descriptor is O_NONBLOCK (check_waiting) */
			if (fx_unlikely(r->nb[ud - 1] == NB_CANCELLED) && (res == -ECANCELED || res == -EINTR))
				res = -EAGAIN;
			if (fifo_open_retried(q, (unsigned)(ud - 1), res) || connect_retried(q, (unsigned)(ud - 1), res))
				continue;
			if (fx_unlikely(res != (int64_t)e->args[2] || r->written[ud - 1]) &&
			    write_rest(q, (unsigned)(ud - 1), &res)) {
				rearmed = true; /* submitted below */
				continue;
			}
			r->nb[ud - 1] = NB_NONE;
			fx_queue_complete(q, (unsigned)(ud - 1), res);
			n++;
		}
	}
	io_uring_cq_advance(&r->ring, seen);
	if (r->nto_check)
		check_waiting(q);
	if (rearmed)
		io_uring_submit(&r->ring);
	return n;
}

/*
 * Whether completions wait in the kernel: ones the CQ had no room for, or
 * deferred task work (IORING_SQ_TASKRUN), which only the owner's
 * io_uring_enter runs.
 */
static bool cq_needs_flush(const struct io_uring *ring)
{
	return IO_URING_READ_ONCE(*ring->sq.kflags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN);
}

int fx_uring_harvest(struct flexsc_queue *q)
{
	struct io_uring *ring = &q->ring->ring;
	int n = 0;

	/* fetched now, not at the next sleep */
	if (cq_needs_flush(ring))
		io_uring_get_events(ring);
	do
		n += harvest_cq(q);
	while (fx_unlikely(cq_needs_flush(ring)) && io_uring_get_events(ring) >= 0 && io_uring_cq_ready(ring));
	return n;
}

/*
 * Sleeps in io_uring_enter until a completion arrives. An eventfd read is
 * kept armed on the ring so that syscall threads and flexsc_queue_wake can
 * end the sleep too.
 */
int fx_uring_sleep(struct flexsc_queue *q, const struct timespec *rel)
{
	struct fx_uring *r = q->ring;
	struct fx_wake *w = q->wake;
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;

	if (!r->wake_armed && w->fd >= 0) {
		struct io_uring_sqe *sqe = get_sqe(q);
		if (sqe) {
			io_uring_prep_read(sqe, w->fd, &r->wake_buf, sizeof(r->wake_buf), 0);
			io_uring_sqe_set_data64(sqe, UD_WAKE);
			r->wake_armed = true;
		}
	}
	/* seq_cst: pairs with the fence in fx_wake_up */
	atomic_store(&w->sleep, r->wake_armed ? FX_SLEEP_EVENTFD : FX_SLEEP_NONE);
	if (fx_wake_pending(q)) {
		atomic_store(&w->sleep, FX_SLEEP_NONE);
		io_uring_submit(&r->ring);
		return 0;
	}
	if (rel) {
		ts.tv_sec = rel->tv_sec;
		ts.tv_nsec = rel->tv_nsec;
	}
	int err = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, rel ? &ts : NULL, NULL);
	atomic_store(&w->sleep, FX_SLEEP_NONE);
	return err < 0 ? err : 0;
}

int fx_uring_cancel(struct flexsc_queue *q, unsigned idx)
{
	struct io_uring_sqe *sqe = get_sqe(q);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_cancel64(sqe, idx + 1, 0);
	io_uring_sqe_set_data64(sqe, UD_IGNORE);
	io_uring_submit(&q->ring->ring);
	return 0;
}

/*
 * Whether the owner still shares what (FX_SHARE_*) of the descriptor
 * table and fs context it had when it made the ring (those of the
 * process: kcmp against the context anchor), which the ring's io-wq
 * workers, and its SQPOLL thread, were started with and keep.
 */
bool fx_uring_shares_context(struct flexsc_queue *q, unsigned what)
{
	struct fx_uring *r = q->ring;

	take_anchor(r);
	return r->anchored && fx_task_shares(r->owner_tid, r->anchor, what);
}

/*
 * Whether the ring runs calls as an owner with identity id (read on the
 * owner just now): always without SQPOLL; with it, if the owner still
 * shares the descriptor table and fs context it had when it made the ring
 * (those of the process: kcmp against the context anchor), and the SQEs
 * carry its credentials, registering them as a new personality if they
 * changed.
 */
bool fx_uring_runs_as(struct flexsc_queue *q, const struct fx_identity *id)
{
	struct fx_uring *r = q->ring;

	if (!r->sqpoll)
		return true;
	if (id->seccomp || id->ngroups < 0 || !fx_uring_shares_context(q, FX_SHARE_FILES | FX_SHARE_FS))
		return false;
	if (fx_identity_same(id, &r->sq_id))
		return true;
	if (id->personality != r->sq_id.personality)
		return false; /* not part of a personality; nothing reads it through a ring anyway */
	int pid = io_uring_register_personality(&r->ring);
	if (pid < 0)
		return false;
	if (r->personality)
		io_uring_unregister_personality(&r->ring, (int)r->personality);
	r->personality = (unsigned)pid;
	r->sq_id = *id;
	return true;
}
