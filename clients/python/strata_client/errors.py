"""Typed errors of the Strata HTTP contract (CONTRACT.md section 0).

Every failed call raises a :class:`StrataError` built from the error envelope
``{"error": "...", "code": "<snake_case>", "details"?: [{path, message}]}``. The class follows the
status (the status carries the class, ``code`` the precise cause), so callers catch by class and
decide on ``code``, never on the message.
"""
from __future__ import annotations

import email.utils
import json
import time
from typing import Any, Dict, List, Mapping, Optional, Type


class StrataError(Exception):
    """A failed call: the envelope's ``code``, ``message`` (its ``error``), ``details``, plus the status.

    ``status`` is 0 when no HTTP answer was received (see :class:`StrataConnectionError`).
    ``request_id`` is the server's ``x-request-id`` (or the envelope's ``request_id`` when present),
    the key to find the request in the server log. ``retry_after`` is the ``Retry-After`` header in
    seconds (429 and 503), or None.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Optional[List[Dict[str, Any]]] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details: List[Dict[str, Any]] = list(details or [])
        self.request_id = request_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status else "no answer"
        return f"{self.message} ({where}, code {self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r})"


class StrataConnectionError(StrataError):
    """No HTTP answer: the connection failed, was reset, or timed out (status 0)."""


class BadRequest(StrataError):
    """400 (and the other refusals of the request as sent: 405, 408, 413, 415, 431)."""


class AuthError(StrataError):
    """401 or 403."""


class Unauthenticated(AuthError):
    """401 ``unauthenticated``: no or bad credentials."""


class Forbidden(AuthError):
    """403 ``forbidden``: valid credentials whose role or scope does not cover the request."""


class NotFound(StrataError):
    """404: an unknown record (``not_found``) or route (``route_not_found``)."""


class MethodNotAllowed(BadRequest):
    """405 ``method_not_allowed``: the path exists with other methods."""


class Conflict(StrataError):
    """409 (``conflict``, ``invalid_transition``): the state forbids the change."""


class PayloadTooLarge(BadRequest):
    """413 ``payload_too_large``."""


class RateLimited(StrataError):
    """429 ``rate_limited``; ``retry_after`` says when to try again."""


class ServerError(StrataError):
    """5xx."""


class Unavailable(ServerError):
    """503 (``no_leader``, ``unavailable``): the write cannot be committed now; ``retry_after`` says when."""


_BY_STATUS: Dict[int, Type[StrataError]] = {
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    429: RateLimited,
    503: Unavailable,
}


def error_class(status: int) -> Type[StrataError]:
    """The exception class for an HTTP status."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    if status in (400, 408, 415, 431):
        return BadRequest
    return StrataError


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date (RFC 9110 10.2.3)."""
    if value is None or value.strip() == "":
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def error_from_response(status: int, body: bytes, headers: Mapping[str, str]) -> StrataError:
    """The typed error for a non-200 answer. A body that is not the envelope (a proxy's HTML page,
    say) still gives a typed error, with code ``http_<status>`` and the start of the text."""
    envelope: Any = None
    try:
        envelope = json.loads(body.decode("utf-8")) if body else None
    except (UnicodeDecodeError, ValueError):
        envelope = None
    request_id = _header(headers, "x-request-id")
    if isinstance(envelope, dict) and isinstance(envelope.get("code"), str):
        message = envelope.get("error") if isinstance(envelope.get("error"), str) else f"HTTP {status}"
        details = envelope.get("details") if isinstance(envelope.get("details"), list) else None
        if isinstance(envelope.get("request_id"), str):
            request_id = envelope["request_id"]
        code = envelope["code"]
    else:
        text = body.decode("utf-8", "replace").strip()[:200] if body else ""
        message = text or f"HTTP {status}"
        details = None
        code = f"http_{status}"
    retry_after = parse_retry_after(_header(headers, "retry-after"))
    return error_class(status)(status, code, message, details, request_id, retry_after)


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    # http.client's HTTPMessage is case-insensitive; a plain dict may not be.
    value = headers.get(name)
    if value is None:
        for key, v in headers.items():
            if key.lower() == name:
                return v
    return value
