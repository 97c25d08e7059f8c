/**
 * A database URL fit to show (messages, `/health`, logs): a `postgres://` URL with its password replaced by `***`;
 * `unparsable` when `url` is not a URL at all (it might then be a password pasted in the wrong place, so none of
 * it is shown).
 */
export const redactDatabaseUrl = (url: string, unparsable: string): string => {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return unparsable;
  }
};
