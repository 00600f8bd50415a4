/**
 * The synchronous part of fault injection for one direction: which frames to
 * drop, duplicate, hold back or delay. Every selector sees every frame, in
 * order, whatever the others decide, so a seeded selector draws the same
 * numbers whichever faults are combined with it.
 */
import type * as Duration from "effect/Duration"
import type * as Transport from "@effect-mcp/engine/Transport"

/**
 * Which frames a fault applies to. Indices count the frames entering the
 * direction, from 0; `every: n` picks the n-th, 2n-th, ... (1-based: frames
 * n-1, 2n-1, ... by index).
 */
export type Selector<F> =
  | "all"
  | { readonly every: number }
  | { readonly at: ReadonlyArray<number> }
  | { readonly when: (frame: F, index: number) => boolean }
  /** Each frame with this probability, from a PRNG seeded with `seed`: the same seed picks the same frames. */
  | { readonly random: { readonly probability: number; readonly seed: number } }

export interface Faults<F> {
  /** Frames that vanish. */
  readonly drop?: Selector<F> | undefined
  /** Frames delivered twice in a row. */
  readonly duplicate?: Selector<F> | undefined
  /** Frames held back until `by` (default 1: swap with the next) later frames have passed. */
  readonly reorder?: { readonly select: Selector<F>; readonly by?: number | undefined } | undefined
  /**
   * Frames delivered `duration` of Clock time after they entered. Order is
   * kept: a frame behind a delayed one waits for it, as on a slow link.
   */
  readonly delay?: { readonly duration: Duration.Input; readonly select?: Selector<F> | undefined } | undefined
  /**
   * The connection ends once `after` frames of this direction have been
   * delivered: incoming ends (or fails with `error`), sends fail with `error`
   * (default reason `Closed`), and the wrapped transport is closed if it can be.
   */
  readonly cut?: { readonly after: number; readonly error?: Transport.TransportError | undefined } | undefined
}

export type Fault = "drop" | "duplicate" | "reorder" | "delay" | "cut"

/** A frame on its way out of the stage. */
export interface Passed<T> {
  readonly item: T
  readonly index: number
  readonly delayed: boolean
}

export interface Stage<T> {
  /** Takes one frame in; returns the frames that leave now, in order. */
  readonly push: (item: T) => ReadonlyArray<Passed<T>>
  /** Releases every held-back frame (end of stream). */
  readonly flush: () => ReadonlyArray<Passed<T>>
}

// mulberry32: tiny, seedable, and plenty for choosing frames.
const prng = (seed: number) => {
  let state = seed >>> 0
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const compile = <F>(selector: Selector<F> | undefined): ((frame: F, index: number) => boolean) => {
  if (selector === undefined) return () => false
  if (selector === "all") return () => true
  if ("every" in selector) {
    const n = selector.every
    return (_, index) => n > 0 && (index + 1) % n === 0
  }
  if ("at" in selector) {
    const set = new Set(selector.at)
    return (_, index) => set.has(index)
  }
  if ("when" in selector) return selector.when
  const next = prng(selector.random.seed)
  const probability = selector.random.probability
  return () => next() < probability
}

export const make = <F, T>(
  faults: Faults<F> | undefined,
  frameOf: (item: T) => F,
  record: (fault: Fault, index: number) => void
): Stage<T> => {
  const drop = compile(faults?.drop)
  const duplicate = compile(faults?.duplicate)
  const reorder = compile(faults?.reorder?.select)
  const holdFor = Math.max(1, faults?.reorder?.by ?? 1)
  const delay = faults?.delay === undefined ? () => false : compile(faults.delay.select ?? "all")
  let index = 0
  let held: Array<{ readonly passed: ReadonlyArray<Passed<T>>; remaining: number }> = []

  const push = (item: T): ReadonlyArray<Passed<T>> => {
    const i = index++
    const frame = frameOf(item)
    const dropped = drop(frame, i)
    const doubled = duplicate(frame, i)
    const heldBack = reorder(frame, i)
    const delayed = delay(frame, i)
    if (dropped) {
      record("drop", i)
      return []
    }
    if (doubled) record("duplicate", i)
    if (delayed) record("delay", i)
    const passed: Passed<T> = { item, index: i, delayed }
    const copies = doubled ? [passed, passed] : [passed]
    if (heldBack) {
      record("reorder", i)
      held.push({ passed: copies, remaining: holdFor })
      return []
    }
    if (held.length === 0) return copies
    const out = [...copies]
    const still: typeof held = []
    for (const entry of held) {
      entry.remaining--
      if (entry.remaining <= 0) out.push(...entry.passed)
      else still.push(entry)
    }
    held = still
    return out
  }

  const flush = (): ReadonlyArray<Passed<T>> => {
    const out = held.flatMap((entry) => entry.passed)
    held = []
    return out
  }

  return { push, flush }
}
