"""Counters of the host's own work, beside wall time: this thread's CPU time,
its user-space cycles and instructions where perf_event_open allows them,
and the machine's steal time (/proc/stat).

The device machines' hosts run the same code at one speed or at about half
of it, switching every few seconds (bench/probes/host_core_probe.py), and a
host-bound training step moves with them by more than the 1% a comparison
of allocators measures. Which of these counters stays put when the wall
time doubles says what the slow state is (bench/probes/host_state_probe.py), and
that one measures a step's host work with the state taken out.
"""
import ctypes
import os
import struct
import time

# perf_event_open (x86-64): a hardware counter of the calling thread's user
# space (the kernel's and the hypervisor's excluded, which an unprivileged
# process may count at perf_event_paranoid 2).
_SYS_PERF_EVENT_OPEN = 298
_PERF_TYPE_HARDWARE = 0
CPU_CYCLES = 0
INSTRUCTIONS = 1
# perf_event_attr.flags bits: exclude_kernel (5), exclude_hv (6).
_EXCLUDE_KERNEL_HV = (1 << 5) | (1 << 6)


def open_counter(config):
    """A file descriptor counting `config` for this thread from now on, or
    None (no PMU in the guest, perf_event_paranoid, not x86-64)."""
    if os.uname().machine != "x86_64":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    # perf_event_attr, version 0 (64 bytes): type, size, config,
    # sample_period, sample_type, read_format, flags, wakeup_events,
    # bp_type, config1.
    attr = ctypes.create_string_buffer(
        struct.pack("IIQQQQQIIQ", _PERF_TYPE_HARDWARE, 64, config, 0, 0, 0,
                    _EXCLUDE_KERNEL_HV, 0, 0, 0), 64)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(_SYS_PERF_EVENT_OPEN), attr, 0, -1, -1, ctypes.c_ulong(0))
    return fd if fd >= 0 else None


def read_counter(fd):
    return struct.unpack("Q", os.read(fd, 8))[0] if fd is not None else 0


def cpu_jiffies():
    """(steal, total) time of all CPUs so far, in jiffies, from /proc/stat's
    first line ((0, 0) where it cannot be read; steal 0 where not reported)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields)


def steal_jiffies():
    """The machine's steal time so far, in jiffies (0 where not reported)."""
    return cpu_jiffies()[0]


class ThreadCounters:
    """Reads the counters for the thread that made it: read() returns (its
    CPU ns, cycles, instructions, steal jiffies, the process's CPU ns) so
    far. The process's CPU time counts every thread: a training step's
    backward pass runs on PyTorch's autograd device thread, not on the
    thread that called backward()."""

    def __init__(self):
        self.cycles = open_counter(CPU_CYCLES)
        self.instructions = open_counter(INSTRUCTIONS)
        self.perf = self.cycles is not None and self.instructions is not None

    def read(self):
        return (time.thread_time_ns(), read_counter(self.cycles),
                read_counter(self.instructions), steal_jiffies(), time.process_time_ns())

    @staticmethod
    def delta(before, after):
        """What one interval cost: this thread's CPU ms, cycles (millions),
        instructions (millions), steal (ms of all CPUs, at USER_HZ = 100),
        and the process's CPU ms."""
        return {"cpu_ms": (after[0] - before[0]) / 1e6,
                "mcycles": (after[1] - before[1]) / 1e6,
                "minstr": (after[2] - before[2]) / 1e6,
                "steal_ms": (after[3] - before[3]) * 10.0,
                "process_cpu_ms": (after[4] - before[4]) / 1e6}
