// The http sink type: rule outputs sent to an HTTP endpoint (a webhook), one request per message or per batch.
import type { SinkType } from '../types.js';
import type { HttpItem } from './action.js';
import { HTTP_CODES } from './errors.js';
import { HttpSink } from './sink.js';
import { HttpActionSpec, HttpConfigSpec, lintHttpConfig, type HttpAction, type HttpConfig } from './spec.js';
import { verifyHttp } from './verify.js';

export const httpSinkType: SinkType<HttpConfig, HttpAction, HttpItem> = {
  type: 'http',
  configSchema: HttpConfigSpec,
  actionSchema: HttpActionSpec,
  errorCodes: HTTP_CODES,
  lint: lintHttpConfig,
  create: (cfg, deps) => new HttpSink(cfg, deps),
  verify: verifyHttp,
};
