// One message as the rules see it: the event, its payload as text (or bytes when it is not
// UTF-8), and the payload decoded as JSON on first use only, shared by every rule.
import { isUtf8 } from 'node:buffer';
import { parseJson } from '../values/json-floats.js';
import type { MessageContext, RuleEvent } from '../types.js';

const NOT_DECODED = Symbol('not decoded');

export class RuleMessageContext implements MessageContext {
  // # fields: nothing but the event and these two methods is reachable from a rule.
  #decoded: unknown = NOT_DECODED;
  #raw: string | Buffer | undefined;

  constructor(readonly event: RuleEvent) {}

  /** The payload as a string when it is valid UTF-8, else the bytes (EMQX's binary). */
  rawPayload(): string | Buffer {
    if (this.#raw === undefined) this.#raw = payloadText(this.event.payload);
    return this.#raw;
  }

  decodedPayload(): unknown {
    if (this.#decoded === NOT_DECODED) this.#decoded = decodeJson(this.rawPayload());
    return this.#decoded;
  }
}

export function createMessageContext(event: RuleEvent): MessageContext {
  return new RuleMessageContext(event);
}

/** The raw payload of any MessageContext (one made elsewhere is read through its event). */
export function rawPayloadOf(ctx: MessageContext): string | Buffer {
  if (ctx instanceof RuleMessageContext) return ctx.rawPayload();
  return payloadText(ctx.event.payload);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes as a string when they are valid UTF-8, else the bytes themselves. */
export function payloadText(p: Buffer | string | undefined): string | Buffer {
  if (p === undefined) return '';
  if (typeof p === 'string') return p;
  // Checked first: a binary payload (Protobuf, Sparkplug) would otherwise cost the decoder's
  // exception on every message (about 10 µs, measured with npm run bench -- standalone).
  if (!isUtf8(p)) return p;
  try {
    return utf8.decode(p);
  } catch {
    return p;
  }
}

/**
 * JSON.parse that answers undefined for anything that is not JSON, bytes that are not UTF-8
 * included (RFC 8259 §8.1): decoding them would replace each bad byte with U+FFFD and store
 * altered data without a trace.
 */
export function decodeJson(v: string | Buffer): unknown {
  const s = typeof v === 'string' ? v : payloadText(v);
  if (typeof s !== 'string') return undefined;
  // Cheap rejection of the common non-JSON payloads before paying for an exception.
  if (s.length === 0) return undefined;
  try {
    return parseJson(s);
  } catch {
    return undefined;
  }
}
