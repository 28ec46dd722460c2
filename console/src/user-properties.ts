// User properties as the Try it form takes them: `name=value`, one a line (MQTT 5 user properties are
// strings; a value may hold `=` and spaces, kept as typed).

/** `name=value` lines → user properties; a line without `=` is an error naming it. */
export function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`user properties, line ${i + 1}: write name=value`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1);
  });
  return out;
}
