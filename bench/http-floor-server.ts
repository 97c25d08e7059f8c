/**
 * The HTTP floor's servers (bench/http-floor.ts): what answering one `POST /api/v1/trade/order` costs a Node process
 * before any of the venue's work — no auth, rate limit, decision, append or fold. `HTTP_FLOOR_KIND` picks one:
 * - `node`: `node:http`, the body read and `JSON.parse`d, a 201 of `JSON.stringify` of an order-shaped object;
 * - `fastify`: fastify 5 with fastify-type-provider-zod's compilers (as src/http/app.ts sets them), the order body
 *   validated by a zod schema shaped like the venue's and the 201 encoded through a zod response schema.
 * Prints `{"listening": "<url>"}` on stdout when ready (bench/listening-child.ts).
 */
import http from 'node:http';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const decimal = z.string().regex(/^\d+(\.\d+)?$/);
const orderBody = z.object({
  symbol: z.string().min(1).max(20),
  side: z.enum(['buy', 'sell']),
  type: z.enum(['market', 'limit', 'stop_loss', 'take_profit']),
  quantity: decimal,
  price: decimal.optional(),
  trigger_price: decimal.optional(),
  client_order_id: z.string().max(64).optional(),
});
const orderOut = z.object({
  order_id: z.string(),
  client_order_id: z.string().nullable(),
  agent_id: z.string(),
  symbol: z.string(),
  side: z.string(),
  type: z.string(),
  status: z.string(),
  quantity: z.string(),
  filled_quantity: z.string(),
  price: z.string().nullable(),
  trigger_price: z.string().nullable(),
  executed_price: z.string().nullable(),
  slippage_pct: z.string().nullable(),
  fee: z.string(),
  fee_asset: z.string(),
  notional: z.string(),
  created_at: z.string(),
  filled_at: z.string().nullable(),
});

/** An order-shaped 201 body (~500 bytes of JSON), new per request as a handler's answer is. */
const answer = (body: { symbol: string; side: string; type: string; quantity: string }) => {
  const now = new Date().toISOString();
  return {
    order_id: crypto.randomUUID(),
    client_order_id: null,
    agent_id: '0b8c1a7e-2f44-4d55-9a0e-7b1c2d3e4f50',
    symbol: body.symbol,
    side: body.side,
    type: body.type,
    status: 'filled',
    quantity: body.quantity,
    filled_quantity: body.quantity,
    price: null,
    trigger_price: null,
    executed_price: '97123.45000000',
    slippage_pct: '0.0123',
    fee: '0.01942469',
    fee_asset: 'USDT',
    notional: '19.42469000',
    created_at: now,
    filled_at: now,
  };
};

const kind = process.env.HTTP_FLOOR_KIND ?? 'fastify';
const port = Number(process.env.PORT ?? 0);
let address: string;
if (kind === 'node') {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const text = JSON.stringify(answer(body));
      res.writeHead(201, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  address = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
} else if (kind === 'fastify') {
  const app = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.post(
    '/api/v1/trade/order',
    { schema: { body: orderBody, response: { 201: orderOut } } },
    async (request, reply) => reply.code(201).send(answer(request.body)),
  );
  address = await app.listen({ host: '127.0.0.1', port });
} else {
  throw new Error(`HTTP_FLOOR_KIND must be node or fastify, not ${kind}`);
}
process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
process.once('SIGTERM', () => process.exit(0));
