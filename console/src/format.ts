// How numbers and times read on the page. Counters are whole numbers with thousands separators
// (the browser tests read them back and compare them with /metrics); rates keep one decimal under 100.

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function count(n: number): string {
  return whole.format(n);
}

export function rate(n: number): string {
  if (!Number.isFinite(n)) return '–';
  return n >= 100 ? whole.format(n) : n.toFixed(n === 0 ? 0 : 1);
}

export function bytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(2)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** Process CPU (seconds per second) as a percentage of one core. */
export function cpu(n: number): string {
  return `${(n * 100).toFixed(1)} %`;
}

export function ms(n: number): string {
  return n >= 100 ? `${Math.round(n)} ms` : `${n.toFixed(1)} ms`;
}

/** A duration in words: 42 s, 5 min, 3 h 20 min, 2 d 4 h. */
export function duration(msec: number): string {
  const s = Math.max(0, Math.round(msec / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

export function ago(at: number, now = Date.now()): string {
  return `${duration(now - at)} ago`;
}

export function time(at: number): string {
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function json(v: unknown): string {
  return JSON.stringify(v, null, 2) ?? 'undefined';
}

/** Hex in lines of 16 bytes with their offset: `0000  7b 22 74 …`. */
export function hexDump(hex: string): string {
  const lines: string[] = [];
  for (let i = 0; i < hex.length; i += 32) {
    const bytes = hex.slice(i, i + 32).match(/../g) ?? [];
    lines.push(`${(i / 2).toString(16).padStart(4, '0')}  ${bytes.join(' ')}`);
  }
  return lines.join('\n');
}
