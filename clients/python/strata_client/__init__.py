"""Python client of Strata, the self-hosted memory runtime for AI agents (CONTRACT.md section 16).

Standard library only. ``StrataClient`` has one method per route; replies are dataclasses that
ignore unknown fields; failures raise ``StrataError`` subclasses carrying the envelope's ``code``.
"""
from ._version import __version__
from .client import DEFAULT_URL, RawResponse, StrataClient
from .errors import (
    AuthError, BadRequest, Conflict, Forbidden, MethodNotAllowed, NotFound, PayloadTooLarge, RateLimited, ServerError,
    StrataConnectionError, StrataError, Unauthenticated, Unavailable,
)
from .models import *  # noqa: F401,F403 - the reply records
from .models import __all__ as _models
from .webhooks import sign, verify_signature

__all__ = [
    "__version__", "DEFAULT_URL", "RawResponse", "StrataClient",
    "StrataError", "StrataConnectionError", "BadRequest", "AuthError", "Unauthenticated", "Forbidden", "NotFound",
    "MethodNotAllowed", "Conflict", "PayloadTooLarge", "RateLimited", "ServerError", "Unavailable",
    "sign", "verify_signature",
    *_models,
]
