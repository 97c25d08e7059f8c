/**
 * The written form of the venue's ids (accounts, agents, orders, battles, JWT subjects): a UUID, hex digits in
 * groups 8-4-4-4-12, in either case (RFC 9562 §4 reads hex case-insensitively). Any version: ids minted by other
 * versions of the venue, and ids a client copied, are still ids. Where an id is a key it is compared in lower case.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `text` is written as a UUID ({@link UUID_PATTERN}). */
export const isUuid = (text: string): boolean => UUID_PATTERN.test(text);

/**
 * The canonical form of an account, agent or battle id: UUIDs are case-insensitive on input (RFC 9562; every
 * endpoint accepts either case), but streams, participants, sessions and read models are keyed by the lower-case
 * form, which is also the form every answer carries.
 */
export const canonicalId = (id: string): string => id.toLowerCase();
