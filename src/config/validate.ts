// Validates one part of a YAML document against its TypeBox schema: fills defaults, converts
// interpolated strings to the numbers and booleans the schema wants, and turns each violation into
// a ConfigError that names the file, line, column, key and what was expected.
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { ConfigError } from '../errors.js';
import { didYouMean } from './did-you-mean.js';
import { locate, locateKey, type YamlSource } from './yaml-source.js';

export function validatePart<T>(schema: TSchema, value: unknown, src: YamlSource, base: ReadonlyArray<string | number>): { value: T; errors: ConfigError[] } {
  const shapeErrors = wrongShapes(schema, value, []);
  // What Value.Default made of a wrong shape is not a further mistake.
  const underWrongShape = (pointer: string) => shapeErrors.some((w) => `${pointer}/`.startsWith(`/${w.rel.join('/')}/`));
  const shapes = shapeErrors.map(({ rel, expected, got }) => {
    const path = [...base, ...rel];
    return new ConfigError('config.invalid_value', `expected ${expected}, got ${got}`, { file: src.file, ...locate(src, path), path: path.join('.') });
  });
  const withDefaults = Value.Default(schema, structuredClone(value ?? {}));
  const converted = Value.Convert(schema, withDefaults);
  const all = [...Value.Errors(schema, converted)];
  // A misspelled key is one mistake, not two: 'ulr' is reported with "did you mean 'url'?", and
  // the required 'url' it was meant to be is not reported missing.
  const meant = new Map<ValueError, string>();
  for (const err of all) {
    if (!isUnknownKey(err)) continue;
    const guess = didYouMean(err.path.slice(err.path.lastIndexOf('/') + 1), Object.keys((err.schema as { properties?: object }).properties ?? {}));
    if (guess !== undefined) meant.set(err, `${err.path.slice(0, err.path.lastIndexOf('/'))}/${guess}`);
  }
  const misspelled = new Set(meant.values());
  const errors: ConfigError[] = [];
  const seen = new Set<string>();
  for (const err of all) {
    // A union reports one error per branch and one for itself; keep the first per path.
    if (seen.has(err.path) || underWrongShape(err.path)) continue;
    seen.add(err.path);
    if (err.type === ValueErrorType.ObjectRequiredProperty && misspelled.has(err.path)) continue;
    const rel = err.path.split('/').slice(1).map(unescapePointer);
    const path = [...base, ...rel];
    const unknownKey = isUnknownKey(err);
    const where = unknownKey ? locateKey(src, path) : locate(src, path);
    const guess = meant.get(err);
    const hint = guess === undefined ? '' : `, did you mean '${unescapePointer(guess.slice(guess.lastIndexOf('/') + 1))}'?`;
    errors.push(
      new ConfigError(unknownKey ? 'config.unknown_key' : 'config.invalid_value', describe(err, rel) + hint, {
        file: src.file,
        ...where,
        path: path.join('.'),
      }),
    );
  }
  return { value: converted as T, errors: [...shapes, ...errors] };
}

/**
 * A mapping where the schema wants a list, or a list where it wants a mapping. TypeBox's
 * Value.Default merges either into the key's default (`actions:` written as a mapping became an
 * empty list, a rule without actions that passed), so they are found before it runs.
 */
function wrongShapes(schema: TSchema, value: unknown, rel: string[]): Array<{ rel: string[]; expected: string; got: string }> {
  if (value === null || typeof value !== 'object') return [];
  const s = schema as TSchema & { type?: string; items?: TSchema; properties?: Record<string, TSchema> };
  if (s.type === 'array') {
    if (!Array.isArray(value)) return [{ rel, expected: 'a list (one "- " item per line)', got: 'a mapping' }];
    return s.items ? value.flatMap((v, i) => wrongShapes(s.items!, v, [...rel, String(i)])) : [];
  }
  if (s.type === 'object' && s.properties) {
    if (Array.isArray(value)) return [{ rel, expected: 'a mapping (key: value)', got: 'a list' }];
    return Object.entries(s.properties).flatMap(([k, sub]) => wrongShapes(sub, (value as Record<string, unknown>)[k], [...rel, k]));
  }
  return [];
}

function isUnknownKey(err: ValueError): boolean {
  return err.type === ValueErrorType.ObjectAdditionalProperties || err.message === 'Unexpected property';
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

function describe(err: ValueError, rel: string[]): string {
  const got = err.value === undefined ? 'nothing' : JSON.stringify(err.value);
  const s = err.schema as TSchema & { anyOf?: TSchema[]; const?: unknown; minimum?: number; maximum?: number; pattern?: string; description?: string };
  switch (err.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return `unknown key '${rel.at(-1)}'`;
    case ValueErrorType.ObjectRequiredProperty:
      return `required key missing${s.description ? ` (${s.description})` : ''}`;
    case ValueErrorType.Union: {
      const options = (s.anyOf ?? []).map((o) => (o as { const?: unknown }).const).filter((c) => c !== undefined);
      if (options.length) return `expected one of ${options.map((o) => JSON.stringify(o)).join(', ')}, got ${got}`;
      return `expected ${(s.anyOf ?? []).map((o) => o[Kind]).join(' or ')}, got ${got}`;
    }
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `expected a number >= ${s.minimum}, got ${got}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `expected a number <= ${s.maximum}, got ${got}`;
    case ValueErrorType.StringPattern: {
      const eg = (s as { examples?: unknown[] }).examples?.[0];
      return `expected text matching ${s.pattern}, got ${got}${typeof eg === 'string' ? `, e.g. ${eg}` : ''}`;
    }
    default:
      if (err.message === 'Unexpected property') return `unknown key '${rel.at(-1)}'`;
      return `${err.message.replace(/^Expected/, 'expected')}, got ${got}`;
  }
}
