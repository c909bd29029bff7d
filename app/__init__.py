"""gpuvet: vet GPU-server rental providers (registry, credentials, benchmarks, advice, reports)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Flask, request, session
from flask_babel import Babel
from flask_wtf.csrf import CSRFProtect

from app.config import PROJECT_ROOT, Settings

csrf = CSRFProtect()
babel = Babel()
LOCALES = ("zh", "en")


def _select_locale() -> str:
    """Chosen language from the session (set by the switch), else the configured default."""
    chosen = session.get("lang")
    return chosen if chosen in LOCALES else "zh"


def create_app(settings: Settings | None = None, **overrides: Any) -> Flask:
    """Build the Flask application for the given settings."""
    settings = settings or Settings()
    app = Flask(__name__, instance_path=str(settings.instance_path), instance_relative_config=True)
    settings.instance_path.mkdir(parents=True, exist_ok=True)
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

    from app import auth, cli, db, errors

    db.init_app(app, settings.resolved_database_url())
    csrf.init_app(app)
    babel.init_app(app, locale_selector=_select_locale)
    auth.init_app(app)
    errors.init_app(app)
    cli.init_app(app)

    from flask_bootstrap import Bootstrap5

    Bootstrap5(app)

    from app.api import bp as api_bp
    from app.web import bp as web_bp

    csrf.exempt(api_bp)
    app.register_blueprint(web_bp)
    app.register_blueprint(api_bp, url_prefix="/api/v1")

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

    return app
