"""Outgoing e-mail through the SMTP server named in the settings (GPUVET_SMTP_*)."""

from __future__ import annotations

import smtplib
import socket
import ssl
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from flask import current_app, has_app_context

from app.core.i18n import localized
from benchmarks.messages import Message
from benchmarks.messages import message as N_


class MailError(Exception):
    """E-mail could not be sent; str() says why in the reader's language, `wording` keeps the message."""

    def __init__(self, wording: Message) -> None:
        super().__init__(wording.msgid)
        self.wording = wording

    def __str__(self) -> str:
        return localized(self.wording)


class MailDisabled(MailError):
    """No SMTP host is configured, so e-mail is off."""


def _settings(settings: Any) -> Any:
    if settings is not None:
        return settings
    if has_app_context():
        return current_app.config["GPUVET_SETTINGS"]
    from app.core.config import Settings

    return Settings()


def mail_enabled(settings: Any = None) -> bool:
    """Whether an SMTP host is configured."""
    return bool(_settings(settings).smtp_host)


def build_message(
    settings: Any, to: str | list[str], subject: str, text: str, html: str | None
) -> EmailMessage:
    """The message: plain text, with an HTML alternative when `html` is given."""
    recipients = [to] if isinstance(to, str) else list(to)
    if not recipients or not all(address and "@" in address for address in recipients):
        raise MailError(N_("收件人地址无效：%(to)s", to=", ".join(recipients) or "-"))
    message = EmailMessage()
    try:
        message["From"] = settings.smtp_from
        message["To"] = ", ".join(recipients)
        message["Subject"] = subject
    except ValueError:  # a line break would start a header of its own (header injection)
        raise MailError(N_("邮件标题或地址含换行符，未发送")) from None
    message["Message-ID"] = make_msgid(domain=settings.smtp_from.rpartition("@")[2] or "localhost")
    message.set_content(text)
    if html is not None:
        message.add_alternative(html, subtype="html")
    return message


def send_mail(
    to: str | list[str], subject: str, text: str, html: str | None = None, *, settings: Any = None
) -> str:
    """Send one e-mail and return its Message-ID; raise MailDisabled (no host) or MailError (the cause)."""
    settings = _settings(settings)
    if not settings.smtp_host:
        raise MailDisabled(N_("未配置邮件服务器（GPUVET_SMTP_HOST），邮件通知已关闭"))
    message = build_message(settings, to, subject, text, html)
    where = f"{settings.smtp_host}:{settings.smtp_port}"
    try:
        with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout_s) as smtp:
            if settings.smtp_starttls:
                smtp.starttls(context=ssl.create_default_context())
            if settings.smtp_user:
                password = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
                smtp.login(settings.smtp_user, password)
            smtp.send_message(message)
    except smtplib.SMTPAuthenticationError as error:
        raise MailError(
            N_("邮件服务器 %(where)s 拒绝登录：%(error)s", where=where, error=_reason(error))
        ) from error
    except smtplib.SMTPNotSupportedError as error:
        raise MailError(
            N_("邮件服务器 %(where)s 不支持 STARTTLS（可设 GPUVET_SMTP_STARTTLS=false）", where=where)
        ) from error
    except smtplib.SMTPRecipientsRefused as error:
        raise MailError(
            N_("邮件服务器 %(where)s 拒收：%(error)s", where=where, error=_reason(error))
        ) from error
    except (smtplib.SMTPException, OSError) as error:
        raise MailError(
            N_("发往邮件服务器 %(where)s 失败：%(error)s", where=where, error=_reason(error))
        ) from error
    return str(message["Message-ID"])


def _reason(error: Exception) -> Message | str:
    """A short text for an smtplib/socket error: the server's own answer, or the network failure in words."""
    if isinstance(error, socket.gaierror):
        return N_("无法解析其域名")
    if isinstance(error, ConnectionRefusedError):
        return N_("连接被拒绝：该端口上没有邮件服务在接收")
    if isinstance(error, (TimeoutError, socket.timeout)):
        return N_("没有在限定时间内回复")
    if isinstance(error, smtplib.SMTPServerDisconnected):
        return N_("连接被对方关闭")
    if isinstance(error, smtplib.SMTPResponseException):
        detail = (
            error.smtp_error.decode(errors="replace")
            if isinstance(error.smtp_error, bytes)
            else error.smtp_error
        )
        return f"{error.smtp_code} {detail}"
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return "; ".join(f"{to}: {code} {msg!r}" for to, (code, msg) in error.recipients.items())
    if isinstance(error, OSError):
        return N_("网络错误（%(kind)s）", kind=type(error).__name__)
    return str(error) or type(error).__name__
