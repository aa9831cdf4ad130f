/**
 * Import of an export file (CONTRACT §14, docs/export-format.md). Transport free: a principal and a
 * byte stream in, the counts out. The file is read line by line and each line checked in full (its
 * kind's schema, the credentials' scope over its user and org) before it joins the chunk of its user's
 * shard; a chunk is proposed as one `import.records` command once it holds `import.chunk_records`
 * records or `import.chunk_bytes` bytes, and at the end. Reading waits while a chunk is proposed, so
 * memory holds at most a chunk per shard whatever the file's size. A chunk is proposed on its shard's
 * leader: here when this node leads it, else sent to it (cluster/remote-groups.ts). A bad line stops the import there:
 * nothing from it on is proposed (chunks proposed before it stay, and importing the corrected file
 * again skips them, since apply skips every record whose id is stored); so does a chunk that cannot be
 * stored. Either answer says where the file stopped and what of it is stored (import-stop.ts).
 */
import { encodeVector, conflict, recordOrgs, settle, StrataError, EXPORT_KINDS, type ExportKind, type ExportRecord, type ImportAnswer, type ImportCommand } from '@strata/store';
import { once } from 'node:events';
import { createReadStream, createWriteStream, readdirSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Principal } from '../auth/principal';
import { isUnscoped, requireNamedOrgs } from '../auth/scope';
import type { Services } from '../services';
import { chunkFailed, lineRefused, type ImportCounts, type ImportProgress } from './import-stop';
import { LineParser, ndjsonLines, type ParsedHeader } from './export-lines';

export interface ImportInput {
  /** the file's bytes (decoded), pulled as the import goes */
  body: AsyncIterable<Uint8Array>;
  /**
   * When the file's vectors were made by another embedder than this node's: false refuses the file
   * (409), true embeds its units again with this node's embedder before they are stored.
   */
  reembed: boolean;
}

const PLURAL: Record<ExportKind, string> = { event: 'events', asset: 'assets', unit: 'units', edge: 'edges', goal: 'goals', task: 'tasks', user: 'users' };
export type { ImportCounts } from './import-stop';

export interface ImportOutput {
  status: 'imported';
  /** records written, by kind (events, assets, units, edges, goals, tasks, users) */
  counts: ImportCounts;
  /** records skipped because their id was stored already (an edge also when one of its units is missing) */
  skipped: ImportCounts;
}

interface Chunk {
  records: ExportRecord[];
  bytes: number;
  /** the file's lines its records came from, the first and the last */
  firstLine: number;
  lastLine: number;
}

const zero = (): ImportCounts => Object.fromEntries(EXPORT_KINDS.map((k) => [PLURAL[k], 0]));

export async function importFile(services: Services, principal: Principal, input: ImportInput): Promise<ImportOutput> {
  const limits = services.config.import;
  const { embedder } = services.providers;
  const parser = new LineParser();
  const counts = zero();
  const skipped = zero();
  // by group id: a group may not be open on this node (a replica moved away); its leader takes the chunk
  const chunks = new Map<number, Chunk>();
  let header: ParsedHeader | null = null;
  const started = Date.now();
  /** the last line read, and the last one taken into a chunk (the header's, 1, before any) */
  let lineRead = 0;
  let lineTaken = 0;
  /** the answer of a chunk that could not be stored (it already says what of the file is) */
  let stopped: StrataError | null = null;
  /** how far the file got: every line taken is stored unless it waits in a chunk (or is in `failed`) */
  const progress = (failed?: Chunk): ImportProgress => {
    const waiting = [...chunks.values(), ...(failed ? [failed] : [])].map((c) => c.firstLine);
    return { line: lineRead, firstUnstored: Math.min(...waiting, lineTaken + 1), counts, skipped };
  };

  /** Vectors of another embedder than this node's, made again here (only with `reembed`). */
  const reembedded = async (records: ExportRecord[]): Promise<ExportRecord[]> => {
    const stale = records.filter((r) => r.kind === 'unit' && r.vector !== null && (r.vector.embedder_id !== embedder.id || r.vector.dims !== embedder.dimensions));
    for (let i = 0; i < stale.length; i += 256) {
      const batch = stale.slice(i, i + 256) as Extract<ExportRecord, { kind: 'unit' }>[];
      const vectors = await embedder.embed(batch.map((u) => u.content));
      batch.forEach((u, j) => (u.vector = encodeVector(vectors[j], embedder.id)));
    }
    return records;
  };

  const flush = async (group: number) => {
    const chunk = chunks.get(group);
    if (!chunk || chunk.records.length === 0) return;
    chunks.delete(group);
    const records = input.reembed ? await reembedded(chunk.records) : chunk.records;
    const command: ImportCommand = { type: 'import.records', at: new Date().toISOString(), records };
    const local = async () => settle(await services.shards.here(group).log.propose(command));
    let answer: ImportAnswer;
    try {
      // on the group's leader, wherever it is (placement: this node may neither hold nor lead the group)
      answer = services.groups ? await services.groups.proposeImport(group, command, local) : await local();
    } catch (err) {
      if (!(err instanceof StrataError)) throw err;
      const stop = progress(chunk);
      services.logger.warn({ shard: group, line: stop.line, first_unstored: stop.firstUnstored, counts, skipped, err: err.message }, 'import stopped: a chunk was not stored');
      stopped = chunkFailed(err, { shard: group, firstLine: chunk.firstLine, lastLine: chunk.lastLine, records: records.length }, stop);
      throw stopped;
    }
    for (const kind of EXPORT_KINDS) {
      counts[PLURAL[kind]] += answer.imported[kind];
      skipped[PLURAL[kind]] += answer.skipped[kind];
    }
  };

  /**
   * The credentials must cover the record's user (checked once per user) and every org it names.
   * `claim` false (the first pass): a new user an org key would claim is let through, nothing proposed.
   */
  const authorizer = (claim: boolean, authorized = new Set<string>()) => async (record: ExportRecord, line: number) => {
    if (isUnscoped(principal)) return;
    const orgs = recordOrgs(record);
    try {
      if (!authorized.has(record.user_id)) {
        await services.scope.authorizeUser(principal, { user_id: record.user_id, org_ids: orgs, write: true, claim });
        authorized.add(record.user_id);
      } else {
        requireNamedOrgs(principal, orgs);
      }
    } catch (err) {
      if (err instanceof StrataError && err.code === 'forbidden') {
        throw new StrataError('forbidden', `Line ${line}: ${err.message}`, [{ path: `/line/${line}/user_id`, message: err.message }]);
      }
      throw err;
    }
  };

  // Scoped credentials: every line's scope is checked before anything is proposed (a 403 applies
  // nothing), in a first pass that keeps the body in a file of the data directory for the second.
  const authorize = authorizer(true);
  const spool = isUnscoped(principal) ? null : await Spool.open(services.config.storage.data_dir);
  try {
    const body = spool ? await spool.firstPass(input.body, limits.max_line_bytes, authorizer(false)) : input.body;
    for await (const line of ndjsonLines(body, limits.max_line_bytes)) {
      lineRead = line.number;
      if (header === null) {
        header = parser.header(line);
        refuseOtherEmbedder(header, embedder, input.reembed);
        lineTaken = line.number;
        continue;
      }
      const record = parser.record(line);
      await authorize(record, line.number);
      const group = services.shards.groupOf(record.user_id);
      let chunk = chunks.get(group);
      if (!chunk) chunks.set(group, (chunk = { records: [], bytes: 0, firstLine: line.number, lastLine: line.number }));
      chunk.records.push(record);
      chunk.lastLine = lineTaken = line.number;
      chunk.bytes += Buffer.byteLength(line.text, 'utf8');
      if (chunk.records.length >= limits.chunk_records || chunk.bytes >= limits.chunk_bytes) await flush(group);
    }
    if (header === null) {
      throw new StrataError('validation_failed', `The file is empty: its first line must be the header {"kind":"header","format":"strata-export","version":1,...}.`, [{ path: '/line/1', message: 'is missing' }]);
    }
    for (const group of [...chunks.keys()].sort((a, b) => a - b)) await flush(group);
    services.logger.info({ counts, skipped, ms: Date.now() - started }, 'import done');
    return { status: 'imported', counts, skipped };
  } catch (err) {
    // a line refused (or the body over its limit) after chunks were stored: the answer says so
    throw err instanceof StrataError && err !== stopped ? lineRefused(err, progress()) : err;
  } finally {
    await spool?.remove();
  }
}

/**
 * Deletes the spools a node left when it stopped in the middle of an import (a crash, a kill): the
 * import's client got no answer and sends the file again, so nothing reads them. Run at start, before
 * any request can open a new one.
 */
export function removeLeftoverSpools(dataDir: string): string[] {
  const removed: string[] = [];
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !SPOOL_DIR.test(entry.name)) continue;
    rmSync(join(dataDir, entry.name), { recursive: true, force: true });
    removed.push(entry.name);
  }
  return removed;
}

/** What `mkdtemp(join(dataDir, 'import-'))` names: "import-" and six characters. */
const SPOOL_DIR = /^import-[A-Za-z0-9]{6}$/;

/**
 * The body of an import by scoped credentials, kept in a private file while its lines' scopes are
 * checked, then read again for the proposals. Memory stays bounded (a line at a time); disk holds the
 * body (at most `import.max_bytes`) until the import ends.
 */
class Spool {
  private constructor(private readonly dir: string) {}

  static async open(dataDir: string): Promise<Spool> {
    return new Spool(await mkdtemp(join(dataDir, 'import-')));
  }

  private get path(): string {
    return join(this.dir, 'body.ndjson');
  }

  /**
   * Writes the body to the file while checking the scope of each line that parses (`authorize`: 403).
   * A line that does not parse ends the pass: the second pass refuses it at the same line, after the
   * chunks before it (the documented behaviour for a malformed line). Answers the file's bytes.
   */
  async firstPass(
    body: AsyncIterable<Uint8Array>, maxLineBytes: number, authorize: (record: ExportRecord, line: number) => Promise<void>,
  ): Promise<AsyncIterable<Uint8Array>> {
    const out = createWriteStream(this.path, { mode: 0o600 });
    const written = async function* () {
      for await (const chunk of body) {
        if (!out.write(chunk)) await once(out, 'drain');
        yield chunk;
      }
    };
    try {
      let first = true;
      const check = new LineParser();
      for await (const line of ndjsonLines(written(), maxLineBytes)) {
        if (first) {
          first = false;
          continue;
        }
        let record: ExportRecord;
        try {
          record = check.record(line);
        } catch {
          break;
        }
        await authorize(record, line.number);
      }
    } finally {
      out.end();
      await once(out, 'close');
    }
    return createReadStream(this.path);
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Vectors are comparable only with vectors of the same embedder: a file made with another one would
 * rank by vectors the node's queries cannot be compared with. Refused (409) unless the caller asks for
 * the units to be embedded again.
 */
function refuseOtherEmbedder(header: ParsedHeader, embedder: { id: string; dimensions: number }, reembed: boolean): void {
  if (!header.embedder || reembed) return;
  if (header.embedder.id === embedder.id && header.embedder.dimensions === embedder.dimensions) return;
  throw conflict(
    `The file's vectors were made by embedder '${header.embedder.id}' (${header.embedder.dimensions} dimensions); this node embeds with '${embedder.id}' (${embedder.dimensions}). ` +
    'Import with ?reembed=true to embed its memory units again with this node\'s embedder (retrieval then ranks by the new vectors).',
  );
}
