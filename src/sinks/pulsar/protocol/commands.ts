// The Pulsar commands weir's producer sends and the replies it reads (BaseCommand and its
// Command* messages in Pulsar's PulsarApi.proto; field numbers in the comments of each encoder).
// proto2: required fields are always written, even when zero.
import { decodeProto, type ProtoFields } from './proto-reader.js';
import { ProtoWriter } from './proto-writer.js';

/** BaseCommand.Type numbers. */
export const CommandType = {
  CONNECT: 2,
  CONNECTED: 3,
  PRODUCER: 5,
  SEND: 6,
  SEND_RECEIPT: 7,
  SEND_ERROR: 8,
  SUCCESS: 13,
  ERROR: 14,
  CLOSE_PRODUCER: 15,
  CLOSE_CONSUMER: 16,
  PRODUCER_SUCCESS: 17,
  PING: 18,
  PONG: 19,
  PARTITIONED_METADATA: 21,
  PARTITIONED_METADATA_RESPONSE: 22,
  LOOKUP: 23,
  LOOKUP_RESPONSE: 24,
  AUTH_CHALLENGE: 36,
} as const;

/** ServerError enum names, for messages and for classify(). */
export const SERVER_ERRORS = [
  'UnknownError',
  'MetadataError',
  'PersistenceError',
  'AuthenticationError',
  'AuthorizationError',
  'ConsumerBusy',
  'ServiceNotReady',
  'ProducerBlockedQuotaExceededError',
  'ProducerBlockedQuotaExceededException',
  'ChecksumError',
  'UnsupportedVersionError',
  'TopicNotFound',
  'SubscriptionNotFound',
  'ConsumerNotFound',
  'TooManyRequests',
  'TopicTerminatedError',
  'ProducerBusy',
  'InvalidTopicName',
  'IncompatibleSchema',
  'ConsumerAssignError',
  'TransactionCoordinatorNotFound',
  'InvalidTxnStatus',
  'NotAllowedError',
  'TransactionConflict',
  'TransactionNotFound',
  'ProducerFenced',
] as const;

export function serverErrorName(code: number): string {
  return SERVER_ERRORS[code] ?? `ServerError${code}`;
}

/** The highest protocol version weir speaks (v19: the broker answers with min(client, server)). */
export const PROTOCOL_VERSION = 19;

function base(type: number, field: number, fill: (w: ProtoWriter) => void): Buffer {
  return new ProtoWriter(128).uint(1, type).message(field, fill).finish();
}

export function encodeConnect(clientVersion: string, authToken?: string): Buffer {
  // CommandConnect: client_version=1, auth_data=3, protocol_version=4, auth_method_name=5
  return base(CommandType.CONNECT, 2, (w) => {
    w.string(1, clientVersion);
    if (authToken !== undefined) w.bytes(3, Buffer.from(authToken, 'utf8'));
    w.uint(4, PROTOCOL_VERSION);
    if (authToken !== undefined) w.string(5, 'token');
  });
}

export function encodePing(): Buffer {
  return base(CommandType.PING, 18, () => {});
}

export function encodePong(): Buffer {
  return base(CommandType.PONG, 19, () => {});
}

export function encodePartitionedMetadata(topic: string, requestId: number): Buffer {
  // CommandPartitionedTopicMetadata: topic=1, request_id=2
  return base(CommandType.PARTITIONED_METADATA, 21, (w) => w.string(1, topic).uint(2, requestId));
}

export function encodeLookup(topic: string, requestId: number, authoritative: boolean): Buffer {
  // CommandLookupTopic: topic=1, request_id=2, authoritative=3
  return base(CommandType.LOOKUP, 23, (w) => w.string(1, topic).uint(2, requestId).bool(3, authoritative));
}

export function encodeProducer(topic: string, producerId: number, requestId: number, producerName?: string, epoch = 0): Buffer {
  // CommandProducer: topic=1, producer_id=2, request_id=3, producer_name=4, epoch=8, user_provided_producer_name=9
  return base(CommandType.PRODUCER, 5, (w) => {
    w.string(1, topic).uint(2, producerId).uint(3, requestId);
    if (producerName !== undefined) w.string(4, producerName);
    w.uint(8, epoch).bool(9, producerName !== undefined);
  });
}

export function encodeSend(producerId: number, sequenceId: number, numMessages: number, highestSequenceId: number): Buffer {
  // CommandSend: producer_id=1, sequence_id=2, num_messages=3, highest_sequence_id=6
  return base(CommandType.SEND, 6, (w) => w.uint(1, producerId).uint(2, sequenceId).uint(3, numMessages).uint(6, highestSequenceId));
}

export function encodeCloseProducer(producerId: number, requestId: number): Buffer {
  // CommandCloseProducer: producer_id=1, request_id=2
  return base(CommandType.CLOSE_PRODUCER, 15, (w) => w.uint(1, producerId).uint(2, requestId));
}

/** A message id as the broker reports it in a receipt. */
export interface MessageId {
  readonly ledgerId: number;
  readonly entryId: number;
  readonly partition: number;
  readonly batchIndex: number;
}

export function decodeMessageId(f: ProtoFields | undefined): MessageId | undefined {
  if (!f) return undefined;
  // MessageIdData: ledgerId=1, entryId=2, partition=3 (default -1), batch_index=4 (default -1);
  // negative int32s arrive as 10-byte varints, i.e. huge numbers: map them back to -1.
  const signed = (v: number) => (v > 0x7fffffff ? -1 : v);
  return { ledgerId: f.uint(1), entryId: f.uint(2), partition: signed(f.uint(3, -1)), batchIndex: signed(f.uint(4, -1)) };
}

/** The replies the producer side handles; anything else is `other`. */
export type Incoming =
  | { type: 'connected'; serverVersion: string; protocolVersion: number; maxMessageSize: number }
  | { type: 'partitioned_metadata'; requestId: number; partitions: number; failed: boolean; error: string; message: string }
  | {
      type: 'lookup';
      requestId: number;
      kind: 'redirect' | 'connect' | 'failed';
      brokerServiceUrl: string;
      brokerServiceUrlTls: string;
      authoritative: boolean;
      proxyThroughServiceUrl: boolean;
      error: string;
      message: string;
    }
  | { type: 'producer_success'; requestId: number; producerName: string; lastSequenceId: number; ready: boolean }
  | { type: 'success'; requestId: number }
  | { type: 'error'; requestId: number; error: string; message: string }
  | { type: 'send_receipt'; producerId: number; sequenceId: number; highestSequenceId: number; messageId: MessageId | undefined }
  | { type: 'send_error'; producerId: number; sequenceId: number; error: string; message: string }
  | { type: 'close_producer'; producerId: number }
  | { type: 'ping' }
  | { type: 'pong' }
  | { type: 'other'; code: number };

export function decodeCommand(buf: Buffer): Incoming {
  const cmd = decodeProto(buf);
  const type = cmd.uint(1);
  const body = cmd.message(type) ?? decodeProto(Buffer.alloc(0));
  switch (type) {
    case CommandType.CONNECTED:
      return { type: 'connected', serverVersion: body.string(1), protocolVersion: body.uint(2), maxMessageSize: body.uint(3, 5 * 1024 * 1024) };
    case CommandType.PARTITIONED_METADATA_RESPONSE:
      return {
        type: 'partitioned_metadata',
        requestId: body.uint(2),
        partitions: body.uint(1),
        failed: body.uint(3) === 1,
        error: serverErrorName(body.uint(4)),
        message: body.string(5),
      };
    case CommandType.LOOKUP_RESPONSE: {
      const r = body.uint(3);
      return {
        type: 'lookup',
        requestId: body.uint(4),
        kind: r === 0 ? 'redirect' : r === 1 ? 'connect' : 'failed',
        brokerServiceUrl: body.string(1),
        brokerServiceUrlTls: body.string(2),
        authoritative: body.bool(5),
        proxyThroughServiceUrl: body.bool(8),
        error: serverErrorName(body.uint(6)),
        message: body.string(7),
      };
    }
    case CommandType.PRODUCER_SUCCESS:
      return { type: 'producer_success', requestId: body.uint(1), producerName: body.string(2), lastSequenceId: body.uint(3, -1), ready: body.bool(6, true) };
    case CommandType.SUCCESS:
      return { type: 'success', requestId: body.uint(1) };
    case CommandType.ERROR:
      return { type: 'error', requestId: body.uint(1), error: serverErrorName(body.uint(2)), message: body.string(3) };
    case CommandType.SEND_RECEIPT:
      return {
        type: 'send_receipt',
        producerId: body.uint(1),
        sequenceId: body.uint(2),
        highestSequenceId: body.uint(4),
        messageId: decodeMessageId(body.message(3)),
      };
    case CommandType.SEND_ERROR:
      return { type: 'send_error', producerId: body.uint(1), sequenceId: body.uint(2), error: serverErrorName(body.uint(3)), message: body.string(4) };
    case CommandType.CLOSE_PRODUCER:
      return { type: 'close_producer', producerId: body.uint(1) };
    case CommandType.PING:
      return { type: 'ping' };
    case CommandType.PONG:
      return { type: 'pong' };
    default:
      return { type: 'other', code: type };
  }
}
