"""A shaped link for tests: a network namespace joined to this one by a veth pair, rate-limited with tc tbf.

This side gets 10.200.N.1/24, the namespace 10.200.N.2/24 (N picked at random and unused). tbf shapes
both directions; `set_rate` changes it while traffic flows (netem is not available on these machines).
Everything is deleted on exit, also after failures.
"""

from __future__ import annotations

import contextlib
import logging
import random
import subprocess

log = logging.getLogger(__name__)

TBF = ["burst", "64kb", "latency", "50ms"]


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command with a timeout, raising with its stderr on failure."""
    result = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def netns_supported() -> tuple[bool, str]:
    """Whether `ip netns add` and veth pairs work here, and why not when they do not."""
    name = f"gvcheck{random.randrange(10**6)}"
    try:
        result = sh("ip", "netns", "add", name, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"ip netns add: {exc}"
    if result.returncode != 0:
        return False, f"ip netns add is not permitted here: {result.stderr.strip()}"
    sh("ip", "netns", "del", name, check=False)
    return True, ""


class ShapedLink:
    """Namespace + veth pair + tbf on both ends; a context manager that always cleans up."""

    def __init__(self, rate_mbit: int | None = 200) -> None:
        tag = f"{random.randrange(16**5):05x}"
        self.namespace = f"gvb{tag}"
        self.outer = f"gvb{tag}o"  # in this namespace
        self.inner = f"gvb{tag}i"  # in the test namespace
        used = sh("ip", "-4", "-o", "addr", "show").stdout
        subnet = next(n for n in random.sample(range(10, 250), 240) if f"10.200.{n}." not in used)
        self.outer_address = f"10.200.{subnet}.1"
        self.inner_address = f"10.200.{subnet}.2"
        self.rate_mbit = rate_mbit

    def __enter__(self) -> ShapedLink:
        try:
            sh("ip", "netns", "add", self.namespace)
            sh("ip", "link", "add", self.outer, "type", "veth", "peer", "name", self.inner)
            sh("ip", "link", "set", self.inner, "netns", self.namespace)
            sh("ip", "addr", "add", f"{self.outer_address}/24", "dev", self.outer)
            sh("ip", "link", "set", self.outer, "up")
            self.ns("ip", "addr", "add", f"{self.inner_address}/24", "dev", self.inner)
            self.ns("ip", "link", "set", self.inner, "up")
            self.ns("ip", "link", "set", "lo", "up")
            if self.rate_mbit:
                self._tbf("add", self.rate_mbit)
        except BaseException:
            self.close()
            raise
        return self

    def ns(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run a command inside the namespace."""
        return sh("ip", "netns", "exec", self.namespace, *argv, check=check)

    def _tbf(self, verb: str, rate_mbit: int) -> None:
        rate = ["rate", f"{rate_mbit}mbit", *TBF]
        sh("tc", "qdisc", verb, "dev", self.outer, "root", "tbf", *rate)
        self.ns("tc", "qdisc", verb, "dev", self.inner, "root", "tbf", *rate)

    def set_rate(self, rate_mbit: int) -> None:
        """Change the shaped rate of both directions while traffic flows."""
        self._tbf("change", rate_mbit)
        self.rate_mbit = rate_mbit

    def close(self) -> None:
        """Delete the namespace (which deletes the veth pair); idempotent."""
        with contextlib.suppress(Exception):
            sh("ip", "netns", "del", self.namespace, check=False)
        with contextlib.suppress(Exception):
            sh("ip", "link", "del", self.outer, check=False)

    def __exit__(self, *exc_info: object) -> None:
        self.close()
