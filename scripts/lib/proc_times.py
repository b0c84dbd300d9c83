"""CPU time of running processes, from /proc: what scripts/bench.py and scripts/test/cluster-test charge a server
per request."""
import os


def cpu_seconds(pids):
    """User and system CPU seconds the processes `pids` have used so far, all their threads together (a process's
    /proc/PID/stat counts its threads, those that ended too); a process that is gone counts nothing."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total
