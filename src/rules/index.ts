// The rule engine's public surface: what the core, the sinks and the CLI import.
export type { CompiledRule, EvalResult, MessageContext, OutputRecord, RuleEvent } from './types.js';
export { compileSql, type CompiledSqlRule } from './compile/compile.js';
export { compileJsonata } from './compile/jsonata.js';
export { createMessageContext, rawPayloadOf } from './compile/context.js';
export { topicMatches, validateTopicFilter, compileTopicFilter } from './topic.js';
export { compileTemplate, templatePaths, templateRoots, templateSyntaxProblem } from './compile/template.js';
export { RuleError, RuleEvalError } from './errors.js';
export { parseRule, parseRuleRecover } from './sql/parser.js';
export { checkSql } from './tools/check.js';
export { FUNCTIONS } from './functions/all.js';
export type { FunctionSpec } from './functions/registry.js';
export { isEventField } from './compile/event-fields.js';
