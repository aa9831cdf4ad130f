/**
 * Between nodes: one shard group's data, for the node that does not hold or lead it (placement,
 * cluster/remote-groups.ts is the sender). Signed with the cluster secret (cluster/peer-auth.ts), never
 * a user's credentials: 401 without a valid signature.
 *
 * - `POST /v1/cluster/groups/:group_id/propose`: one `import.records` command (the only command
 *   accepted), proposed here when this node leads the group (503 otherwise: the sender looks for the
 *   leader again); its body is checked as an import checks a file (group-wire.ts), 400 naming the line.
 *   The signature covers the body's SHA-256 (a header), so it is checked before a byte of the body is
 *   read, and the digest once all of it has been.
 * - `GET /v1/cluster/groups/:group_id/records`: every record of the group as NDJSON, from one LevelDB
 *   snapshot, when this node holds the group (503 otherwise: the sender asks another holder).
 */
import { createHash } from 'node:crypto';
import { badRequest, notFound, openExportSnapshot, settle, shardRecords, unavailable, type ExportRecord, type ImportCommand } from '@strata/store';
import { commandLine, LEADER_HEADER, recordLine } from '../cluster/group-wire';
import { jsonDigest, peerOnlyRoute, type PeerSigner } from '../cluster/peer-auth';
import { rawBodyChunks } from '../http/body';
import { sendNdjson } from '../http/ndjson';
import type { RouteContext, RouteSpec } from '../http/route';
import { LineParser, ndjsonLines } from '../operations/export-lines';
import type { Services } from '../services';
import type { Shard } from '../shards';

export interface GroupDataDeps {
  services: Services;
  signer: Pick<PeerSigner, 'verifyHeaders'>;
  /** this node serves the group's reads (GroupRouting.holds) */
  holds(shard: number): boolean;
}

/**
 * The records of one group, read from one snapshot, released however the reader stops: of the users this
 * node's key-range directory assigns to the group (a user handed over meanwhile is in both groups between
 * the copy and the drop; an export of every user reads each group once).
 */
async function* snapshotRecords(shard: Shard, owns: (userId: string) => boolean): AsyncGenerator<ExportRecord> {
  const snapshot = openExportSnapshot(shard.db);
  try {
    yield* shardRecords(shard.db, snapshot, owns);
  } finally {
    await snapshot.close();
  }
}

/** A body pulled through a SHA-256, which `digest()` gives once it has all been read. */
function hashed(chunks: AsyncIterable<Buffer>): { bytes: AsyncGenerator<Buffer>; digest(): string } {
  const hash = createHash('sha256');
  let done: string | null = null;
  return {
    bytes: (async function* () {
      for await (const chunk of chunks) {
        hash.update(chunk);
        yield chunk;
      }
      done = hash.digest('hex');
    })(),
    digest: () => {
      if (done === null) throw new Error('the body was not read to its end');
      return done;
    },
  };
}

export function groupDataRoutes(deps: GroupDataDeps): RouteSpec[] {
  const { services } = deps;
  const shards = () => services.shards.all();
  // signed for this node, checked from the headers before the body is read (the body's digest is signed)
  const signed = peerOnlyRoute(deps.signer);
  const groupOf = (ctx: RouteContext): Shard => {
    const n = /^[0-9]{1,6}$/.test(ctx.params.group_id) ? Number(ctx.params.group_id) : NaN;
    const shard = shards().find((s) => s.id === n);
    if (!shard) throw notFound(`No shard ${ctx.params.group_id} in this cluster.`);
    return shard;
  };
  return [
    {
      method: 'post', path: '/v1/cluster/groups/:group_id/propose', tag: 'cluster', auth: 'public', writes: false, rawBody: 'ndjson', beforeBody: signed.beforeBody,
      summary: "Between nodes: an import's chunk (one import.records command, NDJSON: the command's line, then its records) proposed on the group's leader (503 elsewhere). Signed with the cluster secret.",
      handler: async (ctx) => {
        const { max_bytes: maxBytes, max_line_bytes: maxLine } = services.config.import;
        const body = hashed(rawBodyChunks(ctx.req, maxBytes, 'import.max_bytes'));
        try {
          // The signature, which covers the body's digest, was checked before this (beforeBody); the
          // digest is compared once the body has been read. A body that does not decode: 400.
          const first = await body.bytes.next();
          const shard = groupOf(ctx);
          const rest = body.bytes;
          const bytes = async function* () {
            if (!first.done) yield first.value;
            yield* rest;
          };
          const parser = new LineParser();
          let head: Pick<ImportCommand, 'type' | 'at'> | null = null;
          const records: ExportRecord[] = [];
          // a record made again on the importing node (its vector embedded anew) may be longer than the file's line
          for await (const line of ndjsonLines(bytes(), maxLine + 1024 * 1024)) {
            if (head === null) head = commandLine(line);
            else records.push(recordLine(parser, line, shard.id, services.shards.groups));
          }
          signed.checkDigest(ctx.res, body.digest());
          if (head === null || records.length === 0) {
            throw badRequest('validation_failed', 'The body must hold the command line {"type":"import.records","at":...} and at least one record.', [{ path: `/line/${head === null ? 1 : 2}`, message: 'is missing' }]);
          }
          if (!shard.log.isLeader()) {
            const leader = shard.log.status().leader;
            // named in a header too, so the sender tries that node next rather than its own older view
            if (leader !== null) ctx.res.setHeader(LEADER_HEADER, String(leader));
            throw unavailable(`This node does not lead shard ${shard.id}${leader !== null ? ` (node ${leader} does)` : ''}; retry on its leader.`, 'no_leader');
          }
          return settle(await shard.log.propose({ ...head, records }));
        } finally {
          // refused before its end: the rest of the body is read and discarded (http/body.ts), so the answer reaches the sender
          await body.bytes.return(undefined);
        }
      },
    },
    {
      method: 'get', path: '/v1/cluster/groups/:group_id/records', tag: 'cluster', auth: 'public', beforeBody: signed.beforeBody,
      summary: "Between nodes: every record of a shard group this node holds (503 elsewhere) as export lines (NDJSON), from one snapshot: of the users this node's key-range directory assigns to the group. Signed with the cluster secret.",
      queryParams: [{ name: 'consistency', schema: { type: 'string', enum: ['local', 'linearizable'], default: 'local' }, description: "linearizable: wait for the leader's commit index first (ReadIndex)" }],
      handler: async (ctx) => {
        signed.checkDigest(ctx.res, jsonDigest(undefined));
        const shard = groupOf(ctx);
        const consistency = ctx.query.consistency;
        if (consistency !== undefined && consistency !== 'local' && consistency !== 'linearizable') {
          throw badRequest('validation_failed', 'consistency must be local or linearizable.', [{ path: '/consistency', message: 'must be one of "local", "linearizable"' }]);
        }
        if (!deps.holds(shard.id)) throw unavailable(`This node does not hold shard ${shard.id}; ask another of its replicas.`, 'no_leader');
        if (consistency === 'linearizable') await shard.log.readBarrier();
        await sendNdjson(ctx.res, snapshotRecords(shard, (user) => services.shards.groups.groupOf(user) === shard.id), services.logger);
      },
    },
  ];
}
