import { accountsProjection } from './accounts';
import { agentsProjection } from './agents';
import { apiKeysProjection } from './api-keys';
import type { Projection } from './projection';
import { streamSummariesProjection } from './stream-summaries';

/** Every projection the application runs, in start order. Capabilities append theirs. */
export const allProjections: Projection[] = [
  streamSummariesProjection,
  accountsProjection,
  agentsProjection,
  apiKeysProjection,
];
