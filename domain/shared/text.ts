/**
 * Control characters (Unicode `Cc`: C0, DEL, C1). A display name is one line of text: a line break in an agent's
 * name would forge the header lines of its `skill.md` (name, id, key preview), so account and agent names
 * refuse them.
 */
export const CONTROL_CHARACTER = /\p{Cc}/u;

/** The message of a name refused for {@link CONTROL_CHARACTER}. */
export const CONTROL_CHARACTER_MESSAGE = 'must not contain control characters (line breaks, tabs)';

/**
 * A client's value as an error message echoes it: whole up to `max` characters (UTF-16 code units), else its first
 * `max` and `…`, so a long value is not sent back whole. Pure.
 */
export const clipEcho = (value: string, max: number): string =>
  value.length > max ? `${value.slice(0, max)}…` : value;
