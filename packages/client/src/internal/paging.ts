/**
 * A paginated list method as one Stream of items over every page. A server
 * that hands out a cursor it already gave (a loop) or more pages than the
 * bound ends the stream with a typed `PaginationError` instead of spinning.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { PaginationError } from "../ClientError.ts"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor?: string | undefined
}

interface State {
  readonly cursor: string | undefined
  readonly pages: number
}

interface Options<A, E, R> {
  readonly method: string
  readonly maxPages: number
  readonly fetch: (cursor: string | undefined) => Effect.Effect<Page<A>, E, R>
}

export const stream = <A, E, R>(options: Options<A, E, R>): Stream.Stream<A, E | PaginationError, R> =>
  Stream.suspend(() => {
    // Cursors already requested by this run of the stream (the stream's state is used linearly).
    const seen = new Set<string>()
    return Stream.paginate<State, A, E | PaginationError, R>({ cursor: undefined, pages: 0 }, (state) =>
      nextPage(options, seen, state)
    )
  })

// Made once (a generator function made per page costs its own generator prototype and map).
const nextPage = Effect.fnUntraced(function* <A, E, R>(
  options: Options<A, E, R>,
  seen: Set<string>,
  state: State
): Effect.fn.Return<readonly [ReadonlyArray<A>, Option.Option<State>], E | PaginationError, R> {
  if (state.cursor !== undefined) {
    if (seen.has(state.cursor)) {
      return yield* new PaginationError({
        method: options.method,
        reason: "CursorRepeated",
        pages: state.pages,
        cursor: state.cursor
      })
    }
    seen.add(state.cursor)
  }
  if (state.pages >= options.maxPages) {
    return yield* new PaginationError({ method: options.method, reason: "TooManyPages", pages: state.pages })
  }
  const page = yield* options.fetch(state.cursor)
  const next = page.nextCursor
  return [
    page.items,
    next === undefined ? Option.none() : Option.some({ cursor: next, pages: state.pages + 1 })
  ] as const
})
