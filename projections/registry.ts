import { accountsProjection } from './accounts';
import { agentsProjection } from './agents';
import { apiKeysProjection } from './api-keys';
import { backtestsProjection } from './backtests';
import { battlesProjection } from './battles';
import { equitySnapshotsProjection } from './equity-snapshots';
import { ordersProjection } from './orders';
import type { Projection } from './projection';
import { streamSummariesProjection } from './stream-summaries';
import { walletsProjection } from './wallets';
import { webhooksProjection } from './webhooks';

/** Every projection the application runs, in start order. Capabilities append theirs. */
export const allProjections: Projection[] = [
  streamSummariesProjection,
  accountsProjection,
  agentsProjection,
  apiKeysProjection,
  ordersProjection,
  walletsProjection,
  backtestsProjection,
  battlesProjection,
  equitySnapshotsProjection,
  webhooksProjection,
];

/**
 * The read models by name, as use cases declare what they read (`settleOwnWrites(call, ['orders'])`): a read
 * waits only for those to include the caller's own writes. `test/core/projections.int.test.ts` checks the list
 * against {@link allProjections}.
 */
export const READ_MODELS = [
  'stream_summaries',
  'accounts',
  'agents',
  'api_keys',
  'orders',
  'wallets',
  'backtests',
  'battles',
  'equity_snapshots',
  'webhooks',
] as const;

/** The name of a read model (a projection). */
export type ReadModelName = (typeof READ_MODELS)[number];
