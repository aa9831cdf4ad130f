/**
 * Writing a stream of JSON documents as an NDJSON response, with back-pressure: lines are gathered
 * into writes of about `BATCH_BYTES`, and when the socket's buffer is full the writer waits for
 * 'drain' before pulling the next line, so a slow client slows the producer and nothing piles up.
 */
import type { Response } from 'express';
import type { Logger } from 'pino';

const BATCH_BYTES = 64 * 1024;

/** Resolves on 'drain'; false when the response was closed first (the client went away), or already is. */
function drained(res: Response): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/**
 * Sends `lines` as `application/x-ndjson` (status 200). The first line is produced before the headers
 * are sent, so a failure that early still gets the error envelope. A failure after that cannot change
 * the status: the response is destroyed (the client sees a truncated chunked body, not a clean end)
 * and the failure logged.
 */
export async function sendNdjson(res: Response, lines: AsyncIterable<unknown>, logger: Logger): Promise<void> {
  const it = lines[Symbol.asyncIterator]();
  let next = await it.next();
  res.status(200).setHeader('content-type', 'application/x-ndjson; charset=utf-8');
  // the client went away (closed or reset): stop pulling, which releases what the producer holds
  const gone = () => res.destroyed || res.writableEnded;
  try {
    let batch = '';
    while (!next.done && !gone()) {
      batch += JSON.stringify(next.value) + '\n';
      if (batch.length >= BATCH_BYTES) {
        const ok = res.write(batch);
        batch = '';
        if (!ok && !(await drained(res))) break;
      }
      next = await it.next();
    }
    if (!gone()) res.end(batch);
  } catch (err) {
    logger.error({ err }, 'export stream failed after it started; the response was cut');
    res.destroy();
  } finally {
    await it.return?.();
  }
}
