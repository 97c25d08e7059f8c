/**
 * What a thrown value says, as text: an `Error`'s message, anything else as `String` gives it (a task or a callback
 * may throw a non-Error). Pure; throws nothing a plain value's `String` does not.
 */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
