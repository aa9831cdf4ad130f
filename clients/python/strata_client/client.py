"""The Strata client: one method per route of the HTTP contract (CONTRACT.md), named like the
TypeScript client's (packages/client) in snake_case.

Retries: only ``ingest`` and ``ingest_batch`` retry by themselves (connection failures, 429, 503), and
they always send an ``Idempotency-Key`` (a fresh uuid4 per call unless given) that every attempt
reuses, so the server answers a retry with the first answer and stores nothing twice. Other writes
are never retried automatically: without a key a retry could apply twice.
"""
from __future__ import annotations

import http.client
import json
import os
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote, urlencode

from ._version import __version__
from ._http import Body, Transport
from .errors import RateLimited, StrataConnectionError, StrataError, Unavailable
from .models import (
    ApiKey, BatchResult, ClusterOperation, ClusterStatus, ContextResponse, CreatedApiKey, DeleteResult, DroppedEvent,
    EdgeResult, Event, EventPage, FactsResult, FailedPage, GoalTree, Health, ImportResult, IngestResult, KeyRevoked,
    KnowledgeDetail, KnowledgeMetrics, KnowledgePage, LoginResult, MemoryDetail, MemoryPage, MemoryUnit, PendingStatus,
    RetrieveResponse, SemanticExecuteResult, SemanticPreview, StatusReply, Task, UserOrg, UserPage, Webhook,
    WebhookDelivery, records,
)

DEFAULT_URL = "http://127.0.0.1:3000"
EventInput = Union[str, Mapping[str, Any]]
_NO_BODY = object()


@dataclass
class RawResponse:
    """Any answer, whatever its status (``raw``): the decoded JSON body, or the text when not JSON."""
    status: int
    headers: Mapping[str, str]
    body: Any


def _seg(value: Any) -> str:
    """A path segment, percent-encoded (a '/' in an id must not become a path separator)."""
    return quote(str(value), safe="")


def _clean(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """Optional fields left out rather than sent as null (the server accepts both alike)."""
    return {k: v for k, v in fields.items() if v is not None}


def _event(event: EventInput, fields: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    body = {"content": event} if isinstance(event, str) else dict(event)
    body.update(_clean(fields or {}))
    return body


class StrataClient:
    """A client of one Strata node (any node of a cluster: writes are forwarded to the leader).

    ``base_url`` defaults to ``$STRATA_URL`` (else http://127.0.0.1:3000); credentials are ``token``
    (sent as ``Authorization: Bearer``) or ``api_key`` (``x-api-key``, default ``$STRATA_API_KEY``).
    Retries of ingest: up to ``max_retries`` more attempts, waiting ``Retry-After`` when the server
    sends one (and giving up at once when it asks for more than ``max_retry_wait`` seconds), otherwise
    ``backoff * 2**attempt`` seconds (capped at ``max_backoff``, with jitter).
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        max_retry_wait: float = 60.0,
        transport: Optional[Transport] = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("STRATA_URL") or DEFAULT_URL).rstrip("/")
        self._token = token
        self._api_key = None if token else (api_key if api_key is not None else os.environ.get("STRATA_API_KEY"))
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_wait = max_retry_wait
        self._transport = transport or Transport(timeout)

    # ---- credentials ----

    def use_token(self, token: str) -> None:
        """Uses this bearer token (e.g. from ``login``) for later calls, instead of any API key."""
        self._token, self._api_key = token, None

    def use_api_key(self, api_key: str) -> None:
        self._api_key, self._token = api_key, None

    # ---- plumbing ----

    def _headers(self, extra: Optional[Mapping[str, str]], auth: bool) -> Dict[str, str]:
        headers = {"accept": "application/json", "user-agent": f"strata-client-python/{__version__}"}
        if auth and self._token:
            headers["authorization"] = f"Bearer {self._token}"
        elif auth and self._api_key:
            headers["x-api-key"] = self._api_key
        headers.update(extra or {})
        return headers

    def _url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        params = []
        for key, value in (query or {}).items():
            if value is None:
                continue
            params.append((key, ("true" if value else "false") if isinstance(value, bool) else str(value)))
        return self.base_url + path + (f"?{urlencode(params)}" if params else "")

    def _encode(self, body: Any, headers: Dict[str, str]) -> Body:
        if body is _NO_BODY:
            return None
        headers["content-type"] = "application/json"
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def _call(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None, body: Any = _NO_BODY,
              headers: Optional[Mapping[str, str]] = None, retry: bool = False, auth: bool = True) -> Any:
        """One call; the decoded JSON of the 200 answer, a typed error otherwise. ``retry`` only for
        requests that are safe to repeat (idempotent by key)."""
        all_headers = self._headers(headers, auth)
        data = self._encode(body, all_headers)
        url = self._url(path, query)
        attempt = 0
        while True:
            try:
                answer = self._transport.exchange(method, url, data, all_headers)
                break
            except StrataError as err:
                wait = self._retry_wait(err, attempt) if retry else None
                if wait is None:
                    raise
                time.sleep(wait)
                attempt += 1
        if not answer.body:
            return None
        content_type = answer.headers.get("content-type") or ""
        text = answer.body.decode("utf-8")
        return json.loads(text) if "json" in content_type else text

    def _retry_wait(self, err: StrataError, attempt: int) -> Optional[float]:
        """Seconds to wait before retrying after ``err``, or None to give up."""
        if attempt >= self.max_retries or not isinstance(err, (StrataConnectionError, RateLimited, Unavailable)):
            return None
        if err.retry_after is not None:
            return err.retry_after if err.retry_after <= self.max_retry_wait else None
        delay = min(self.max_backoff, self.backoff * (2 ** attempt))
        return delay * (0.5 + random.random() / 2)  # jitter: clients that failed together do not retry together

    def raw(self, method: str, path: str, body: Any = _NO_BODY, *, query: Optional[Mapping[str, Any]] = None,
            headers: Optional[Mapping[str, str]] = None, auth: bool = True) -> RawResponse:
        """Any request, answered whatever its status (for routes this client does not name yet)."""
        all_headers = self._headers(headers, auth)
        data = self._encode(body, all_headers)
        answer = self._transport.exchange(method, self._url(path, query), data, all_headers, raise_status=False)
        text = answer.body.decode("utf-8", "replace")
        parsed: Any = text
        if "json" in (answer.headers.get("content-type") or "") and text:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = text
        return RawResponse(answer.status, answer.headers, parsed)

    # ---- §1 authentication, keys, users ----

    def login(self, username: str, password: str) -> LoginResult:
        """Logs in and uses the token for later calls (it replaces the API key)."""
        result = LoginResult.from_dict(self._call("POST", "/v1/dashboard/auth/login", body={"username": username, "password": password}))
        self.use_token(result.token)
        return result

    def change_password(self, current_password: str, new_password: str) -> StatusReply:
        body = {"current_password": current_password, "new_password": new_password}
        return StatusReply.from_dict(self._call("POST", "/v1/dashboard/auth/password", body=body))

    def create_api_key(self, name: Optional[str] = None, org_id: Optional[str] = None,
                       user_ids: Optional[Sequence[str]] = None, role: Optional[str] = None) -> CreatedApiKey:
        """A new key (``role``: read, write (the server's default) or admin); ``key`` is shown only here."""
        body = _clean({"name": name, "org_id": org_id, "user_ids": list(user_ids) if user_ids is not None else None, "role": role})
        return CreatedApiKey.from_dict(self._call("POST", "/v1/dashboard/api-keys", body=body))

    def list_api_keys(self) -> List[ApiKey]:
        return records(ApiKey, self._call("GET", "/v1/dashboard/api-keys"), "api_keys")

    def revoke_api_key(self, key_id: str) -> KeyRevoked:
        return KeyRevoked.from_dict(self._call("DELETE", f"/v1/dashboard/api-keys/{_seg(key_id)}"))

    def list_users(self, after: Optional[str] = None, limit: Optional[int] = None) -> UserPage:
        return UserPage.from_dict(self._call("GET", "/v1/users", query={"after": after, "limit": limit}))

    def set_user_org(self, user_id: str, org_id: Optional[str]) -> UserOrg:
        """Records the user's organization (None: none); admin with unscoped credentials."""
        return UserOrg.from_dict(self._call("PUT", f"/v1/users/{_seg(user_id)}/org", body={"org_id": org_id}))

    # ---- §2 ingest and events ----

    def ingest(self, user_id: str, stream_id: str, event: EventInput, *, idempotency_key: Optional[str] = None,
               **fields: Any) -> IngestResult:
        """Sends one event (a dict of the contract's fields, or the content as a string with the other
        fields as keywords); answered once durable. Retried safely (see the module docstring)."""
        key = idempotency_key or str(uuid.uuid4())
        return IngestResult.from_dict(self._call(
            "POST", f"{_stream(user_id, stream_id)}/events", body=_event(event, fields),
            headers={"idempotency-key": key}, retry=True))

    def ingest_batch(self, user_id: str, stream_id: str, events: Sequence[EventInput], *,
                     idempotency_key: Optional[str] = None) -> BatchResult:
        """Sends events atomically (all stored, or none with 400 naming the bad one); retried safely."""
        key = idempotency_key or str(uuid.uuid4())
        return BatchResult.from_dict(self._call(
            "POST", f"{_stream(user_id, stream_id)}/events/batch", body={"events": [_event(e) for e in events]},
            headers={"idempotency-key": key}, retry=True))

    def list_events(self, user_id: str, stream_id: str, after: Optional[str] = None, limit: Optional[int] = None,
                    consistency: Optional[str] = None) -> EventPage:
        query = {"after": after, "limit": limit, "consistency": consistency}
        return EventPage.from_dict(self._call("GET", f"{_stream(user_id, stream_id)}/events", query=query))

    def all_events(self, user_id: str, stream_id: str, page_size: int = 1000) -> List[Event]:
        """Every event of a stream, following cursors."""
        out: List[Event] = []
        after: Optional[str] = None
        while True:
            page = self.list_events(user_id, stream_id, after=after, limit=page_size)
            out.extend(page.events)
            if not page.next_cursor:
                return out
            after = page.next_cursor

    def ingest_facts(self, user_id: str, facts: Sequence[Union[str, Mapping[str, Any]]]) -> FactsResult:
        """Brings your own extraction: each fact becomes an L1 memory at once (atomic like a batch)."""
        body = {"facts": [{"content": f} if isinstance(f, str) else dict(f) for f in facts]}
        return FactsResult.from_dict(self._call("POST", f"/v1/users/{_seg(user_id)}/facts", body=body))

    def dropped_events(self, user_id: str) -> List[DroppedEvent]:
        """Events consolidation judged to be noise, each with the reason."""
        return records(DroppedEvent, self._call("GET", f"/v1/users/{_seg(user_id)}/events/dropped"), "dropped")

    def failed_events(self, after: Optional[str] = None, limit: Optional[int] = None) -> FailedPage:
        """Events consolidation gave up on, with the reason."""
        return FailedPage.from_dict(self._call("GET", "/v1/status/failed", query={"after": after, "limit": limit}))

    # ---- §3 retrieval, §4 context ----

    def retrieve(self, user_id: str, stream_id: str, query: Union[str, Mapping[str, Any]], **options: Any) -> RetrieveResponse:
        """Ranked memories for ``query``; ``options`` are the contract's retrieve fields (limit,
        min_score, graph_depth, start_time, end_time, as_of, org_id, agent_id, enable_arbitration,
        include_pending, scope, image, audio, video, consistency)."""
        body = {"query": query} if isinstance(query, str) else dict(query)
        body.update(_clean(options))
        return RetrieveResponse.from_dict(self._call("POST", f"{_stream(user_id, stream_id)}/retrieve", body=body))

    def context(self, user_id: str, query: str, *, budget: Optional[int] = None, **options: Any) -> ContextResponse:
        """Memory rendered for a prompt. ``options``: stream_id, format (text | xml), token_budget,
        limit and the retrieve fields. ``budget`` goes in the X-Memory-Budget header (the body's
        token_budget wins when both are given)."""
        body = {"user_id": user_id, "query": query}
        body.update(_clean(options))
        headers = None if budget is None else {"x-memory-budget": str(budget)}
        return ContextResponse.from_dict(self._call("POST", "/v1/memory/context", body=body, headers=headers))

    # ---- §5 graph, §6 pending ----

    def add_edge(self, user_id: str, source_id: str, target_id: str, relation: str,
                 weight: Optional[float] = None) -> EdgeResult:
        body = _clean({"source_id": source_id, "target_id": target_id, "relation": relation, "weight": weight})
        return EdgeResult.from_dict(self._call("POST", f"/v1/users/{_seg(user_id)}/graph/edges", body=body))

    def pending(self) -> PendingStatus:
        return PendingStatus.from_dict(self._call("GET", "/v1/status/pending"))

    def wait_until_ready(self, timeout: float = 60.0, poll: float = 0.1) -> PendingStatus:
        """Polls the pending backlog until every accepted event is consolidated, or ``timeout``
        seconds pass; returns the last status (check ``.ready``)."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.pending()
            if status.ready or time.monotonic() > deadline:
                return status
            time.sleep(poll)

    # ---- §7 memory maintenance and listing ----

    def list_memories(self, user_id: str, level: Optional[int] = None, include_retired: Optional[bool] = None,
                 after: Optional[str] = None, limit: Optional[int] = None) -> MemoryPage:
        query = {"level": level, "include_retired": include_retired, "after": after, "limit": limit}
        return MemoryPage.from_dict(self._call("GET", f"/v1/users/{_seg(user_id)}/memories", query=query))

    memories = list_memories

    def all_memories(self, user_id: str, level: Optional[int] = None, include_retired: Optional[bool] = None) -> List[MemoryUnit]:
        out: List[MemoryUnit] = []
        after: Optional[str] = None
        while True:
            page = self.list_memories(user_id, level=level, include_retired=include_retired, after=after, limit=1000)
            out.extend(page.memories)
            if not page.next_cursor:
                return out
            after = page.next_cursor

    def memory(self, user_id: str, memory_id: str) -> MemoryDetail:
        """One unit with its versions, edges and source events."""
        return MemoryDetail.from_dict(self._call("GET", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}"))

    def delete_memory(self, user_id: str, memory_id: str, cascade_events: bool = False) -> DeleteResult:
        """Hard-deletes a unit everywhere (``cascade_events``: its source events too)."""
        query = {"cascade": "events"} if cascade_events else None
        return DeleteResult.from_dict(self._call("DELETE", f"/v1/users/{_seg(user_id)}/memories/{_seg(memory_id)}", query=query))

    def semantic_preview(self, user_id: str, instruction: str, mode: Optional[str] = None, forget_mode: Optional[str] = None,
                         org_id: Optional[str] = None, limit: Optional[int] = None) -> SemanticPreview:
        """What a forget/update instruction would change; changes nothing."""
        body = _clean({"instruction": instruction, "mode": mode, "forget_mode": forget_mode, "org_id": org_id, "limit": limit})
        return SemanticPreview.from_dict(self._call("POST", f"/v1/users/{_seg(user_id)}/memories/semantic/preview", body=body))

    def semantic_execute(self, user_id: str, plan_id: str, *, confirm: bool, org_id: Optional[str] = None,
                         reviewer: Optional[str] = None, note: Optional[str] = None) -> SemanticExecuteResult:
        """Carries out a previewed plan (``confirm`` must be True)."""
        body = _clean({"plan_id": plan_id, "confirm": confirm, "org_id": org_id, "reviewer": reviewer, "note": note})
        return SemanticExecuteResult.from_dict(self._call("POST", f"/v1/users/{_seg(user_id)}/memories/semantic/execute", body=body))

    # ---- §8 goals and tasks ----

    def task_tree(self, user_id: str, stream_id: Optional[str] = None, full: bool = False) -> List[GoalTree]:
        """Goals (newest first) with their task trees, of one stream or of all the user's streams."""
        path = f"{_stream(user_id, stream_id)}/tasks/tree" if stream_id else f"/v1/users/{_seg(user_id)}/tasks/tree"
        return records(GoalTree, self._call("GET", path, query=_view(full)), "goals")

    def ready_tasks(self, user_id: str, full: bool = False) -> List[Task]:
        """Pending tasks whose dependencies are all completed."""
        return records(Task, self._call("GET", f"/v1/users/{_seg(user_id)}/tasks/ready", query=_view(full)), "tasks")

    def set_task_status(self, user_id: str, task_id: str, status: Union[str, Mapping[str, Optional[str]]],
                        progress: Optional[float] = None, result_summary: Optional[str] = None,
                        reopen: Optional[bool] = None) -> Task:
        """Sets a task's status (``{"Blocked": "reason"}`` form accepted); ``reopen`` to leave a terminal state."""
        body = _clean({"status": status if isinstance(status, str) else dict(status), "progress": progress,
                       "result_summary": result_summary, "reopen": reopen})
        return Task.from_dict(self._call("PUT", f"/v1/users/{_seg(user_id)}/tasks/{_seg(task_id)}/status", body=body))

    # ---- §9 organization knowledge ----

    def org_knowledge(self, org_id: str, q: Optional[str] = None, contributor: Optional[str] = None,
                      source_type: Optional[str] = None, sort: Optional[str] = None, limit: Optional[int] = None,
                      cursor: Optional[str] = None) -> KnowledgePage:
        query = {"q": q, "contributor": contributor, "source_type": source_type, "sort": sort, "limit": limit, "cursor": cursor}
        return KnowledgePage.from_dict(self._call("GET", f"/v1/organizations/{_seg(org_id)}/knowledge", query=query))

    def org_knowledge_item(self, org_id: str, item_id: str) -> KnowledgeDetail:
        return KnowledgeDetail.from_dict(self._call("GET", f"/v1/organizations/{_seg(org_id)}/knowledge/{_seg(item_id)}"))

    def org_knowledge_metrics(self, org_id: str) -> KnowledgeMetrics:
        return KnowledgeMetrics.from_dict(self._call("GET", f"/v1/organizations/{_seg(org_id)}/knowledge/metrics"))

    # ---- §10 cluster (admin) ----

    def cluster_status(self) -> ClusterStatus:
        return ClusterStatus.from_dict(self._call("GET", "/v1/cluster/status"))

    def cluster_initialize(self) -> ClusterOperation:
        """Initializes every shard group with the configured members (idempotent)."""
        return ClusterOperation.from_dict(self._call("POST", "/v1/cluster/initialize"))

    cluster_init = cluster_initialize

    def cluster_join(self, node_id: int, address: str) -> ClusterOperation:
        return ClusterOperation.from_dict(self._call("POST", "/v1/cluster/join", body={"node_id": node_id, "address": address}))

    def cluster_remove(self, node_id: int) -> ClusterOperation:
        return ClusterOperation.from_dict(self._call("DELETE", f"/v1/cluster/nodes/{_seg(node_id)}"))

    # ---- §13 webhooks ----

    def create_webhook(self, url: str, events: Sequence[str], user_ids: Optional[Sequence[str]] = None,
                       org_id: Optional[str] = None) -> Webhook:
        """A subscription; ``secret`` (shown only here) signs deliveries (see ``verify_signature``)."""
        body = _clean({"url": url, "events": list(events), "user_ids": list(user_ids) if user_ids is not None else None, "org_id": org_id})
        return Webhook.from_dict(self._call("POST", "/v1/webhooks", body=body))

    def list_webhooks(self) -> List[Webhook]:
        return records(Webhook, self._call("GET", "/v1/webhooks"), "webhooks")

    def delete_webhook(self, webhook_id: str) -> Dict[str, Any]:
        return self._call("DELETE", f"/v1/webhooks/{_seg(webhook_id)}") or {}

    def webhook_deliveries(self, webhook_id: str) -> List[WebhookDelivery]:
        return records(WebhookDelivery, self._call("GET", f"/v1/webhooks/{_seg(webhook_id)}/deliveries"), "deliveries")

    # ---- §14 export and import ----

    def export(self, user_id: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """The NDJSON export (one user's, or every user's for an admin), one record at a time as it
        streams in (the header record first). The request is made when iteration starts."""
        path = f"/v1/users/{_seg(user_id)}/export" if user_id is not None else "/v1/export"
        headers = self._headers({"accept": "application/x-ndjson"}, True)
        url = self._url(path)
        response = self._transport.open("GET", url, None, headers)
        with response:
            try:
                for line in response:
                    if line.strip():
                        yield json.loads(line)
            except (http.client.HTTPException, OSError) as err:
                # The stream broke off: the records so far were yielded, the rest never came.
                raise StrataConnectionError(0, "connection_failed", f"GET {url} broke off: {err}") from err

    def import_records(self, lines: Iterable[Union[Mapping[str, Any], str, bytes]]) -> ImportResult:
        """Imports NDJSON records (dicts, or lines as str/bytes, e.g. an open file), streamed as sent."""
        def chunks() -> Iterator[bytes]:
            for item in lines:
                if isinstance(item, bytes):
                    data = item
                elif isinstance(item, str):
                    data = item.encode("utf-8")
                else:
                    data = json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
                if data.strip():
                    yield data if data.endswith(b"\n") else data + b"\n"

        headers = self._headers({"content-type": "application/x-ndjson"}, True)
        answer = self._transport.exchange("POST", self._url("/v1/import"), chunks(), headers)
        return ImportResult.from_dict(json.loads(answer.body.decode("utf-8")))

    # ---- outside /v1 ----

    def health(self) -> Health:
        """The public probes, without credentials: ``/livez`` (the process answers) and ``/readyz``
        (it can serve; a 503 there is an answer, ready False, not an error)."""
        live = self.raw("GET", "/livez", auth=False)
        ready = self.raw("GET", "/readyz", auth=False)
        return Health(live=live.status == 200, ready=ready.status == 200)

    def metrics(self) -> str:
        """Prometheus text (credentials are sent: the route may be behind auth)."""
        return str(self._call("GET", "/metrics", headers={"accept": "text/plain"}))

    def openapi(self) -> Dict[str, Any]:
        return self._call("GET", "/openapi.json", auth=False)


def _stream(user_id: str, stream_id: Optional[str]) -> str:
    return f"/v1/users/{_seg(user_id)}/streams/{_seg(stream_id)}"


def _view(full: bool) -> Optional[Dict[str, str]]:
    return {"view": "full"} if full else None
