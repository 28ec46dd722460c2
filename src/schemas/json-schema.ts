// JSON Schema schemas with ajv: schema_decode parses the payload as JSON and validates it (the
// term it returns keeps 2.0 a float, as every JSON payload weir reads); schema_encode writes the
// value as JSON text and validates that, as EMQX does with jesse.
import type { ValidateFunction } from 'ajv';
import { parseJson } from '../rules/values/json-floats.js';
import { toJson } from '../rules/values/to-json.js';
import { loadAjv, loadDraft06 } from './libraries.js';
import { readJsonFile } from './json-file.js';
import { SchemaLoadError } from './schema-load-error.js';

export function loadJsonSchema(file: string): ValidateFunction {
  const { Ajv } = loadAjv();
  const schema = readJsonFile(file);
  try {
    // strict: false — schemas written for other validators (EMQX's jesse) carry keywords ajv does not know.
    const ajv = new Ajv({ strict: false, allErrors: false });
    // Draft-06 as well as ajv's own draft-07 (EMQX's jesse takes draft-03 to draft-06).
    ajv.addMetaSchema(loadDraft06());
    return ajv.compile(schema as object);
  } catch (err) {
    throw new SchemaLoadError(`not a JSON Schema: ${err instanceof Error ? err.message : String(err)}`, file);
  }
}

function check(validate: ValidateFunction, value: unknown): void {
  if (validate(value)) return;
  const e = validate.errors?.[0];
  throw new Error(e ? `does not validate: ${e.instancePath || '(the value)'} ${e.message ?? ''}`.trim() : 'does not validate');
}

export function decodeJsonSchema(validate: ValidateFunction, bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  let plain: unknown;
  try {
    plain = JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  check(validate, plain);
  return parseJson(text);
}

export function encodeJsonSchema(validate: ValidateFunction, value: unknown): Buffer {
  const text = toJson(value);
  check(validate, JSON.parse(text));
  return Buffer.from(text, 'utf8');
}
