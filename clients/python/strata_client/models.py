"""Reply records of the Strata HTTP contract, as dataclasses.

``Model.from_dict`` keeps only the declared fields and fills the missing ones with their defaults: a
server that adds a field (or omits an optional one) never breaks a client. Nested records are built
through the type annotations (``List[Event]``, ``Optional[MemoryUnit]``, ...). Field names are the
contract's, so ``dataclasses.asdict(record)`` gives back the wire shape.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar, Union, get_args, get_origin, get_type_hints

M = TypeVar("M", bound="Model")

_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    # Resolved once per class: the annotations are strings (postponed evaluation).
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def _convert(tp: Any, value: Any) -> Any:
    if value is None or tp is Any:
        return value
    origin = get_origin(tp)
    if origin is Union:
        for arg in get_args(tp):
            if arg is type(None):
                continue
            return _convert(arg, value)
        return value
    if origin in (list, List):
        (item,) = get_args(tp) or (Any,)
        return [_convert(item, v) for v in value] if isinstance(value, list) else value
    if origin in (dict, Dict):
        args = get_args(tp)
        item = args[1] if len(args) == 2 else Any
        return {k: _convert(item, v) for k, v in value.items()} if isinstance(value, dict) else value
    if isinstance(tp, type) and issubclass(tp, Model):
        return tp.from_dict(value) if isinstance(value, dict) else value
    return value


@dataclass
class Model:
    """Base of every reply record."""

    @classmethod
    def from_dict(cls: Type[M], data: Dict[str, Any]) -> M:
        """The record from a decoded JSON object; unknown keys are ignored, missing ones defaulted."""
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}.from_dict expects a JSON object, got {type(data).__name__}")
        hints = _hints(cls)
        kwargs = {f.name: _convert(hints[f.name], data[f.name]) for f in dataclasses.fields(cls) if f.name in data}
        return cls(**kwargs)

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


def _list() -> Any:
    return field(default_factory=list)


# ---- §1 authentication and keys ----

@dataclass
class LoginResult(Model):
    token: str = ""
    expires_in: int = 0
    must_change_password: bool = False


@dataclass
class Health(Model):
    """``/livez`` and ``/readyz``: whether the process answers, and whether it can serve."""
    live: bool = False
    ready: bool = False


@dataclass
class StatusReply(Model):
    """A reply that only says what happened (``{"status": "changed"}``, ...)."""
    status: str = ""


@dataclass
class ApiKey(Model):
    key_id: str = ""
    key_prefix: str = ""
    name: Optional[str] = None
    org_id: Optional[str] = None
    user_ids: Optional[List[str]] = None
    role: str = ""
    created_at: str = ""


@dataclass
class CreatedApiKey(ApiKey):
    """The answer to creating a key: the only time ``key`` itself is shown."""
    key: str = ""


@dataclass
class KeyRevoked(Model):
    status: str = ""
    key_id: str = ""


@dataclass
class UserOrg(Model):
    user_id: str = ""
    org_id: Optional[str] = None
    changed: bool = False


@dataclass
class UserCounts(Model):
    events: int = 0
    memory_units: int = 0
    goals: int = 0
    tasks: int = 0
    pending: int = 0


@dataclass
class UserSummary(Model):
    """A row of ``GET /v1/users``: the user, its organization, and what is stored for it."""
    user_id: str = ""
    org_id: Optional[str] = None
    counts: UserCounts = field(default_factory=UserCounts)


@dataclass
class UserPage(Model):
    users: List[UserSummary] = _list()
    next_cursor: Optional[str] = None


# ---- §2 ingest and events ----

@dataclass
class IngestResult(Model):
    status: str = ""
    event_id: str = ""


@dataclass
class BatchResult(Model):
    status: str = ""
    event_ids: List[str] = _list()
    count: int = 0


@dataclass
class AssetRef(Model):
    asset_id: str = ""
    media_type: str = ""
    size: int = 0
    url: Optional[str] = None
    phash: Optional[str] = None


@dataclass
class Event(Model):
    event_id: str = ""
    content: str = ""
    content_type: str = "text"
    org_id: Optional[str] = None
    agent_id: Optional[str] = None
    role: Optional[str] = None
    level: Optional[int] = None
    parent_id: Optional[str] = None
    task_status: Optional[str] = None
    task_progress: Optional[float] = None
    valid_time: Optional[str] = None
    transaction_time: str = ""
    metadata: Optional[Dict[str, Any]] = None
    assets: List[AssetRef] = _list()


@dataclass
class EventPage(Model):
    events: List[Event] = _list()
    next_cursor: Optional[str] = None


@dataclass
class FactsResult(Model):
    status: str = ""
    memory_ids: List[str] = _list()


@dataclass
class DroppedEvent(Model):
    event_id: str = ""
    reason: str = ""
    dropped_at: str = ""


@dataclass
class FailedEvent(Model):
    event_id: str = ""
    user_id: str = ""
    stream_id: str = ""
    error: str = ""
    attempts: int = 0
    at: str = ""


@dataclass
class FailedPage(Model):
    failed: List[FailedEvent] = _list()
    next_cursor: Optional[str] = None


# ---- §3 retrieval, memory units ----

@dataclass
class MemoryUnit(Model):
    """A unit as retrieval shows it; the memory listing adds ``retired_at``, ``superseded_by`` and
    ``importance`` (None where a route does not send them)."""
    id: str = ""
    memory_type: str = ""
    content: str = ""
    keywords: List[str] = _list()
    level: int = 0
    stream_id: Optional[str] = None
    valid_time: Optional[str] = None
    transaction_time: str = ""
    references: List[str] = _list()
    assets: List[AssetRef] = _list()
    retired_at: Optional[str] = None
    superseded_by: Optional[str] = None
    importance: Optional[float] = None


@dataclass
class RetrieveHit(Model):
    unit: MemoryUnit = field(default_factory=MemoryUnit)
    score: float = 0.0


@dataclass
class RetrieveResponse(Model):
    stream_id: str = ""
    query: str = ""
    results: List[RetrieveHit] = _list()
    query_time_ms: float = 0.0


@dataclass
class MemoryPage(Model):
    memories: List[MemoryUnit] = _list()
    next_cursor: Optional[str] = None


@dataclass
class Edge(Model):
    edge_id: str = ""
    source_id: str = ""
    target_id: str = ""
    relation: str = ""
    weight: float = 1.0
    created_at: Optional[str] = None


@dataclass
class MemoryDetail(Model):
    """``GET /v1/users/:user_id/memories/:id``: one unit with its versions, edges and source events."""
    unit: MemoryUnit = field(default_factory=MemoryUnit)
    versions: List[MemoryUnit] = _list()
    edges: List[Edge] = _list()
    source_events: List[Event] = _list()

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "MemoryDetail":
        # The contract names the parts but not their keys: also accept the unit's fields at the top
        # level and the source events under `events`.
        if isinstance(data, dict) and "unit" not in data and "id" in data:
            data = {**data, "unit": data}
        if isinstance(data, dict) and "source_events" not in data and "events" in data:
            data = {**data, "source_events": data["events"]}
        return super().from_dict(data)


# ---- §4 context ----

@dataclass
class ContextHit(Model):
    id: str = ""
    level: int = 0
    memory_type: str = ""
    domain: str = ""
    score: float = 0.0


@dataclass
class ContextResponse(Model):
    query: str = ""
    format: str = "text"
    strategy: str = ""
    token_budget: int = 0
    used_token_estimate: int = 0
    matched_count: int = 0
    included_count: int = 0
    truncated: bool = False
    context: str = ""
    hits: List[ContextHit] = _list()
    query_time_ms: float = 0.0


# ---- §5 graph, §6 pending, §7 maintenance ----

@dataclass
class EdgeResult(Model):
    status: str = ""
    edge_id: str = ""


@dataclass
class PendingStatus(Model):
    pending: int = 0
    ready: bool = False
    failed: int = 0
    oldest_pending_ms: Optional[float] = None


@dataclass
class DeleteResult(Model):
    status: str = ""
    memory_id: str = ""
    mode: str = ""
    deleted_event_ids: Optional[List[str]] = None


@dataclass
class MatchedEvent(Model):
    id: str = ""
    content: str = ""
    transaction_time: str = ""


@dataclass
class ForgetPreview(Model):
    memory_units: List[MemoryUnit] = _list()
    matched_events: List[MatchedEvent] = _list()


@dataclass
class UpdateAction(Model):
    target_unit_id: str = ""
    action: str = ""
    confidence: float = 0.0
    reason: str = ""
    effect: str = ""
    target_unit: Optional[MemoryUnit] = None


@dataclass
class UpdatePreview(Model):
    source_content: str = ""
    extracted_facts: List[Any] = _list()
    actions: List[UpdateAction] = _list()


@dataclass
class SemanticPreview(Model):
    plan_id: str = ""
    instruction: str = ""
    kind: str = ""
    created_at: str = ""
    expires_at: str = ""
    forget_preview: Optional[ForgetPreview] = None
    update_preview: Optional[UpdatePreview] = None


@dataclass
class SemanticExecuteResult(Model):
    status: str = ""
    plan_id: str = ""
    kind: str = ""
    affected_unit_ids: List[str] = _list()
    created_memory_unit_id: Optional[str] = None


# ---- §8 goals and tasks ----

@dataclass
class Task(Model):
    """``L3Task``; ``stream_id`` and ``status_reason`` come with ``?view=full``."""
    task_id: str = ""
    user_id: str = ""
    org_id: Optional[str] = None
    agent_id: Optional[str] = None
    parent_id: Optional[str] = None
    title: str = ""
    description: str = ""
    status: str = ""
    progress: float = 0.0
    dependencies: List[str] = _list()
    context_refs: List[str] = _list()
    created_at: str = ""
    updated_at: str = ""
    result_summary: Optional[str] = None
    stream_id: Optional[str] = None
    status_reason: Optional[str] = None


@dataclass
class Goal(Model):
    id: str = ""
    content: str = ""
    status: str = ""
    progress: float = 0.0
    stream_id: str = ""
    transaction_time: str = ""


@dataclass
class TaskNode(Model):
    task: Task = field(default_factory=Task)
    children: List["TaskNode"] = _list()


@dataclass
class GoalTree(Model):
    goal: Goal = field(default_factory=Goal)
    tasks: List[TaskNode] = _list()


# ---- §9 organization knowledge ----

@dataclass
class OrgUnit(Model):
    id: str = ""
    content: str = ""
    keywords: List[str] = _list()
    level: int = 0
    transaction_time: str = ""


@dataclass
class KnowledgeItem(Model):
    unit: OrgUnit = field(default_factory=OrgUnit)
    contributor_user_ids: List[str] = _list()
    contribution_count: int = 0
    source_memory_types: List[str] = _list()
    published_at: str = ""


@dataclass
class KnowledgeSummary(Model):
    knowledge_count: int = 0
    contribution_count: int = 0
    contributor_count: int = 0


@dataclass
class KnowledgePage(Model):
    items: List[KnowledgeItem] = _list()
    total_count: int = 0
    next_cursor: Optional[str] = None
    summary: KnowledgeSummary = field(default_factory=KnowledgeSummary)


@dataclass
class KeyValue(Model):
    key: str = ""
    value: float = 0


@dataclass
class KnowledgeMetrics(Model):
    org_id: str = ""
    knowledge_count: int = 0
    contribution_count: int = 0
    contributor_count: int = 0
    source_type_distribution: List[KeyValue] = _list()


@dataclass
class Contribution(Model):
    source_id: str = ""
    contributor_user_id: str = ""
    source_memory_type: str = ""
    source_level: int = 0
    source_content_preview: str = ""
    activated_at: str = ""


@dataclass
class KnowledgeContributions(Model):
    contributions: List[Contribution] = _list()


@dataclass
class KnowledgeDetail(Model):
    unit: OrgUnit = field(default_factory=OrgUnit)
    knowledge: KnowledgeContributions = field(default_factory=KnowledgeContributions)


# ---- §10 cluster ----

@dataclass
class ClusterMember(Model):
    node_id: int = 0
    url: str = ""
    voter: bool = False
    match_index: Optional[int] = None


@dataclass
class ShardStatus(Model):
    shard_id: int = 0
    leader: Optional[int] = None
    term: int = 0
    role: str = ""
    commit_index: int = 0
    applied_index: int = 0
    members: List[ClusterMember] = _list()


@dataclass
class ClusterStatus(Model):
    node_id: int = 0
    shards: List[ShardStatus] = _list()


@dataclass
class ShardOperation(Model):
    shard_id: int = 0
    status: str = ""


@dataclass
class ClusterOperation(Model):
    """The answer of initialize, join and remove."""
    status: str = ""
    node_id: int = 0
    role: Optional[str] = None
    shards: List[ShardOperation] = _list()


# ---- §13 webhooks, §14 import ----

@dataclass
class Webhook(Model):
    webhook_id: str = ""
    url: str = ""
    events: List[str] = _list()
    user_ids: Optional[List[str]] = None
    org_id: Optional[str] = None
    created_at: str = ""
    secret: Optional[str] = None  # shown only when created


@dataclass
class WebhookDelivery(Model):
    id: Optional[str] = None
    event_id: Optional[str] = None
    type: Optional[str] = None
    status: Optional[int] = None
    attempts: Optional[int] = None
    error: Optional[str] = None
    at: Optional[str] = None


@dataclass
class ImportResult(Model):
    status: str = ""
    counts: Dict[str, int] = field(default_factory=dict)
    skipped: Dict[str, int] = field(default_factory=dict)


def records(cls: Type[M], value: Any, key: str) -> List[M]:
    """A list reply that the contract leaves as either a bare array or ``{key: [...]}``."""
    items = value.get(key, []) if isinstance(value, dict) else value
    return [cls.from_dict(v) for v in (items or [])]


__all__: Tuple[str, ...] = tuple(
    name for name, value in dict(globals()).items() if isinstance(value, type) and issubclass(value, Model)
) + ("records",)
