// Bounds that keep one rule compile and one evaluation finite whatever the SQL or the payload.
// Evaluation has no loops other than FOREACH over data already in memory and the functions, so
// bounding the sizes the functions may build bounds the time of an evaluation.

export const LIMITS = {
  /** Longest SQL text accepted, in characters. */
  maxSqlLength: 64 * 1024,
  /** Deepest expression nesting the parser accepts (parentheses, operators, calls). */
  maxDepth: 64,
  /** Most fields in one SELECT or DO list. */
  maxFields: 512,
  /** Longest string or byte string a function may build. */
  maxStringBytes: 4 * 1024 * 1024,
  /** Longest array a range or a function may build. */
  maxArrayLength: 100_000,
  /** Most output records one FOREACH may produce. */
  maxForeachOutputs: 100_000,
  /** Longest JSONata evaluation, in milliseconds (JSONata is the only unbounded evaluator). */
  jsonataTimeoutMs: 1_000,
  /** jq()'s timeout when the rule gives none: EMQX's rule_engine.jq_function_default_timeout. */
  jqTimeoutMs: 10_000,
  /** Longest wait for jq's WebAssembly worker to start, not charged to a call's timeout. */
  jqLoadTimeoutMs: 30_000,
  /** Deepest recursion JSONata may reach. */
  jsonataMaxDepth: 200,
} as const;
