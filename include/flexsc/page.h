/* SPDX-License-Identifier: MIT */
/*
 * The syscall page: the ABI shared by whoever posts system calls and whoever
 * executes them (FlexSC paper, section 3.1).
 *
 * A page holds 64 entries of 64 bytes; a queue owns a group of pages (by
 * default 8, so 512 entries). An entry moves through four states:
 *
 *   FREE --post--> SUBMITTED --engine picks it--> BUSY --result stored--> DONE
 *     ^                                                                    |
 *     +----------------- result collected by the queue's owner ------------+
 *
 * Who stores which state:
 *  - The queue's owner (one thread) moves an entry FREE -> SUBMITTED when
 *    it posts and DONE -> FREE when it collects the result. It also stores
 *    BUSY and DONE for the calls it runs itself (the synchronous route, and
 *    calls that must run on the caller, which go FREE -> BUSY -> DONE at
 *    post time), and DONE (ret -ECANCELED) for a call it cancels before an
 *    engine took it.
 *  - Engines move an entry SUBMITTED -> BUSY -> DONE. A syscall thread
 *    takes it with a compare-and-swap from SUBMITTED to BUSY (acquire) and
 *    stores DONE with release after ret. The io_uring engine's side runs on
 *    the owner: BUSY when the call becomes an SQE, DONE when its completion
 *    is harvested (the kernel never reads the page).
 *  - Every DONE is a release store after ret, by whoever makes it, so an
 *    observer of the page sees ret before DONE; the owner stores both once
 *    more when it files a syscall thread's result.
 *
 * The status byte is the only field both sides touch concurrently. The
 * owner's other stores (SUBMITTED, BUSY, FREE) are relaxed: an engine only
 * reaches an entry through its index in a ring (the syscall threads'
 * submission ring, the io_uring SQ), whose tail is published with release
 * after the entry is filled, and returns it through a completion ring
 * published the same way. The owner never reads the status byte: it keeps
 * its own view of each entry beside the pages.
 */
#ifndef FLEXSC_PAGE_H
#define FLEXSC_PAGE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum flexsc_status {
	FLEXSC_FREE = 0,      /* owned by the queue's owner, not in use */
	FLEXSC_SUBMITTED = 1, /* posted; waiting for an engine */
	FLEXSC_BUSY = 2,      /* an engine is executing it */
	FLEXSC_DONE = 3,      /* ret holds the raw result (>= 0, or -errno) */
};

#define FLEXSC_MAX_ARGS 6
#define FLEXSC_PAGE_SIZE 4096
#define FLEXSC_ENTRY_SIZE 64
#define FLEXSC_ENTRIES_PER_PAGE (FLEXSC_PAGE_SIZE / FLEXSC_ENTRY_SIZE)

struct flexsc_entry {
	uint8_t status;   /* enum flexsc_status; accessed atomically */
	uint8_t nargs;    /* 0..6 */
	uint16_t sysnum;  /* x86-64 system call number */
	uint32_t gen;     /* bumped at every reuse; half of a call descriptor */
	uint64_t args[FLEXSC_MAX_ARGS];
	int64_t ret;      /* raw kernel result: >= 0, or -errno */
} __attribute__((aligned(FLEXSC_ENTRY_SIZE)));

_Static_assert(sizeof(struct flexsc_entry) == FLEXSC_ENTRY_SIZE,
	       "a syscall entry is one 64-byte cache line");
_Static_assert(_Alignof(struct flexsc_entry) == FLEXSC_ENTRY_SIZE,
	       "entries never straddle cache lines");
_Static_assert(FLEXSC_PAGE_SIZE % FLEXSC_ENTRY_SIZE == 0,
	       "a page holds a whole number of entries");

#ifdef __cplusplus
}
#endif
#endif
