import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { StrataError } from '@strata/store';
import { errorReply } from './errors';

/** Node's own refusals (before or beside express), as the contract's codes (the status follows: http/errors.ts). */
const REFUSALS: Record<string, StrataError> = {
  HPE_HEADER_OVERFLOW: new StrataError('headers_too_large', 'The request line and headers are larger than the server accepts (16 KiB); send long input in a JSON body.'),
  ERR_HTTP_REQUEST_TIMEOUT: new StrataError(
    'request_timeout',
    'The request was not received in time (server.headers_timeout_ms for the headers, server.request_timeout_ms for all of it); send it again.',
  ),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: new StrataError('payload_too_large', 'The chunk extensions of the request body are too large.'),
};
const MALFORMED = new StrataError('bad_request', 'The request is not valid HTTP/1.1.');

/**
 * Answers what Node's HTTP parser and its timeouts refuse (headers too large: 431, too slow: 408,
 * malformed: 400) with the contract's JSON envelope instead of Node's empty replies (CONTRACT.md §0),
 * then closes the connection: after such an error, where the next request starts is unknown.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // The response in flight on this connection, if any (Node's own handler looks at the same field).
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    // Nothing can be said on a dead socket, nor after a response has started: just close.
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = errorReply(REFUSALS[err.code ?? ''] ?? MALFORMED);
    const given = inFlight?.req?.headers['x-request-id'];
    const requestId = typeof given === 'string' && given.length > 0 && given.length <= 200 && /^[\x21-\x7e]+$/.test(given) ? given : randomUUID();
    const body = JSON.stringify(refusal.body);
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\ncontent-type: application/json; charset=utf-8\r\n`
      + `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  });
}
