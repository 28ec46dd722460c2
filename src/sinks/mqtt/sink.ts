// Republishes rule outputs to an MQTT broker. One write() publishes every item of the batch at
// once over the sink's own connection (up to its in-flight window, connection.ts) and resolves
// when each QoS 1 item has its PUBACK and each QoS 0 item is on the socket. A PUBACK with a failure
// reason code refuses that item alone (dead-lettered with the code's name); a dropped connection
// leaves the items not yet acknowledged to the core's retry, on a new connection. At least once:
// a message whose PUBACK was lost with the connection is published again.
import { WeirError } from '../../errors.js';
import { resultOf } from '../item-results.js';
import { KeptAttempt } from '../kept-attempt.js';
import { ALL_WRITTEN, type BoundAction, type ErrorClass, type Sink, type SinkDeps, type WriteResult } from '../types.js';
import { bindMqttAction, type MqttItem } from './action.js';
import { classifyMqttError } from './classify.js';
import { Connection } from './connection.js';
import { redactUrl } from '../../log.js';
import { MqttError } from './errors.js';
import { lintMqttConfig, type MqttAction, type MqttConfig } from './spec.js';
import { clientIdOf, clientOptions, type Target, targetOf } from './target.js';

export class MqttSink implements Sink<MqttAction, MqttItem> {
  private readonly connection = new KeptAttempt(() => this.open());
  private readonly target: Target;
  private readonly clientId: string;
  private closed = false;
  /** The most QoS 1 publishes in flight at once on any of the sink's connections so far. */
  peakInFlight = 0;

  constructor(
    private readonly cfg: MqttConfig,
    private readonly deps: SinkDeps,
  ) {
    const problems = lintMqttConfig(cfg);
    // The loader reports these at their lines first; this guards a sink created from settings it never saw.
    if (problems.length > 0)
      throw new WeirError('config.sink.mqtt', `sinks.${deps.name}: ${problems.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ')}`);
    this.target = targetOf(cfg, deps.broker);
    this.clientId = clientIdOf(cfg, deps.name, deps.instance ?? deps.broker?.client_id);
  }

  bind(action: MqttAction, ruleId: string): BoundAction<MqttItem> {
    return bindMqttAction(action, ruleId);
  }

  async connect(_signal: AbortSignal): Promise<void> {
    await this.connected();
  }

  async write(items: MqttItem[], signal: AbortSignal): Promise<WriteResult> {
    if (items.length === 0) return ALL_WRITTEN;
    if (signal.aborted) throw new MqttError('sink.mqtt.aborted', 'write aborted: shutting down');
    const conn = await this.connected();
    const outcomes = await conn.publishAll(items);
    if (conn.peakInFlight > this.peakInFlight) this.peakInFlight = conn.peakInFlight;
    return resultOf(outcomes, (err) => this.classify(err));
  }

  async probe(_signal: AbortSignal): Promise<void> {
    const conn = await this.connected();
    if (!conn.open) throw new MqttError('sink.mqtt.connection_lost', 'the connection to the broker is closed');
  }

  classify(err: unknown): ErrorClass {
    return classifyMqttError(err);
  }

  fatalKind(err: unknown): string {
    return err instanceof MqttError && err.code === 'sink.mqtt.connect_refused' ? 'connection refused by the broker' : 'fatal error';
  }

  async close(): Promise<void> {
    this.closed = true;
    const current = this.connection.forget();
    const conn = await current?.catch(() => undefined);
    await conn?.close();
  }

  /** The open connection; connects (again) when there is none. */
  private connected(): Promise<Connection> {
    if (this.closed) return Promise.reject(new MqttError('sink.mqtt.closed', `sink ${this.deps.name} is closed`));
    return this.connection.get();
  }

  private async open(): Promise<Connection> {
    const t = this.target;
    const options = clientOptions(this.cfg, t, this.clientId);
    const conn = await Connection.open(
      { url: t.url, client: options, maxInFlight: this.cfg.max_in_flight_messages, publishTimeoutMs: this.cfg.publish_timeout_ms },
      (gone) => {
        const kept = this.connection.peek();
        // Forget the connection that closed (not a newer one), so the next write connects again.
        void kept
          ?.then((c) => {
            if (c === gone) this.connection.forget(kept);
          })
          .catch(() => undefined);
        if (!this.closed) this.deps.log.warn({ sink: this.deps.name, url: redactUrl(t.url) }, 'mqtt sink connection closed; the next write connects again');
      },
    );
    this.deps.log.info({ sink: this.deps.name, url: redactUrl(t.url), client_id: this.clientId, window: conn.window }, 'mqtt sink connected');
    return conn;
  }
}
