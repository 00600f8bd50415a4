/**
 * PushQueue's wake-ups under a scheduler other than effect's own (a
 * TestClock's): see `holdFor`. Kept apart from PushQueue, whose wake-up path
 * on effect's own scheduler it leaves a plain microtask.
 */
import * as Fiber from "effect/Fiber"
import * as Scheduler from "effect/Scheduler"

// The wake-ups' next microtask runs them as the task `flush` of this dispatcher (see `holdFor`).
let held: Scheduler.SchedulerDispatcher | undefined

/**
 * A fiber on a scheduler other than effect's own (a TestClock's: it counts
 * the tasks that a fiber it woke goes on to schedule, and `adjust` returns
 * once they are done) hands the wake-ups to that scheduler as a task, which
 * the microtask then runs at once (`flush`): the wake-ups keep their
 * microtask, and what the woken consumers do is the scheduler's to count, as
 * if a task had woken them. On effect's own scheduler there is nothing to
 * count, and the microtask stays a plain one (a dispatcher costs a timer).
 */
const holdFor = (fiber: Fiber.Fiber<unknown, unknown> | undefined, flush: () => void) => {
  const scheduler = fiber?.cache.scheduler
  if (scheduler === undefined || scheduler instanceof Scheduler.MixedScheduler) return undefined
  const dispatcher = scheduler.makeDispatcher()
  dispatcher.scheduleTask(flush, 0)
  return dispatcher
}

/** Holds the next wake-ups for the current fiber's scheduler, once per microtask, when it is not effect's own. */
export const hold = (flush: () => void): void => {
  if (held === undefined) held = holdFor(Fiber.getCurrent(), flush)
}

/** The dispatcher holding the wake-ups, if any, which is released here: its `flush` runs them as its task. */
export const take = (): Scheduler.SchedulerDispatcher | undefined => {
  const dispatcher = held
  held = undefined
  return dispatcher
}
