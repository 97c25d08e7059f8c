import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAccount, type TestAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { until } from '../support/until';

/**
 * `ptv mcp` (a real child process speaking stdio) given a line whose bytes are not UTF-8. The SDK's stdio reader
 * decodes stdin leniently (U+FFFD for a malformed sequence), and the REST door's strict check then saw valid
 * UTF-8: `create_agent` with `"display_name":"caf<0xE9>"` made an agent named `caf\uFFFD`. The line is refused
 * with JSON-RPC's parse error instead, nothing reaches the venue, and the session goes on.
 */
const t = useTestApp();
let account: TestAccount;
let base = '';
let child: ChildProcess | undefined;
const answers: { id?: unknown; result?: unknown; error?: { code: number; message: string } }[] = [];

beforeAll(async () => {
  account = await registerAccount(t.app, {}, { plain: true });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', 'mcp', '--base-url', base, '--token', account.token],
    { env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
      answers.push(JSON.parse(pending.slice(0, nl)));
      pending = pending.slice(nl + 1);
    }
  });
}, 60_000);

afterAll(() => {
  child?.kill();
});

const send = (bytes: Buffer | string) => child!.stdin!.write(bytes);
const answerTo = async (id: unknown) => {
  await until(() => answers.some((a) => a.id === id), { timeoutMs: 30_000 });
  return answers.find((a) => a.id === id)!;
};
const agentNames = async () => {
  const res = await fetch(`${base}/api/v1/agents`, { headers: { authorization: `Bearer ${account.token}` } });
  const body = (await res.json()) as { agents: { display_name: string }[] };
  return body.agents.map((a) => a.display_name);
};
const createAgent = (id: number, name: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"create_agent","arguments":{"display_name":"${name}"}}}\n`;

describe('ptv mcp over stdio, a line that is not UTF-8', () => {
  it('answers a JSON-RPC parse error, records nothing, and serves the next line', async () => {
    send(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      })}\n`,
    );
    expect((await answerTo(1)).result).toBeDefined();
    send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');

    // "caf" then the byte 0xE9 (é in Latin-1, a truncated sequence in UTF-8), then the rest of the line.
    const [head, tail] = createAgent(2, 'caf').split('caf') as [string, string];
    send(Buffer.concat([Buffer.from(`${head}caf`), Buffer.from([0xe9]), Buffer.from(tail)]));
    const refused = await answerTo(2);
    expect(refused.error).toMatchObject({ code: -32700 });
    expect(refused.error!.message).toContain('not UTF-8');

    send(createAgent(3, 'cafe'));
    const accepted = await answerTo(3);
    expect(accepted.error).toBeUndefined();
    expect(await agentNames()).toContain('cafe');
    expect((await agentNames()).some((name) => name.startsWith('caf\uFFFD'))).toBe(false);
  }, 60_000);

  it("ends, as without the filter, once a line over the SDK's 10 MiB limit closes the transport", async () => {
    // Before, the filter kept reading stdin into a stream the closed transport no longer read: the process stayed
    // up answering nothing, its memory growing with every line the client sent.
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child!.stdin!.on('error', () => undefined);
    send(Buffer.alloc(11 << 20, 0x20));
    let id = 100;
    const pinging = setInterval(() => {
      if (child!.exitCode === null) send(`{"jsonrpc":"2.0","id":${id++},"method":"ping"}\n`);
    }, 50);
    try {
      const code = await Promise.race([
        exited,
        new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 20_000)),
      ]);
      expect(code).toBe(0);
    } finally {
      clearInterval(pinging);
    }
  }, 60_000);
});
