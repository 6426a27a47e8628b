/* SPDX-License-Identifier: MIT */
/* Time-slicing: a uthread that computes while others wait gives way (src/threads/preempt.c). */
#ifndef FX_THREADS_PREEMPT_H
#define FX_THREADS_PREEMPT_H

#include <stdbool.h>
#include <stdint.h>

struct fx_carrier;

/* Notes where the code is that must never be interrupted by a switch; once, at start. */
void fx_preempt_init(void);
/* Whether pc is in the program's own code, where no lock of the runtime's, libc's or the loader's is held. */
bool fx_switch_safe_at(uintptr_t pc);
/* The monitor's: asks c's running uthread to give way, if it still runs at c's switch count `switches`. */
void fx_preempt_request(struct fx_carrier *c, uint64_t switches);
/* The poke handler's, last: gives way for the uthread it interrupted at uc, if asked and safe. */
void fx_preempt_poked(struct fx_carrier *c, void *uc);
/* Uthreads that gave way so, since start (--stats). */
uint64_t fx_preempt_count(void);

#endif
