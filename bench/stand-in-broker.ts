// A stand-in broker for benchmarking weir alone (bench/standalone.ts): NOT an MQTT broker. It
// accepts weir's connections (CONNACK to CONNECT, SUBACK to SUBSCRIBE, PINGRESP to PINGREQ), then
// only writes QoS 1 PUBLISH packets encoded before the run, as fast as each connection's receive
// window allows (MQTT 5 Receive Maximum, which weir sets to broker.max_unacked), and counts the
// PUBACKs. It ignores the subscriptions' filters, routes nothing, queues nothing, and keeps no
// session: what it measures is weir's own cost per message with no broker's CPU in the way.
//
// Each run's packets are encoded ahead (runPackets), one contiguous buffer per connection, so a
// write is one slice of it covering every packet the window admits: the stand-in's own cost per
// message is a few array reads.
import net from 'node:net';
import mqttPacket, { type Packet } from 'mqtt-packet';

/** Messages for one connection, encoded: `data` holds the packets back to back, packet k at offsets[k]..offsets[k+1]. */
export interface EncodedRun {
  readonly data: Buffer;
  readonly offsets: Uint32Array;
  /** Each packet's id (1..65535, in turn). */
  readonly ids: Uint16Array;
}

const PUBLISH_QOS1 = 0x32;
const PUBACK = 4;

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/**
 * Encodes `messages` QoS 1 PUBLISH packets (MQTT 5, no properties, as Mosquitto sends telemetry)
 * back to back: message k has the topic and payload `message(k)` returns, and packet id k mod
 * 65535 + 1.
 */
export function encodeRun(messages: number, message: (k: number) => { topic: string; payload: Buffer }): EncodedRun {
  const parts: Buffer[] = [];
  const offsets = new Uint32Array(messages + 1);
  const ids = new Uint16Array(messages);
  let off = 0;
  for (let k = 0; k < messages; k++) {
    const { topic, payload } = message(k);
    const topicLen = Buffer.byteLength(topic);
    const remaining = 2 + topicLen + 2 + 1 + payload.length;
    const head = varint(remaining);
    const p = Buffer.allocUnsafe(1 + head.length + remaining);
    let i = 0;
    p[i++] = PUBLISH_QOS1;
    for (const b of head) p[i++] = b;
    p.writeUInt16BE(topicLen, i);
    i += 2;
    i += p.write(topic, i);
    ids[k] = (k % 65535) + 1;
    p.writeUInt16BE(ids[k]!, i);
    i += 2;
    p[i++] = 0; // property length 0
    payload.copy(p, i);
    parts.push(p);
    offsets[k] = off;
    off += p.length;
  }
  offsets[messages] = off;
  return { data: Buffer.concat(parts, off), offsets, ids };
}

/** One of weir's connections to the stand-in. */
class Connection {
  receiveMaximum = 65535;
  subscribed = false;
  private run: EncodedRun | undefined;
  private next = 0;
  private acked = 0;
  private outstanding = 0;
  private readonly inFlight = new Uint8Array(65536);
  private writable = true;
  private onDone: (() => void) | undefined;
  private rest: Buffer | undefined;
  private readonly slow: ReturnType<typeof mqttPacket.parser>;

  constructor(
    readonly sock: net.Socket,
    private readonly onControl: (c: Connection, p: Packet) => void,
  ) {
    this.slow = mqttPacket.parser({ protocolVersion: 5 });
    this.slow.on('packet', (p: Packet) => this.onControl(this, p));
    sock.setNoDelay(true);
    sock.on('data', (chunk: Buffer) => this.read(chunk));
    sock.on('drain', () => {
      this.writable = true;
      this.pump();
    });
    sock.on('error', () => undefined);
  }

  /** Starts writing `run`; resolves when every packet of it is acked. */
  send(run: EncodedRun): Promise<void> {
    this.run = run;
    this.next = 0;
    this.acked = 0;
    if (run.ids.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.onDone = resolve;
      this.pump();
    });
  }

  /** PUBACKs (4 bytes with MQTT 5's reason code 0 left out, or more) are counted here; anything else goes to mqtt-packet. */
  private read(chunk: Buffer): void {
    const data = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    let off = 0;
    while (data.length - off >= 2) {
      let len = 0;
      let mult = 1;
      let i = off + 1;
      for (;;) {
        if (i >= data.length) return void (this.rest = data.subarray(off));
        const b = data[i++]!;
        len += (b & 0x7f) * mult;
        mult *= 128;
        if ((b & 0x80) === 0) break;
      }
      const end = i + len;
      if (end > data.length) break;
      if (data[off]! >> 4 === PUBACK) this.onPuback(data.readUInt16BE(i));
      else this.slow.parse(data.subarray(off, end));
      off = end;
    }
    this.rest = off < data.length ? data.subarray(off) : undefined;
    this.pump();
  }

  private onPuback(id: number): void {
    if (!this.inFlight[id]) return;
    this.inFlight[id] = 0;
    this.outstanding--;
    this.acked++;
    if (this.run && this.acked === this.run.ids.length) {
      const done = this.onDone;
      this.onDone = undefined;
      done?.();
    }
  }

  /** Writes every packet the receive window admits, as one slice. */
  private pump(): void {
    const run = this.run;
    if (!run || !this.writable || !this.subscribed) return;
    const from = this.next;
    let k = from;
    while (k < run.ids.length && this.outstanding < this.receiveMaximum && !this.inFlight[run.ids[k]!]) {
      this.inFlight[run.ids[k]!] = 1;
      this.outstanding++;
      k++;
    }
    if (k === from) return;
    this.next = k;
    this.writable = this.sock.write(run.data.subarray(run.offsets[from]!, run.offsets[k]!));
  }

  wake(): void {
    this.pump();
  }
}

export class StandInBroker {
  private readonly conns: Connection[] = [];
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<StandInBroker> {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const b = new StandInBroker(server, port);
    server.on('connection', (sock) => b.accept(sock));
    return b;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** The subscribed connections. */
  get connections(): number {
    return this.conns.filter((c) => c.subscribed && !c.sock.destroyed).length;
  }

  /** Resolves once `n` connections have subscribed. */
  async whenSubscribed(n: number): Promise<void> {
    while (this.connections < n) await new Promise<void>((r) => this.waiters.push(r));
  }

  /** Sends one encoded run per subscribed connection; resolves when every packet is acked. */
  async send(runs: EncodedRun[]): Promise<void> {
    const live = this.conns.filter((c) => c.subscribed && !c.sock.destroyed);
    if (live.length !== runs.length) throw new Error(`stand-in broker: ${live.length} connections subscribed, ${runs.length} runs encoded`);
    await Promise.all(live.map((c, i) => c.send(runs[i]!)));
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.sock.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private accept(sock: net.Socket): void {
    const c = new Connection(sock, (conn, p) => this.control(conn, p));
    this.conns.push(c);
    sock.on('close', () => this.conns.splice(this.conns.indexOf(c), 1));
  }

  private control(c: Connection, p: Packet): void {
    const out = (packet: Packet) => c.sock.write(mqttPacket.generate(packet, { protocolVersion: 5 }));
    switch (p.cmd) {
      case 'connect':
        c.receiveMaximum = p.properties?.receiveMaximum ?? 65535;
        out({ cmd: 'connack', sessionPresent: false, reasonCode: 0 });
        return;
      case 'subscribe':
        out({ cmd: 'suback', messageId: p.messageId, granted: p.subscriptions.map(() => 1) });
        // Only the share group's connections take telemetry; weir's presence connection
        // (docs/fleet.md) subscribes to the members' topics and is sent nothing.
        if (!p.subscriptions.some((s) => s.topic.startsWith('$share/'))) return;
        c.subscribed = true;
        for (const w of this.waiters.splice(0)) w();
        c.wake();
        return;
      case 'unsubscribe':
        out({ cmd: 'unsuback', messageId: p.messageId, granted: [] } as unknown as Packet);
        return;
      case 'pingreq':
        out({ cmd: 'pingresp' });
        return;
      case 'disconnect':
        c.sock.end();
        return;
      default:
        return;
    }
  }
}
