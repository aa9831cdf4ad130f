/**
 * What nodes send each other about one shard group's data (placement, docs/cluster.md): a chunk of an
 * import proposed on the group's leader, and the records of a group streamed from a node that holds it.
 * Pure: the paths, the body of a proposal and its checks; the I/O is in remote-groups.ts (the sender)
 * and routes/cluster-groups.ts (the receiver).
 *
 * A proposal's body is NDJSON: the command's own line `{"type":"import.records","at":...}`, then one
 * line per record, as an export file has them. It can be as large as an import chunk (a record line up to
 * `import.max_line_bytes`), beyond what a JSON body may be, so it is not a JSON body: the peer signature
 * (cluster/peer-auth.ts `signDigest`) covers its SHA-256, which travels in a header. The receiver checks
 * the signature before it reads a byte, and the digest once it has read them all.
 */
import { badRequest, type ExportRecord, type ImportCommand } from '@strata/store';
import type { Line, LineParser } from '../operations/export-lines';
import type { UserGroups } from '../shards';

export const proposePath = (group: number): string => `/v1/cluster/groups/${group}/propose`;
export const recordsPath = (group: number, linearizable: boolean): string =>
  `/v1/cluster/groups/${group}/records${linearizable ? '?consistency=linearizable' : ''}`;

/** The body of an `import.records` command sent to the group's leader: the command's line, then its records. */
export function importBody(command: ImportCommand): Buffer {
  const lines = [JSON.stringify({ type: command.type, at: command.at }), ...command.records.map((r) => JSON.stringify(r))];
  return Buffer.from(lines.join('\n') + '\n', 'utf8');
}

const line = (n: number, message: string, field = '') =>
  badRequest('validation_failed', `Line ${n}${field ? ` (${field.slice(1)})` : ''} ${message}.`, [{ path: `/line/${n}${field}`, message }]);

/** The first line of a proposal: only `import.records` is accepted, with the time the importing node gave it. */
export function commandLine(first: Line): Pick<ImportCommand, 'type' | 'at'> {
  let v: unknown;
  try {
    v = JSON.parse(first.text);
  } catch {
    throw badRequest('invalid_json', `Line ${first.number} is not valid JSON.`, [{ path: `/line/${first.number}`, message: 'is not valid JSON' }]);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw line(first.number, 'must be the command {"type":"import.records","at":...}');
  const { type, at, ...rest } = v as Record<string, unknown>;
  if (type !== 'import.records') throw line(first.number, 'must name the command import.records (the only one proposed this way)', '/type');
  // the proposer's clock, as new Date().toISOString() wrote it: apply stores it as is
  if (typeof at !== 'string' || Number.isNaN(Date.parse(at)) || new Date(at).toISOString() !== at) throw line(first.number, 'must be an RFC 3339 UTC time with milliseconds', '/at');
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw line(first.number, 'is not a field of the command', `/${extra}`);
  return { type, at };
}

/**
 * The records of a proposal, each checked as an import checks a line of a file (its kind's schema, the
 * bytes behind its ids) and each of a user of `group`: a record of another group would be stored where
 * its user's reads never look.
 */
export function recordLine(parser: LineParser, l: Line, group: number, groups: UserGroups): ExportRecord {
  const record = parser.record(l);
  const its = groups.groupOf(record.user_id);
  if (its !== group) throw line(l.number, `names a user of shard ${its}, not of shard ${group}`, '/user_id');
  return record;
}

/** On a propose refused by a node that does not lead the group: the node it knows leads it. */
export const LEADER_HEADER = 'x-strata-leader';
