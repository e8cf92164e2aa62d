# ruff: noqa: S603  (runs `ip`/`iptables` with arguments built here)
"""The cluster's network: one namespace per node, each with a veth pair into a bridge in the
root namespace, which is the clients' side. Every name starts with PREFIX so that `teardown`
finds what an interrupted run left behind and removes only that."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

PREFIX = "tc25"
BRIDGE = f"{PREFIX}br"
SUBNET = "10.25.0"
GATEWAY = f"{SUBNET}.1"  # the bridge: the root namespace (clients, checks) on the cluster's network

# Node name -> its last address byte.
NODES = {"db": 2, "llm": 3, "lb": 10, "web1": 11, "web2": 12, "worker1": 21, "worker2": 22, "sched": 30}


def address(node: str) -> str:
    return f"{SUBNET}.{NODES[node]}"


def namespace(node: str) -> str:
    return f"{PREFIX}-{node}"


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def in_ns(node: str, *cmd: str) -> list[str]:
    """`cmd` run in the node's namespace (`ip netns exec` execs it: the pid is the command's)."""
    return ["ip", "netns", "exec", namespace(node), *cmd]


def build() -> None:
    """The bridge, then for each node a namespace, a veth pair (host end in the bridge) and its address."""
    sh("ip", "link", "add", BRIDGE, "type", "bridge")
    sh("ip", "addr", "add", f"{GATEWAY}/24", "dev", BRIDGE)
    sh("ip", "link", "set", BRIDGE, "up")
    for node, byte in NODES.items():
        ns, host_end = namespace(node), f"{PREFIX}v{byte}"
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", "eth0", "netns", ns)
        sh("ip", "link", "set", host_end, "master", BRIDGE, "up")
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{SUBNET}.{byte}/24", "dev", "eth0")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")


def namespaces() -> list[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"{PREFIX}-")]


def pids_in(ns: str) -> list[int]:
    out = sh("ip", "netns", "pids", ns, check=False).stdout
    return [int(p) for p in out.split() if p.isdigit()]


def teardown() -> list[str]:
    """Kill every process still in one of the cluster's namespaces (by pid), delete the namespaces,
    the veth pairs with them, and the bridge. What was found, for the report."""
    found = namespaces()
    for ns in found:
        for pid in pids_in(ns):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    for ns in found:
        sh("ip", "netns", "del", ns, check=False)
    for line in sh("ip", "-o", "link", "show", check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(PREFIX):  # the bridge, and host ends a half-built run left
            sh("ip", "link", "del", name, check=False)
            found.append(name)
    return found


def block_redis(node: str, blocked: bool) -> None:
    """Drop (or stop dropping) every packet between `node` and Redis, in the node's namespace."""
    action = "-I" if blocked else "-D"
    for chain, direction in (("OUTPUT", "--dport"), ("INPUT", "--sport")):
        sh(*in_ns(node, "iptables", action, chain, "-p", "tcp", "-d" if chain == "OUTPUT" else "-s",
                  address("db"), direction, "6379", "-j", "DROP"))  # fmt: skip
