/** A usage or settings problem: one line for the person, exit code 2. */
export class UsageError extends Error {}
