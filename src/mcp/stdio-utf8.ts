import { isUtf8 } from 'node:buffer';
import { type Readable, Transform, type Writable } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';

/**
 * The stdin of `ptv mcp`, refusing lines that are not UTF-8. The SDK's stdio reader (`ReadBuffer`) decodes each
 * line with `buffer.toString('utf8')`, which turns a malformed sequence into U+FFFD; the tool then sent that text to
 * REST as valid UTF-8, past the REST door's strict decode (src/http/app.ts), and it was stored (`create_agent` with
 * `"display_name":"caf<0xE9>"` made an agent named `caf\uFFFD`). MCP's stdio messages are UTF-8 JSON-RPC, one a
 * line, and JSON between systems is UTF-8 (RFC 8259 §8.1), so such a line is not a message.
 */

/** JSON-RPC 2.0's code for "invalid JSON was received". */
export const JSON_RPC_PARSE_ERROR = -32700;

/**
 * The id of the request on `line`, read leniently only to address the refusal (JSON-RPC says `null` when it cannot
 * be told): a number, or a string with no U+FFFD in it (one there may stand for bytes the client did not send).
 */
const requestIdOf = (line: Buffer): string | number | null => {
  try {
    const id = (JSON.parse(line.toString('utf8')) as { id?: unknown } | null)?.id;
    return typeof id === 'number' || (typeof id === 'string' && !id.includes('\uFFFD')) ? id : null;
  } catch {
    return null;
  }
};

/** The answer to a line that is not UTF-8: a JSON-RPC parse error (-32700), newline-terminated. */
export const notUtf8Answer = (line: Buffer): string =>
  `${JSON.stringify({
    jsonrpc: '2.0',
    id: requestIdOf(line),
    error: { code: JSON_RPC_PARSE_ERROR, message: 'Parse error: the line is not UTF-8 text' },
  })}\n`;

/**
 * `input` split at newlines: each line that is valid UTF-8 is passed on, bytes unchanged, to the stream returned
 * (for the SDK's `StdioServerTransport`); any other is answered on `output` with {@link notUtf8Answer} and dropped,
 * so nothing of it reaches a tool. An unfinished line longer than the SDK's buffer limit (10 MiB) is passed on for
 * the SDK to refuse as it does: it then closes the transport and pauses its input, which stops reading `input` too
 * (the process can end, as without this filter). The returned stream ends when `input` does.
 */
export const utf8Lines = (input: Readable, output: Writable): Readable => {
  let pending: Buffer = Buffer.alloc(0);
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let start = 0;
      // `pending` holds no newline: the search starts where the new chunk does.
      for (let nl = data.indexOf(0x0a, pending.length); nl !== -1; nl = data.indexOf(0x0a, start)) {
        const line = data.subarray(start, nl + 1);
        if (isUtf8(line)) this.push(line);
        else output.write(notUtf8Answer(line));
        start = nl + 1;
      }
      pending = data.subarray(start);
      if (pending.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
        this.push(pending);
        pending = Buffer.alloc(0);
      }
      done();
    },
    flush(done) {
      done(null, pending.length ? pending : undefined);
    },
  });
  // The SDK reads with 'data' listeners and, closing, removes them and pauses its input: stop reading `input` then,
  // rather than keep buffering what nobody reads.
  lines.on('pause', () => {
    input.unpipe(lines);
    input.pause();
  });
  input.on('error', (error) => lines.destroy(error));
  return input.pipe(lines);
};
