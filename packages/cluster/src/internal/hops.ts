/**
 * Which owner's hop listener the direct hop takes for each shard (see
 * DirectHop.ts): learned from the owners' `Locate` answers and the sessions'
 * rows, forgotten when
 * an owner refuses a hop (its shard moved) or cannot be connected to (it is
 * gone; every shard it held is forgotten at once, and remembered as one whose
 * owner is gone until its next owner names itself).
 */
import * as DirectHop from "../DirectHop.ts"

/** The hop targets of the shards whose owner named one. */
export class Hops {
  private readonly targets = new Map<string, DirectHop.Target>()
  /** Shards whose last known owner could not be connected to: nothing sent now can reach it. */
  private readonly gone = new Set<string>()
  /** Shards for which a session's row named no process to hop to: not read again until an owner names itself. */
  private readonly unnamed = new Set<string>()

  /** The owner's hop listener for `shard`, if known. */
  get(shard: string): DirectHop.Target | undefined {
    return this.targets.get(shard)
  }

  /** An owner of `shard` named its hop (`via`, encoded: a `Locate` answer or a session's row). */
  learn(shard: string, via: string | undefined): void {
    const target = DirectHop.decodeTarget(via)
    if (target !== undefined) {
      this.targets.set(shard, target)
      this.gone.delete(shard)
      this.unnamed.delete(shard)
    }
  }

  /** Whether a session's row may name the holder of `shard` (no row read found none, and no owner is known). */
  mayName(shard: string): boolean {
    return !this.gone.has(shard) && !this.unnamed.has(shard)
  }

  /** A session's row of `shard` named no process to hop to (its holder has no hop). */
  noName(shard: string): void {
    this.unnamed.add(shard)
  }

  /** The owner no longer holds `shard`. */
  refused(shard: string): void {
    this.targets.delete(shard)
  }

  /** Nothing listens at `origin` any more: its runner is gone. */
  unreachable(origin: string): void {
    for (const [shard, target] of this.targets) {
      if (target.origin !== origin) continue
      this.targets.delete(shard)
      this.gone.add(shard)
    }
  }
}
