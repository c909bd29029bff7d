"""Programs gpuvet ships to a trial server and runs there (standard library and the server's packages only).

Nothing here is imported by gpuvet at run time except to read the source text; tests import the pure parts.
"""
