// Every registered sink's README.md settings reference and sample.yaml are what `npm run sink-docs`
// generates from its spec (src/sinks/docs.ts), and every sample is a configuration that the loader
// `weir check` uses accepts: the fields it sets, and the examples of those it leaves commented out.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigErrors, loadConfig } from '../../src/config/load.js';
import { ALL_SINK_TYPES } from '../../src/sinks/all.js';
import { renderSampleAction, renderSampleSink, SINKS_DIR, sinkDocs, specKeys } from '../../src/sinks/docs.js';
import type { SinkType } from '../../src/sinks/types.js';
import { tempDir } from '../harness/process.js';

/**
 * Loads a sample's weir.yaml part and its action (in a rule file of its own) as `weir check` does,
 * with every ${VAR} it uses set; returns the errors, one per line, or '' when it loads.
 */
function loadErrors(t: SinkType, sinkPart: string, actionPart: string): string {
  const dir = tempDir('sink-sample');
  try {
    mkdirSync(join(dir, 'rules'));
    writeFileSync(join(dir, 'weir.yaml'), `broker:\n  url: mqtt://127.0.0.1:1883\nrules_dir: rules\n${sinkPart}\n`);
    // The rule selects what the samples' template examples read beside the event fields
    // (`${temp}`, `${site}`): weir check refuses a template name the SQL cannot produce.
    writeFileSync(join(dir, 'rules', 'sample.yaml'), `id: sample\nsql: SELECT *, payload.temp AS temp, payload.site AS site FROM "t/#"\n${actionPart}\n`);
    const env = Object.fromEntries([...sinkPart.matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g)].map((m) => [m[1]!, 'secret']));
    try {
      const cfg = loadConfig(join(dir, 'weir.yaml'), env);
      assert.equal([...cfg.sinks.values()][0]?.sinkType, t, 'the sample sink has its type');
      assert.equal(cfg.rules[0]?.actions.length, 1, 'the sample action loaded');
      return '';
    } catch (err) {
      if (err instanceof ConfigErrors) return err.errors.map((e) => e.message).join('\n');
      throw err;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('sink docs generated from the specs', () => {
  it('README.md and sample.yaml of every sink are what npm run sink-docs writes', () => {
    const files = sinkDocs();
    assert.equal(files.length, ALL_SINK_TYPES.length * 2);
    for (const { path, text } of files) {
      const name = path.slice(SINKS_DIR.length + 1);
      assert.ok(existsSync(path), `src/sinks/${name} is missing: run npm run sink-docs`);
      assert.equal(readFileSync(path, 'utf8'), text, `src/sinks/${name} differs from its spec: run npm run sink-docs`);
    }
  });

  it('every key of every spec has a description, the one text its reference and sample show', () => {
    const missing = ALL_SINK_TYPES.flatMap((t) =>
      specKeys(t)
        .filter((k) => !k.description)
        .map((k) => `${t.type}: ${k.key}`),
    );
    assert.deepEqual(missing, []);
  });

  for (const t of ALL_SINK_TYPES) {
    it(`${t.type}: sample.yaml loads through weir check's loader`, () => {
      const text = readFileSync(join(SINKS_DIR, t.type, 'sample.yaml'), 'utf8');
      const at = text.search(/^actions:/m);
      assert.ok(at > 0, 'the sample has a sink part, then actions:');
      assert.equal(loadErrors(t, text.slice(0, at), text.slice(at)), '');
    });

    it(`${t.type}: with the settings the sample leaves commented out set to their examples, it loads too`, () => {
      const all = { optional: 'set' } as const;
      assert.equal(loadErrors(t, renderSampleSink(t, all), renderSampleAction(t, all)), '');
    });
  }

  it('a sample the spec does not accept is caught (the check can fail)', () => {
    const t = ALL_SINK_TYPES[0]!;
    assert.match(loadErrors(t, `${renderSampleSink(t)}\n    no_such_key: 1`, renderSampleAction(t)), /unknown key 'no_such_key'/);
  });
});
