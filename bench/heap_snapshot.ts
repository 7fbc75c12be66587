/**
 * Reading a V8 heap snapshot (.heapsnapshot JSON, as the DevTools protocol's HeapProfiler.takeHeapSnapshot
 * writes it) for bench/heap_per_stream.ts: objects grouped by constructor with their count and self size, and
 * the retained size of each group (through the dominator tree).
 *
 * The format: `snapshot.meta` names the fields of each node (type, name, id, self_size, edge_count, …) and of
 * each edge (type, name_or_index, to_node); `nodes` and `edges` are flat number arrays of those fields, a node's
 * edges are the next `edge_count` edges after the previous node's, `to_node` is an index into `nodes`, and
 * names are indices into `strings`. Node 0 is the synthetic root.
 */

interface Raw {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Heap {
  nodeCount: number;
  /** Group of each node (index into `groups`). */
  group: Uint32Array;
  selfSize: Float64Array;
  /** A group per constructor (objects), function (closures) or kind (strings, arrays, code, native…). */
  groups: string[];
  /** Edges in CSR form: node i's targets are `edgeTo[edgeStart[i] .. edgeStart[i + 1])`. */
  edgeStart: Uint32Array;
  edgeTo: Uint32Array;
  /** Whether the edge retains (weak edges do not). */
  edgeStrong: Uint8Array;
  /** Whether the edge is a named property (not an element, a closure variable or an internal field). */
  edgeProperty: Uint8Array;
  /** Each edge's name (a property or variable) or index. */
  edgeName: (i: number) => string;
}

export function parseHeap(text: string): Heap {
  const raw = JSON.parse(text) as Raw;
  const meta = raw.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [fType, fName, fSelf, fEdges] = ["type", "name", "self_size", "edge_count"].map((f) =>
    meta.node_fields.indexOf(f)
  ) as [number, number, number, number];
  const [eType, eName, eTo] = ["type", "name_or_index", "to_node"].map((f) =>
    meta.edge_fields.indexOf(f)
  ) as [
    number,
    number,
    number,
  ];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const weak = edgeTypes.indexOf("weak");
  const property = edgeTypes.indexOf("property");
  const nameless = new Set(["element", "hidden"].map((t) => edgeTypes.indexOf(t)));
  const n = raw.nodes.length / nf;
  const groupIds = new Map<string, number>();
  const groups: string[] = [];
  const group = new Uint32Array(n);
  const selfSize = new Float64Array(n);
  const edgeStart = new Uint32Array(n + 1);
  const m = raw.edges.length / ef;
  const edgeTo = new Uint32Array(m);
  const edgeStrong = new Uint8Array(m);
  const edgeProperty = new Uint8Array(m);
  let e = 0;
  for (let i = 0; i < n; i++) {
    const base = i * nf;
    const key = groupOf(nodeTypes[raw.nodes[base + fType]!]!, raw.strings[raw.nodes[base + fName]!]!);
    let g = groupIds.get(key);
    if (g === undefined) {
      g = groups.length;
      groups.push(key);
      groupIds.set(key, g);
    }
    group[i] = g;
    selfSize[i] = raw.nodes[base + fSelf]!;
    edgeStart[i] = e;
    const count = raw.nodes[base + fEdges]!;
    for (let k = 0; k < count; k++, e++) {
      edgeTo[e] = raw.edges[e * ef + eTo]! / nf;
      edgeStrong[e] = raw.edges[e * ef + eType] === weak ? 0 : 1;
      edgeProperty[e] = raw.edges[e * ef + eType] === property ? 1 : 0;
    }
  }
  edgeStart[n] = e;
  return {
    nodeCount: n,
    group,
    selfSize,
    groups,
    edgeStart,
    edgeTo,
    edgeStrong,
    edgeProperty,
    edgeName: (i) => {
      const v = raw.edges[i * ef + eName]!;
      return nameless.has(raw.edges[i * ef + eType]!) ? `[${v}]` : raw.strings[v]!;
    },
  };
}

/** The group of a node: objects by constructor, closures by function, the rest by kind. */
function groupOf(type: string, name: string): string {
  switch (type) {
    case "object":
      return name;
    case "closure":
      return `${name || "(anonymous)"}()`;
    case "string":
    case "concatenated string":
    case "sliced string":
      return "(string)";
    case "array":
    case "hidden":
    case "native":
      // Contexts ("system / Context"), backing stores ("system / JSArrayBufferData"), element arrays.
      return `(${type}) ${name.replace(/ \/ .*@.*/, "")}`;
    default:
      return `(${type})`;
  }
}

export interface GroupStat {
  count: number;
  self: number;
}

/** Count and self size per group. */
export function groupStats(h: Heap): Map<string, GroupStat> {
  const out = new Map<string, GroupStat>();
  for (let i = 0; i < h.nodeCount; i++) {
    const name = h.groups[h.group[i]!]!;
    const s = out.get(name) ?? { count: 0, self: 0 };
    s.count++;
    s.self += h.selfSize[i]!;
    out.set(name, s);
  }
  return out;
}

/**
 * Immediate dominator of every node reachable from the root over strong edges (Cooper, Harvey, Kennedy: "A
 * Simple, Fast Dominance Algorithm"), and each node's retained size (itself and everything it dominates).
 * Unreachable nodes get dominator -1 and retained size 0.
 */
export function dominators(h: Heap): { idom: Int32Array; retained: Float64Array; postorder: Uint32Array } {
  const n = h.nodeCount;
  // Post-order numbering by an iterative DFS from the root (node 0).
  const order = new Int32Array(n).fill(-1); // post-order number of each node
  const postorder = new Uint32Array(n); // node at each post-order number
  const visited = new Uint8Array(n);
  const stackNode = new Uint32Array(n);
  const stackEdge = new Uint32Array(n);
  let sp = 0, count = 0;
  stackNode[0] = 0;
  stackEdge[0] = h.edgeStart[0]!;
  visited[0] = 1;
  sp = 1;
  while (sp > 0) {
    const v = stackNode[sp - 1]!;
    let e = stackEdge[sp - 1]!;
    const end = h.edgeStart[v + 1]!;
    while (e < end && (!h.edgeStrong[e] || visited[h.edgeTo[e]!])) e++;
    if (e < end) {
      stackEdge[sp - 1] = e + 1;
      const w = h.edgeTo[e]!;
      visited[w] = 1;
      stackNode[sp] = w;
      stackEdge[sp] = h.edgeStart[w]!;
      sp++;
    } else {
      sp--;
      order[v] = count;
      postorder[count++] = v;
    }
  }
  // Predecessors (strong edges, reachable sources) in CSR form.
  const predCount = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) {
    if (!visited[v]) continue;
    for (let e = h.edgeStart[v]!; e < h.edgeStart[v + 1]!; e++) {
      if (h.edgeStrong[e]) predCount[h.edgeTo[e]! + 1]!++;
    }
  }
  for (let i = 0; i < n; i++) predCount[i + 1]! += predCount[i]!;
  const predStart = predCount.slice();
  const pred = new Uint32Array(predCount[n]!);
  const fill = predCount.slice(0, n);
  for (let v = 0; v < n; v++) {
    if (!visited[v]) continue;
    for (let e = h.edgeStart[v]!; e < h.edgeStart[v + 1]!; e++) {
      if (h.edgeStrong[e]) pred[fill[h.edgeTo[e]!]!++] = v;
    }
  }
  // idom over post-order numbers; the root is the highest number.
  const root = count - 1;
  const dom = new Int32Array(count).fill(-1);
  dom[root] = root;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (a < b) a = dom[a]!;
      while (b < a) b = dom[b]!;
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let po = root - 1; po >= 0; po--) {
      const v = postorder[po]!;
      let nd = -1;
      for (let k = predStart[v]!; k < predStart[v + 1]!; k++) {
        const p = order[pred[k]!]!;
        if (dom[p] === -1) continue;
        nd = nd === -1 ? p : intersect(p, nd);
      }
      if (nd !== -1 && dom[po] !== nd) {
        dom[po] = nd;
        changed = true;
      }
    }
  }
  const idom = new Int32Array(n).fill(-1);
  const retained = new Float64Array(n);
  for (let po = 0; po < count; po++) {
    const v = postorder[po]!;
    idom[v] = postorder[dom[po]!]!;
    retained[v]! += h.selfSize[v]!;
    // Children come before their dominator in post-order, so a node's total is complete when it is reached.
    if (po !== root) retained[idom[v]!]! += retained[v]!;
  }
  return { idom, retained, postorder: postorder.subarray(0, count) };
}

/**
 * Plain objects (`group`, default `Object`) counted by their shape: the names of their first properties, which
 * tell a request's body from its IR or an options bag.
 */
export function objectShapes(h: Heap, group = "Object"): Map<string, number> {
  const out = new Map<string, number>();
  for (let v = 0; v < h.nodeCount; v++) {
    if (h.groups[h.group[v]!] !== group) continue;
    const names: string[] = [];
    for (let e = h.edgeStart[v]!; e < h.edgeStart[v + 1]! && names.length < 8; e++) {
      if (h.edgeProperty[e] && h.edgeName(e) !== "__proto__") names.push(h.edgeName(e));
    }
    const key = names.join(", ") || "(no properties)";
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/**
 * Per group, the retained size of its objects (each counted once: the topmost of its group on its dominator
 * chain) and one instance's chain of dominators (their groups, nearest first).
 */
export function retainedByGroup(h: Heap): Map<string, { retained: number; chain: string[] }> {
  const { idom, retained } = dominators(h);
  const out = new Map<string, { retained: number; chain: string[] }>();
  for (let v = 0; v < h.nodeCount; v++) {
    if (idom[v] === -1) continue;
    let nested = false;
    for (let up = idom[v]!, k = 0; k < 50 && up !== 0 && !nested; k++, up = idom[up]!) {
      nested = h.group[up] === h.group[v];
    }
    if (nested) continue;
    const g = h.groups[h.group[v]!]!;
    let s = out.get(g);
    if (!s) {
      const chain: string[] = [];
      for (let up = idom[v]!, k = 0; up > 0 && k < 6; up = idom[up]!, k++) {
        chain.push(h.groups[h.group[up]!]!);
      }
      out.set(g, s = { retained: 0, chain });
    }
    s.retained += retained[v]!;
  }
  return out;
}
