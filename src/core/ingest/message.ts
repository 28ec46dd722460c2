// The inbound message: one PUBLISH as the session hands it on to the pipeline (and as the packet
// reader builds it, so that no second object is made per message).
import type { IPublishPacket } from 'mqtt-packet';

export interface InboundMessage {
  readonly topic: string;
  readonly payload: Buffer;
  readonly qos: 0 | 1 | 2;
  readonly retain: boolean;
  readonly dup: boolean;
  readonly properties: IPublishPacket['properties'];
  readonly receivedAt: number;
}
