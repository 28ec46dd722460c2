// The schema libraries, each loaded on first use only: a weir.yaml without a protobuf schema
// (and without a rule calling spb_*) never loads protobufjs, likewise avsc and ajv. They are
// required rather than import()ed because the configuration is loaded synchronously (weir check,
// weir run and rule reloads share config/load.ts); all three are CommonJS packages.
import { createRequire } from 'node:module';

type Protobufjs = typeof import('protobufjs');
type Avsc = typeof import('avsc');
type AjvModule = typeof import('ajv');

const require = createRequire(import.meta.url);
let protobufjs: Protobufjs | undefined;
let avsc: Avsc | undefined;
let ajv: AjvModule | undefined;

export function loadProtobufjs(): Protobufjs {
  protobufjs ??= require('protobufjs') as Protobufjs;
  return protobufjs;
}

export function loadAvsc(): Avsc {
  avsc ??= require('avsc') as Avsc;
  return avsc;
}

export function loadAjv(): AjvModule {
  ajv ??= require('ajv') as AjvModule;
  return ajv;
}

/** JSON Schema draft-06's meta-schema, which ajv ships but does not add by itself. */
export function loadDraft06(): object {
  return require('ajv/dist/refs/json-schema-draft-06.json') as object;
}
