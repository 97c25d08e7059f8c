import { z } from 'zod';
import {
  accountInfo,
  auditWallet,
  balances,
  fillModel,
  mode,
  pnl,
  portfolio,
  positions,
  resetAccount,
  setFillModel,
  setMode,
  updateRiskProfile,
  walletEvents,
} from '../application/account';
import type { Call } from '../application/call';
import { accountInfoOut, accountInfoResponse } from '../contract/account';
import { riskProfileOut, riskProfileResponse, riskProfileSchema } from '../contract/common';
import {
  balanceOut,
  balanceResponse,
  eventsQuery,
  eventsResponse,
  fillModelBody,
  fillModelOut,
  fillModelResponse,
  modeBody,
  modeOut,
  modeResponse,
  modeSetOut,
  modeSetResponse,
  pnlOut,
  pnlQuery,
  pnlResponse,
  portfolioQuery,
  portfolioResponse,
  positionsResponse,
  resetFields,
  resetOut,
  resetResponse,
  walletAuditOut,
  walletAuditResponse,
} from '../contract/trading';
import { walletEventsPageOut } from '../trading/wallet-event-view';
import { endpoint } from './endpoint';

/** An endpoint without input: the caller's wallet, read with `useCase` and presented with `present`. */
const ofCaller = <O extends z.ZodType, R>(
  output: O,
  useCase: (call: Call) => Promise<R>,
  present: (outcome: R) => z.input<O>,
) => endpoint({ input: z.object({}), output, run: async (call) => present(await useCase(call)) });

/**
 * The account endpoints (spec "Account endpoints"): `/account/*` and the account MCP toolset serve these. Each
 * parses into its use case of `src/application/account.ts` and presents with `src/contract/`.
 */
export const accountEndpoints = {
  info: ofCaller(accountInfoResponse, accountInfo, accountInfoOut),
  balance: ofCaller(balanceResponse, balances, balanceOut),
  positions: ofCaller(positionsResponse, positions, (p) => ({
    positions: p.positions,
    total_unrealized_pnl: p.totalUnrealizedPnl,
  })),
  portfolio: endpoint({
    input: portfolioQuery,
    output: portfolioResponse,
    run: (call, a) => portfolio(call, a.as_of ? { asOf: new Date(a.as_of) } : {}),
  }),
  pnl: endpoint({
    input: pnlQuery,
    output: pnlResponse,
    run: async (call, a) => pnlOut(await pnl(call, a.period)),
  }),
  setRiskProfile: endpoint({
    input: riskProfileSchema,
    output: riskProfileResponse,
    run: async (call, a) => riskProfileOut(await updateRiskProfile(call, a)),
  }),
  fillModel: ofCaller(fillModelResponse, fillModel, fillModelOut),
  setFillModel: endpoint({
    input: fillModelBody,
    output: fillModelResponse,
    run: async (call, a) =>
      fillModelOut(
        await setFillModel(call, { fillModel: a.fill_model, participationPct: a.participation_pct }),
      ),
  }),
  mode: ofCaller(modeResponse, mode, modeOut),
  setMode: endpoint({
    input: modeBody,
    output: modeSetResponse,
    run: async (call, a) =>
      modeSetOut(await setMode(call, { mode: a.mode, strategyLabel: a.strategy_label ?? null })),
  }),
  /** Without `confirm: true` the use case refuses (400); the MCP tool requires it in its input. */
  reset: endpoint({
    input: resetFields,
    output: resetResponse,
    run: async (call, a) =>
      resetOut(await resetAccount(call, { confirm: a.confirm, newStartingBalance: a.new_starting_balance })),
  }),
  events: endpoint({
    input: eventsQuery,
    output: eventsResponse,
    run: async (call, a) => walletEventsPageOut(await walletEvents(call, a)),
  }),
  audit: ofCaller(walletAuditResponse, auditWallet, walletAuditOut),
};
