// What `weir check --connect` (and `weir run` at start) asks of an mqtt sink: one connection to the
// broker it republishes to, with exactly the options the sink's own connection uses (target.ts:
// its url or the broker weir reads from, TLS, credentials, protocol version), under a client id of
// its own ('<the sink's client id>-verify', so a running weir's sink connection is not taken over)
// and a clean session that ends with the connection, so nothing is left at the broker. Nothing is
// published and nothing subscribed.
//
// - the broker cannot be reached (refused, DNS, TLS, no CONNACK within connect_timeout_ms): rejects,
//   and `weir check --connect` prints it as the sink it cannot connect to (exit 3);
// - the CONNACK refuses the connection (bad user name or password, not authorized, client id
//   refused): rejects too, naming the reason code, as a PostgreSQL sink's wrong password does —
//   the sink cannot be asked anything else;
// - what an MQTT 5 CONNACK says the broker does not take (Retain Available 0, Maximum QoS 0)
//   against the actions that would send it: a problem per action, at its key. A broker that gets
//   such a PUBLISH disconnects the client, so every message of that action would wait for ever.
// What only a PUBLISH would show (the broker's ACL on a topic, a `$`-topic it reserves: AWS IoT
// lets clients publish `$aws/...`) is not checked: the check publishes nothing.
import type { ActionToVerify, VerifyOptions, VerifyProblem } from '../types.js';
import { Connection, type BrokerLimits } from './connection.js';
import { redactUrl } from '../../log.js';
import { MqttError } from './errors.js';
import type { MqttAction, MqttConfig } from './spec.js';
import { clientIdOf, clientOptions, targetOf } from './target.js';

export async function verifyMqtt(cfg: MqttConfig, actions: readonly ActionToVerify[], opts: VerifyOptions, signal: AbortSignal): Promise<VerifyProblem[]> {
  const target = targetOf(cfg, opts.broker);
  const clientId = `${clientIdOf(cfg, opts.sink, opts.broker?.client_id)}-verify`;
  let conn: Connection;
  try {
    conn = await Connection.open(
      { url: target.url, client: clientOptions(cfg, target, clientId), maxInFlight: 1, publishTimeoutMs: cfg.publish_timeout_ms, signal },
      () => undefined,
    );
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const code = err instanceof MqttError ? err.code : undefined;
    throw new MqttError(code === 'sink.mqtt.connect_refused' ? code : 'sink.mqtt.connection_lost', `${redactUrl(target.url)} (client id ${clientId}): ${why}`, {
      cause: err,
    });
  }
  const problems = limitProblems(conn.limits, actions, target.url);
  await conn.close();
  return problems;
}

/** The actions that would send what the broker's CONNACK says it does not take. */
function limitProblems(limits: BrokerLimits, actions: readonly ActionToVerify[], url: string): VerifyProblem[] {
  const problems: VerifyProblem[] = [];
  for (const a of actions) {
    const s = a.settings as MqttAction;
    if (s.retain && !limits.retainAvailable)
      problems.push({
        message: `${a.atKey(['retain'])}: rule ${a.ruleId}: retain: true, but the broker at ${redactUrl(url)} does not take retained messages (CONNACK Retain Available 0): it would disconnect the sink at the first PUBLISH; set retain: false`,
      });
    const qos = s.qos ?? 1;
    if (qos !== 0 && limits.maximumQoS === 0)
      problems.push({
        message: `${a.atKey(['qos'])}: rule ${a.ruleId}: qos ${typeof qos === 'number' ? qos : `${qos} may render 1`}, but the broker at ${redactUrl(url)} takes QoS 0 at most (CONNACK Maximum QoS 0); set qos: 0 (no receipt: a message can be lost)`,
      });
  }
  return problems;
}
