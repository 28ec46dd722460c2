// Every built-in function, declared once with its signature and examples. The compiler resolves
// names and checks arity here; one test runs every example; the docs' function table is generated
// from the same list.

export type Family =
  | 'message'
  | 'math'
  | 'type'
  | 'string'
  | 'map'
  | 'array'
  | 'hash'
  | 'encode'
  | 'bits'
  | 'compress'
  | 'json'
  | 'time'
  | 'misc'
  | 'jq'
  | 'jsonata'
  | 'schema';

export interface Example {
  /** An SQL expression, evaluated as `SELECT <call> AS r FROM "#"` over the example event. */
  readonly call: string;
  /** The expected value of r (compared as JSON; undefined means the field is absent). */
  readonly result?: unknown;
  /** For volatile functions: the expected type name instead of a value. */
  readonly type?: string;
  /** The example is expected to fail with an evaluation error. */
  readonly error?: true;
}

export interface FunctionSpec {
  readonly name: string;
  readonly family: Family;
  /** `substr(string, int, int?): string` — `?` marks optional, `...` a variadic tail. */
  readonly signature: string;
  readonly summary: string;
  readonly minArgs: number;
  readonly maxArgs: number;
  /** Called with the evaluated arguments (and the Scope first when `scoped`). */
  // biome-ignore lint/suspicious/noExplicitAny: each function checks its own arguments (args.ts); the registry holds them all.
  readonly fn: (...args: any[]) => unknown;
  readonly scoped: boolean;
  /** Not a function of its arguments alone (time, randomness): never folded at compile time. */
  readonly volatile: boolean;
  /** Returns a Promise (jsonata): the rule becomes asynchronous. */
  readonly async: boolean;
  /** Run when a rule calling the function is compiled (jq starts its WebAssembly worker then). */
  readonly prepare: (() => void) | undefined;
  /** Checks of arguments written as literals, run when the rule is compiled (see DefOptions). */
  readonly literalArgs: Readonly<Record<number, (value: unknown) => void>>;
  readonly examples: readonly Example[];
}

export interface DefOptions {
  readonly scoped?: boolean;
  readonly volatile?: boolean;
  readonly async?: boolean;
  readonly prepare?: () => void;
  /**
   * By argument position (0-based): a check of that argument when the SQL writes it as a literal,
   * run when the rule is compiled; it throws the RuleEvalError the call would fail with (a regular
   * expression the engine refuses), which becomes a compile error at the literal.
   */
  readonly literalArgs?: Readonly<Record<number, (value: unknown) => void>>;
  readonly examples?: readonly Example[];
  /** Other names of the same function (EMQX keeps some for compatibility: mget, mput…). */
  readonly aliases?: readonly string[];
}

/** Declares one function from its signature; arity comes from the signature. */
// biome-ignore lint/suspicious/noExplicitAny: each function checks its own arguments (args.ts); the registry holds them all.
export function def(family: Family, signature: string, summary: string, fn: (...args: any[]) => unknown, opts: DefOptions = {}): FunctionSpec[] {
  const m = /^([a-z_0-9]+)\((.*)\)\s*:\s*(.+)$/.exec(signature);
  if (!m) throw new Error(`bad signature: ${signature}`);
  const name = m[1] as string;
  const params = (m[2] as string)
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  let minArgs = 0;
  let maxArgs = 0;
  for (const p of params) {
    if (p.endsWith('...')) {
      maxArgs = Infinity;
      if (!p.endsWith('?...')) minArgs++;
    } else {
      maxArgs++;
      if (!p.endsWith('?')) minArgs++;
    }
  }
  const base = {
    family,
    signature,
    summary,
    minArgs,
    maxArgs,
    fn,
    scoped: opts.scoped ?? false,
    volatile: opts.volatile ?? false,
    async: opts.async ?? false,
    prepare: opts.prepare,
    literalArgs: opts.literalArgs ?? {},
    examples: opts.examples ?? [],
  };
  const specs: FunctionSpec[] = [{ name, ...base }];
  for (const alias of opts.aliases ?? []) {
    specs.push({
      ...base,
      name: alias,
      signature: signature.replace(name, alias),
      summary: `${name} under an older EMQX name, behaving as ${name}.`,
      examples: [],
    });
  }
  return specs;
}

export class FunctionRegistry {
  private readonly byName = new Map<string, FunctionSpec>();

  constructor(specs: Iterable<FunctionSpec>) {
    for (const s of specs) {
      if (this.byName.has(s.name)) throw new Error(`function ${s.name} declared twice`);
      this.byName.set(s.name, s);
    }
  }

  /** Function names are matched case-insensitively (EMQX's are lower case). */
  get(name: string): FunctionSpec | undefined {
    return this.byName.get(name.toLowerCase());
  }

  all(): FunctionSpec[] {
    return [...this.byName.values()];
  }

  /** This registry with some functions declared anew (the schema functions bound to weir.yaml's schemas). */
  with(specs: Iterable<FunctionSpec>): FunctionRegistry {
    const replaced = new Map([...specs].map((s) => [s.name, s]));
    return new FunctionRegistry([...this.all().filter((s) => !replaced.has(s.name)), ...replaced.values()]);
  }
}
