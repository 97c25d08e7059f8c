import pg from 'pg';
import { COPY_TEXT, type CopyTextRow } from '../../projections/copy-text';

/**
 * `text` with each `$n` replaced by `values[n - 1]` as a literal (`COPY` takes no parameters): strings quoted by
 * `pg.escapeLiteral`, finite numbers as written in parentheses, null as `NULL`. Throws `TypeError` for any other value
 * or a `$n` without a value. A `$n` inside a string literal of `text` would be replaced too: marked texts have none
 * (kysely passes every value as a parameter).
 */
export const inlineParameters = (text: string, values: readonly unknown[]): string =>
  text.replace(/\$(\d+)/g, (_, n: string) => {
    const k = Number(n) - 1;
    if (k < 0 || k >= values.length) throw new TypeError(`no value for $${n}`);
    const v = values[k];
    if (v === null) return 'NULL';
    if (typeof v === 'string') return pg.escapeLiteral(v);
    // In parentheses: `10-$1` with -3 must not become `10--3`, the start of a comment.
    if (typeof v === 'number' && Number.isFinite(v)) return `(${v})`;
    throw new TypeError(`a ${typeof v} for $${n} of a copy-text statement`);
  });

/**
 * A `COPY … TO STDOUT` as a `pg` submittable (the interface `pg-cursor` implements: `pg` hands it the protocol's
 * messages while it is the connection's active query). Each `CopyData` message's bytes (a row) are copied as they
 * arrive into an array of their own size (the parser's buffer is reused for later messages), so the rows never
 * become a string and nothing is allocated beyond their bytes (ArrayBuffers count as the isolate's external memory,
 * whose growth starts V8's mark-compacts); `done` resolves with the parts in order once the server is ready again,
 * or rejects with the server's error.
 */
class CopyOut {
  readonly done: Promise<Uint8Array[]>;
  private readonly parts: Uint8Array[] = [];
  private settle!: { resolve: (parts: Uint8Array[]) => void; reject: (error: Error) => void };

  constructor(private readonly text: string) {
    this.done = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Uint8Array }): void {
    this.parts.push(new Uint8Array(message.chunk));
  }

  handleReadyForQuery(): void {
    this.settle.resolve(this.parts);
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
 * Runs a {@link COPY_TEXT} text through `query` (a client's own `query`) as `COPY (text) TO STDOUT` (values inlined
 * by {@link inlineParameters}), answering `{ command: 'COPY', rowCount: 1, rows: [{ copy_text }] }`
 * ({@link CopyTextRow}). A statement error rejects as `pg`'s do (the server's error, its transaction aborted); a value
 * {@link inlineParameters} refuses rejects with its `TypeError` before anything is sent. `answerMarkedStatements`
 * (`marked-statements.ts`) runs every marked text so.
 */
export const runCopyText = (
  query: (submittable: unknown) => unknown,
  text: string,
  values: readonly unknown[] | undefined,
): Promise<{ command: string; rowCount: number; rows: CopyTextRow[]; fields: [] }> => {
  let copy: CopyOut;
  try {
    // On lines of their own: a statement ending in a `-- comment` must not comment out `) TO STDOUT`.
    copy = new CopyOut(`COPY (\n${inlineParameters(text, values ?? [])}\n) TO STDOUT`);
  } catch (error) {
    return Promise.reject(error);
  }
  query(copy);
  return copy.done.then((copyText) => ({
    command: 'COPY',
    rowCount: 1,
    rows: [{ copy_text: copyText }],
    fields: [],
  }));
};
