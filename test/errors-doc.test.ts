// The error catalogue (the core's codes in src/error-codes.ts, each sink's in src/sinks/<type>/errors.ts,
// composed by src/sinks/error-catalogue.ts), the codes src/ raises and docs/errors.md stay one thing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { WeirError } from '../src/errors.js';
import { ERRORS_DOC, renderErrorsDoc } from '../src/errors-doc.js';
import { ALL_SINK_TYPES } from '../src/sinks/all.js';
import { ERROR_SECTIONS } from '../src/sinks/error-catalogue.js';
import { HttpError } from '../src/sinks/http/errors.js';
import { KafkaError } from '../src/sinks/kafka/errors.js';
import { MqttError } from '../src/sinks/mqtt/errors.js';
import { PostgresError } from '../src/sinks/postgres/errors.js';
import { PulsarError } from '../src/sinks/pulsar/errors.js';
import { ROOT } from './harness/weir.js';

const CODE = /['`]((?:config|rule|sink|migrate|demo|dlq|reconcile)\.[a-z0-9_]+(?:\.[a-z0-9_]+)*)['`]/g;
const CATALOGUE = new Set(ERROR_SECTIONS.flatMap((s) => Object.keys(s.codes)));
/** Where codes are declared rather than raised. */
const DECLARES = /(?:^|\/)error-codes\.ts$|\/sinks\/[^/]+\/errors\.ts$/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('docs/errors.md is what `npm run errors-doc` generates from the catalogue', () => {
  assert.equal(readFileSync(ERRORS_DOC, 'utf8'), renderErrorsDoc(), 'docs/errors.md differs from the catalogue: run `npm run errors-doc`');
});

test('every error code in src/ is in the catalogue, and every catalogued code is raised somewhere', () => {
  const inCode = new Set<string>();
  for (const f of sources(join(ROOT, 'src'))) {
    if (DECLARES.test(f)) continue;
    for (const m of readFileSync(f, 'utf8').matchAll(CODE)) if (!m[1]!.endsWith('.json')) inCode.add(m[1]!);
  }
  assert.deepEqual([...inCode].filter((c) => !CATALOGUE.has(c)).sort(), [], 'codes missing from the catalogue');
  assert.deepEqual([...CATALOGUE].filter((c) => !inCode.has(c)).sort(), [], 'catalogued codes that src/ no longer raises');
});

test("each sink's codes are its own (sink.<type>.…), and each code's error answers its catalogued class", () => {
  for (const t of ALL_SINK_TYPES) {
    const codes = Object.keys(t.errorCodes ?? {});
    assert.deepEqual(
      codes.filter((c) => !c.startsWith(`sink.${t.type}.`)),
      [],
      `sink ${t.type} declares only sink.${t.type}.* codes`,
    );
  }
  const sinkErrors = { postgres: PostgresError, kafka: KafkaError, pulsar: PulsarError, mqtt: MqttError, http: HttpError } as const;
  assert.deepEqual(Object.keys(sinkErrors).sort(), ALL_SINK_TYPES.map((t) => t.type).sort(), 'every registered sink is checked here');
  for (const s of ERROR_SECTIONS) {
    for (const [code, info] of Object.entries(s.codes)) {
      const type = /^sink\.([a-z0-9_]+)\./.exec(code)?.[1] as keyof typeof sinkErrors | undefined;
      // Each code is offered to the one class that declares it.
      const Raise = (type ? sinkErrors[type] : WeirError) as new (code: string, message: string) => WeirError;
      const err = new Raise(code, 'm');
      assert.equal(err.errorClass, info.class, code);
      assert.ok(err instanceof WeirError);
    }
  }
});

test('a code no catalogue of its class holds fails loudly when classified', () => {
  assert.throws(() => new WeirError('sink.pulsar.closed' as never, 'm').errorClass, /sink\.pulsar\.closed is in no catalogue/);
  // Codes the type rejects (WeirError takes core codes), as a cast might let them through.
  assert.throws(() => new WeirError('nope.unknown' as never, 'm').errorClass, /nope\.unknown is in no catalogue/);
});
