/**
 * Tracing off is free (issue 17, item 3): without `telemetry.otlp_endpoint` no SDK is built, spans are
 * the API's non-recording ones, no context manager is installed and nothing is injected into requests
 * to other nodes. The exporting side is tested end to end in test/cluster/tracing.test.ts.
 */
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import * as semconv from '@opentelemetry/semantic-conventions';
import { loadConfig } from '../src/config';
import * as attributes from '../src/telemetry/attributes';
import { traceIds, tracesUrl, Tracing } from '../src/telemetry/tracing';

describe('telemetry configuration', () => {
  it('is off by default, with the service name strata', () => {
    const config = loadConfig({ env: {} });
    expect(config.telemetry).toEqual({ otlp_endpoint: null, service_name: 'strata' });
  });

  it('takes the endpoint and service name from the environment', () => {
    const config = loadConfig({ env: { STRATA__TELEMETRY__OTLP_ENDPOINT: 'http://collector:4318', STRATA__TELEMETRY__SERVICE_NAME: 'memory' } });
    expect(config.telemetry).toEqual({ otlp_endpoint: 'http://collector:4318', service_name: 'memory' });
  });

  it('names span attributes as the semantic conventions do (the front spells them out, telemetry/attributes.ts)', () => {
    for (const [name, value] of Object.entries(attributes)) expect([name, value]).toEqual([name, semconv[name as keyof typeof semconv]]);
  });

  it('appends /v1/traces to a base URL only', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otel.example/v1/traces')).toBe('https://otel.example/v1/traces');
  });
});

describe('tracing off', () => {
  const tracing = Tracing.start(loadConfig({ env: {} }));

  it('records nothing and propagates nothing', async () => {
    expect(tracing.enabled).toBe(false);
    const seen = await tracing.span('operation', {}, async (span) => {
      // the context did not change: no context manager, no active span
      expect(context.active()).toBe(ROOT_CONTEXT);
      expect(trace.getActiveSpan()).toBeUndefined();
      return span;
    });
    expect(seen.isRecording()).toBe(false);
    expect(traceIds(seen)).toEqual({});
    expect(tracing.inject()).toEqual({});
    await tracing.shutdown();
  });

  it('passes errors through unchanged', async () => {
    const err = new Error('boom');
    await expect(tracing.span('operation', {}, async () => {
      throw err;
    })).rejects.toBe(err);
  });
});
