"""SSH and runner errors as messages a person reads (benchmarks.messages: the app translates them).

The exceptions in benchmarks.ssh keep their English technical text for logs; what a person reads is built
here from their kind, cause and values, so a Chinese page never shows paramiko's or our English wording.
"""

from __future__ import annotations

from benchmarks.messages import Message
from benchmarks.messages import message as _
from benchmarks.ssh import HostKeyChanged, NotInstalled, SSHError, UnknownHostKey


def _where(exc: SSHError) -> str:
    return f"{exc.host}:{exc.port}" if exc.port else exc.host or "?"


def _unreachable(exc: SSHError) -> Message:
    if exc.reason == "resolve":
        return _("无法解析主机名 %(host)s：请检查地址是否写对", host=exc.host)
    if exc.reason == "no_route":
        return _("没有到 %(where)s 的网络路由：请检查地址和本机网络", where=_where(exc))
    return _("无法到达 %(where)s：请检查地址、端口和本机网络", where=_where(exc))


def _timeout(exc: SSHError) -> Message:
    if exc.reason == "handshake":
        return _(
            "%(where)s 接受了连接，但在限定时间内没有完成 SSH 握手：该端口可能不是 SSH 服务",
            where=_where(exc),
        )
    return _("%(where)s 在限定时间内没有应答：可能被防火墙拦截，或地址、端口不对", where=_where(exc))


def _auth_failed(exc: SSHError) -> Message:
    if exc.reason == "no_credentials":
        return _("须填写私钥或密码")
    if exc.reason == "method":
        return _("%(where)s 不接受这种登录方式（可用：%(allowed)s）", where=_where(exc), allowed=exc.detail)
    return _("%(where)s 拒绝登录：用户名、密码或私钥不对", where=_where(exc))


def _invalid_key(exc: SSHError) -> Message:
    if exc.reason == "encrypted":
        return _("私钥已加密：请填写私钥口令")
    return _("私钥无法读取：须为 Ed25519、ECDSA 或 RSA 私钥（OpenSSH 或 PEM 格式），口令须正确")


def _unknown_host_key(exc: UnknownHostKey) -> Message:
    return _(
        "%(where)s 的主机密钥尚未固定：%(key_type)s %(fingerprint)s。请向供应商核实"
        "（在服务器上运行 ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub）后再固定",
        where=_where(exc),
        key_type=exc.key_type,
        fingerprint=exc.fingerprint,
    )


def _host_key_changed(exc: HostKeyChanged) -> Message:
    return _(
        "%(where)s 的主机密钥已改变：已固定 %(expected)s，服务器出示 %(key_type)s %(fingerprint)s。"
        "已拒绝连接：服务器可能重装过，也可能有人在中间拦截；请先向供应商核实再固定新密钥",
        where=_where(exc),
        expected=exc.expected,
        key_type=exc.key_type,
        fingerprint=exc.fingerprint,
    )


def ssh_message(exc: SSHError | NotInstalled) -> Message:
    """What went wrong with a trial server, in the current language, naming what to check."""
    if isinstance(exc, NotInstalled):
        return _("服务器 %(host)s 上没有安装 %(tool)s", host=exc.host, tool=exc.tool)
    if isinstance(exc, UnknownHostKey):
        return _unknown_host_key(exc)
    if isinstance(exc, HostKeyChanged):
        return _host_key_changed(exc)
    if exc.kind == "refused":
        return _("%(where)s 拒绝连接：该端口没有 SSH 服务在监听", where=_where(exc))
    if exc.kind == "timeout":
        return _timeout(exc)
    if exc.kind == "unreachable":
        return _unreachable(exc)
    if exc.kind == "auth_failed":
        return _auth_failed(exc)
    if exc.kind == "invalid_key":
        return _invalid_key(exc)
    if exc.kind == "disconnected":
        return _("与 %(where)s 的连接中断了", where=_where(exc))
    return _("与 %(where)s 的 SSH 通信失败", where=_where(exc))
