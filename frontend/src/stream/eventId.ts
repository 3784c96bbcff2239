/**
 * Event ids name a place in a Redis stream whose entries each hold a batch of events: "<ms>-<seq>.<index>" for
 * an event inside an entry, "<ms>-<seq>" (the entry id itself) for the last event of an entry. They are totally
 * ordered by (ms, seq, index), the entry id itself last of its entry: an event whose id is not after the last one
 * we applied is a replay, and is dropped.
 */

const REDIS_ID = /^(\d+)-(\d+)(?:\.(\d+))?$/;
const LAST_OF_ENTRY = BigInt(2) ** BigInt(62);

function parts(m: RegExpExecArray): bigint[] {
  return [BigInt(m[1]!), BigInt(m[2]!), m[3] === undefined ? LAST_OF_ENTRY : BigInt(m[3])];
}

/** Negative when a < b, 0 when equal, positive when a > b; null when either is not a stream id. */
export function compareEventIds(a: string, b: string): number | null {
  const ma = REDIS_ID.exec(a);
  const mb = REDIS_ID.exec(b);
  if (!ma || !mb) return null;
  const pa = parts(ma);
  const pb = parts(mb);
  for (let i = 0; i < 3; i++) {
    if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  }
  return 0;
}

/**
 * Remembers what was applied. Ordered ids are compared with the last one; ids of any other shape
 * fall back to a bounded set of seen ids.
 */
export class EventIdTracker {
  private seen = new Set<string>();

  constructor(public last: string | null = null) {}

  /** True when `id` was not applied yet; records it. Events without an id are always new. */
  accept(id: string | null): boolean {
    if (id === null || id === "") return true;
    if (this.last !== null) {
      const order = compareEventIds(id, this.last);
      if (order !== null) {
        if (order <= 0) return false;
        this.last = id;
        return true;
      }
    }
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    if (this.seen.size > 5000) this.seen.delete(this.seen.values().next().value as string);
    this.last = id;
    return true;
  }
}
