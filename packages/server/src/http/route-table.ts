/**
 * The API's routes matched in one step (issue 27). Registered one by one with express, a request walked
 * the router's layers in order, a regular expression and a method check each, until its own: the write
 * route sat behind dozens. Here the routes are grouped by their number of path segments, and a request
 * tries only those of its own length, in the order they were registered, so the first that matches is
 * the one express would have taken. Matching is what express 5's router does with these paths (literal
 * segments and `:name` parameters only, which the constructor checks): ASCII letters in any case, one
 * optional trailing slash, a parameter is a non-empty segment, %-decoded (a bad escape throws
 * URIError, which the error handler answers 400 `invalid_request`), and HEAD takes a GET route.
 */
import type { RouteSpec } from './route';

interface Compiled {
  route: RouteSpec;
  method: string;
  /** per segment: the literal in lowercase, or null for a parameter */
  literals: (string | null)[];
  names: (string | null)[];
}

export interface RouteMatch {
  route: RouteSpec;
  params: Record<string, string>;
}

const PARAM = /^:([A-Za-z_$][A-Za-z0-9_$]*)$/;
const LITERAL = /^[A-Za-z0-9._~-]+$/;

export class RouteTable {
  private readonly byLength = new Map<number, Compiled[]>();

  constructor(routes: RouteSpec[]) {
    for (const route of routes) {
      const segments = route.path.split('/').slice(1);
      if (!route.path.startsWith('/') || segments.some((s) => !PARAM.test(s) && !LITERAL.test(s))) {
        throw new Error(`route path ${route.path}: only literal segments and :name parameters are supported`);
      }
      const compiled: Compiled = {
        route,
        method: route.method.toUpperCase(),
        literals: segments.map((s) => (PARAM.test(s) ? null : s.toLowerCase())),
        names: segments.map((s) => PARAM.exec(s)?.[1] ?? null),
      };
      const list = this.byLength.get(segments.length) ?? [];
      list.push(compiled);
      this.byLength.set(segments.length, list);
    }
  }

  /** The route for a method and a URL path (without its query), or undefined. */
  match(method: string, path: string): RouteMatch | undefined {
    if (path.charCodeAt(0) !== 0x2f) return undefined;
    // one trailing slash is optional ('/v1/users/' is '/v1/users'), the root aside
    const trimmed = path.length > 1 && path.charCodeAt(path.length - 1) === 0x2f ? path.slice(0, -1) : path;
    const segments = trimmed.split('/');
    const candidates = this.byLength.get(segments.length - 1);
    if (!candidates) return undefined;
    const wanted = method === 'HEAD' ? 'GET' : method;
    for (const c of candidates) {
      if (!pathMatches(c, segments)) continue;
      // express decodes a matching path's parameters before it looks at the method: a bad escape is the
      // request's error whichever route would have served it
      const params = paramsOf(c, segments);
      if (c.method === wanted) return { route: c.route, params };
    }
    return undefined;
  }
}

function pathMatches(c: Compiled, segments: string[]): boolean {
  for (let i = 0; i < c.literals.length; i++) {
    const s = segments[i + 1];
    const literal = c.literals[i];
    if (literal === null) {
      if (s.length === 0) return false;
    } else if (s !== literal && !(s.length === literal.length && asciiLower(s) === literal)) {
      return false;
    }
  }
  return true;
}

/** Lowercases A-Z only: a regular expression's `i` flag (no `u`) never matches a non-ASCII letter to an ASCII one. */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (ch) => String.fromCharCode(ch.charCodeAt(0) + 32));
}

function paramsOf(c: Compiled, segments: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (let i = 0; i < c.names.length; i++) {
    const name = c.names[i];
    if (name === null) continue;
    const raw = segments[i + 1];
    params[name] = raw.includes('%') ? decodeURIComponent(raw) : raw;
  }
  return params;
}
