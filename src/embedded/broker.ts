// The first run's MQTT broker: aedes, in this process, on a loopback port. aedes 1.x speaks MQTT
// 3.1.1 only and grants `$share/...` subscriptions without delivering anything on them, so weir
// runs against it with protocol_version 4, one connection and plain subscriptions
// (src/embedded/demo-config.ts). It keeps QoS 1 sessions in memory: enough for a demo, not a broker
// to deploy (docs/operations.md).
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Aedes } from 'aedes';

export interface EmbeddedBroker {
  /** mqtt://127.0.0.1:<port> */
  readonly url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedBroker(host = '127.0.0.1', port = 0): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker();
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `mqtt://${host}:${bound}`,
    async stop() {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      // Clients still connected (none after an orderly stop) would keep close() waiting.
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
