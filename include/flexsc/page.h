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
 * Only the queue's owner (one thread) moves an entry out of FREE and back
 * into it, and only an engine moves it from SUBMITTED to DONE. The status
 * byte is the only field both sides touch concurrently: the writer of each
 * state publishes it with a release store after filling the other fields,
 * and the reader loads it with acquire before reading them.
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
