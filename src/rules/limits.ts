// Bounds that keep one rule compile and one evaluation finite whatever the SQL or the payload.
// Evaluation has no loops other than FOREACH over data already in memory and the functions: the
// sizes below bound each step (regular expressions run in linear time, functions/regex.ts), and
// the evaluation budget (budget.ts) bounds how many steps one message may take.

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
  /** Longest evaluation of a SQL rule on one message, in milliseconds, before it fails with rule.limit (budget.ts). */
  evaluationBudgetMs: 1_000,
  /**
   * Most work one regular expression call may do: the input's length in UTF-16 units times the
   * pattern's RE2 program size, plus 40 per match a replacement finds (linear-regex.ts). RE2's
   * slowest paths (captures through its NFA, a cold DFA over a program of 2,000 instructions)
   * measured 45-133 ns per unit on the 2-core VM under load, and up to 485 on a first call at a
   * load average of 21 (bench/regex.ts), so a call stays under about a quarter of a second, and
   * under the 1 s evaluation budget on a machine four times as busy. Typical telemetry (a 1 KB
   * string, 30 instructions) is 30,000; a 64 KB payload may take a 30-instruction pattern.
   */
  maxRegexWork: 2_000_000,
  /** Longest regular expression, in characters: compiling one is linear in its length, but 100 KB took 100-400 ms. */
  maxRegexLength: 10_000,
  /** Longest JSONata evaluation, in milliseconds: the evaluation budget (JSONata is asynchronous and checks it itself). */
  jsonataTimeoutMs: 1_000,
  /**
   * jq()'s timeout when the rule gives none: EMQX's rule_engine.jq_function_default_timeout. The
   * process waits while jq runs, so any jq timeout is cut to what is left of the evaluation budget.
   */
  jqTimeoutMs: 10_000,
  /** Longest wait for jq's WebAssembly worker to start, not charged to a call's timeout. */
  jqLoadTimeoutMs: 30_000,
  /** Deepest recursion JSONata may reach. */
  jsonataMaxDepth: 200,
} as const;
