"""The Flask application factory: settings, extensions, blueprints, the CLI and the queue."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from flask import Flask, has_request_context, request, session
from flask_babel import Babel
from flask_wtf.csrf import CSRFProtect

from app.core.config import PROJECT_ROOT, Settings, private_dir
from app.core.i18n import LANGUAGES

csrf = CSRFProtect()
babel = Babel()


def _select_locale() -> str | None:
    """The session's choice (set by the switch); for /api/ without one, Accept-Language; else zh.

    Outside a request (CLI, worker) None: flask-babel then uses BABEL_DEFAULT_LOCALE.
    """
    if not has_request_context():
        return None
    chosen = session.get("lang")
    if chosen in LANGUAGES:
        return chosen
    if request.path.startswith("/api/"):
        return request.accept_languages.best_match(LANGUAGES, default="zh") or "zh"
    return "zh"


class GpuvetFlask(Flask):
    """A Flask app whose pages, API and sign-in may be set up on first use rather than when it is built.

    `create_app(defer_setup=True)` (wsgi.py) leaves the steps in `deferred_setup` until `finish_setup()`
    runs them: on the first request, the first URL built for a request (or with SERVER_NAME set), the
    first look at `url_map` once the app is built (`flask routes`), or when a caller asks. CLI commands
    that need no page (`flask vet identify`) then never import the models, services and routes.
    """

    _setup_armed = False  # set by create_app once built: from then on, reading url_map finishes set-up

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.deferred_setup: list[Callable[[Flask], None]] = []
        self._setup_lock = threading.RLock()
        self._setup_state = "pending"  # pending -> running -> done | failed
        super().__init__(*args, **kwargs)

    @property
    def url_map(self) -> Any:  # type: ignore[override]
        """The routing map, complete: reading it finishes a deferred set-up (once the app is built)."""
        if self._setup_armed and self._setup_state == "pending":
            self.finish_setup()
        return self._url_map

    @url_map.setter
    def url_map(self, value: Any) -> None:
        self._url_map = value

    @property
    def setup_finished(self) -> bool:
        """Whether the deferred set-up has run."""
        return self._setup_state == "done"

    def finish_setup(self) -> None:
        """Run the deferred set-up steps once (thread-safe; a failed set-up raises again on every call)."""
        if self._setup_state == "done":
            return
        with self._setup_lock:
            if self._setup_state == "running":  # re-entered from one of the steps
                return
            if self._setup_state == "failed":
                raise RuntimeError("the app's set-up failed earlier; see the first error")
            if self._setup_state == "pending":
                self._setup_state = "running"
                try:
                    for step in self.deferred_setup:
                        step(self)
                except BaseException:
                    self._setup_state = "failed"
                    raise
                self._setup_state = "done"

    def wsgi_app(self, environ: Any, start_response: Any) -> Any:
        """Finish the set-up before the first request."""
        self.finish_setup()
        return super().wsgi_app(environ, start_response)

    def create_url_adapter(self, request: Any) -> Any:
        """Finish the set-up before routes are matched or URLs built (a request, or SERVER_NAME set)."""
        if request is not None or self.config.get("SERVER_NAME") is not None:
            self.finish_setup()
        return super().create_url_adapter(request)


def _setup_web(app: Flask) -> None:
    """Sign-in, error pages, Bootstrap, the pages and the API: everything that imports models and routes."""
    from flask_bootstrap import Bootstrap5

    from app.accounts import auth
    from app.api import bp as api_bp
    from app.core import db
    from app.core import error_handlers as errors
    from app.web import bp as web_bp

    db.get_engine(app)
    auth.init_app(app)
    errors.init_app(app)
    Bootstrap5(app)
    csrf.exempt(api_bp)
    app.register_blueprint(web_bp)
    app.register_blueprint(api_bp, url_prefix="/api/v1")


def create_app(
    settings: Settings | None = None, *, defer_setup: bool = False, **overrides: Any
) -> GpuvetFlask:
    """Build the Flask application for the given settings.

    With `defer_setup`, the pages, API and sign-in are set up on first use (GpuvetFlask.finish_setup), so
    that CLI commands start fast; otherwise the app is complete when returned.
    """
    settings = settings or Settings()
    app = GpuvetFlask("app", instance_path=str(settings.instance_path), instance_relative_config=True)
    private_dir(settings.instance_path)
    app.config.update(
        SECRET_KEY=settings.resolved_secret_key(),
        GPUVET_SETTINGS=settings,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.session_cookie_secure,
        REMEMBER_COOKIE_SECURE=settings.session_cookie_secure,
        REMEMBER_COOKIE_HTTPONLY=True,
        PERMANENT_SESSION_LIFETIME=timedelta(hours=12),
        BABEL_DEFAULT_LOCALE=settings.default_locale,
        BABEL_TRANSLATION_DIRECTORIES=str(PROJECT_ROOT / "app" / "translations"),
        BOOTSTRAP_SERVE_LOCAL=True,
        MAX_CONTENT_LENGTH=16 * 1024 * 1024,
        PAGE_SIZE=settings.page_size,
    )
    app.config.update(overrides)
    if settings.proxy_hops:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.proxy_hops)  # type: ignore[method-assign]

    from app.cli import init_app as init_cli
    from app.core import db, guards

    guards.init_app(app)
    db.init_app(app, settings.resolved_database_url())
    csrf.init_app(app)
    babel.init_app(app, locale_selector=_select_locale)
    init_cli(app)
    app.deferred_setup.append(_setup_web)

    @app.after_request
    def _security_headers(response: Any) -> Any:
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if not request.path.startswith("/api/"):
            response.headers.setdefault(
                "Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
            )
        return response

    app._setup_armed = True
    if not defer_setup:
        app.finish_setup()
    return app
