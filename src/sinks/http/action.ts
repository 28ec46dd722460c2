// One rule's http action, compiled once when rules load: its url, header and body templates
// become closures; encode() turns one rule output into one request's worth (or one element of a
// batched body). An output that cannot become one throws, and the core dead-letters it alone.
import { compileTemplate } from '../../rules/index.js';
import { payloadText } from '../../rules/compile/context.js';
import type { OutputRecord } from '../../rules/types.js';
import { toStr } from '../../rules/values/to-str.js';
import { bodyBytes } from '../bytes.js';
import { compileTextMap } from '../text-map.js';
import type { BoundAction, SinkInput } from '../types.js';
import { HttpError } from './errors.js';
import type { BodyFormat, HttpAction, HttpConfig } from './spec.js';

/** One message on its way to the server. */
export interface HttpItem {
  readonly url: string;
  readonly method: string;
  readonly format: BodyFormat;
  /** The action's headers, rendered for this message (the sink's own are added when sent). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export class EncodeError extends HttpError {
  constructor(message: string) {
    super('sink.http.encode', message);
  }
}

const CONTENT_TYPE: Readonly<Record<BodyFormat, string>> = { message: 'application/json', json_array: 'application/json', json_lines: 'application/x-ndjson' };

export function bindHttpAction(action: HttpAction, sink: HttpConfig): BoundAction<HttpItem> {
  const urlOf = compileTemplate(action.url ?? sink.url);
  const headersOf = compileTextMap(action.headers);
  const bodyOf = action.body === undefined ? undefined : compileTemplate(action.body);
  const hasContentType = Object.keys({ ...sink.headers, ...action.headers }).some((h) => h.toLowerCase() === 'content-type');
  const contentType = hasContentType ? undefined : CONTENT_TYPE[action.format];
  return {
    // Items of one format and method batch together; write() groups them by URL and headers.
    batchKey: `${action.format} ${action.method}`,
    encode({ record, event }: SinkInput): HttpItem {
      const u = urlOf(record, event);
      const url = typeof u === 'string' ? u : u === undefined || u === null ? '' : toStr(u);
      if (!/^https?:\/\/[^/?#]/i.test(url)) throw new EncodeError(`url ${JSON.stringify(url)} is not an http:// or https:// URL`);
      const body = bodyBytes(bodyOf, record, event);
      if (body === undefined) throw new EncodeError(`body template ${action.body} gave no value`);
      const headers = headersOf ? headersOf(record, event) : {};
      if (contentType) headers['content-type'] = contentType;
      return { url, method: action.method, format: action.format, headers, body };
    },
    describe: (item: HttpItem): OutputRecord => ({ method: item.method, url: item.url, headers: { ...item.headers }, body: payloadText(item.body) }),
  };
}
