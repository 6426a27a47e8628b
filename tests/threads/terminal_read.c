/*
 * read(2) of a terminal in noncanonical mode, as termios(3) describes MIN
 * and TIME, on a pseudoterminal's slave side, with another thread running
 * (the one that writes to the master side):
 *   1. MIN 0, TIME 2: nothing written, so "the timer expires without any
 *      input becoming available, read(2) returns 0";
 *   2. MIN 0, TIME 20: a byte written 50 ms later: read returns it;
 *   3. MIN 2, TIME 1: one byte written, no second: the interbyte timer
 *      "is started after the initial byte arrives", and read returns the
 *      one byte when it expires;
 *   4. canonical mode: a line written 50 ms later: read returns the line.
 * A read still waiting after 3 s gets a byte from a watchdog thread, so a
 * read that does not end by its timer is a FAIL, not a hang. Under
 * FlexSC-Threads io_uring served the read by polling for data, and case
 * 1 never returned.
 */
#define _GNU_SOURCE
#include <termios.h>

#define CHECK_NAME "terminal_read"
#include "check.h"

static int master = -1;
static atomic_int done;

static void *watchdog(void *arg)
{
	(void)arg;
	for (int i = 0; i < 300 && !atomic_load(&done); i++)
		sleep_ms(10);
	if (!atomic_load(&done) && write(master, "W", 1) != 1)
		perror("watchdog write");
	return NULL;
}

struct later {
	const char *bytes;
	int delay_ms;
};

static void *writer(void *arg)
{
	struct later *l = arg;

	sleep_ms(l->delay_ms);
	EXPECT(write(master, l->bytes, strlen(l->bytes)) == (ssize_t)strlen(l->bytes), "write: %s",
	       strerror(errno));
	return NULL;
}

/* A read of up to len bytes of slave, with MIN and TIME (canonical when min < 0), while bytes come later. */
static ssize_t read_with(int slave, int min, int time, const char *bytes, char *buf, size_t len)
{
	struct termios t;
	struct later l = { bytes, 50 };
	pthread_t w = 0, dog;

	tcgetattr(slave, &t);
	cfmakeraw(&t);
	if (min < 0) {
		t.c_lflag |= ICANON;
	} else {
		t.c_cc[VMIN] = (cc_t)min;
		t.c_cc[VTIME] = (cc_t)time;
	}
	tcsetattr(slave, TCSANOW, &t);
	tcflush(slave, TCIOFLUSH);
	atomic_store(&done, 0);
	dog = spawn(watchdog, NULL);
	if (bytes)
		w = spawn(writer, &l);
	ssize_t n = read(slave, buf, len);
	atomic_store(&done, 1);
	if (w)
		pthread_join(w, NULL);
	pthread_join(dog, NULL);
	return n;
}

int main(void)
{
	char buf[64];
	ssize_t n;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		printf("%s: skip: no pseudoterminal (%s)\n", CHECK_NAME, strerror(errno));
		return 77;
	}
	int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	if (slave < 0) {
		printf("%s: skip: cannot open the slave side (%s)\n", CHECK_NAME, strerror(errno));
		return 77;
	}

	n = read_with(slave, 0, 2, NULL, buf, sizeof(buf));
	resultf(n == 0, "MIN 0, TIME 2, no input: read returns 0 when the timer expires (got %zd)", n);
	n = read_with(slave, 0, 20, "a", buf, sizeof(buf));
	result("MIN 0, TIME 20, a byte 50 ms later: read returns it", n == 1 && buf[0] == 'a');
	n = read_with(slave, 2, 1, "b", buf, sizeof(buf));
	result("MIN 2, TIME 1, one byte: read returns it when the interbyte timer expires",
	       n == 1 && buf[0] == 'b');
	n = read_with(slave, -1, 0, "a line\n", buf, sizeof(buf));
	result("canonical, a line 50 ms later: read returns the line",
	       n == 7 && memcmp(buf, "a line\n", 7) == 0);
	return failed;
}
