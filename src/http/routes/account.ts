import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { DomainError } from '../../../domain/shared/errors';
import { fmt } from '../../../domain/trading/decimal';
import { DEFAULT_FEE_RATE, parseFeeRate } from '../../../domain/trading/fees';
import type { ReadModels } from '../../../projections/read-models';
import { getAccount } from '../../../queries/accounts';
import { getAgent } from '../../../queries/agents';
import { getWallet } from '../../../queries/trading';
import { identity } from '../../auth/install';
import { assertAgentActive, principalOf } from '../../auth/principal';
import { currentSession } from '../portfolio-snapshot';
import { awaitReadModels } from '../read-your-writes';
import { accountInfoResponse } from '../schemas/account';
import { errorResponses, riskProfileOut, riskProfileResponse, riskProfileSchema } from '../schemas/common';

/**
 * The session the owner trades in now (`currentSession`): the wallet's once it follows the owner's session
 * (`POST /account/reset` starts a new wallet session, possibly with a new starting balance, without touching the
 * account or agent stream), else the owner's own. Its `started_at` is the owner's session start while the
 * wallet trades in that same session, so it does not move when the first order opens the wallet.
 */
const walletSession = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  owner: { sessionId: string; sessionStartedAt: string; startingBalance: string },
) => {
  const session = currentSession(owner, await getWallet(db, ownerId));
  return {
    starting_balance: session.startingBalance,
    current_session: { session_id: session.sessionId, started_at: session.startedAt },
  };
};

/**
 * Account endpoints of this capability (spec "Account endpoints", key/JWT): `GET /account/info` and
 * `PUT /account/risk-profile`. With an agent key, or a JWT/account key plus `X-Agent-Id`, both act on that
 * agent (spec "Authentication" rules 4 and 5); otherwise on the account.
 */
export const accountRoutes: FastifyPluginAsyncZod = async (app) => {
  /** The fee rate fills are charged at (`FEE_RATE`, as the trading capability parsed it), 8 places. */
  const feeRate = () =>
    fmt(app.services.trading?.feeRate ?? parseFeeRate(app.services.config.FEE_RATE ?? DEFAULT_FEE_RATE));
  app.get(
    '/account/info',
    {
      config: { auth: 'key-or-jwt' },
      schema: {
        tags: ['account'],
        summary: 'The account (or the scoped agent): status, starting balance, current session, risk profile',
        description:
          '`current_session` and `starting_balance` are those of the wallet session trading now: ' +
          '`POST /account/reset` starts a new session (optionally with `new_starting_balance`).',
        security: [{ apiKey: [] }, { bearer: [] }],
        response: { 200: accountInfoResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const db = app.services.database.db;
      if (principal.agentId) {
        const agent = await getAgent(db, principal.agentId);
        if (!agent) throw new DomainError('ACCOUNT_NOT_FOUND', 'no agent for these credentials');
        return {
          account_id: agent.accountId,
          agent_id: agent.agentId,
          display_name: agent.displayName,
          status: agent.status,
          ...(await walletSession(db, agent.agentId, agent)),
          risk_profile: riskProfileOut(agent.riskProfile),
          fee_rate: feeRate(),
          created_at: agent.createdAt,
        };
      }
      const account = await getAccount(db, principal.accountId);
      if (!account) throw new DomainError('ACCOUNT_NOT_FOUND', 'no account for these credentials');
      return {
        account_id: account.accountId,
        agent_id: null,
        display_name: account.displayName,
        status: account.status,
        ...(await walletSession(db, account.accountId, account)),
        risk_profile: riskProfileOut(account.riskProfile),
        fee_rate: feeRate(),
        created_at: account.createdAt,
      };
    },
  );

  app.put(
    '/account/risk-profile',
    {
      config: { auth: 'key-or-jwt' },
      schema: {
        tags: ['account'],
        summary: 'Replace the risk limits of the account (or the scoped agent); applies to the next order',
        description:
          "The spec's three fields are required; `max_order_size_pct` (1–100, default 50) is optional and " +
          'keeps its current value when omitted. The response shows all four fields.',
        security: [{ apiKey: [] }, { bearer: [] }],
        body: riskProfileSchema,
        response: { 200: riskProfileResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertAgentActive(principal);
      const { accounts, agents } = identity(app.services);
      const meta = { actor: principal.agentId ?? principal.accountId, requestId: request.id };
      if (principal.agentId) {
        const result = await agents.updateRiskProfile(
          principal.accountId,
          principal.agentId,
          request.body,
          meta,
        );
        await awaitReadModels(app.services, reply, result.position);
        return riskProfileOut(result.agent.riskProfile!);
      }
      const result = await accounts.updateRiskProfile(principal.accountId, request.body, meta);
      await awaitReadModels(app.services, reply, result.position);
      return riskProfileOut(result.account.riskProfile!);
    },
  );
};
