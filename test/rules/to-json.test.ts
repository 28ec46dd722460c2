// toJson: the JSON text of every Kafka and Pulsar message built from a rule's output. Flat maps
// of scalars are printed by weir's own loop, everything else by JSON.stringify; byte strings and
// big integers anywhere inside are still printed as text and digits, as EMQX prints them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonReplacer, toJson } from '../../src/rules/values/to-json.js';
import { toStr } from '../../src/rules/values/to-str.js';
import { toBytes } from '../../src/sinks/bytes.js';
import { WholeFloat } from '../../src/rules/values/floats.js';

describe('toJson', () => {
  it('prints plain maps and lists as JSON.stringify does', () => {
    const v = { t: 21.5, n: null, s: 'x"y', l: [1, 'a', { b: true }], skip: undefined };
    assert.equal(toJson(v), JSON.stringify(v));
  });
  it('prints byte strings as UTF-8 text and big integers as digits, however deep', () => {
    const v = { raw: Buffer.from('ab'), deep: [{ u8: new Uint8Array([104, 105]) }], big: 12345678901234567890n };
    assert.equal(toJson(v), '{"raw":"ab","deep":[{"u8":"hi"}],"big":"12345678901234567890"}');
  });
  it('prints a float with a whole value as 2.0, flat or nested, with bytes beside it', () => {
    assert.equal(toJson({ t: new WholeFloat(20), n: 20 }), '{"t":20.0,"n":20}');
    const v = { deep: [{ t: new WholeFloat(-3) }, 1.5], raw: Buffer.from('ab'), skip: undefined, big: 1n };
    assert.equal(toJson(v), '{"deep":[{"t":-3.0},1.5],"raw":"ab","big":"1"}');
    assert.equal(toStr(new WholeFloat(1e21)), '1e+21');
    assert.equal(toStr([new WholeFloat(2)]), '[2.0]');
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
  it('prints flat maps byte for byte as JSON.stringify with the replacer does, whatever the keys and scalars', () => {
    // A seeded generator, so that a failure repeats.
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const chars = ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', '中', '\u2028', '😀', '\ud800', '\udc00', '\ufffd'];
    const str = () => Array.from({ length: rnd(12) }, () => chars[rnd(chars.length)]).join('');
    const scalars: Array<() => unknown> = [
      str,
      () => rnd(2_000_000) - 1_000_000,
      () => [0, -0, 0.1, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, NaN, Infinity, -Infinity, 21.5][rnd(11)],
      () => rnd(2) === 0,
      () => null,
      () => undefined,
      () => BigInt(rnd(1000)) * 10n ** 20n,
      () => Buffer.from(str()),
      () => new Uint8Array([0xff, 0x61]),
    ];
    const keys = ['a', 'b', '1', '10', '2', '', 'k"q', 'k\\', '\n', 'é', '😀', '-1', '01', '__proto__'];
    for (let i = 0; i < 2_000; i++) {
      const v: Record<string, unknown> = rnd(4) === 0 ? Object.create(null) : {};
      for (let j = rnd(8); j > 0; j--)
        Object.defineProperty(v, keys[rnd(keys.length)]!, { value: scalars[rnd(scalars.length)]!(), enumerable: true, writable: true, configurable: true });
      assert.equal(toJson(v), JSON.stringify(v, jsonReplacer), `case ${i}`);
    }
  });
  it('leaves to JSON.stringify what it must decide: nested values, toJSON, other prototypes', () => {
    const date = new Date(0);
    for (const v of [{ a: { b: 1 } }, { a: [1] }, { d: date }, { toJSON: () => 'x' }, date, { f: () => 1, s: Symbol('s'), n: 1 }]) {
      assert.equal(toJson(v), JSON.stringify(v, jsonReplacer));
    }
    class Row {
      a = 1;
      toJSON() {
        return 'row';
      }
    }
    assert.equal(toJson(new Row()), '"row"');
  });
});

describe('toBytes of text (cut from a shared slab)', () => {
  it('gives the bytes Buffer.from gives, for any string, and earlier cuts keep theirs', () => {
    const samples = ['', 'x', 'é😀', '\ud800 lone', 'a'.repeat(11_000), 'y'.repeat(40_000)];
    for (let i = 0; i < 600; i++) samples.push(`message ${i} ${'ü'.repeat(i * 7)}`);
    const cut = samples.map((s) => toBytes(s));
    for (const [i, s] of samples.entries()) assert.ok(cut[i]!.equals(Buffer.from(s, 'utf8')), `sample ${i}`);
  });
});
