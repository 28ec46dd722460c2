// The `${path}` templates of a rule's actions, held against the rule before anything runs: a
// template that cannot be read (`${sensr`, stored as its own text) is an error, and so is a name
// that can only ever be missing. A sink's spec marks its template settings (TEMPLATE in
// common-spec.ts), so this walks any sink's action without knowing the sink.
import type { TSchema } from '@sinclair/typebox';
import { ConfigError } from '../errors.js';
import { isEventField, templateRoots, templateSyntaxProblem } from '../rules/index.js';
import { TEMPLATE } from './common-spec.js';
import { locate, type YamlSource } from './yaml-source.js';

/** One template setting of an action: where it is below the action, and its text. */
interface TemplateAt {
  readonly path: ReadonlyArray<string | number>;
  readonly text: string;
}

/** The template settings in `value`, found through the schema it was validated against. */
export function templatesIn(schema: TSchema, value: unknown, path: ReadonlyArray<string | number> = []): TemplateAt[] {
  if ((schema as unknown as Record<symbol, unknown>)[TEMPLATE] === true) return typeof value === 'string' ? [{ path, text: value }] : [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const out: TemplateAt[] = [];
  const props = (schema.properties ?? {}) as Record<string, TSchema>;
  const pattern = Object.values((schema.patternProperties ?? {}) as Record<string, TSchema>)[0];
  for (const [k, v] of Object.entries(value)) {
    const sub = Object.hasOwn(props, k) ? props[k] : pattern;
    if (sub) out.push(...templatesIn(sub, v, [...path, k]));
  }
  return out;
}

/** What a rule's output is known to hold, for holding its templates against it. */
export type RuleOutput =
  /** A SQL rule: every output has exactly these root names (CompiledSqlRule.outputNames). */
  | { readonly kind: 'sql'; readonly names: ReadonlySet<string> }
  /** A JSONata rule: its result decides; only the expression's text can be read for a name. */
  | { readonly kind: 'jsonata'; readonly expression: string };

/**
 * Checks one action's templates: syntax errors and, for SQL, names that are neither selected nor
 * event fields go to `errors`; for JSONata such a name is only a warning when the expression's
 * text does not mention it (its result may still make the key).
 */
export function checkTemplates(
  schema: TSchema,
  settings: unknown,
  output: RuleOutput,
  where: { readonly src: YamlSource; readonly action: number },
  errors: ConfigError[],
  warnings: ConfigError[],
): void {
  const { src, action } = where;
  for (const t of templatesIn(schema, settings)) {
    const at = ['actions', action, ...t.path];
    const place = { file: src.file, ...locate(src, at), path: at.join('.') };
    const bad = templateSyntaxProblem(t.text);
    if (bad) {
      errors.push(new ConfigError('config.template_syntax', bad.message, place));
      continue;
    }
    for (const name of new Set(templateRoots(t.text))) {
      // `metadata` is the rule's, not the message's: a template reads it only when selected.
      if (isEventField(name) && name !== 'metadata') continue;
      if (output.kind === 'sql') {
        if (output.names.has(name)) continue;
        const selected = [...output.names].filter((n) => !isEventField(n));
        const hint = selected.length ? ` (the rule selects: ${selected.join(', ')})` : '';
        errors.push(
          new ConfigError(
            'config.template_name',
            `\${${name}} is neither selected by the rule's SQL nor an event field, so it would always be missing${hint}`,
            place,
          ),
        );
      } else if (!output.expression.includes(name)) {
        warnings.push(
          new ConfigError(
            'config.template_name',
            `\${${name}} is not an event field and the JSONata expression does not mention it: it is missing unless the result has that key`,
            place,
          ),
        );
      }
    }
  }
}
