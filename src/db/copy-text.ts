import pg from 'pg';
import { COPY_TEXT, type CopyTextRow } from '../../projections/copy-text';

/** The first capacity of a copy's buffer (bytes); it doubles as rows arrive. */
const FIRST_CAPACITY = 64 * 1024;

/**
 * `text` with each `$n` replaced by `values[n - 1]` as a literal (`COPY` takes no parameters): strings quoted by
 * `pg.escapeLiteral`, finite numbers as written, null as `NULL`. Throws `TypeError` for any other value or a `$n`
 * without a value.
 */
export const inlineParameters = (text: string, values: readonly unknown[]): string =>
  text.replace(/\$(\d+)/g, (_, n: string) => {
    const k = Number(n) - 1;
    if (k < 0 || k >= values.length) throw new TypeError(`no value for $${n}`);
    const v = values[k];
    if (v === null) return 'NULL';
    if (typeof v === 'string') return pg.escapeLiteral(v);
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    throw new TypeError(`a ${typeof v} for $${n} of a copy-text statement`);
  });

/**
 * A `COPY … TO STDOUT` as a `pg` submittable (the interface `pg-cursor` implements: `pg` hands it the protocol's
 * messages while it is the connection's active query). Each `CopyData` message's bytes are copied, as they arrive,
 * into one growing buffer (the parser's buffer is reused for later messages), so the rows never become a string;
 * `done` resolves with the text in an array of its own once the server is ready again, or rejects with the
 * server's error.
 */
class CopyOut {
  readonly done: Promise<Uint8Array>;
  private buffer = new Uint8Array(FIRST_CAPACITY);
  private length = 0;
  private settle!: { resolve: (text: Uint8Array) => void; reject: (error: Error) => void };

  constructor(private readonly text: string) {
    this.done = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Uint8Array }): void {
    const chunk = message.chunk;
    const needed = this.length + chunk.length;
    if (needed > this.buffer.length) {
      let capacity = this.buffer.length * 2;
      while (capacity < needed) capacity *= 2;
      const grown = new Uint8Array(capacity);
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(chunk, this.length);
    this.length = needed;
  }

  handleReadyForQuery(): void {
    // Exactly the rows' bytes, in a buffer of its own (transferable whole).
    this.settle.resolve(this.buffer.slice(0, this.length));
  }

  handleError(error: Error): void {
    this.settle.reject(error);
  }

  // The other messages of a COPY's answer carry nothing it needs.
  handleCopyInResponse(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
}

/**
 * Makes `client.query(text, values)` run texts that start with {@link COPY_TEXT} as `COPY (text) TO STDOUT` (values
 * inlined by {@link inlineParameters}), answering `{ command: 'COPY', rowCount: 1, rows: [{ copy_text }] }`
 * ({@link CopyTextRow}); everything else goes to the query it had. A statement error rejects as `pg`'s do (the
 * server's error, its transaction aborted).
 */
export const answerMarkedCopyText = (client: pg.ClientBase): void => {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length <= 2 && typeof text === 'string' && text.startsWith(COPY_TEXT)) {
      let copy: CopyOut;
      try {
        copy = new CopyOut(`COPY (${inlineParameters(text, (values as unknown[] | undefined) ?? [])}) TO STDOUT`);
      } catch (error) {
        return Promise.reject(error);
      }
      query(copy);
      return copy.done.then((copyText) => {
        const row: CopyTextRow = { copy_text: copyText };
        return { command: 'COPY', rowCount: 1, rows: [row], fields: [] };
      });
    }
    return query(...args);
  };
};
