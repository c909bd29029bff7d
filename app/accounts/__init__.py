"""Accounts: users, passwords, login throttling, API tokens and login sessions."""
