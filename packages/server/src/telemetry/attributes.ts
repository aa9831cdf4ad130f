/**
 * The stable OpenTelemetry attribute names the HTTP front puts on its spans, spelled out here: the
 * semantic-conventions package's entry module defines hundreds of names and was loaded at every start
 * for these four, tracing on or off. packages/server/test/telemetry.test.ts checks they equal the
 * package's constants.
 */
export const ATTR_HTTP_REQUEST_METHOD = 'http.request.method';
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const ATTR_HTTP_ROUTE = 'http.route';
export const ATTR_URL_PATH = 'url.path';
