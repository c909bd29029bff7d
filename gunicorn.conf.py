"""gunicorn settings for serving gpuvet (scripts/run.sh passes -c gunicorn.conf.py).

gunicorn answers over-long request lines and oversized headers itself, with a plain-text page outside the
app's error shape. Its limits are raised here above the app's own (app/guards.py: 8 KiB URL, 8 KiB per
header, 32 KiB of headers, 100 header fields), so the app answers 414 / 431 in the documented shape.
"""

# 0 lifts gunicorn's 8,190-byte request-line cap; its fast parser still stops at 1 MiB, and the app
# refuses anything over 8 KiB first. Put a reverse proxy with its own limits in front on the internet.
limit_request_line = 0
# Bytes per header line (name and value), and header lines per request.
limit_request_field_size = 32 * 1024
limit_request_fields = 200
