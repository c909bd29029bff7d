"""gunicorn settings for serving gpuvet (scripts/run.sh passes -c gunicorn.conf.py).

gunicorn answers over-long request lines and oversized headers itself, with a plain-text page outside the
app's error shape. Its limits are raised here above the app's own (app/core/guards.py: 8 KiB URL, 8 KiB per
header, 32 KiB of headers, 100 header fields), so the app answers 414 / 431 in the documented shape.
"""

from app.core.config import Settings, private_dir

# 0 lifts gunicorn's 8,190-byte request-line cap; its fast parser still stops at 1 MiB, and the app
# refuses anything over 8 KiB first. Put a reverse proxy with its own limits in front on the internet.
limit_request_line = 0
# Bytes per header line (name and value), and header lines per request.
limit_request_field_size = 32 * 1024
limit_request_fields = 200

# gunicorn (25.1+) opens a control socket for `gunicornc`, by default $XDG_RUNTIME_DIR/gunicorn.ctl or
# ~/.gunicorn/gunicorn.ctl: one path for every gunicorn of the same user, so a second server takes the first
# one's socket over (and removes it on exit). Each instance keeps its own in its private instance folder
# (GPUVET_INSTANCE_PATH). A Unix socket path is limited to about 100 bytes: with a longer instance path
# gunicorn serves on without a control socket and logs a warning.
control_socket = str(private_dir(Settings().instance_path) / "gunicorn.ctl")
control_socket_mode = 0o600
