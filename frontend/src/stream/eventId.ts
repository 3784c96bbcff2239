/**
 * Event ids are Redis stream entry ids ("<milliseconds>-<sequence>"), so they are totally ordered:
 * an event whose id is not after the last one we applied is a replay, and is dropped.
 */

const REDIS_ID = /^(\d+)-(\d+)$/;

/** Negative when a < b, 0 when equal, positive when a > b; null when either is not a stream id. */
export function compareEventIds(a: string, b: string): number | null {
  const ma = REDIS_ID.exec(a);
  const mb = REDIS_ID.exec(b);
  if (!ma || !mb) return null;
  const msA = BigInt(ma[1]!);
  const msB = BigInt(mb[1]!);
  if (msA !== msB) return msA < msB ? -1 : 1;
  const seqA = BigInt(ma[2]!);
  const seqB = BigInt(mb[2]!);
  return seqA === seqB ? 0 : seqA < seqB ? -1 : 1;
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
