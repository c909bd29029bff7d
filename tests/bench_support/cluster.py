"""A small cluster for matrix tests: N network namespaces, fully meshed by veth pairs, one link shaped.

Each node is a namespace reached from the test (gpuvet's side) over its own management veth, and has an
intranet address on its loopback routed to every other node over the direct link between them, so traffic
between two nodes crosses exactly one link, as it would through one switch port each.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from itertools import combinations

from tests.bench_support.netns import TBF, ShapedLink, sh


@dataclass
class MeshNode:
    """One node: its namespace, the address gpuvet reaches it on, the intranet address other nodes use."""

    name: str
    link: ShapedLink
    intranet_address: str

    @property
    def namespace(self) -> str:
        """The node's network namespace."""
        return self.link.namespace

    @property
    def address(self) -> str:
        """Management address (sshd listens here)."""
        return self.link.inner_address

    def ns(self, *argv: str) -> None:
        """Run a command inside the node's namespace."""
        self.link.ns(*argv)


class MeshCluster:
    """N namespaces with a veth between every pair; `shaped` pairs get a tbf rate on both ends."""

    def __init__(self, count: int = 3, shaped: dict[tuple[int, int], int] | None = None) -> None:
        self.count, self.shaped = count, shaped or {}
        self.tag = f"{random.randrange(16**4):04x}"
        self.octet = random.randrange(10, 250)
        self.nodes: list[MeshNode] = []
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> MeshCluster:
        try:
            for index in range(self.count):
                link = self._stack.enter_context(ShapedLink(rate_mbit=None))
                node = MeshNode(f"node{index + 1}", link, f"10.201.{self.octet}.{index + 1}")
                node.ns("ip", "addr", "add", f"{node.intranet_address}/32", "dev", "lo")
                self.nodes.append(node)
            for pair, (a, b) in enumerate(combinations(range(self.count), 2)):
                self._link(pair, self.nodes[a], self.nodes[b], self.shaped.get((a, b)))
        except BaseException:
            self._stack.close()
            raise
        return self

    def _link(self, pair: int, a: MeshNode, b: MeshNode, rate_mbit: int | None) -> None:
        """A veth between two nodes, addressed as a /30, with host routes to each other's intranet address."""
        left, right = f"gvm{self.tag}{pair}a", f"gvm{self.tag}{pair}b"
        first, second = f"10.202.{self.octet}.{4 * pair + 1}", f"10.202.{self.octet}.{4 * pair + 2}"
        sh("ip", "link", "add", left, "type", "veth", "peer", "name", right)
        sh("ip", "link", "set", left, "netns", a.namespace)
        sh("ip", "link", "set", right, "netns", b.namespace)
        for node, device, mine, theirs, other in ((a, left, first, second, b), (b, right, second, first, a)):
            node.ns("ip", "addr", "add", f"{mine}/30", "dev", device)
            node.ns("ip", "link", "set", device, "up")
            node.ns("ip", "route", "add", f"{other.intranet_address}/32", "via", theirs, "dev", device)
            if rate_mbit:
                node.ns("tc", "qdisc", "add", "dev", device, "root", "tbf", "rate", f"{rate_mbit}mbit", *TBF)

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()  # deleting each namespace deletes its veths
