"""The loopback SMTP server and webhook receiver, and the app wired to them, for every notification test."""

from tests.notify.test_notifications import hooks, mail, notify_app, receiver, smtp_server

__all__ = ["hooks", "mail", "notify_app", "receiver", "smtp_server"]
