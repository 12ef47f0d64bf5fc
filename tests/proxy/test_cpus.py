"""proxy/cpus.py: `--workers auto` from the cgroup CPU quota (v2 and v1), capped; 1 without a quota."""

from __future__ import annotations

from pathlib import Path

from proxy.cpus import MAX_AUTO_WORKERS, cgroup_cpu_limit, default_workers


def v2(tmp_path: Path, path: str, limits: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for rel, text in limits.items():
        directory = root / rel.strip("/") if rel.strip("/") else root
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "cpu.max").write_text(text + "\n")
    self_cgroup = tmp_path / "self"
    self_cgroup.write_text(f"0::{path}\n")
    return root, self_cgroup


def test_a_v2_quota_in_the_container_namespace(tmp_path: Path) -> None:
    root, me = v2(tmp_path, "/", {"/": "150000 100000"})
    assert cgroup_cpu_limit(root, me) == 1.5
    assert default_workers(1.5, cpus=16) == 2


def test_the_smallest_quota_along_the_path_wins(tmp_path: Path) -> None:
    root, me = v2(tmp_path, "/kubepods/pod1/c1", {"/kubepods/pod1": "200000 100000",
                                                  "/kubepods/pod1/c1": "max 100000", "/kubepods": "max 100000"})
    assert cgroup_cpu_limit(root, me) == 2.0


def test_no_quota_means_one_worker(tmp_path: Path) -> None:
    root, me = v2(tmp_path, "/", {"/": "max 100000"})
    assert cgroup_cpu_limit(root, me) is None
    assert cgroup_cpu_limit(tmp_path / "absent", tmp_path / "absent-self") is None
    assert default_workers(None, cpus=64, read=False) == 1


def test_a_v1_quota(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    mount = root / "cpu,cpuacct"
    mount.mkdir(parents=True)
    (mount / "cpu.cfs_quota_us").write_text("300000\n")
    (mount / "cpu.cfs_period_us").write_text("100000\n")
    me = tmp_path / "self"
    me.write_text("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n")  # the container sees its own at the mount
    assert cgroup_cpu_limit(root, me) == 3.0
    (mount / "cpu.cfs_quota_us").write_text("-1\n")
    assert cgroup_cpu_limit(root, me) is None


def test_capped_by_the_affinity_mask_and_the_maximum() -> None:
    assert default_workers(12.0, cpus=4) == 4
    assert default_workers(32.0, cpus=64) == MAX_AUTO_WORKERS
    assert default_workers(0.5, cpus=4) == 1
    assert default_workers(2.0, cpus=4) == 2  # an exact quota is not rounded up to 3
