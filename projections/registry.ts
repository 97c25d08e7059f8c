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
];
