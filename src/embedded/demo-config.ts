// The first run's configuration: the given weir.yaml (the shipped one by default) and its rules,
// with only what the embedded parts need changed — the endpoints, and the limits of the embedded
// broker (MQTT 3.1.1, no shared subscriptions: one plain connection) and database (one session:
// one transaction at a time). The result goes through loadConfig like any weir.yaml, and runs on
// the production Runtime.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isMap, isScalar, parseDocument } from 'yaml';
import { loadConfig } from '../config/load.js';
import type { WeirConfig } from '../config/types.js';
import { WeirError } from '../errors.js';

export interface DemoEndpoints {
  brokerUrl: string;
  databaseUrl: string;
  httpPort: number;
}

export interface DemoConfig {
  readonly config: WeirConfig;
  /** The derived weir.yaml, for the curious (a temporary file). */
  readonly file: string;
}

export function demoConfig(baseFile: string, ends: DemoEndpoints, env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const base = resolve(baseFile);
  const doc = parseDocument(readFileSync(base, 'utf8'));
  if (doc.errors.length) throw new WeirError('config.yaml', `${base}: ${doc.errors[0]!.message}`);
  doc.setIn(['broker', 'url'], ends.brokerUrl);
  doc.setIn(['broker', 'protocol_version'], 4);
  doc.setIn(['broker', 'connections'], 1);
  doc.setIn(['broker', 'share_group'], '');
  doc.setIn(['broker', 'client_id'], 'weir-demo');
  doc.deleteIn(['broker', 'username']);
  doc.deleteIn(['broker', 'password']);
  doc.deleteIn(['broker', 'tls']);
  const sinks = doc.get('sinks');
  for (const pair of isMap(sinks) ? sinks.items : []) {
    const name = String(isScalar(pair.key) ? pair.key.value : pair.key);
    const type = doc.getIn(['sinks', name, 'type']);
    if (type !== 'postgres') {
      throw new WeirError(
        'demo.unsupported_sink',
        `sink '${name}' is of type ${String(type)}; the demo embeds only a PostgreSQL-compatible database (run weir with a real ${String(type)} instead)`,
      );
    }
    doc.setIn(['sinks', name, 'url'], ends.databaseUrl);
    doc.setIn(['sinks', name, 'pool_size'], 1);
    doc.setIn(['sinks', name, 'max_in_flight'], 1);
  }
  doc.setIn(['http', 'port'], ends.httpPort);
  doc.setIn(['http', 'host'], '127.0.0.1');
  // The demo applies the migrations itself, before the runtime starts (as `weir run` does).
  doc.setIn(['migrate_on_start'], false);
  // The derived file lives in a temporary directory and the demo prints its path, so that `weir
  // check|dlq|reconcile -c <it>` can be run beside the demo: its rules_dir must not be relative.
  const rulesDir = resolve(dirname(base), String(doc.getIn(['rules_dir']) ?? './rules'));
  doc.setIn(['rules_dir'], rulesDir);
  const file = join(mkdtempSync(join(tmpdir(), 'weir-demo-')), 'weir.yaml');
  writeFileSync(file, `# Derived by \`weir demo\` from ${base}: endpoints of the embedded broker and database.\n${doc.toString()}`);
  return { config: loadConfig(file, env, rulesDir), file };
}
