import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Speaks HTTP/1.1 by hand over one TCP connection: writes `parts` in order (waiting `pauseMs` between
 * them when given), keeps the connection open, and resolves with what the server answered once it
 * closes. For what an HTTP client library will not send: malformed request lines, huge headers, and
 * requests that stall halfway (the server's own timeouts must end them).
 */
export function rawExchange(baseUrl: string, parts: string[], options: { pauseMs?: number; maxWaitMs?: number } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for more than ${options.maxWaitMs ?? 20_000} ms`));
    }, options.maxWaitMs ?? 20_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    // The server may close while we still write (that is the point of some tests): not an error here.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks).toString('utf8')));
    });
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
        if (socket.destroyed) return;
        socket.write(part);
      }
    });
  });
}

function parseAnswer(text: string): RawAnswer {
  const end = text.indexOf('\r\n\r\n');
  const head = end >= 0 ? text.slice(0, end) : text;
  const [statusLine, ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: end >= 0 ? text.slice(end + 4) : '' };
}
