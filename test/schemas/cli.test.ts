// weir eval and weir test with binary payloads: {$hex}, {$base64}, and in a rule test {$file}
// (relative to the rule file); schema_decode with weir.yaml's schemas (-c, or ./weir.yaml for
// weir test), spb_decode without any.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../harness/process.js';
import { runCli } from '../harness/weir.js';
import { spawn } from 'node:child_process';
import { ROOT } from '../harness/weir.js';

const dir = tempDir('weir-schema-cli-');
mkdirSync(join(dir, 'rules'));
writeFileSync(join(dir, 'weir.yaml'), 'broker: { client_id: t }\nschemas:\n  tele: { type: protobuf, file: tele.proto, message_type: Tele }\n');
writeFileSync(join(dir, 'tele.proto'), 'syntax = "proto3";\nmessage Tele { int32 id = 1; string note = 2; }\n');
writeFileSync(join(dir, 'rules', 'sample.bin'), Buffer.from([0x08, 0x07, 0x12, 0x02, 0x68, 0x69]));
writeFileSync(
  join(dir, 'rules', 'r.yaml'),
  `id: r
payload_format: raw
sql: SELECT schema_decode('tele', payload) AS t, t.id AS id FROM "t/#"
actions: [{ sink: db, table: x, columns: { id: "\${id}" } }]
tests:
  - name: from a file
    event: { topic: t/1, payload: { $file: sample.bin } }
    expect: { outputs: [{ t: { id: 7, note: hi }, id: 7 }] }
  - name: hex
    event: { topic: t/1, payload: { $hex: "0808" } }
    expect: { outputs: [{ t: { id: 8, note: "" }, id: 8 }] }
  - name: base64
    event: { topic: t/1, payload: { $base64: "CAk=" } }
    expect: { outputs: [{ t: { id: 9, note: "" }, id: 9 }] }
  - name: not the message
    event: { topic: t/1, payload: { $hex: "0a" } }
    expect: { error: "index out of range" }
`,
);

test('weir test: binary payloads from a file, hex and base64, decoded with ./weir.yaml’s schemas', async () => {
  const r = await runCli(['test'], {}, dir);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /4 passed, 0 failed/);
});

async function evalLines(args: string[], lines: object[]): Promise<unknown[]> {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'test/harness/weir-entry.ts'), 'eval', ...args], { cwd: dir });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stdin.end(lines.map((l) => JSON.stringify(l)).join('\n'));
  await new Promise((r) => child.once('exit', r));
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

test('weir eval -c: schema_decode over a base64 payload; spb_decode needs no schema', async () => {
  const out = await evalLines(
    ['-c', join(dir, 'weir.yaml')],
    [
      { sql: `SELECT schema_decode('tele', payload) AS t FROM "#"`, event: { topic: 'a', payload: { $base64: 'CAcSAmhp' } } },
      { sql: 'SELECT spb_decode(payload) AS d FROM "#"', event: { topic: 'a', payload: { $hex: '08581802' } } },
    ],
  );
  assert.deepEqual(out, [
    { ok: true, matched: true, outputs: [{ t: { id: 7, note: 'hi' } }] },
    { ok: true, matched: true, outputs: [{ d: { timestamp: 88, metrics: [], seq: 2 } }] },
  ]);
});
