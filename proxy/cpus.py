"""How many workers `--workers auto` starts: the CPUs the container may use, from its cgroup CPU quota.

A Kubernetes CPU limit becomes a CFS quota (cgroup v2 `cpu.max` = "<quota> <period>", v1
`cpu.cfs_quota_us` / `cpu.cfs_period_us`); `os.cpu_count()` and the affinity mask show the node's cores, not
the limit. The quota is read along the process's cgroup path and its ancestors (the smallest wins, as the
kernel enforces every level), rounded up, and capped by the affinity mask and MAX_AUTO_WORKERS.

Without any quota the answer is 1: that is a developer's machine or a pod without a CPU limit, and N workers
would each load the rules and the semantic model (a few hundred MiB each) and compete with the model server
for cores nobody granted. `--workers N` says otherwise explicitly.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

MAX_AUTO_WORKERS = 8
CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _ancestors(base: Path, relative: str) -> list[Path]:
    """`base/relative` and each parent up to `base` itself."""
    parts = [part for part in relative.split("/") if part and part not in (".", "..")]
    return [base.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def _v2_limit(text: str | None) -> float | None:
    if not text:
        return None
    quota, _, period = text.partition(" ")
    if quota == "max" or not quota.isdigit() or not period.isdigit() or int(period) == 0:
        return None
    return int(quota) / int(period)


def _v1_limit(directory: Path) -> float | None:
    quota, period = _read(directory / "cpu.cfs_quota_us"), _read(directory / "cpu.cfs_period_us")
    if quota is None or period is None or not quota.isdigit() or not period.isdigit() or int(period) == 0:
        return None  # -1: no quota
    return int(quota) / int(period)


def cgroup_cpu_limit(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> float | None:
    """CPUs the CFS quota allows this process (e.g. 1.5), or None when no level sets a quota."""
    limits: list[float] = []
    for line in (_read(self_cgroup) or "").splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and not controllers:  # cgroup v2: one unified hierarchy
            for directory in _ancestors(root, path):
                limit = _v2_limit(_read(directory / "cpu.max"))
                if limit is not None:
                    limits.append(limit)
        elif "cpu" in controllers.split(","):
            for mount in (root / controllers, root / "cpu", root / "cpu,cpuacct"):
                # In a container the controller's mount is the container's own cgroup, whatever the path says.
                for directory in [*_ancestors(mount, path), mount]:
                    limit = _v1_limit(directory)
                    if limit is not None:
                        limits.append(limit)
    return min(limits) if limits else None


def affinity_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def default_workers(limit: float | None = None, cpus: int | None = None, *, read: bool = True) -> int:
    """`--workers auto`: ceil(quota) capped by the affinity mask and MAX_AUTO_WORKERS; 1 without a quota."""
    if limit is None and read:
        limit = cgroup_cpu_limit()
    if limit is None:
        return 1
    cpus = affinity_cpus() if cpus is None else cpus
    return max(1, min(math.ceil(limit - 1e-9), cpus, MAX_AUTO_WORKERS))
