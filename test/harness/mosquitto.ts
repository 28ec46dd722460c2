// A real Mosquitto for the integration tests, on a free loopback port, with the settings weir's
// ack-after-commit needs: no cap on in-flight or queued messages per client (Mosquitto's
// defaults, 20 in flight and 1000 queued, would drop messages queued for a member that is away).
//
//   const m = await startMosquitto();  // m.url = 'mqtt://127.0.0.1:PORT'
//   const { url } = await sharedMosquitto();  // WEIR_TEST_MOSQUITTO's broker, or one for this process
//
// Started as a program it starts one broker, prints {"url": ...} and runs until SIGTERM.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureDebianPackage } from './apt.js';
import { freePort, startService, tempDir, waitForPort, type Service } from './process.js';

export interface MosquittoBroker {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Lets the calling process exit while the broker runs. */
  unref(): void;
}

const BINARY_CANDIDATES = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'];

export interface StartMosquittoOptions {
  /** Serve TLS on the listener with these PEM files (the URL becomes mqtts://). */
  tls?: { cafile: string; certfile: string; keyfile: string };
  /** Require this user (password_file is generated with mosquitto_passwd). */
  user?: { username: string; password: string };
}

export async function startMosquitto(opts: StartMosquittoOptions = {}): Promise<MosquittoBroker> {
  await ensureDebianPackage('mosquitto', BINARY_CANDIDATES);
  const bin = BINARY_CANDIDATES.find((b) => existsSync(b))!;
  const dir = tempDir('mosquitto');
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      ...(opts.tls ? [`cafile ${opts.tls.cafile}`, `certfile ${opts.tls.certfile}`, `keyfile ${opts.tls.keyfile}`] : []),
      ...(opts.user ? ['allow_anonymous false', `password_file ${passwordFile(dir, opts.user)}`] : ['allow_anonymous true']),
      'persistence false',
      // 0 = no limit: weir bounds its own unacked window; the broker must never drop a queued message.
      'max_inflight_messages 0',
      'max_queued_messages 0',
      'max_queued_bytes 0',
      'message_size_limit 0',
      'log_dest stdout',
      'log_type error',
      'log_type warning',
      'log_type notice',
      '',
    ].join('\n'),
  );
  let svc: Service | undefined;
  const broker: MosquittoBroker = {
    url: `${opts.tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${port}`,
    port,
    async start() {
      svc = startService(bin, ['-c', conf], join(dir, 'mosquitto.log'));
      await waitForPort(port, 10_000, svc);
    },
    async stop() {
      await svc?.stop(5000);
    },
    unref() {
      svc?.unref();
    },
  };
  await broker.start();
  return broker;
}

function passwordFile(dir: string, user: { username: string; password: string }): string {
  const file = join(dir, 'passwd');
  writeFileSync(file, '');
  chmodSync(file, 0o600);
  execFileSync('mosquitto_passwd', ['-b', file, user.username, user.password]);
  // As root, mosquitto drops to its own user before it reads the file.
  if (process.getuid?.() === 0) {
    chmodSync(dir, 0o755);
    const id = (flag: string) => Number(execFileSync('id', [flag, 'mosquitto']).toString().trim());
    chownSync(file, id('-u'), id('-g'));
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

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const b = await startMosquitto();
  process.stdout.write(`${JSON.stringify({ url: b.url })}\n`);
  const bye = () => void b.stop().then(() => process.exit(0));
  process.once('SIGTERM', bye);
  process.once('SIGINT', bye);
}
