// The rule engine's public surface: what the core, the sinks and the CLI import.
export type { CompiledRule, EvalResult, MessageContext, OutputRecord, RuleEvent } from './types.js';
export { compileSql, type CompiledSqlRule } from './compile.js';
export { compileJsonata } from './jsonata.js';
export { createMessageContext, rawPayloadOf } from './context.js';
export { topicMatches, validateTopicFilter, compileTopicFilter } from './topic.js';
export { compileTemplate, templatePaths, templateRoots, templateSyntaxProblem } from './template.js';
export { RuleError, RuleEvalError } from './errors.js';
export { parseRule, parseRuleRecover } from './parser.js';
export { checkSql } from './check.js';
export { FUNCTIONS } from './functions/all.js';
export type { FunctionSpec } from './functions/registry.js';
export { isEventField } from './event-fields.js';
