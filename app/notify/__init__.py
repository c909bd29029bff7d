"""Notifications: watches and inbox, dispatch of change events, e-mail, webhooks and schedules."""
