"""The Python client against a real Strata node.

STRATA_TEST_URL and STRATA_TEST_API_KEY name the node and an admin key (STRATA_TEST_ADMIN_PASSWORD,
the admin account's password, for the login tests). Every name a test makes carries a run id, so the
suite can run again against the same node. A route of the contract the node does not serve yet
(404 `route_not_found`, or 405 `method_not_allowed` where the path exists with other methods) skips
its test with "route not served yet"; any other answer is judged.

    STRATA_TEST_URL=http://127.0.0.1:3000 STRATA_TEST_API_KEY=... python3 -m unittest discover -s clients/python/tests -v
"""
import dataclasses
import json
import os
import sys
import threading
import unittest
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from strata_client import (  # noqa: E402
    AuthError, BadRequest, Conflict, Forbidden, IngestResult, MethodNotAllowed, NotFound, RetrieveResponse, StrataClient,
    StrataConnectionError, StrataError, Unauthenticated, Unavailable, sign, verify_signature,
)

URL = os.environ.get("STRATA_TEST_URL", "")
KEY = os.environ.get("STRATA_TEST_API_KEY", "")
ADMIN_PASSWORD = os.environ.get("STRATA_TEST_ADMIN_PASSWORD", "")

RUN = uuid.uuid4().hex[:8]
ANA = f"py-{RUN}-ana"      # facts, retrieval, context, edges, scoped keys
BEN = f"py-{RUN}-ben"      # organization knowledge
CAL = f"py-{RUN}-cal"      # forgetting and deletion
OMAR = f"py-{RUN}-omar"    # goals and tasks
DARA = f"py-{RUN}-dara"    # ingest, idempotency and retries (keeps the others' memory as seeded)
ORG = f"py-{RUN}-acme"
S1, S2, S3, S4 = (str(uuid.uuid4()) for _ in range(4))


def new_stream() -> str:
    return str(uuid.uuid4())


class FaultProxy:
    """Sits between a client and the node to lose answers. Each request takes the next queued fault:
    'drop' forwards the request to the node, then closes the connection without answering (the write
    happened, the client never heard); 'unavailable' answers 503 with Retry-After: 0 without
    forwarding. Without a fault the request is forwarded and answered. ``seen`` records every request
    as (method, path, Idempotency-Key)."""

    def __init__(self, upstream: str) -> None:
        self.faults = []
        self.seen = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def handle_any(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                proxy.seen.append((self.command, self.path, self.headers.get("idempotency-key")))
                fault = proxy.faults.pop(0) if proxy.faults else None
                if fault == "unavailable":
                    self.answer(503, {"content-type": "application/json", "retry-after": "0"},
                                json.dumps({"error": "No leader (injected by the test).", "code": "unavailable"}).encode())
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                request = urllib.request.Request(upstream + self.path, data=body or None, method=self.command, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        status, reply_headers, data = response.status, response.headers, response.read()
                except urllib.error.HTTPError as err:
                    status, reply_headers, data = err.code, err.headers, err.read()
                if fault == "drop":
                    self.close_connection = True
                    return
                self.answer(status, {k: reply_headers[k] for k in ("content-type", "retry-after") if reply_headers.get(k)}, data)

            def answer(self, status: int, headers: dict, data: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class NodeTest(unittest.TestCase):
    client: StrataClient
    lisbon_event: str

    @classmethod
    def setUpClass(cls) -> None:
        if not URL or not KEY:
            raise unittest.SkipTest("set STRATA_TEST_URL and STRATA_TEST_API_KEY (a running node and its admin key)")
        cls.client = StrataClient(URL, KEY)
        c = cls.client
        cls.lisbon_event = c.ingest(ANA, S1, "Ana lives in Lisbon and works as a marine biologist.").event_id
        c.ingest(ANA, S1, "Ana's sister Rita is a pilot based in Porto.")
        c.ingest(OMAR, S2, "My goal is to run a marathon: 1. buy running shoes 2. train three times a week 3. register for the race")
        c.ingest(BEN, S3, "Our team deploys the billing service with PostgreSQL 16.", org_id=ORG)
        c.ingest_batch(CAL, S4, ["Cal owns a red bicycle.", "Cal drinks green tea every morning."])
        status = c.wait_until_ready(timeout=60, poll=0.05)
        assert status.ready, f"consolidation did not finish: {status}"

    def unit_of(self, user: str, words: str):
        found = [u for u in self.client.all_memories(user) if words in u.content]
        self.assertEqual(len(found), 1, f"one unit of {user} with {words!r}")
        return found[0]

    def served(self, what: str, call):
        """The call's result; skips the test when the node does not serve the route yet."""
        try:
            return call()
        except (NotFound, MethodNotAllowed) as err:
            if err.code in ("route_not_found", "method_not_allowed"):
                self.skipTest(f"route not served yet: {what} ({err.status} {err.code})")
            raise

    # ---- ingest, idempotency, retries ----

    def test_ingest_with_the_same_idempotency_key_stores_once(self) -> None:
        stream, key = new_stream(), str(uuid.uuid4())
        first = self.client.ingest(DARA, stream, {"content": "Dara's bike is blue.", "role": "user"}, idempotency_key=key)
        again = self.client.ingest(DARA, stream, {"content": "Dara's bike is blue.", "role": "user"}, idempotency_key=key)
        self.assertEqual(first.status, "accepted")
        self.assertEqual(again.event_id, first.event_id)
        self.assertEqual([e.event_id for e in self.client.all_events(DARA, stream)], [first.event_id])

    def test_ingest_retries_a_lost_answer_and_a_503_with_one_key(self) -> None:
        proxy = FaultProxy(URL)
        self.addCleanup(proxy.close)
        client = StrataClient(proxy.url, KEY, backoff=0.01)
        stream = new_stream()
        proxy.faults = ["drop", "unavailable"]
        result = client.ingest(DARA, stream, "Dara keeps bees on her roof.")
        self.assertEqual(len(proxy.seen), 3)
        keys = {k for _, _, k in proxy.seen}
        self.assertEqual(len(keys), 1)
        self.assertIsNotNone(keys.pop())
        # The first attempt was stored; its retry got the first answer and stored nothing new.
        self.assertEqual([e.event_id for e in self.client.all_events(DARA, stream)], [result.event_id])

        proxy.seen.clear()
        proxy.faults = ["drop"]
        batch = client.ingest_batch(DARA, stream, ["one", "two"])
        self.assertEqual(len(proxy.seen), 2)
        self.assertEqual([e.event_id for e in self.client.all_events(DARA, stream)], [result.event_id, *batch.event_ids])

    def test_retries_give_up_and_other_writes_are_not_retried(self) -> None:
        proxy = FaultProxy(URL)
        self.addCleanup(proxy.close)
        client = StrataClient(proxy.url, KEY, backoff=0.01, max_retries=1)
        proxy.faults = ["unavailable", "unavailable"]
        with self.assertRaises(Unavailable) as caught:
            client.ingest(DARA, new_stream(), "never stored")
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.retry_after), (503, "unavailable", 0))
        self.assertEqual(len(proxy.seen), 2)

        proxy.seen.clear()
        proxy.faults = ["drop"]
        with self.assertRaises(StrataConnectionError):
            client.set_user_org(f"py-{RUN}-proxied", None)
        self.assertEqual(len(proxy.seen), 1)

    def test_batch_is_atomic_and_events_page_in_order(self) -> None:
        stream = new_stream()
        batch = self.client.ingest_batch(DARA, stream, ["first", {"content": "second", "role": "assistant"}, "third"])
        self.assertEqual((batch.status, batch.count, len(batch.event_ids)), ("accepted", 3, 3))
        page1 = self.client.list_events(DARA, stream, limit=2)
        self.assertEqual([e.content for e in page1.events], ["first", "second"])
        self.assertEqual(page1.events[1].role, "assistant")
        self.assertIsNotNone(page1.next_cursor)
        page2 = self.client.list_events(DARA, stream, after=page1.next_cursor, limit=2)
        self.assertEqual([e.content for e in page2.events], ["third"])
        self.assertEqual([e.event_id for e in page1.events + page2.events], batch.event_ids)
        self.assertEqual([e.event_id for e in self.client.all_events(DARA, stream)], batch.event_ids)

        with self.assertRaises(BadRequest) as caught:
            self.client.ingest_batch(DARA, stream, ["fine", {"content": "x", "content_type": "hologram"}])
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(caught.exception.details[0]["path"], "/events/1/content_type")
        self.assertEqual(len(self.client.all_events(DARA, stream)), 3)
        self.assertEqual(self.client.ingest_batch(DARA, stream, []).count, 0)

    # ---- retrieval and context ----

    def test_retrieve_finds_a_consolidated_fact_with_its_provenance(self) -> None:
        reply = self.client.retrieve(ANA, S1, "Where does Ana live?", limit=5, include_pending=False)
        self.assertIsInstance(reply, RetrieveResponse)
        self.assertEqual(reply.query, "Where does Ana live?")
        hits = [r for r in reply.results if "Lisbon" in r.unit.content]
        self.assertEqual(len(hits), 1)
        self.assertGreaterEqual(hits[0].unit.level, 1)
        self.assertEqual(hits[0].unit.stream_id, S1)
        self.assertIn(self.lisbon_event, hits[0].unit.references)
        self.assertTrue(all(0 <= r.score <= 1 for r in reply.results))
        scores = [r.score for r in reply.results]
        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_context_stays_within_its_token_budget(self) -> None:
        reply = self.client.context(ANA, "Where does Ana live?", token_budget=100)
        self.assertEqual((reply.token_budget, reply.strategy), (100, "dense_l2_l3"))
        self.assertLessEqual(reply.used_token_estimate, 100)
        self.assertGreaterEqual(reply.included_count, 1)
        self.assertIn("Lisbon", reply.context)
        header = self.client.context(ANA, "Where does Ana live?", budget=64, format="xml", stream_id=S1)
        self.assertEqual(header.token_budget, 64)
        self.assertLessEqual(header.used_token_estimate, 64)
        self.assertTrue(header.context.startswith("<"))

    # ---- goals and tasks ----

    def test_tasks_tree_ready_and_status(self) -> None:
        trees = self.client.task_tree(OMAR, S2)
        self.assertEqual(len(trees), 1)
        self.assertIn("marathon", trees[0].goal.content.lower())
        titles = [n.task.title for n in trees[0].tasks]
        self.assertEqual(len(titles), 3)
        self.assertEqual(titles[0], "Buy running shoes")
        self.assertEqual([t.goal.id for t in self.client.task_tree(OMAR)], [trees[0].goal.id])

        ready = self.client.ready_tasks(OMAR)
        self.assertEqual([t.title for t in ready], ["Buy running shoes"])
        shoes = ready[0]
        done = self.client.set_task_status(OMAR, shoes.task_id, "completed", result_summary="Bought trail shoes")
        self.assertEqual((done.status, done.progress, done.result_summary), ("completed", 1, "Bought trail shoes"))
        self.assertEqual([t.title for t in self.client.ready_tasks(OMAR)], [titles[1]])

        with self.assertRaises(Conflict) as caught:
            self.client.set_task_status(OMAR, shoes.task_id, "pending")
        self.assertEqual((caught.exception.status, caught.exception.code), (409, "invalid_transition"))
        reopened = self.client.set_task_status(OMAR, shoes.task_id, "InProgress", reopen=True)
        self.assertEqual(reopened.status, "in_progress")
        blocked = self.client.set_task_status(OMAR, trees[0].tasks[2].task.task_id, {"Blocked": "waiting for the lottery"})
        self.assertEqual(blocked.status, "blocked")
        with self.assertRaises(NotFound) as missing:
            self.client.set_task_status(OMAR, str(uuid.uuid4()), "pending")
        self.assertEqual(missing.exception.code, "not_found")

    # ---- graph, memories, maintenance ----

    def test_edges_between_units(self) -> None:
        lisbon, rita = self.unit_of(ANA, "Lisbon"), self.unit_of(ANA, "Rita")
        edge = self.client.add_edge(ANA, lisbon.id, rita.id, "RelatedTo", weight=0.5)
        self.assertEqual(edge.status, "accepted")
        self.assertEqual(str(uuid.UUID(edge.edge_id)), edge.edge_id)
        with self.assertRaises(NotFound) as missing:
            self.client.add_edge(ANA, lisbon.id, str(uuid.uuid4()), "supports")
        self.assertEqual(missing.exception.code, "not_found")
        with self.assertRaises(BadRequest) as bad:
            self.client.add_edge(ANA, lisbon.id, rita.id, "Likes")
        self.assertEqual(bad.exception.code, "validation_failed")

    def test_memories_are_listed_in_pages(self) -> None:
        first = self.client.memories(ANA, limit=1)
        self.assertEqual(len(first.memories), 1)
        self.assertIsNotNone(first.next_cursor)
        rest = self.client.memories(ANA, after=first.next_cursor, limit=1000)
        units = first.memories + rest.memories
        self.assertEqual({u.id for u in units}, {u.id for u in self.client.all_memories(ANA)})
        self.assertTrue(all(isinstance(u.importance, float) and u.retired_at is None for u in units))
        self.assertTrue(all(u.level == 2 for u in self.client.memories(ANA, level=2).memories))
        self.assertIsInstance(self.client.dropped_events(ANA), list)
        self.assertIsInstance(self.client.failed_events(limit=5).failed, list)

    def test_semantic_forget_previews_then_executes(self) -> None:
        bicycle = self.unit_of(CAL, "bicycle")
        plan = self.client.semantic_preview(CAL, "Forget that Cal owns a red bicycle")
        with self.assertRaises(BadRequest):
            self.client.semantic_execute(CAL, plan.plan_id, confirm=False)
        self.assertEqual(plan.kind, "forget")
        self.assertIn(bicycle.id, [u.id for u in plan.forget_preview.memory_units])
        self.assertIn(bicycle.id, [u.id for u in self.client.all_memories(CAL)])  # the preview changed nothing
        done = self.client.semantic_execute(CAL, plan.plan_id, confirm=True, reviewer="py-test")
        self.assertEqual((done.status, done.kind), ("executed", "forget"))
        self.assertIn(bicycle.id, done.affected_unit_ids)
        found = self.client.retrieve(CAL, S4, "bicycle", include_pending=False).results
        self.assertNotIn(bicycle.id, [r.unit.id for r in found])
        with self.assertRaises(NotFound):
            self.client.semantic_execute(CAL, plan.plan_id, confirm=True)

    def test_delete_memory(self) -> None:
        tea = self.unit_of(CAL, "tea")
        gone = self.client.delete_memory(CAL, tea.id)
        self.assertEqual((gone.status, gone.memory_id, gone.mode), ("deleted", tea.id, "hard"))
        self.assertNotIn(tea.id, [u.id for u in self.client.all_memories(CAL, include_retired=True)])
        with self.assertRaises(NotFound):
            self.client.delete_memory(CAL, tea.id)

    # ---- organization knowledge ----

    def test_org_knowledge_list_metrics_and_detail(self) -> None:
        page = self.client.org_knowledge(ORG)
        self.assertEqual(len(page.items), 1)
        item = page.items[0]
        self.assertIn("PostgreSQL", item.unit.content)
        self.assertEqual(item.contributor_user_ids, [BEN])
        self.assertEqual((page.total_count, page.summary.knowledge_count, page.summary.contributor_count), (1, 1, 1))
        self.assertEqual(len(self.client.org_knowledge(ORG, q="postgresql", sort="topic_asc").items), 1)
        self.assertEqual(self.client.org_knowledge(ORG, q="kubernetes").items, [])
        metrics = self.client.org_knowledge_metrics(ORG)
        self.assertEqual((metrics.org_id, metrics.knowledge_count, metrics.contributor_count), (ORG, 1, 1))
        detail = self.client.org_knowledge_item(ORG, item.unit.id)
        self.assertEqual(detail.unit.id, item.unit.id)
        self.assertEqual([c.contributor_user_id for c in detail.knowledge.contributions], [BEN])
        with self.assertRaises(NotFound):
            self.client.org_knowledge_item(f"py-{RUN}-other-org", item.unit.id)

    # ---- keys, scopes, auth, validation ----

    def test_keys_are_created_listed_scoped_and_revoked(self) -> None:
        created = self.client.create_api_key(name=f"py-{RUN}-reader", user_ids=[ANA], role="read")
        self.assertTrue(created.key.startswith("sk_"))
        self.assertEqual((created.role, created.user_ids, created.org_id), ("read", [ANA], None))
        listed = [k for k in self.client.list_api_keys() if k.key_id == created.key_id]
        self.assertEqual(len(listed), 1)
        self.assertFalse(hasattr(listed[0], "key"))  # the key itself is shown only once
        self.assertEqual(listed[0].key_prefix, created.key_prefix)

        reader = StrataClient(URL, created.key)
        self.assertIn("Lisbon", " ".join(r.unit.content for r in reader.retrieve(ANA, S1, "Where does Ana live?").results))
        with self.assertRaises(Forbidden) as other_user:
            reader.retrieve(CAL, S4, "tea")
        self.assertEqual((other_user.exception.status, other_user.exception.code), (403, "forbidden"))
        with self.assertRaises(AuthError) as read_only:
            reader.ingest(ANA, S1, "a reader may not write")
        self.assertEqual(read_only.exception.code, "forbidden")
        with self.assertRaises(Forbidden):
            reader.create_api_key(role="admin")

        org_key = self.client.create_api_key(org_id=ORG, role="write")
        self.assertEqual((org_key.org_id, org_key.role, org_key.user_ids), (ORG, "write", None))
        self.assertEqual(self.client.revoke_api_key(org_key.key_id).status, "revoked")

        revoked = self.client.revoke_api_key(created.key_id)
        self.assertEqual((revoked.status, revoked.key_id), ("revoked", created.key_id))
        with self.assertRaises(Unauthenticated) as refused:
            reader.pending()
        self.assertEqual((refused.exception.status, refused.exception.code), (401, "unauthenticated"))
        with self.assertRaises(NotFound):
            self.client.revoke_api_key(created.key_id)

    def test_a_bad_key_and_bad_input_raise_typed_errors(self) -> None:
        with self.assertRaises(Unauthenticated):
            StrataClient(URL, "sk_" + "x" * 36).pending()
        with self.assertRaises(BadRequest) as caught:
            self.client.retrieve(ANA, S1, "anything", limit=0)
        err = caught.exception
        self.assertIsInstance(err, StrataError)
        self.assertEqual((err.status, err.code), (400, "validation_failed"))
        self.assertEqual(err.details[0]["path"], "/limit")
        self.assertTrue(err.request_id)
        with self.assertRaises(BadRequest) as bad_id:
            self.client.list_events(ANA, "not-a-uuid")
        self.assertEqual(bad_id.exception.code, "invalid_id")

    def test_login_and_change_password(self) -> None:
        if not ADMIN_PASSWORD:
            self.skipTest("set STRATA_TEST_ADMIN_PASSWORD (the node's admin password) to test login")
        client = StrataClient(URL, api_key="")
        with self.assertRaises(Unauthenticated):
            client.login("admin", ADMIN_PASSWORD + "-wrong")
        session = client.login("admin", ADMIN_PASSWORD)
        self.assertGreater(session.expires_in, 0)
        self.assertTrue(client.pending().ready in (True, False))  # the bearer token is used
        new_password = ADMIN_PASSWORD + "-changed"
        self.assertEqual(client.change_password(ADMIN_PASSWORD, new_password).status, "changed")
        try:
            StrataClient(URL, api_key="").login("admin", new_password)
        finally:
            client.change_password(new_password, ADMIN_PASSWORD)

    # ---- cluster, users, operations ----

    def test_cluster_status_init_and_refusals(self) -> None:
        status = self.client.cluster_status()
        self.assertGreaterEqual(status.node_id, 1)
        self.assertEqual(status.shards[0].leader, status.node_id)
        self.assertIn(status.node_id, [m.node_id for m in status.shards[0].members])
        init = self.client.cluster_init()
        self.assertEqual(init.status, "already_initialized")
        self.assertEqual(len(init.shards), len(status.shards))
        with self.assertRaises(NotFound):
            self.client.cluster_remove(999)
        with self.assertRaises(BadRequest) as bad:
            self.client.cluster_join(2, "not a url")
        self.assertEqual(bad.exception.code, "validation_failed")

    def test_user_org_records(self) -> None:
        user = f"py-{RUN}-member"
        first = self.client.set_user_org(user, ORG)
        self.assertEqual((first.user_id, first.org_id, first.changed), (user, ORG, True))
        self.assertFalse(self.client.set_user_org(user, ORG).changed)
        self.assertIsNone(self.client.set_user_org(user, None).org_id)

    def test_list_users(self) -> None:
        users, after = [], None
        while True:  # paged: the node may hold users of earlier runs
            page = self.served("GET /v1/users", lambda: self.client.list_users(after=after, limit=500))
            users.extend(page.users)
            if not page.next_cursor:
                break
            after = page.next_cursor
        ana = [u for u in users if u.user_id == ANA]
        self.assertEqual(len(ana), 1)
        self.assertGreaterEqual(ana[0].counts.events, 2)
        self.assertGreaterEqual(ana[0].counts.memory_units, 2)

    def test_health_metrics_openapi(self) -> None:
        health = self.client.health()
        self.assertEqual((health.live, health.ready), (True, True))
        self.assertIn("strata_http_requests_total", self.client.metrics())
        document = self.client.openapi()
        self.assertTrue(document["openapi"].startswith("3.1"))
        self.assertIn("/v1/status/pending", document["paths"])

    # ---- routes of the contract that may not be served yet ----

    def test_facts(self) -> None:
        user = f"py-{RUN}-eve"
        result = self.served("POST /v1/users/:user_id/facts",
                             lambda: self.client.ingest_facts(user, [{"content": "Eve prefers window seats on flights."}]))
        self.assertEqual((result.status, len(result.memory_ids)), ("accepted", 1))
        self.assertEqual([u.id for u in self.client.all_memories(user)], result.memory_ids)

    def test_memory_detail(self) -> None:
        lisbon = self.unit_of(ANA, "Lisbon")
        detail = self.served("GET /v1/users/:user_id/memories/:id", lambda: self.client.memory(ANA, lisbon.id))
        self.assertEqual(detail.unit.id, lisbon.id)
        with self.assertRaises(NotFound):
            self.client.memory(ANA, str(uuid.uuid4()))

    def test_webhooks(self) -> None:
        hookless = f"py-{RUN}-hookless"  # no events: nothing is ever delivered
        hook = self.served("POST /v1/webhooks", lambda: self.client.create_webhook(
            "http://93.184.216.34/strata-hook", ["memory.created"], user_ids=[hookless]))
        self.assertTrue(hook.webhook_id and hook.secret)
        self.assertIn(hook.webhook_id, [h.webhook_id for h in self.client.list_webhooks()])
        self.assertEqual(self.client.webhook_deliveries(hook.webhook_id), [])
        self.client.delete_webhook(hook.webhook_id)
        self.assertNotIn(hook.webhook_id, [h.webhook_id for h in self.client.list_webhooks()])

    def test_export_then_import_is_idempotent(self) -> None:
        lines = self.served("GET /v1/users/:user_id/export", lambda: list(self.client.export(ANA)))
        self.assertEqual((lines[0]["kind"], lines[0]["format"], lines[0]["version"]), ("header", "strata-export", 1))
        self.assertIn(self.lisbon_event, [r.get("event_id") or r.get("id") for r in lines if r["kind"] == "event"])
        before = len(self.client.all_events(ANA, S1))
        result = self.served("POST /v1/import", lambda: self.client.import_records(lines))
        self.assertEqual(result.status, "imported")
        self.assertEqual(len(self.client.all_events(ANA, S1)), before)


class OfflineTest(unittest.TestCase):
    """What needs no node: reply records and webhook signatures."""

    def test_unknown_fields_are_ignored_by_the_records(self) -> None:
        reply = RetrieveResponse.from_dict({
            "stream_id": S1, "query": "q", "query_time_ms": 1.5, "added_later": {"x": 1},
            "results": [{"score": 0.5, "rank": 1, "unit": {"id": "u1", "content": "c", "level": 1, "new_field": True}}],
        })
        self.assertEqual(reply.results[0].unit.id, "u1")
        self.assertFalse(hasattr(reply, "added_later") or hasattr(reply.results[0].unit, "new_field"))
        self.assertNotIn("rank", dataclasses.asdict(reply.results[0]))
        self.assertEqual(IngestResult.from_dict({"status": "accepted", "event_id": "e", "shard": 3}), IngestResult("accepted", "e"))

    def test_webhook_signatures(self) -> None:
        body = b'{"id":"1","type":"memory.created"}'
        self.assertTrue(verify_signature("s3cret", body, sign("s3cret", body)))
        self.assertFalse(verify_signature("s3cret", body + b" ", sign("s3cret", body)))
        self.assertFalse(verify_signature("s3cret", body, None))


if __name__ == "__main__":
    unittest.main()
