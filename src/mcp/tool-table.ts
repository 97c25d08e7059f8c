import type { z } from 'zod';
import type { RoutedEndpoint } from '../endpoints/endpoint';
import { defineTool, servesEndpoint, type ToolDef } from './tool';

/**
 * One tool of an {@link endpointTools} table, serving the routed endpoint its key names: its name, title and
 * summary (typed by the endpoint's output), its annotations (else the table's), then what it changes of the
 * served endpoint, if anything: a narrower `input` (`confirm: true`), other `routes` or its own stdio binding
 * `rest`. Its description is the table's, by name.
 */
export type ToolRow<E> =
  E extends RoutedEndpoint<infer I, infer O extends z.ZodObject>
    ? readonly [
        name: string,
        title: string,
        summary: ToolDef<I, O>['summary'],
        annotations?: ToolDef['annotations'],
        more?: Partial<Pick<ToolDef<I, O>, 'routes' | 'rest'>> & { input?: z.ZodObject },
      ]
    : never;

/**
 * The tools of a toolset that each serve one routed endpoint of `eps` as its REST route does
 * ({@link servesEndpoint}), in the order `rows` names them, one row each: `common` holds what they share
 * (toolset, auth, rate-limit group, default annotations) and `describe` their descriptions by tool name — so that
 * a toolset reads as one table, the way `serveAll` (src/http/routes/route-options.ts) declares a route group.
 * Throws at load for a row whose description is missing.
 */
export const endpointTools = <E extends Record<string, unknown>>(
  common: Pick<ToolDef, 'toolset' | 'auth' | 'rateLimitGroup'> & Partial<Pick<ToolDef, 'annotations'>>,
  eps: E,
  describe: Readonly<Record<string, string>>,
  rows: { readonly [K in keyof E]?: ToolRow<E[K]> },
): ToolDef[] =>
  Object.entries(rows).map(([key, row]) => {
    // Each row's key names a routed endpoint of `eps` (ToolRow<E[K]> is never for any other).
    const [name, title, summary, annotations, more] = row as ToolRow<
      RoutedEndpoint<z.ZodObject, z.ZodObject>
    >;
    const description = describe[name];
    if (description === undefined) throw new Error(`MCP tool ${name} has no description`);
    const served = servesEndpoint(eps[key] as RoutedEndpoint<z.ZodObject, z.ZodObject>);
    return defineTool({
      ...common,
      ...(annotations ? { annotations } : {}),
      name,
      title,
      description,
      ...served,
      ...more,
      summary,
    } as ToolDef);
  });
