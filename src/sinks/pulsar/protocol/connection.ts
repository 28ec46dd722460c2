// One TCP connection to a Pulsar broker: the CONNECT handshake, request/response matching by
// request_id, PING/PONG keep-alive, and the dispatch of receipts to the producers on it. When the
// socket closes every waiter is failed with a retriable error; the client opens a new connection.
import net from 'node:net';
import tls from 'node:tls';
import { WeirError } from '../../../errors.js';
import { PulsarError } from '../errors.js';
import { decodeCommand, encodeConnect, encodePing, encodePong, type Incoming } from './commands.js';
import { FrameReader, simpleFrame } from './frame.js';

export interface ProducerListener {
  onReceipt(sequenceId: number, highestSequenceId: number): void;
  onSendError(sequenceId: number, error: WeirError): void;
  /** The broker closed the producer (topic unloaded) or the connection was lost. */
  onClosed(error: WeirError): void;
}

type Reply = Extract<Incoming, { requestId: number }>;

interface Waiter {
  resolve(reply: Reply): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export interface ConnectOptions {
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;
  readonly authToken?: string | undefined;
  readonly clientVersion: string;
  /** TLS (pulsar+ssl://): the CA bundle to trust (default: Node's) and whether to verify chain and host. */
  readonly tls?: { readonly ca?: Buffer | undefined; readonly verify: boolean } | undefined;
  /** Keep-alive: a PING is sent this often and the connection is dropped without a PONG by the next one. */
  readonly keepAliveMs?: number;
}

export class PulsarConnection {
  private readonly reader = new FrameReader();
  private readonly waiters = new Map<number, Waiter>();
  private readonly producers = new Map<number, ProducerListener>();
  private nextRequestId = 1;
  private nextProducerId = 1;
  private closedError: WeirError | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private sawPong = true;
  maxMessageSize = 5 * 1024 * 1024;
  serverVersion = '';

  private constructor(
    private readonly socket: net.Socket,
    readonly address: string,
  ) {}

  /** Opens a socket and completes CONNECT/CONNECTED. */
  static async open(opts: ConnectOptions): Promise<PulsarConnection> {
    const address = `${opts.host}:${opts.port}`;
    const socket: net.Socket = opts.tls
      ? tls.connect({
          host: opts.host,
          port: opts.port,
          ca: opts.tls.ca,
          rejectUnauthorized: opts.tls.verify,
          // SNI only for names; certificates for IPs are checked against their IP SANs.
          ...(net.isIP(opts.host) ? {} : { servername: opts.host }),
        })
      : net.connect({ host: opts.host, port: opts.port, noDelay: true });
    if (opts.tls) socket.setNoDelay(true);
    const conn = new PulsarConnection(socket, address);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new PulsarError('sink.pulsar.connect_timeout', `no CONNECTED from ${address} within ${opts.timeoutMs} ms`));
      }, opts.timeoutMs);
      const fail = (err: Error) => {
        clearTimeout(timer);
        socket.destroy();
        // A refusal the broker explained (authentication) keeps its own code and class; a
        // certificate weir does not trust is a configuration problem, not a transient one.
        const code = (err as { code?: string }).code ?? '';
        if (err instanceof WeirError) reject(err);
        else if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/.test(code)) {
          reject(
            new PulsarError('sink.pulsar.tls_failed', `TLS with Pulsar at ${address} failed: ${err.message} (${code}); see tls_trust_certs_file / tls_verify`, {
              cause: err,
            }),
          );
        } else reject(new PulsarError('sink.pulsar.connect_failed', `cannot connect to Pulsar at ${address}: ${err.message}`, { cause: err }));
      };
      socket.once('error', fail);
      socket.once('close', () => fail(new Error('connection closed during handshake')));
      socket.once(opts.tls ? 'secureConnect' : 'connect', () => socket.write(simpleFrame(encodeConnect(opts.clientVersion, opts.authToken))));
      const onData = (chunk: Buffer) => {
        let frames: ReturnType<typeof conn.reader.push>;
        try {
          frames = conn.reader.push(chunk);
        } catch (err) {
          fail(err as Error);
          return;
        }
        for (const f of frames) {
          const cmd = decodeCommand(f.command);
          if (cmd.type === 'connected') {
            clearTimeout(timer);
            socket.removeAllListeners('error');
            socket.removeAllListeners('close');
            socket.off('data', onData);
            conn.maxMessageSize = cmd.maxMessageSize;
            conn.serverVersion = cmd.serverVersion;
            conn.attach(opts.keepAliveMs ?? 30_000);
            resolve();
            return;
          }
          if (cmd.type === 'error') {
            fail(
              new PulsarError('sink.pulsar.auth_failed', `Pulsar at ${address} refused the connection: ${cmd.error}: ${cmd.message}`, {
                cause: { serverError: cmd.error },
              }),
            );
            return;
          }
        }
      };
      socket.on('data', onData);
    });
    return conn;
  }

  private attach(keepAliveMs: number): void {
    this.socket.on('data', (chunk: Buffer) => {
      let frames: ReturnType<typeof this.reader.push>;
      try {
        frames = this.reader.push(chunk);
      } catch (err) {
        this.destroy(new PulsarError('sink.pulsar.protocol_error', (err as Error).message));
        return;
      }
      for (const f of frames) this.dispatch(decodeCommand(f.command));
    });
    this.socket.on('error', (err) =>
      this.destroy(new PulsarError('sink.pulsar.connection_lost', `Pulsar connection ${this.address} failed: ${err.message}`, { cause: err })),
    );
    this.socket.on('close', () => this.destroy(new PulsarError('sink.pulsar.connection_lost', `Pulsar connection ${this.address} closed`)));
    this.keepAlive = setInterval(() => {
      if (!this.sawPong) {
        this.destroy(new PulsarError('sink.pulsar.connection_lost', `Pulsar broker ${this.address} did not answer PING`));
        return;
      }
      this.sawPong = false;
      this.write(simpleFrame(encodePing()));
    }, keepAliveMs);
    this.keepAlive.unref();
  }

  private dispatch(cmd: Incoming): void {
    switch (cmd.type) {
      case 'ping':
        this.write(simpleFrame(encodePong()));
        return;
      case 'pong':
        this.sawPong = true;
        return;
      case 'send_receipt':
        this.producers.get(cmd.producerId)?.onReceipt(cmd.sequenceId, cmd.highestSequenceId);
        return;
      case 'send_error':
        this.producers
          .get(cmd.producerId)
          ?.onSendError(cmd.sequenceId, new PulsarError('sink.pulsar.send_error', `Pulsar SEND_ERROR ${cmd.error}: ${cmd.message}`));
        return;
      case 'close_producer': {
        const p = this.producers.get(cmd.producerId);
        this.producers.delete(cmd.producerId);
        p?.onClosed(new PulsarError('sink.pulsar.producer_closed', 'the broker closed the producer (topic moved or unloaded)'));
        return;
      }
      case 'other':
      case 'connected':
        return;
      default: {
        const w = this.waiters.get(cmd.requestId);
        if (!w) return;
        this.waiters.delete(cmd.requestId);
        clearTimeout(w.timer);
        w.resolve(cmd);
      }
    }
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  /** Writes bytes; returns false when the socket's buffer is full (wait for drained()). */
  write(frame: Buffer): boolean {
    if (this.closedError) throw this.closedError;
    return this.socket.write(frame);
  }

  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.closedError) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  newRequestId(): number {
    return this.nextRequestId++;
  }

  /** Sends a command built for a fresh request id and waits for the reply carrying that id. */
  request(build: (requestId: number) => Buffer, timeoutMs: number, what: string): Promise<Reply> {
    if (this.closedError) return Promise.reject(this.closedError);
    const requestId = this.newRequestId();
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(requestId);
        reject(new PulsarError('sink.pulsar.request_timeout', `${what}: no answer from ${this.address} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(requestId, { resolve, reject, timer });
      this.write(simpleFrame(build(requestId)));
    });
  }

  registerProducer(listener: ProducerListener): number {
    const id = this.nextProducerId++;
    this.producers.set(id, listener);
    return id;
  }

  unregisterProducer(id: number): void {
    this.producers.delete(id);
  }

  /** Closes the socket and fails every waiter and producer with `err`. */
  destroy(err: WeirError = new PulsarError('sink.pulsar.closed', 'Pulsar connection closed by weir')): void {
    if (this.closedError) return;
    this.closedError = err;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.socket.destroy();
    for (const w of this.waiters.values()) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.waiters.clear();
    const producers = [...this.producers.values()];
    this.producers.clear();
    for (const p of producers) p.onClosed(err);
  }
}
