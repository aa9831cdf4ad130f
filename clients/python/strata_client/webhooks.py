"""Checking a webhook delivery (CONTRACT.md section 13): ``x-strata-signature: sha256=<hex>`` is the
HMAC-SHA256 of the raw request body with the webhook's secret."""
from __future__ import annotations

import hashlib
import hmac
from typing import Optional, Union


def sign(secret: str, body: bytes) -> str:
    """The ``x-strata-signature`` value for ``body``."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: Union[bytes, str], signature: Optional[str]) -> bool:
    """True when ``signature`` (the header's value) signs exactly these bytes (compared in constant time).
    Pass the body as received, before any JSON parsing."""
    if not signature:
        return False
    raw = body.encode("utf-8") if isinstance(body, str) else body
    return hmac.compare_digest(sign(secret, raw), signature.strip())
