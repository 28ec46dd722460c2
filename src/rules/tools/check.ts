// Every problem of a rule at once, for `weir check`: the recovering parser's syntax errors, then
// every call to an unknown or unsupported function, with the wrong number of arguments, or with a
// literal argument the function refuses (a regular expression the linear-time engine cannot run).
import { forEachChild, forEachStatementExpr, type Expr, type Statement } from '../sql/ast.js';
import { compileStatement } from '../compile/compile.js';
import { RuleError, RuleEvalError } from '../errors.js';
import { FUNCTIONS } from '../functions/all.js';
import type { FunctionRegistry } from '../functions/registry.js';
import { UNSUPPORTED } from '../functions/unsupported.js';
import { parseRuleRecover } from '../sql/parser.js';

function callErrors(st: Statement, sql: string, registry: FunctionRegistry): RuleError[] {
  const errors: RuleError[] = [];
  const visit = (e: Expr | undefined): void => {
    if (!e) return;
    if (e.kind === 'call') {
      const spec = registry.get(e.name);
      const lower = e.name.toLowerCase();
      if (!spec) {
        const why = Object.hasOwn(UNSUPPORTED, lower) ? UNSUPPORTED[lower] : undefined;
        errors.push(
          why
            ? new RuleError('rule.unsupported_function', `${e.name}() is not supported by weir: ${why}`, sql, { range: e.nameRange })
            : new RuleError('rule.unknown_function', `unknown function ${e.name}()`, sql, { range: e.nameRange, expected: 'a built-in function name' }),
        );
      } else if (e.args.length < spec.minArgs || e.args.length > spec.maxArgs) {
        errors.push(
          new RuleError('rule.arity', `${spec.name}() does not take ${e.args.length} argument(s): ${spec.signature}`, sql, {
            range: e.range,
            expected: spec.signature,
          }),
        );
      } else {
        for (const [at, check] of Object.entries(spec.literalArgs)) {
          const arg = e.args[Number(at)];
          if (arg?.kind !== 'literal') continue;
          try {
            check(arg.value);
          } catch (err) {
            if (!(err instanceof RuleEvalError)) throw err;
            errors.push(new RuleError(err.code, err.message, sql, { range: arg.range, cause: err }));
          }
        }
      }
    }
    forEachChild(e, visit);
  };
  forEachStatementExpr(st, visit);
  return errors;
}

/** All the errors of a rule (empty when it compiles), in source order. */
export function checkSql(sql: string, registry: FunctionRegistry = FUNCTIONS): RuleError[] {
  const { statement, errors } = parseRuleRecover(sql);
  if (!statement) return errors;
  const calls = callErrors(statement, sql, registry);
  if (calls.length > 0) return calls;
  try {
    compileStatement(statement, sql, registry);
  } catch (err) {
    if (err instanceof RuleError) return [err];
    throw err;
  }
  return [];
}
