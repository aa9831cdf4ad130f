/**
 * Snapshot images on disk, one directory per group (etcd's snap directory): the image of the group's
 * current snapshot (`<index>-<term>.snap`), the one a state machine is writing (`local.tmp`) and the
 * one being received from a leader (`recv.part`). Nothing here holds more than one chunk or read piece
 * in memory: a state machine streams its image into a file, a leader reads chunk k from the file when
 * it sends chunk k, a follower appends each received chunk (synced before it is acknowledged), and a
 * restore streams the file back.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { invariant } from '../core/assert';
import type { SnapshotMeta, SnapWrite } from '../core/types';
import type { SnapshotReader, SnapshotWriter } from '../driver/state-machine';

const LOCAL = 'local.tmp';
const RECV = 'recv.part';
/** read size when streaming an image back (a restore's pieces) */
const READ_PIECE = 1 << 20;

const fileOf = (meta: Pick<SnapshotMeta, 'index' | 'term'>): string => `${meta.index}-${meta.term}.snap`;

/** A state machine's image being written to `local.tmp`; finish() makes it the named snapshot file. */
export class SnapshotFileWriter implements SnapshotWriter {
  private size = 0;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly fh: FileHandle,
  ) {}

  async write(bytes: Uint8Array): Promise<void> {
    invariant(!this.closed, 'write after the snapshot file was closed');
    let at = 0;
    while (at < bytes.byteLength) {
      const { bytesWritten } = await this.fh.write(bytes, at, bytes.byteLength - at);
      at += bytesWritten;
    }
    this.size += bytes.byteLength;
  }

  /** Syncs the image and renames it to its snapshot name; returns its size. */
  async finish(meta: SnapshotMeta): Promise<number> {
    this.closed = true;
    await this.fh.sync();
    await this.fh.close();
    await rename(join(this.dir, LOCAL), join(this.dir, fileOf(meta)));
    await syncDir(this.dir);
    return this.size;
  }

  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close().catch(() => undefined);
    await rm(join(this.dir, LOCAL), { force: true });
  }
}

export class SnapshotFiles {
  /** a receiving file's durable size per group, as last appended (saves a stat per chunk) */
  private readonly recvSize = new Map<number, number>();

  constructor(readonly root: string) {}

  dir(group: number): string {
    return join(this.root, `group-${group}`);
  }

  pathOf(group: number, meta: Pick<SnapshotMeta, 'index' | 'term'>): string {
    return join(this.dir(group), fileOf(meta));
  }

  /** Starts writing a local snapshot image (any unfinished one is discarded). */
  async create(group: number): Promise<SnapshotFileWriter> {
    const dir = this.dir(group);
    await mkdir(dir, { recursive: true });
    return new SnapshotFileWriter(dir, await open(join(dir, LOCAL), 'w'));
  }

  /** True when the image of this snapshot is on disk with this size. */
  async has(group: number, meta: Pick<SnapshotMeta, 'index' | 'term'>, size: number): Promise<boolean> {
    const s = await stat(this.pathOf(group, meta)).catch(() => null);
    return s !== null && s.size === size;
  }

  /** Bytes [offset, offset + length) of a snapshot image, read when its chunk is sent; null if the file is gone (a newer snapshot replaced it). */
  async readChunk(group: number, meta: Pick<SnapshotMeta, 'index' | 'term'>, offset: number, length: number): Promise<Buffer | null> {
    let fh: FileHandle;
    try {
      fh = await open(this.pathOf(group, meta), 'r');
    } catch {
      return null;
    }
    try {
      const buf = Buffer.allocUnsafe(length);
      let at = 0;
      while (at < length) {
        const { bytesRead } = await fh.read(buf, at, length - at, offset + at);
        if (bytesRead === 0) return null; // shorter than its metadata says: never send a wrong chunk
        at += bytesRead;
      }
      return buf;
    } finally {
      await fh.close();
    }
  }

  /** Streams an image in pieces of at most 1 MiB; each chunks() call reads the file again. */
  reader(group: number, meta: Pick<SnapshotMeta, 'index' | 'term'>, size: number): SnapshotReader {
    const path = this.pathOf(group, meta);
    return {
      size,
      async *chunks() {
        let n = 0;
        for await (const piece of createReadStream(path, { highWaterMark: READ_PIECE })) {
          n += (piece as Buffer).byteLength;
          yield piece as Buffer;
        }
        invariant(n === size, () => `snapshot file ${path} has ${n} bytes, its metadata says ${size}`);
      },
    };
  }

  /**
   * Appends received chunks to the receiving file, in order, and syncs it: the SnapResp that
   * acknowledges them leaves only after this (and the Ready's synced batch that records the position).
   */
  async append(group: number, chunks: SnapWrite[]): Promise<void> {
    if (chunks.length === 0) return;
    const dir = this.dir(group);
    await mkdir(dir, { recursive: true });
    const path = join(dir, RECV);
    let fh: FileHandle | null = null;
    try {
      for (const c of chunks) {
        if (c.offset === 0) {
          // A new transfer: whatever the file held belongs to an abandoned one.
          await fh?.close();
          fh = await open(path, 'w');
          this.recvSize.set(group, 0);
        } else if (!fh) {
          fh = await open(path, 'r+');
        }
        const size = this.recvSize.get(group) ?? (await fh.stat()).size;
        invariant(size === c.offset, () => `group ${group}: received chunk at ${c.offset}, the receiving file has ${size} bytes`);
        let at = 0;
        while (at < c.data.byteLength) {
          const { bytesWritten } = await fh.write(c.data, at, c.data.byteLength - at, c.offset + at);
          at += bytesWritten;
        }
        this.recvSize.set(group, c.offset + c.data.byteLength);
      }
      await (fh as FileHandle).sync();
    } finally {
      await fh?.close();
    }
  }

  /**
   * Where a receive resumes after a restart: the receiving file cut back to the position the last
   * synced batch recorded (bytes after it were never acknowledged). False when the file is missing or
   * shorter (the transfer then starts over).
   */
  async resumeAt(group: number, received: number): Promise<boolean> {
    const path = join(this.dir(group), RECV);
    const s = await stat(path).catch(() => null);
    if (!s || s.size < received) return false;
    if (s.size > received) await truncate(path, received);
    this.recvSize.set(group, received);
    return true;
  }

  /** The received image is complete: it becomes the group's snapshot file (before the batch that records it). */
  async installReceived(group: number, meta: SnapshotMeta, size: number): Promise<void> {
    const dir = this.dir(group);
    const from = join(dir, RECV);
    const s = await stat(from);
    invariant(s.size === size, () => `group ${group}: received ${s.size} bytes of a ${size}-byte snapshot`);
    await rename(from, join(dir, fileOf(meta)));
    await syncDir(dir);
    this.recvSize.delete(group);
  }

  /** Deletes every image of the group but the current one (older snapshots, abandoned files). */
  async prune(group: number, keep: Pick<SnapshotMeta, 'index' | 'term'> | null, opts: { keepReceiving?: boolean } = {}): Promise<void> {
    const dir = this.dir(group);
    const names = await readdir(dir).catch(() => [] as string[]);
    const kept = keep ? fileOf(keep) : null;
    for (const name of names) {
      if (name === kept || (opts.keepReceiving && name === RECV)) continue;
      if (name === RECV) this.recvSize.delete(group);
      await rm(join(dir, name), { force: true });
    }
  }

  /** Writes a whole image at once (only to migrate an image stored inside LevelDB by an older version). */
  async writeWhole(group: number, meta: SnapshotMeta, image: Uint8Array): Promise<void> {
    const w = await this.create(group);
    await w.write(image);
    await w.finish(meta);
  }

  /** Deletes every file of a group (its replica is wiped: docs/cluster.md "Disk reclaimed"). */
  async removeGroup(group: number): Promise<void> {
    this.recvSize.delete(group);
    await rm(this.dir(group), { recursive: true, force: true });
    await syncDir(this.root).catch(() => undefined); // the root may not exist yet: nothing to sync then
  }
}

/** A rename is durable once its directory is synced. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch {
    // some filesystems refuse to sync a directory; the rename is then as durable as they make it
  } finally {
    await fh.close();
  }
}
