/**
 * Requests and responses born with express's prototypes. Express gives each request and response its
 * app's prototypes when it takes them (`Object.setPrototypeOf` in `app.handle`), after Node's HTTP
 * server built them as plain IncomingMessage/ServerResponse objects. V8 then meets every request in a
 * shape made at run time, and property lookups all along the request's path go megamorphic: 10.7% of
 * all CPU on the write path in issue 27's profile. Built from the start with the app's prototypes,
 * express's `setPrototypeOf` finds the prototype already in place and changes nothing.
 *
 * The server is created before the app (it listens first, so peers can reach the node while it starts):
 * `adopt(app)` points the constructors at the app's prototypes once it exists. Until then (and for the
 * Raft peer routes, which share the server) the objects are Node's own, with express's methods unused.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type express from 'express';

export interface ExpressShapes {
  /** for `http.createServer({ IncomingMessage, ServerResponse }, ...)` */
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
  /** new requests and responses take this app's prototypes from now on */
  adopt(app: express.Express): void;
}

export function expressShapes(): ExpressShapes {
  // Function constructors (Node's own are): their `prototype` can be pointed at the app's objects.
  function Request(this: IncomingMessage, socket: Socket) {
    IncomingMessage.call(this, socket);
  }
  Request.prototype = IncomingMessage.prototype;
  function Response(this: ServerResponse, req: IncomingMessage, options?: unknown) {
    (ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: unknown) => void).call(this, req, options);
  }
  Response.prototype = ServerResponse.prototype;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
    adopt(app) {
      Request.prototype = app.request;
      Response.prototype = app.response;
    },
  };
}
