"""What the benchmarks ran on, reported beside every figure."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what the platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cores() -> int:
    """The cores this process may run on (what `nproc` prints)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 0


def ram_gb() -> float:
    """The machine's memory (MemTotal), in GB."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return 0.0


def load() -> float:
    """The 1-minute load average (what `uptime` prints first)."""
    return round(os.getloadavg()[0], 2)


def process_mb(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM (the peak), RssAnon (the process's own memory) and RssFile (mapped files: the
    page cache's, shared between processes) of a process, in MB: {"rss", "peak", "anon", "file"}."""
    names = {"VmRSS": "rss", "VmHWM": "peak", "RssAnon": "anon", "RssFile": "file"}
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in names:
            out[names[key]] = round(int(value.split()[0]) / 1024, 1)
    return out
