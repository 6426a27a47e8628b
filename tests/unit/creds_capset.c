// SPDX-License-Identifier: MIT
/*
 * Capabilities dropped while staying uid 0: the file is 0600 and belongs to
 * uid 12345, so root opens it only through CAP_DAC_OVERRIDE. After capset()
 * removes CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the effective,
 * permitted and inheritable sets (libflexsc wraps capset; it changes the
 * calling thread only), a posted open fails with -EACCES on every engine,
 * and a posted geteuid still says 0. Driver: creds_util.h. Needs root.
 */
#define _GNU_SOURCE
#include <linux/capability.h>

#include "creds_util.h"

int capset(cap_user_header_t hdrp, const cap_user_data_t datap);
int capget(cap_user_header_t hdrp, cap_user_data_t datap);

static void drop_dac(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint32_t mask = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);

	CHECK_EQ(capget(&h, d), 0);
	d[0].effective &= ~mask;
	d[0].permitted &= ~mask;
	d[0].inheritable &= ~mask;
	CHECK_EQ(capset(&h, d), 0);
	CHECK_EQ(geteuid(), 0);
}

int main(void)
{
	c_setup(12345);
	return c_run_all("creds_capset", "capset without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH", drop_dac, 0);
}
