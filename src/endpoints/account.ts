import type { z } from 'zod';
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
  resetBody,
  resetFields,
  resetOut,
  resetResponse,
  walletAuditOut,
  walletAuditResponse,
} from '../contract/trading';
import { walletEventsPageOut } from '../trading/wallet-event-view';
import { endpoint, served } from './endpoint';

/**
 * An endpoint without input served at `GET {path}`: the caller's wallet, read with `useCase` and presented with
 * `present`.
 */
const ofCaller = <O extends z.ZodType, R>(
  path: `/${string}`,
  output: O,
  useCase: (call: Call) => Promise<R>,
  present: (outcome: R) => z.input<O>,
) => served({ method: 'GET', path }, output, async (call) => present(await useCase(call)));

/**
 * The account endpoints (spec "Account endpoints"): `/account/*` and the account MCP toolset serve these. Each
 * parses into its use case of `src/application/account.ts` and presents with `src/contract/`.
 */
export const accountEndpoints = {
  info: ofCaller('/account/info', accountInfoResponse, accountInfo, accountInfoOut),
  balance: ofCaller('/account/balance', balanceResponse, balances, balanceOut),
  positions: ofCaller('/account/positions', positionsResponse, positions, (p) => ({
    positions: p.positions,
    total_unrealized_pnl: p.totalUnrealizedPnl,
  })),
  portfolio: served(
    { method: 'GET', path: '/account/portfolio', querystring: portfolioQuery },
    portfolioResponse,
    (call, a) => portfolio(call, a.as_of ? { asOf: new Date(a.as_of) } : {}),
  ),
  pnl: served({ method: 'GET', path: '/account/pnl', querystring: pnlQuery }, pnlResponse, async (call, a) =>
    pnlOut(await pnl(call, a.period)),
  ),
  setRiskProfile: served(
    { method: 'PUT', path: '/account/risk-profile', body: riskProfileSchema },
    riskProfileResponse,
    async (call, a) => riskProfileOut(await updateRiskProfile(call, a)),
  ),
  fillModel: ofCaller('/account/fill-model', fillModelResponse, fillModel, fillModelOut),
  setFillModel: served(
    { method: 'PUT', path: '/account/fill-model', body: fillModelBody },
    fillModelResponse,
    async (call, a) =>
      fillModelOut(
        await setFillModel(call, { fillModel: a.fill_model, participationPct: a.participation_pct }),
      ),
  ),
  mode: ofCaller('/account/mode', modeResponse, mode, modeOut),
  setMode: served(
    { method: 'POST', path: '/account/mode', body: modeBody },
    modeSetResponse,
    async (call, a) =>
      modeSetOut(await setMode(call, { mode: a.mode, strategyLabel: a.strategy_label ?? null })),
  ),
  /** Without `confirm: true` the use case refuses (400); the MCP tool requires it in its input. */
  reset: endpoint({
    route: { method: 'POST', path: '/account/reset', body: resetBody },
    input: resetFields,
    output: resetResponse,
    run: async (call, a) =>
      resetOut(await resetAccount(call, { confirm: a.confirm, newStartingBalance: a.new_starting_balance })),
  }),
  events: served(
    { method: 'GET', path: '/account/events', querystring: eventsQuery },
    eventsResponse,
    async (call, a) => walletEventsPageOut(await walletEvents(call, a)),
  ),
  audit: ofCaller('/account/audit', walletAuditResponse, auditWallet, walletAuditOut),
};
