// weir demo: the first run with nothing installed but Node. An in-process MQTT broker (aedes) and
// an embedded PostgreSQL (PGlite over the pg wire protocol) on loopback ports, weir's own Runtime
// on the shipped weir.yaml and rules/ with only the endpoints changed, and simulated devices
// publishing the seeds' telemetry. The console's URL, a live line of counters until Ctrl-C, then an
// orderly stop.
// Editing a rule file reloads the rules, as in `weir run` (core/app/rules-watch.ts), and says so.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONSOLE_DIR } from '../core/app/console/console-static.js';
import { Runtime } from '../core/app/runtime.js';
import { watchRules, type RulesWatch } from '../core/app/rules-watch.js';
import type { EmbeddedBroker } from '../embedded/broker.js';
import type { EmbeddedDatabase } from '../embedded/database.js';
import { demoConfig } from '../embedded/demo-config.js';
import type { Devices } from '../embedded/devices.js';
import { ConfigErrors } from '../config/load.js';
import { errorText, WeirError, type ConfigError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { parsePrometheus, sumOf } from '../metrics/text.js';
import { PACKAGE_ROOT } from '../paths.js';
import { migratableSinks, migrateSinks } from '../core/app/migrate-sinks.js';
import { numberOption, parse } from './args.js';

/** Where the demo serves /metrics unless --http-port says otherwise: the shipped weir.yaml's port. */
const DEFAULT_HTTP_PORT = 9464;

const HELP = `usage: weir demo [--config FILE] [--devices N] [--interval-ms N] [--http-port N]

Runs weir with nothing installed: an in-process MQTT broker (aedes, MQTT 3.1.1) and an embedded
PostgreSQL (PGlite) on loopback ports, the shipped weir.yaml and rules/ with only their endpoints
changed, and simulated devices publishing telemetry. Prints where the console (the page at /)
and /metrics are, then a live line of counters until Ctrl-C (SIGINT) or SIGTERM. The data lives
in memory and is gone after. Editing a rule file (or SIGHUP) reloads the rules, as in weir run; an
invalid edit is shown and the running rules stay.

  -c, --config FILE   weir.yaml whose rules and sinks to run (default: the shipped one)
  --devices N         simulated devices (default 100)
  --interval-ms N     each device publishes one sample this often (default 1000)
  --size N            payload bytes (default 200, the seeds' sample)
  --http-port N       port of the console, /metrics, /healthz, /readyz (default ${DEFAULT_HTTP_PORT}; 0 picks a free one)
`;

/** `weir demo` (its summary is in commands.ts, which loads this file only when the demo runs). */
export async function runDemo(args: string[]): Promise<number> {
  const p = parse(
    args,
    {
      config: { type: 'string', short: 'c' },
      devices: numberOption({ unit: 'devices', min: 0 }),
      'interval-ms': numberOption({ unit: 'milliseconds', min: 10 }),
      size: numberOption({ unit: 'bytes', min: 0 }),
      'http-port': numberOption({ unit: 'port', noun: 'a port number', min: 0, max: 65_535 }),
    },
    HELP,
  );
  if ('exit' in p) return p.exit;
  const devicesN = p.values.devices ?? 100;
  const intervalMs = p.values['interval-ms'] ?? 1000;
  const size = p.values.size ?? 200;
  const httpPort = p.values['http-port'] ?? DEFAULT_HTTP_PORT;
  const log = createLogger(process.env.WEIR_LOG_LEVEL ?? 'warn');
  const demo = new Demo(log);
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  try {
    await demo.start(p.values.config ?? join(PACKAGE_ROOT, 'weir.yaml'), { devices: devicesN, intervalMs, size, httpPort });
  } catch (err) {
    if (err instanceof ConfigErrors) for (const e of err.errors) process.stderr.write(`error: ${e.message}\n`);
    else if (err instanceof WeirError && err.code === 'config.http_port_in_use')
      process.stderr.write(
        `error: port ${httpPort} (the demo's /metrics, /healthz, /readyz) is in use by another process: choose another with --http-port N (0 picks a free one)\n`,
      );
    else process.stderr.write(`error: ${errorText(err)}\n`);
    await demo.stop();
    return 1;
  }
  const signal = await stopped;
  process.stdout.write(`\n${signal}: stopping (devices, then weir: store and ack what was read, then the broker and database)\n`);
  const summary = await demo.stop();
  process.stdout.write(`stopped: ${summary}\n`);
  return 0;
}

interface DemoOptions {
  devices: number;
  intervalMs: number;
  size: number;
  httpPort: number;
}

/** The embedded parts and the runtime, started in order and stopped in reverse. */
class Demo {
  private broker: EmbeddedBroker | undefined;
  private db: EmbeddedDatabase | undefined;
  private runtime: Runtime | undefined;
  private rulesWatch: RulesWatch | undefined;
  private devices: Devices | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private derivedFile: string | undefined;
  private table = 'telemetry';

  constructor(private readonly log: Logger) {}

  async start(configFile: string, o: DemoOptions): Promise<void> {
    // Loaded here, not at the top: `weir demo --help` and a demo that stops at a config error
    // should not pay for loading aedes and PGlite (150 ms).
    // Their packages are devDependencies (the image and `npm ci --omit=dev` leave them out).
    const [{ startEmbeddedBroker }, { startEmbeddedDatabase }, { simulateDevices }] = await Promise.all([
      import('../embedded/broker.js'),
      import('../embedded/database.js'),
      import('../embedded/devices.js'),
    ]).catch((err: unknown) => {
      throw demoPackagesMissing(err) ?? err;
    });
    const t0 = Date.now();
    this.broker = await startEmbeddedBroker();
    const tBroker = Date.now();
    this.db = await startEmbeddedDatabase();
    const tDb = Date.now();
    const { config, file } = demoConfig(configFile, { brokerUrl: this.broker.url, databaseUrl: this.db.url, httpPort: o.httpPort });
    this.derivedFile = file;
    const firstTable = config.rules
      .flatMap((r) => r.actions)
      .map((a) => a.settings.table)
      .find((t) => typeof t === 'string');
    if (typeof firstTable === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(firstTable)) this.table = firstTable;
    await migrateSinks(migratableSinks(config), {});
    this.runtime = new Runtime(config, this.log);
    await this.runtime.start();
    this.rulesWatch = watchRules(this.runtime, config.rulesDir, this.log, (errors) => this.reloaded(config.rulesDir, errors));
    const tWeir = Date.now();
    this.devices = await simulateDevices({ url: this.broker.url, devices: o.devices, intervalMs: o.intervalMs, size: o.size });
    const base = `http://127.0.0.1:${this.runtime.httpPort}`;
    const metricsUrl = `${base}/metrics`;
    const consoleNote = existsSync(join(CONSOLE_DIR, 'index.html')) ? '' : ' (not built: run `npm run build` first)';
    process.stdout.write(
      [
        `weir demo: broker ${this.broker.url} (aedes, in-process, MQTT 3.1.1), database ${this.db.url} (PGlite, in memory)`,
        `started in ${((Date.now() - t0) / 1000).toFixed(1)} s (broker ${tBroker - t0} ms, database ${tDb - tBroker} ms, migrations + weir ${tWeir - tDb} ms)`,
        `config: ${config.file} (from ${configFile}, endpoints changed), rules: ${config.rules.map((r) => r.id).join(', ')}`,
        `edit the rules in ${config.rulesDir}: a saved edit reloads them`,
        `console: ${base}/${consoleNote}`,
        `metrics: ${metricsUrl}   health: ${base}/readyz`,
        `${o.devices} simulated devices publish one ${o.size} B sample every ${o.intervalMs} ms. Ctrl-C stops.`,
        '',
      ].join('\n'),
    );
    this.startTicker(metricsUrl);
  }

  /** A reload, on its own line (the counters' line is rewritten in place on a terminal). */
  private reloaded(dir: string, errors: readonly ConfigError[]): void {
    const lines = errors.length
      ? [`rules in ${dir} rejected; the running rules stay:`, ...errors.map((e) => `  ${e.message}`)]
      : [`rules reloaded from ${dir}: ${this.runtime!.pipeline.liveRules.map((r) => r.cfg.id).join(', ')}`];
    process.stdout.write(`${process.stdout.isTTY ? '\n' : ''}${lines.join('\n')}\n`);
  }

  private startTicker(metricsUrl: string): void {
    const tty = process.stdout.isTTY;
    let last = { at: Date.now(), stored: 0 };
    this.ticker = setInterval(() => {
      void (async () => {
        try {
          const samples = parsePrometheus(await (await fetch(metricsUrl)).text());
          const stored = await this.db!.count(this.table);
          const now = Date.now();
          const rate = Math.round(((stored - last.stored) * 1000) / Math.max(1, now - last.at));
          last = { at: now, stored };
          const line = `received ${sumOf(samples, 'weir_ingest_received_total')}  matched ${sumOf(samples, 'weir_rule_matched_total')}  stored ${stored}  rate ${rate} rows/s  dead-lettered ${sumOf(samples, 'weir_dead_letter_total')}`;
          process.stdout.write(tty ? `\r${line}   ` : `${line}\n`);
        } catch {
          // Stopping, or one missed tick: the next one tells.
        }
      })();
    }, 1000);
  }

  /** Stops what was started, in reverse; returns the final counts. Never throws. */
  async stop(): Promise<string> {
    clearInterval(this.ticker);
    this.rulesWatch?.close();
    const step = async (what: string, f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (err) {
        process.stderr.write(`stopping ${what} failed: ${errorText(err)}\n`);
      }
    };
    const published = this.devices?.published() ?? 0;
    await step('devices', async () => this.devices?.stop());
    // What the devices sent last may still be in the broker's hands: the embedded broker keeps
    // nothing once stopped, so let weir take it in (up to 3 s) before weir stops reading.
    await step('drain', async () => {
      for (const until = Date.now() + 3000; Date.now() < until && ((await this.db?.count(this.table)) ?? published) < published; )
        await new Promise((r) => setTimeout(r, 100));
    });
    await step('weir', async () => this.runtime?.stop({ graceMs: 10_000 }));
    let stored = 0;
    await step('count', async () => (stored = (await this.db?.count(this.table)) ?? 0));
    await step('database', async () => this.db?.stop());
    await step('broker', async () => this.broker?.stop());
    if (this.derivedFile) rmSync(dirname(this.derivedFile), { recursive: true, force: true });
    return `${published} samples published, ${stored} rows in ${this.table}`;
  }
}

/** The packages of the demo's embedded broker and database: devDependencies. */
const DEMO_PACKAGES = ['@electric-sql/pglite', '@electric-sql/pglite-socket', 'aedes'];

/**
 * The error for an embedded part whose package is not installed (a production install leaves the
 * devDependencies out): which packages `weir demo` needs and the command that installs them, at the
 * versions package.json names. Undefined for any other error.
 */
export function demoPackagesMissing(err: unknown): WeirError | undefined {
  const missing =
    err instanceof Error &&
    (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
    /Cannot find (?:package|module) '([^']+)'/.exec(errorText(err))?.[1];
  if (!missing || !DEMO_PACKAGES.includes(missing)) return undefined;
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  const specs = DEMO_PACKAGES.map((name) => `${name}@${pkg.devDependencies?.[name] ?? 'latest'}`);
  return new WeirError(
    'demo.packages_missing',
    `weir demo needs ${DEMO_PACKAGES.join(', ')} (its in-process broker and database), which this install leaves out (${missing} is missing): ` +
      `they are development packages, not part of a production install or the container image. Install them with \`npm install --no-save ${specs.join(' ')}\`, or run \`npm ci && npm run demo\` in a clone of weir`,
    { cause: err },
  );
}

// `npm run demo` runs this file from source (no build needed right after a clone); the published
// package runs it as `weir demo`.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runDemo(process.argv.slice(2));
}
