# gdb script: backtraces of every FlexSC-Threads user thread of a process.
#   gdb -p PID -batch -ex 'thread apply all bt' -x bench/servers/uthreads-bt.py
#
# `thread apply all bt` shows only the carriers (the kernel threads) and
# what each runs now. The user threads that are parked (blocked on a lock,
# waiting for an exception-less call, runnable) live only as a saved stack
# pointer in their struct fx_uthread (src/threads/rt.h). This finds those
# structures by their magic number in the process's writable anonymous
# mappings (and the heap), and unwinds each parked one from the frame fx_ctx_switch
# (src/threads/ctx.S) left: [mxcsr, fcw][r15 r14 r13 r12 rbx rbp][return].
# It borrows the first thread's registers to do so and restores them
# before gdb detaches. It reads only the first fields of struct fx_uthread
# (magic, sp, tcb, on_cpu, state), which src/threads/rt.h declares first.
import struct
import gdb

MAGIC = 0xF1E75C7472656164
STATES = ["RUNNABLE", "RUNNING", "BLOCKED", "SYSCALL", "OVERFLOW", "EXITED"]


def mappings(pid):
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            perms = parts[1]
            name = parts[5] if len(parts) > 5 else ""
            if "rw" in perms[:2] and (name in ("", "[heap]") or name.startswith("[anon")):
                yield lo, hi


def find_uthreads(inf):
    pat = struct.pack("<Q", MAGIC)
    found = []
    for lo, hi in mappings(inf.pid):
        addr = lo
        while addr < hi:
            try:
                hit = inf.search_memory(addr, hi - addr, pat)
            except gdb.error:
                break
            if hit is None:
                break
            if hit % 8 == 0:
                found.append(hit)
            addr = hit + 8
    return found


def main():
    inf = gdb.selected_inferior()
    us = find_uthreads(inf)
    print("=== %d FlexSC-Threads user thread structures found ===" % len(us))
    regs = ["rip", "rsp", "rbp", "rbx", "r12", "r13", "r14", "r15"]
    thread = inf.threads()[-1]  # the lowest-numbered: the main thread
    thread.switch()
    saved = {r: int(gdb.parse_and_eval("$" + r)) for r in regs}
    try:
        for u in us:
            raw = bytes(inf.read_memory(u, 32))
            _, sp, tcb, on_cpu, state = struct.unpack("<QQQii", raw)
            st = STATES[state] if 0 <= state < len(STATES) else str(state)
            print("\n--- uthread %#x (pthread_t %#x) state %s on_cpu %d" % (u, tcb, st, on_cpu))
            if st in ("RUNNING", "EXITED") or sp == 0:
                print("    (running on a carrier: see the carriers above)" if st == "RUNNING" else "    (no saved context)")
                continue
            try:
                fr = struct.unpack("<8Q", bytes(inf.read_memory(sp, 64)))
            except gdb.MemoryError:
                print("    saved stack unreadable")
                continue
            r15, r14, r13, r12, rbx, rbp, ret = fr[1:8]
            for name, val in (("rsp", sp + 64), ("rip", ret), ("rbp", rbp), ("rbx", rbx),
                              ("r12", r12), ("r13", r13), ("r14", r14), ("r15", r15)):
                gdb.execute("set $%s = %#x" % (name, val), to_string=True)
            gdb.execute("flushregs", to_string=True)
            try:
                print(gdb.execute("bt 30", to_string=True), end="")
            except gdb.error as e:
                print("    bt failed: %s" % e)
    finally:
        for r, v in saved.items():
            gdb.execute("set $%s = %#x" % (r, v), to_string=True)
        gdb.execute("flushregs", to_string=True)


main()
