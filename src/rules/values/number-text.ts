// Numbers to and from text as EMQX does it: number() parsing, and how a float prints in str().
import { RuleEvalError } from '../errors.js';
import { float, type WholeFloat } from './floats.js';

/** EMQX's number(): an integer text, else a float text (`1.5`, `1.0e3`); anything else throws. */
export function parseNumber(s: string): number | WholeFloat {
  const t = s.trim();
  if (/^[+-]?\d+$/.test(t)) return Number(t);
  if (/^[+-]?\d+\.\d+([eE][+-]?\d+)?$/.test(t) || /^[+-]?\d+[eE][+-]?\d+$/.test(t)) return float(Number(t));
  throw new RuleEvalError('rule.type_error', `cannot convert ${JSON.stringify(s)} to a number`);
}

/** Floats as EMQX prints them: up to 10 decimals, trailing zeros dropped. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n) || !Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 1e21 || Math.abs(n) < 1e-10) return String(n);
  let s = n.toFixed(10);
  s = s.replace(/0+$/, '');
  if (s.endsWith('.')) s += '0';
  return s;
}
