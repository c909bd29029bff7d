"""WSGI entry point: `flask --app wsgi ...` and `gunicorn wsgi:app`.

The pages, API and sign-in are set up on first use (the first request, or the first URL built), so CLI
commands that need none of them start fast; under gunicorn each worker sets them up before serving.
"""

import sys

from app import create_app

app = create_app(defer_setup=True)

if "gunicorn" in sys.modules:  # a worker finishes now rather than on its first request
    app.finish_setup()
