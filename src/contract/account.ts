import { z } from 'zod';
import type { AccountInfo } from '../application/account';
import { decimalOutput, riskProfileOut, riskProfileResponse, timestamp } from './common';

/** `GET /account/info` response (spec "Account endpoints"), with the scoped `agent_id`. */
export const accountInfoResponse = z.object({
  account_id: z.uuid(),
  agent_id: z
    .uuid()
    .nullable()
    .describe('the agent this view is scoped to (agent key or X-Agent-Id), else null'),
  display_name: z.string(),
  status: z.enum(['active', 'suspended', 'archived']),
  starting_balance: decimalOutput,
  current_session: z.object({ session_id: z.uuid(), started_at: timestamp }),
  risk_profile: riskProfileResponse,
  fee_rate: decimalOutput.describe(
    'fee per fill as a fraction of its notional, charged in USDT on both sides (FEE_RATE; 0.00100000 = 0.1 %): the taker rate (TAKER_FEE_RATE when set)',
  ),
  maker_fee_rate: decimalOutput.describe(
    'the fee of a resting limit (maker) fill (MAKER_FEE_RATE; unset: fee_rate)',
  ),
  created_at: timestamp,
});

/** The wire form of {@link AccountInfo}. */
export const accountInfoOut = (info: AccountInfo): z.infer<typeof accountInfoResponse> => ({
  account_id: info.accountId,
  agent_id: info.agentId,
  display_name: info.displayName,
  status: info.status,
  starting_balance: info.startingBalance,
  current_session: { session_id: info.currentSession.sessionId, started_at: info.currentSession.startedAt },
  risk_profile: riskProfileOut(info.riskProfile),
  fee_rate: info.feeRate,
  maker_fee_rate: info.makerFeeRate,
  created_at: info.createdAt,
});
