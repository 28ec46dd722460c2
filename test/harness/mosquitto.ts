// A real Mosquitto for the integration tests, on a free loopback port, with the settings weir's
// ack-after-commit needs: no cap on in-flight or queued messages per client (Mosquitto's
// defaults, 20 in flight and 1000 queued, would drop messages queued for a member that is away).
//
//   const m = await startMosquitto();  // m.url = 'mqtt://127.0.0.1:PORT'
//   const { url } = await sharedMosquitto();  // WEIR_TEST_MOSQUITTO's broker, or one for this process
//
//   const p = await startMosquitto({ persistence: true });  // sessions and queues saved to disk
//   await p.stop(); await p.start();   // SIGTERM (saves), same port, same data
//   await p.kill(); await p.start();   // SIGKILL: what was not autosaved yet is gone
//
// Started as a program it starts one broker, prints {"url": ...} and runs until SIGTERM.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDebianPackage } from './apt.js';
import { type BrokerProcess, brokerProcess, runAsProgram } from './broker-process.js';
import { freePort, startService, tempDir, waitForPort } from './process.js';

/** stop(): Mosquitto saves its persistence file (with `persistence`); kill(): what changed since the last autosave is lost. */
export interface MosquittoBroker extends BrokerProcess {
  readonly url: string;
  readonly port: number;
}

const BINARY_CANDIDATES = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'];

/** Debian's package's binary (installed by startMosquitto when missing). */
export function mosquittoBinary(): string {
  return BINARY_CANDIDATES.find((b) => existsSync(b)) ?? BINARY_CANDIDATES[0]!;
}

export interface StartMosquittoOptions {
  /** Run this binary instead of Debian's package (the benchmarks' build, mosquitto-build.ts). */
  bin?: string;
  /** Serve TLS on the listener with these PEM files (the URL becomes mqtts://). */
  tls?: { cafile: string; certfile: string; keyfile: string };
  /** Require this user (password_file is generated with mosquitto_passwd). */
  user?: { username: string; password: string };
  /**
   * Save sessions, subscriptions and queued messages to `<dir>/data/mosquitto.db` (every
   * AUTOSAVE_S and at a graceful stop) and load them at start. Default false: the shared broker
   * keeps nothing across restarts.
   */
  persistence?: boolean;
  /**
   * Lines of an acl_file (`topic deny +/refused`): a publish it denies is answered with PUBACK
   * 0x87 Not authorized (MQTT 5), the message alone refused while the connection stays up.
   */
  acl?: string[];
  /**
   * max_queued_messages; default 0 (no limit). Mosquitto 2.0.11 drops the connection of a client
   * whose publish its ACL denies ("Bad socket read/write") when this is 0: give a limit with acl.
   */
  maxQueuedMessages?: number;
  /** More lines of mosquitto.conf, as written (`retain_available false`, `max_qos 0`). */
  extra?: string[];
}

/** `autosave_interval` with persistence: at most this many seconds of changes are lost by a SIGKILL. */
export const AUTOSAVE_S = 1;

export async function startMosquitto(opts: StartMosquittoOptions = {}): Promise<MosquittoBroker> {
  if (!opts.bin) await ensureDebianPackage('mosquitto', BINARY_CANDIDATES);
  const bin = opts.bin ?? mosquittoBinary();
  const dir = tempDir('mosquitto');
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      ...(opts.tls ? [`cafile ${opts.tls.cafile}`, `certfile ${opts.tls.certfile}`, `keyfile ${opts.tls.keyfile}`] : []),
      ...(opts.user ? ['allow_anonymous false', `password_file ${passwordFile(dir, opts.user)}`] : ['allow_anonymous true']),
      ...(opts.persistence ? persistenceLines(dir) : ['persistence false']),
      ...(opts.acl ? [`acl_file ${aclFile(dir, opts.acl)}`] : []),
      // 0 = no limit: weir bounds its own unacked window; the broker must never drop a queued message.
      'max_inflight_messages 0',
      `max_queued_messages ${opts.maxQueuedMessages ?? 0}`,
      'max_queued_bytes 0',
      'message_size_limit 0',
      ...(opts.extra ?? []),
      'log_dest stdout',
      'log_type error',
      'log_type warning',
      'log_type notice',
      '',
    ].join('\n'),
  );
  const life = await brokerProcess('mosquitto', dir, 5000, async () => {
    const s = startService(bin, ['-c', conf], join(dir, 'mosquitto.log'));
    await waitForPort(port, 10_000, s);
    return s;
  });
  return Object.assign(life, { url: `${opts.tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${port}`, port });
}

function persistenceLines(dir: string): string[] {
  const data = join(dir, 'data');
  mkdirSync(data);
  // As root, mosquitto drops to its own user before it opens the file: in a root-owned directory
  // it cannot write it ("Permission denied" at shutdown, nothing saved).
  if (process.getuid?.() === 0) {
    chmodSync(dir, 0o755);
    chownSync(data, mosquittoId('-u'), mosquittoId('-g'));
  }
  return ['persistence true', `persistence_location ${data}/`, `autosave_interval ${AUTOSAVE_S}`];
}

function aclFile(dir: string, lines: string[]): string {
  const file = join(dir, 'acl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  // As root, mosquitto drops to its own user before it reads the file.
  if (process.getuid?.() === 0) chmodSync(dir, 0o755);
  return file;
}

function mosquittoId(flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, 'mosquitto']).toString().trim());
}

function passwordFile(dir: string, user: { username: string; password: string }): string {
  const file = join(dir, 'passwd');
  writeFileSync(file, '');
  chmodSync(file, 0o600);
  execFileSync('mosquitto_passwd', ['-b', file, user.username, user.password]);
  // As root, mosquitto drops to its own user before it reads the file.
  if (process.getuid?.() === 0) {
    chmodSync(dir, 0o755);
    chownSync(file, mosquittoId('-u'), mosquittoId('-g'));
  }
  return file;
}

let shared: Promise<{ url: string }> | undefined;

export function sharedMosquitto(): Promise<{ url: string }> {
  const env = process.env.WEIR_TEST_MOSQUITTO;
  if (env) return Promise.resolve(JSON.parse(env) as { url: string });
  shared ??= startMosquitto().then((b) => {
    // The test process must be able to end; on its exit the broker is stopped (the kill is sync).
    b.unref();
    process.once('exit', () => void b.stop());
    return { url: b.url };
  });
  return shared;
}

/**
 * For a test file: the run's Mosquitto (WEIR_TEST_MOSQUITTO), or one of the file's own, which the
 * file stops in its after(): sharedMosquitto()'s in-process broker keeps a test process alive
 * after its tests end.
 */
export function fileMosquitto(): { url(): Promise<string>; stop(): Promise<void> } {
  let own: Promise<MosquittoBroker> | undefined;
  return {
    async url() {
      if (process.env.WEIR_TEST_MOSQUITTO) return (await sharedMosquitto()).url;
      own ??= startMosquitto();
      return (await own).url;
    },
    async stop() {
      await (await own?.catch(() => undefined))?.stop();
    },
  };
}

await runAsProgram(
  import.meta.url,
  () => startMosquitto(),
  (b) => ({ url: b.url }),
);
