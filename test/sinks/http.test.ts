// Unit tests of the http (webhook) sink's pure parts: its schemas and lints, the encoding of an
// output into a request, Retry-After, and the error classes. What a server does with the requests
// (failures, timeouts, throttling, refusals) is in http-e2e.int.test.ts and the conformance suite.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { bindHttpAction, EncodeError } from '../../src/sinks/http/action.js';
import { classifyHttpError } from '../../src/sinks/http/classify.js';
import { retryAfterMs } from '../../src/sinks/http/client.js';
import { HttpError } from '../../src/sinks/http/errors.js';
import { HttpActionSpec, HttpConfigSpec, lintHttpConfig, type HttpAction, type HttpConfig } from '../../src/sinks/http/spec.js';
import type { SinkInput } from '../../src/sinks/types.js';

function config(input: Record<string, unknown>): HttpConfig {
  const v = Value.Default(HttpConfigSpec, structuredClone(input));
  assert.ok(Value.Check(HttpConfigSpec, v), [...Value.Errors(HttpConfigSpec, v)].map((e) => `${e.path}: ${e.message}`).join('\n'));
  return v as HttpConfig;
}

function action(input: Record<string, unknown>): HttpAction {
  const v = Value.Default(HttpActionSpec, structuredClone(input));
  assert.ok(Value.Check(HttpActionSpec, v), [...Value.Errors(HttpActionSpec, v)].map((e) => `${e.path}: ${e.message}`).join('\n'));
  return v as HttpAction;
}

const input = (record: Record<string, unknown>): SinkInput => ({
  record,
  event: { topic: 'device/dev-1/telemetry', payload: Buffer.from('{}'), clientid: 'dev-1' } as never,
  ruleId: 'r',
});

describe('http action encoding', () => {
  it('renders the url and headers; the body is the record as JSON by default; Content-Type follows the format unless a header sets it', () => {
    const sink = config({ url: 'https://ingest.example.com/v1' });
    const own = bindHttpAction(action({ url: 'https://ingest.example.com/v1/${clientid}', headers: { 'X-Temp': '${temp}', 'X-None': '${nope}' } }), sink);
    const item = own.encode(input({ temp: 81.5 }));
    assert.equal(item.url, 'https://ingest.example.com/v1/dev-1');
    assert.equal(item.method, 'POST');
    assert.deepEqual(item.headers, { 'X-Temp': '81.5', 'content-type': 'application/json' });
    assert.equal(item.body.toString(), '{"temp":81.5}');
    assert.deepEqual(own.describe?.(item), { method: 'POST', url: item.url, headers: item.headers, body: '{"temp":81.5}' });
    const lines = bindHttpAction(action({ format: 'json_lines', method: 'PUT' }), sink).encode(input({ a: 1 }));
    assert.equal(lines.url, 'https://ingest.example.com/v1', "the sink's url");
    assert.equal(lines.headers['content-type'], 'application/x-ndjson');
    const typed = bindHttpAction(action({ body: 'temp=${temp}', headers: { 'Content-Type': 'text/plain' } }), sink).encode(input({ temp: 3 }));
    assert.deepEqual(typed.headers, { 'Content-Type': 'text/plain' });
    assert.equal(typed.body.toString(), 'temp=3');
  });

  it('a url that does not render as http(s)://, or a body with no value, refuses that message alone', () => {
    const sink = config({ url: 'http://default/' });
    const bound = bindHttpAction(action({ url: '${target}', body: '${value}' }), sink);
    for (const target of ['', undefined, 'ftp://x/y', 'http://']) {
      assert.throws(
        () => bound.encode(input({ target, value: 1 })),
        (e: unknown) => e instanceof EncodeError && classifyHttpError(e) === 'reject',
      );
    }
    assert.throws(() => bound.encode(input({ target: 'http://h/p' })), EncodeError);
    assert.equal(bound.encode(input({ target: 'http://h/p', value: 'x' })).body.toString(), 'x');
  });
});

describe('http sink settings and errors', () => {
  it('lint: the url, cert without key', () => {
    assert.deepEqual(lintHttpConfig(config({ url: 'https://h/x' })), []);
    assert.deepEqual(
      lintHttpConfig(config({ url: 'mqtt://h' })).map((p) => [p.path.join('.'), p.code]),
      [['url', 'config.invalid_url']],
    );
    assert.deepEqual(
      lintHttpConfig(config({ url: 'https://h', tls: { cert_file: '/c' } })).map((p) => p.code),
      ['config.sink.http'],
    );
  });

  it('Retry-After in seconds or as an HTTP date', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(' 0 '), 0);
    const now = Date.parse('2026-12-05T18:00:00Z');
    assert.equal(retryAfterMs('Sat, 05 Dec 2026 18:00:10 GMT', now), 10_000);
    assert.equal(retryAfterMs('Sat, 05 Dec 2026 17:00:00 GMT', now), 0);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(undefined), undefined);
  });

  it('error classes: refused statuses reject, away statuses and network errors retry, refused credentials are fatal', () => {
    assert.equal(classifyHttpError(new HttpError('sink.http.rejected', 'x')), 'reject');
    assert.equal(classifyHttpError(new HttpError('sink.http.unavailable', 'x')), 'retry');
    assert.equal(classifyHttpError(new HttpError('sink.http.timeout', 'x')), 'retry');
    assert.equal(classifyHttpError(new HttpError('sink.http.unauthorized', 'x')), 'fatal');
    assert.equal(classifyHttpError(Object.assign(new Error('reset'), { code: 'ECONNRESET' })), 'retry');
    assert.equal(classifyHttpError(Object.assign(new Error('tls'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })), 'fatal');
  });
});
