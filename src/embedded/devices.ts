// Simulated devices for the first run: each publishes one telemetry sample per interval on
// device/<id>/telemetry, in the seeds' shape ({device, seq, ts, temp, hum, location}, padded to
// `size` bytes by `location`, as seed 002 does), QoS 1, over a few shared MQTT 3.1.1 connections.
// test/harness/load/ holds the load generator for tests and benchmarks; this one paces itself and
// lives in src/ so the published `weir demo` has it.
import mqtt from 'mqtt';

export interface DeviceOptions {
  url: string;
  devices: number;
  /** Milliseconds between two samples of one device. */
  intervalMs: number;
  /** Payload bytes. */
  size: number;
  /** Connections the devices are spread over. */
  connections?: number;
}

export interface Devices {
  readonly published: () => number;
  stop(): Promise<void>;
}

/** One sample in the seeds' shape, padded to `size` bytes by the `location` field. */
export function telemetrySample(device: string, seq: number, size: number, ts = Date.now()): Buffer {
  const temp = Math.round((15 + ((seq * 7919) % 300) / 10) * 10) / 10;
  const hum = Math.round((30 + ((seq * 104729) % 500) / 10) * 10) / 10;
  const sample = { device, seq, ts, temp, hum, location: '' };
  sample.location = 'x'.repeat(Math.max(0, size - Buffer.byteLength(JSON.stringify(sample))));
  return Buffer.from(JSON.stringify(sample));
}

export async function simulateDevices(o: DeviceOptions): Promise<Devices> {
  const n = Math.max(1, Math.min(o.connections ?? 4, o.devices));
  const clients = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      mqtt.connectAsync(o.url, { clientId: `weir-demo-device-${i}`, protocolVersion: 4, clean: true, reconnectPeriod: 1000 }),
    ),
  );
  let published = 0;
  let seq = 0;
  const tick = () => {
    seq++;
    for (let d = 0; d < o.devices; d++) {
      const client = clients[d % n]!;
      // While a connection is down its devices skip the round, rather than mqtt.js queueing
      // their samples without bound until it reconnects.
      if (!client.connected) continue;
      client.publish(`device/${d}/telemetry`, telemetrySample(String(d), seq, o.size), { qos: 1 });
      published++;
    }
  };
  tick();
  const timer = setInterval(tick, o.intervalMs);
  return {
    published: () => published,
    async stop() {
      clearInterval(timer);
      await Promise.all(clients.map((c) => c.endAsync()));
    },
  };
}
