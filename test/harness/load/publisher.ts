// A load generator modelled on emqtt-bench `pub`: -c clients, -R connections per second, -I
// interval per client (0 = as fast as the window allows), -s payload size, -q QoS, -L total
// messages, -t topic with %i = device index. Devices are spread over the clients, so 1,000
// device topics need not mean 1,000 connections.
//
//   npx tsx test/harness/load/publisher.ts -h mqtt://127.0.0.1:1883 -c 10 --devices 1000 -s 200 -q 1 -L 100000
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { telemetrySample } from '../../../src/embedded/devices.js';

export interface PublishOptions {
  url: string;
  clients: number;
  /** Device topics, spread round-robin over the clients. */
  devices: number;
  size: number;
  qos: 0 | 1;
  /** Total messages over all clients. */
  limit: number;
  topic?: string;
  /** New connections per second. */
  connRate?: number;
  /** Per-client pause between messages in ms; 0 = publish as fast as the window allows. */
  intervalMs?: number;
  /** Unacked QoS 1 publishes per client. */
  window?: number;
  /** mqtt.js reconnectPeriod: a client whose connection dropped tries again every this many ms. Default 1000. */
  reconnectMs?: number;
  clientIdPrefix?: string;
  /** Optional per-message hook to replace the payload (bad input tests). */
  payloadFor?: (device: number, seq: number) => Buffer | undefined;
  /** Called once per message the broker acknowledged (a successful PUBACK), for a ledger of what was published. */
  onAcked?: (device: number, seq: number) => void;
  /** Go on publishing past `limit` while this returns true (a stream that lasts as long as a fault does). */
  continueWhile?: () => boolean;
  /** First seq per device (to continue a run). */
  seqBase?: number;
  /** Credentials and the CA file for TLS brokers. */
  connectOptions?: { username?: string; password?: string; ca?: string };
}

export interface PublishResult {
  published: number;
  /**
   * Messages the broker acknowledged (MQTT 5's PUBACK 0x10 "no matching subscribers" included: the
   * broker acked it, then dropped it). A QoS 1 message whose connection dropped before its PUBACK
   * is not counted then: mqtt.js keeps it in its outgoing store, sends it again (DUP) once the
   * client has reconnected (see reconnectMs), and it counts when that PUBACK arrives. So across a
   * broker restart `acked` still reaches `published`, and a message may reach the broker twice.
   */
  acked: number;
  /** Messages the broker refused (a PUBACK reason code >= 0x80): never acked. */
  failed: number;
  /** Connections re-established after a drop, over all clients. */
  reconnects: number;
  startedAt: number;
  endedAt: number;
}

export async function publishLoad(o: PublishOptions): Promise<PublishResult> {
  const topicOf = (d: number) => (o.topic ?? 'device/%i/telemetry').replace('%i', String(d));
  const window = o.window ?? 1000;
  const clients: mqtt.MqttClient[] = [];
  const connGap = o.connRate ? 1000 / o.connRate : 0;
  for (let c = 0; c < o.clients; c++) {
    const co = o.connectOptions ?? {};
    clients.push(
      await mqtt.connectAsync(o.url, {
        clientId: `${o.clientIdPrefix ?? 'bench-pub'}-${c}`,
        clean: true,
        reconnectPeriod: o.reconnectMs ?? 1000,
        protocolVersion: 5,
        username: co.username,
        password: co.password,
        ca: co.ca ? readFileSync(co.ca) : undefined,
      }),
    );
    if (connGap) await new Promise((r) => setTimeout(r, connGap));
  }
  let reconnects = 0;
  for (const client of clients) {
    // While the broker is away every reconnect attempt emits 'error' (ECONNREFUSED), which would
    // throw without a listener; mqtt.js goes on reconnecting.
    client.on('error', () => {});
    client.on('connect', () => reconnects++);
  }
  const startedAt = Date.now();
  let published = 0;
  let acked = 0;
  let failed = 0;
  const perClient = (c: number) => Math.floor(o.limit / o.clients) + (c < o.limit % o.clients ? 1 : 0);
  await Promise.all(
    clients.map(async (client, c) => {
      const n = perClient(c);
      const devices: number[] = [];
      for (let d = c; d < o.devices; d += o.clients) devices.push(d);
      const seqs = new Map<number, number>();
      let inflight = 0;
      let wake: (() => void) | undefined;
      for (let i = 0; i < n || o.continueWhile?.(); i++) {
        const device = devices[i % devices.length]!;
        const seq = (seqs.get(device) ?? o.seqBase ?? 0) + 1;
        seqs.set(device, seq);
        const payload = o.payloadFor?.(device, seq) ?? telemetrySample(String(device), seq, o.size);
        while (inflight >= window) await new Promise<void>((r) => (wake = r));
        inflight++;
        published++;
        client.publish(topicOf(device), payload, { qos: o.qos }, (err) => {
          if (err) failed++;
          else {
            acked++;
            o.onAcked?.(device, seq);
          }
          inflight--;
          const w = wake;
          wake = undefined;
          w?.();
        });
        if (o.intervalMs) await new Promise((r) => setTimeout(r, o.intervalMs));
        else if (i % 200 === 199) await new Promise((r) => setImmediate(r));
      }
      while (inflight > 0) await new Promise<void>((r) => (wake = r));
    }),
  );
  const endedAt = Date.now();
  await Promise.all(clients.map((c) => c.endAsync()));
  return { published, acked, failed, reconnects, startedAt, endedAt };
}

const USAGE = `usage: node --import tsx test/harness/load/publisher.ts [options]

Publishes load as emqtt-bench pub does and prints one JSON line: published, acked, failed,
reconnects, seconds, msgs_per_s, cpu_ms.

  -h, --host URL        broker (default mqtt://127.0.0.1:1883); -h is emqtt-bench's, so help is --help
  -c, --clients N       connections (default 10)
      --devices N       device topics, spread over the clients (default 1000)
  -R, --rate N          new connections per second (default 0 = all at once)
  -I, --interval MS     pause per client between messages (default 0 = as fast as the window allows)
  -s, --size BYTES      payload size (default 200)
  -q, --qos 0|1         (default 1)
  -L, --limit N         messages in all (default 100000)
  -t, --topic TOPIC     %i = device index (default device/%i/telemetry)
      --help            this text
`;

/** The command line, or the exit code when it only asked for help or was wrong (said on stderr). */
function parseCommandLine(args: string[]) {
  try {
    const { values } = parseArgs({ args, options: OPTIONS });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    return values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
}

const OPTIONS = {
  host: { type: 'string', short: 'h', default: 'mqtt://127.0.0.1:1883' },
  clients: { type: 'string', short: 'c', default: '10' },
  devices: { type: 'string', default: '1000' },
  rate: { type: 'string', short: 'R', default: '0' },
  interval: { type: 'string', short: 'I', default: '0' },
  size: { type: 'string', short: 's', default: '200' },
  qos: { type: 'string', short: 'q', default: '1' },
  limit: { type: 'string', short: 'L', default: '100000' },
  topic: { type: 'string', short: 't', default: 'device/%i/telemetry' },
  help: { type: 'boolean' },
} as const;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const v = parseCommandLine(process.argv.slice(2));
  if (typeof v === 'number') process.exit(v);
  const r = await publishLoad({
    url: v.host,
    clients: Number(v.clients),
    devices: Number(v.devices),
    connRate: Number(v.rate) || undefined,
    intervalMs: Number(v.interval),
    size: Number(v.size),
    qos: Number(v.qos) === 0 ? 0 : 1,
    limit: Number(v.limit),
    topic: v.topic,
  });
  const s = (r.endedAt - r.startedAt) / 1000;
  const cpu = process.cpuUsage(); // the whole process: connecting and startup included
  process.stdout.write(
    `${JSON.stringify({ ...r, seconds: s, msgs_per_s: Math.round(r.published / s), cpu_ms: Math.round((cpu.user + cpu.system) / 1000) })}\n`,
  );
}
