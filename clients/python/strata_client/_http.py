"""One HTTP exchange over urllib: bytes out, (status, headers, bytes) back, or a typed error.

Kept apart from the client so that the retry policy (client.py) sees exactly two outcomes: an answer,
or a :class:`StrataError` (a :class:`StrataConnectionError` when no answer came at all).
"""
from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Mapping, Optional, Union

from .errors import StrataConnectionError, error_from_response

Body = Union[bytes, Iterable[bytes], None]


@dataclass
class Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes


class Transport:
    def __init__(self, timeout: float, opener: Optional[urllib.request.OpenerDirector] = None) -> None:
        self.timeout = timeout
        self._opener = opener or urllib.request.build_opener()

    def open(self, method: str, url: str, body: Body, headers: Dict[str, str], raise_status: bool = True) -> Any:
        """Sends the request; the open response on 2xx (the caller reads and closes it), a typed error
        otherwise (or, with raise_status=False, the error answer as a response). An iterable body is
        sent with chunked transfer encoding (streamed uploads)."""
        request = urllib.request.Request(url, data=body, headers=headers, method=method)  # type: ignore[arg-type]
        try:
            return self._opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as err:
            if not raise_status:
                return err
            try:
                data = err.read()
            except (http.client.HTTPException, OSError):
                data = b""
            finally:
                err.close()
            raise error_from_response(err.code, data, err.headers) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
            raise _connection_error(method, url, err) from err

    def exchange(self, method: str, url: str, body: Body, headers: Dict[str, str], raise_status: bool = True) -> Answer:
        response = self.open(method, url, body, headers, raise_status)
        try:
            data = response.read()
        except (http.client.HTTPException, OSError) as err:
            # The answer broke off midway: as good as no answer.
            raise _connection_error(method, url, err) from err
        finally:
            response.close()
        return Answer(response.status, response.headers, data)


def _connection_error(method: str, url: str, err: BaseException) -> StrataConnectionError:
    reason = getattr(err, "reason", None) or err
    return StrataConnectionError(0, "connection_failed", f"{method} {url} got no answer: {reason}")
