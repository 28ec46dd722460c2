// The broker's own counts, from outside weir: what Mosquitto publishes under $SYS (retained, so a
// subscriber gets the latest values at once; refreshed every `sys_interval`, 10 s by default).
// They are broker-wide and reset when the broker restarts, so they are shown beside weir's
// counts, never subtracted from them: the exact source-side check is the sequence gaps
// (sequence.ts). What they do show is what no weir counter can: messages the broker dropped
// (queue limits) and messages it still holds, queued for sessions such as weir's.
import mqtt from 'mqtt';
import type { BrokerConfig } from '../config/schema.js';
import { brokerTlsOptions } from '../config/broker-tls.js';

/** $SYS topic → the name shown (Mosquitto 1.x and 2.x). */
const TOPICS: Record<string, string> = {
  '$SYS/broker/version': 'version',
  '$SYS/broker/uptime': 'uptime',
  '$SYS/broker/publish/messages/received': 'publish_received',
  '$SYS/broker/publish/messages/sent': 'publish_sent',
  '$SYS/broker/publish/messages/dropped': 'publish_dropped',
  '$SYS/broker/store/messages/count': 'stored_messages',
};

export interface BrokerCounts {
  /** Present when the broker answered on $SYS (Mosquitto); empty for brokers without it. */
  readonly values: Readonly<Record<string, string>>;
}

/** Reads the broker's $SYS values, waiting at most `waitMs` for them to arrive. */
export async function brokerCounts(broker: BrokerConfig, waitMs = 2000): Promise<BrokerCounts> {
  const client = await mqtt.connectAsync(broker.url, {
    clientId: `${broker.client_id}-reconcile-${process.pid}`,
    clean: true,
    protocolVersion: 4,
    username: broker.username || undefined,
    password: broker.password || undefined,
    reconnectPeriod: 0,
    connectTimeout: waitMs,
    ...brokerTlsOptions(broker, new URL(broker.url).hostname.replace(/^\[|\]$/g, '')),
  });
  const values: Record<string, string> = {};
  try {
    const all = new Promise<void>((resolve) => {
      client.on('message', (topic, payload) => {
        const name = TOPICS[topic];
        if (name) values[name] = payload.toString();
        if (Object.keys(values).length === Object.keys(TOPICS).length) resolve();
      });
    });
    await client.subscribeAsync(Object.keys(TOPICS), { qos: 0 });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  } finally {
    await client.endAsync(true);
  }
  return { values };
}
