/**
 * A state machine written as an explicit table: for each state, the events it accepts and the
 * state each one leads to. An event a state does not list is refused; what "refused" means
 * (a 409, a 422, ignoring a late callback) is the caller's to say.
 */
export type TransitionTable<S extends string, E extends string> = Readonly<Record<S, Readonly<Partial<Record<E, S>>>>>;

/** The state `event` leads to from `from`, or undefined when the table refuses it. */
export function nextState<S extends string, E extends string>(table: TransitionTable<S, E>, from: S, event: E): S | undefined {
  return table[from][event];
}

export function accepts<S extends string, E extends string>(table: TransitionTable<S, E>, from: S, event: E): boolean {
  return nextState(table, from, event) !== undefined;
}
