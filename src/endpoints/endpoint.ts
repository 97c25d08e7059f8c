import type { z } from 'zod';
import type { Call } from '../application/call';

/**
 * One capability as every door serves it (docs/architecture.md, "Endpoints"): the input schema (the wire's, from
 * `src/contract/`), the output schema, and `run`, which turns the validated input into the use case's arguments,
 * calls the use case of `src/application/` and presents its outcome with the contract's presenter. A REST route
 * hands it its params, query and body merged; an MCP tool its arguments; so parse → call → present is written once
 * and a door adds only how it reads a request and writes a response (status codes, headers, `confirm`).
 */
export interface Endpoint<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  input: I;
  output: O;
  run: (call: Call, input: z.output<I>) => Promise<z.input<O>>;
}

/** Declares an endpoint with its input and output types inferred from its schemas. */
export const endpoint = <I extends z.ZodObject, O extends z.ZodType>(e: Endpoint<I, O>): Endpoint<I, O> => e;
