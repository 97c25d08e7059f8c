/**
 * The server `bench/market.ts` measures: the real runtime and HTTP app (`createRuntime` + `buildApp`, the same
 * as `src/main.ts serve`), configured from the environment. One difference: requests carrying
 * `X-Bench-Client: <id>` count against that id's rate-limit bucket (through the documented
 * `services.rateLimitIdentity` hook), so a load generator can play many clients each within the market group's
 * 1,200 requests per minute. Prints `{"listening": "<url>"}` on stdout when ready.
 */

import { loadConfig } from '../src/config';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createRuntime } from '../src/runtime';

const config = loadConfig(process.env);
const logger = createLogger(config.LOG_LEVEL, { pretty: false });
const runtime = await createRuntime(config, logger);
runtime.services.rateLimitIdentity = (request) => {
  const client = request.headers['x-bench-client'];
  return typeof client === 'string' && client ? `bench:${client}` : undefined;
};
const app = await buildApp(runtime.services);
const address = await app.listen({ host: config.HOST, port: config.PORT });
process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
const stop = async () => {
  await app.close().catch(() => {});
  await runtime.close().catch(() => {});
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
