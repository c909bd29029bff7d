"""Stand-ins for the cluster tools this kernel cannot run (no GPU, no RDMA): mpirun, all_reduce_perf and
perftest's ib_write_bw / ib_read_lat, each printing a recorded output and appending its argv to a log.

Installed next to the stand-in nvidia-smi into a folder put first on the test sshds' PATH.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from tests.bench_support.cluster import MeshCluster
from tests.bench_support.gpu import install_standin
from tests.bench_support.sshd import Sshd

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"
MULTI_NODE_TABLE = DATA / "nccl" / "all_reduce_2x8xh100_roce.txt"

MPIRUN = """#!/bin/sh
# Stand-in Open MPI launcher: logs its arguments and prints a recorded two-node all_reduce_perf table.
if [ "$1" = "--version" ]; then echo "mpirun (Open MPI) 4.1.4"; exit 0; fi
echo "mpirun $*" >> '@LOG@'
cat '@TABLE@'
"""
ALL_REDUCE_PERF = """#!/bin/sh
echo "all_reduce_perf stand-in: launched through mpirun only" >&2
exit 1
"""
# A client names the server's address last; the server waits for it (here: briefly), like perftest.
PERFTEST = """#!/bin/sh
echo "$(basename "$0") $*" >> '@LOG@'
last=""; for a in "$@"; do last="$a"; done
case "$last" in
  *.*.*.*) sleep 0.2; cat '@RECORDED@' ;;
  *) echo "************************************"
     echo "* Waiting for client to connect... *"
     echo "************************************"
     sleep 1 ;;
esac
"""


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def install_cluster_standins(bin_dir: Path, log: Path, *, table: Path = MULTI_NODE_TABLE) -> Path:
    """nvidia-smi, mpirun, all_reduce_perf, ib_write_bw and ib_read_lat stand-ins in `bin_dir`; returns it."""
    install_standin(bin_dir)
    _write(bin_dir / "mpirun", MPIRUN.replace("@LOG@", str(log)).replace("@TABLE@", str(table)))
    _write(bin_dir / "all_reduce_perf", ALL_REDUCE_PERF)
    for program, recorded in (("ib_write_bw", "ib_write_bw_gbits.txt"), ("ib_read_lat", "ib_read_lat.txt")):
        script = PERFTEST.replace("@LOG@", str(log)).replace("@RECORDED@", str(DATA / "rdma" / recorded))
        _write(bin_dir / program, script)
    return bin_dir


def logged(log: Path, program: str) -> list[list[str]]:
    """The argv (without the program) of each logged call of `program`."""
    if not log.exists():
        return []
    return [line.split()[1:] for line in log.read_text().splitlines() if line.split()[:1] == [program]]


@contextmanager
def standin_cluster(
    base: Path, count: int = 3, shaped: dict[tuple[int, int], int] | None = None
) -> Iterator[tuple[MeshCluster, list[Sshd], Path]]:
    """A MeshCluster with an sshd on each node's management address, the stand-ins first on every PATH.

    Yields the mesh, the sshds (node order) and the log the stand-ins append their calls to.
    """
    bin_dir, log = install_cluster_standins(base / "bin", base / "calls.log"), base / "calls.log"
    with MeshCluster(count, shaped=shaped) as mesh, ExitStack() as servers:
        sshds = [
            servers.enter_context(
                Sshd(
                    base / node.name,
                    address=node.address,
                    port=2222,
                    netns=node.namespace,
                    path_prefix=[str(bin_dir)],
                )
            )
            for node in mesh.nodes
        ]
        yield mesh, sshds, log
