// The whole error catalogue, composed in one place: the core's sections (src/error-codes.ts) and a
// 'Sinks' section of every registered sink's codes (each declared in src/sinks/<type>/errors.ts),
// in the order of sinks/all.ts. docs/errors.md is generated from it (src/errors-doc.ts).
import { CORE_ERROR_SECTIONS, type ErrorSection } from '../error-codes.js';
import { ALL_SINK_TYPES } from './all.js';

export const ERROR_SECTIONS: readonly ErrorSection[] = [
  ...CORE_ERROR_SECTIONS,
  { title: 'Sinks', codes: Object.assign({}, ...ALL_SINK_TYPES.map((t) => t.errorCodes ?? {})) },
];
