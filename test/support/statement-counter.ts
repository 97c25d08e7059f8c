import type { KyselyPlugin } from 'kysely';

/**
 * Counts the statements sent through a Kysely instance: pass `plugin` to `db.withPlugin(...)`; `count` is how many
 * went through it since it was built or last `reset`. For tests that bound how many statements a path costs.
 */
export const statementCounter = (): { plugin: KyselyPlugin; readonly count: number; reset(): void } => {
  let count = 0;
  return {
    plugin: {
      transformQuery: (args) => {
        count++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    },
    get count() {
      return count;
    },
    reset() {
      count = 0;
    },
  };
};
