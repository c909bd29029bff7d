"""WSGI entry point: `flask --app wsgi ...` and `gunicorn wsgi:app`."""

from app import create_app

app = create_app()
