// toJson: the JSON text of every Kafka and Pulsar message built from a rule's output. Plain values
// take JSON.stringify's fast path; byte strings and big integers anywhere inside are still
// printed as text and digits, as EMQX prints them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toJson, toStr } from '../../src/rules/values.js';
import { toBytes } from '../../src/sinks/bytes.js';

describe('toJson', () => {
  it('prints plain maps and lists as JSON.stringify does', () => {
    const v = { t: 21.5, n: null, s: 'x"y', l: [1, 'a', { b: true }], skip: undefined };
    assert.equal(toJson(v), JSON.stringify(v));
  });
  it('prints byte strings as UTF-8 text and big integers as digits, however deep', () => {
    const v = { raw: Buffer.from('ab'), deep: [{ u8: new Uint8Array([104, 105]) }], big: 12345678901234567890n };
    assert.equal(toJson(v), '{"raw":"ab","deep":[{"u8":"hi"}],"big":"12345678901234567890"}');
  });
  it('still finds bytes below the walk depth limit', () => {
    let v: unknown = Buffer.from('z');
    for (let i = 0; i < 40; i++) v = [v];
    assert.equal(toJson(v), `${'['.repeat(40)}"z"${']'.repeat(40)}`);
  });
  it('is what str() and message bytes use for maps', () => {
    const v = { a: Buffer.from('b'), c: 1 };
    assert.equal(toStr(v), '{"a":"b","c":1}');
    assert.equal(toBytes(v).toString(), '{"a":"b","c":1}');
    assert.equal(toBytes(0.1 + 0.2).toString(), toStr(0.1 + 0.2));
  });
});
