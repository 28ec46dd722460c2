// Where the mqtt sink connects, and with which options: its own url and credentials, or those of
// the broker weir reads from. The sink's connections and `weir check --connect` (verify.ts) both
// build their options here, so the check connects exactly as the sink will.
import type { IClientOptions } from 'mqtt';
import { brokerTlsOptions } from '../../config/broker-tls.js';
import type { BrokerConfig } from '../../config/schema.js';
import type { MqttConfig } from './spec.js';

/** Where the sink connects, and how: its own settings, or the broker weir reads from. */
export interface Target {
  readonly url: string;
  readonly protocolVersion: 4 | 5;
  readonly username?: string;
  readonly password?: string;
  readonly tls?: BrokerConfig['tls'];
}

export function targetOf(cfg: MqttConfig, broker: BrokerConfig | undefined): Target {
  if (cfg.url !== undefined) return { url: cfg.url, protocolVersion: cfg.protocol_version ?? 5, username: cfg.username, password: cfg.password, tls: cfg.tls };
  const b = broker ?? { url: 'mqtt://127.0.0.1:1883', protocol_version: 5 as const };
  return {
    url: b.url,
    protocolVersion: cfg.protocol_version ?? b.protocol_version,
    username: cfg.username ?? broker?.username,
    password: cfg.password ?? broker?.password,
    tls: broker?.tls,
  };
}

/** The sink's client id: client_id, else '<instance>-<sink name>' (instance: broker.client_id). */
export function clientIdOf(cfg: MqttConfig, sink: string, instance: string | undefined): string {
  return cfg.client_id ?? `${instance ?? 'weir'}-${sink}`;
}

/**
 * The mqtt.js options of a connection to `t`: a clean session (nothing is subscribed, and a
 * publish not acknowledged when the connection drops is sent again by the core's retry), TLS for
 * mqtts:// from the target's tls keys.
 */
export function clientOptions(cfg: MqttConfig, t: Target, clientId: string): IClientOptions {
  const url = new URL(t.url);
  const tls = url.protocol === 'mqtt:' ? {} : brokerTlsOptions({ tls: t.tls } as BrokerConfig, url.hostname);
  return {
    clientId,
    protocolVersion: t.protocolVersion,
    clean: true,
    keepalive: cfg.keepalive_s,
    connectTimeout: cfg.connect_timeout_ms,
    username: t.username,
    password: t.password,
    ...tls,
  };
}
