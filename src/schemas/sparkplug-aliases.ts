// Sparkplug B metric aliases: an edge node names its metrics once, in its NBIRTH (and each
// device's DBIRTH), with an alias number beside each name; its NDATA/DDATA then send the alias
// alone. Held here per edge node (namespace/group/edge node), the last birth replacing the
// previous one, so that a rule's spb_decode gives NDATA/DDATA metrics their names as it gives
// NBIRTH's. Bounded: at most `maxEdgeNodes` edge nodes, the least recently seen forgotten first
// (counted in `evicted`); a forgotten node's data keeps its aliases without names until its next
// birth. A device's DDATA reads its DBIRTH's aliases, then its edge node's (the specification
// makes aliases unique per edge node).
//
// The state is this process's: every MQTT connection of one weir shares it. With several replicas
// in one share group a birth reaches one of them only; see docs/rules.md (Sparkplug B).

type AliasMap = Map<number, string>;

interface EdgeNode {
  node: AliasMap | undefined;
  devices: Map<string, AliasMap>;
}

export type SparkplugKind = 'NBIRTH' | 'NDATA' | 'NDEATH' | 'DBIRTH' | 'DDATA' | 'DDEATH' | 'NCMD' | 'DCMD' | 'STATE';

export interface SparkplugTopic {
  readonly edgeNode: string;
  readonly kind: string;
  readonly device: string | undefined;
}

/** `spBv1.0/<group>/<type>/<edge node>[/<device>]` → its parts; undefined for other topics. */
export function parseSparkplugTopic(topic: string): SparkplugTopic | undefined {
  const parts = topic.split('/');
  if (parts.length < 4 || parts.length > 5) return undefined;
  const [ns, group, kind, edge, device] = parts as [string, string, string, string, string | undefined];
  return { edgeNode: `${ns}/${group}/${edge}`, kind, device };
}

export class SparkplugAliases {
  private readonly nodes = new Map<string, EdgeNode>();
  evicted = 0;

  constructor(readonly maxEdgeNodes = 100_000) {}

  get edgeNodes(): number {
    return this.nodes.size;
  }

  /** Records a birth's aliases, or answers the map a data message's aliases resolve with. */
  observe(topic: string, metrics: readonly Record<string, unknown>[]): ((alias: number) => string | undefined) | undefined {
    const t = parseSparkplugTopic(topic);
    if (t === undefined) return undefined;
    if (t.kind === 'NBIRTH' || t.kind === 'DBIRTH') {
      const map: AliasMap = new Map();
      for (const m of metrics) if (typeof m.alias === 'number' && typeof m.name === 'string') map.set(m.alias, m.name);
      // A new NBIRTH starts a new session of the edge node: its devices are born again after it.
      const entry = t.kind === 'NBIRTH' ? { node: map, devices: new Map() } : (this.touch(t.edgeNode) ?? { node: undefined, devices: new Map() });
      if (t.kind === 'DBIRTH') entry.devices.set(t.device ?? '', map);
      this.put(t.edgeNode, entry);
      return undefined;
    }
    if (t.kind !== 'NDATA' && t.kind !== 'DDATA') return undefined;
    const entry = this.touch(t.edgeNode);
    if (entry === undefined) return undefined;
    const device = t.kind === 'DDATA' ? entry.devices.get(t.device ?? '') : undefined;
    const node = entry.node;
    return (alias) => device?.get(alias) ?? node?.get(alias);
  }

  /** The entry of an edge node, made the most recently used. */
  private touch(key: string): EdgeNode | undefined {
    const entry = this.nodes.get(key);
    if (entry !== undefined) {
      this.nodes.delete(key);
      this.nodes.set(key, entry);
    }
    return entry;
  }

  private put(key: string, entry: EdgeNode): void {
    this.nodes.delete(key);
    this.nodes.set(key, entry);
    while (this.nodes.size > this.maxEdgeNodes) {
      const oldest = this.nodes.keys().next().value as string;
      this.nodes.delete(oldest);
      this.evicted++;
    }
  }
}
