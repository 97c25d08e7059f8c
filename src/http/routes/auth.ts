import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PASSWORD_LENGTH } from '../../../commands/accounts';
import { ACCOUNT_NAME_MAX } from '../../../domain/account/decide';
import { CONTROL_CHARACTER, CONTROL_CHARACTER_MESSAGE } from '../../../domain/shared/text';
import { identity } from '../../auth/install';
import { loginWithKey, loginWithPassword } from '../../auth/login';
import { principalOf } from '../../auth/plugin';
import { decimalInput, decimalOutput, errorResponses, timestamp } from '../../contract/common';
import { awaitReadModels } from '../read-your-writes';

const registerBody = z
  .object({
    display_name: z
      .string()
      .trim()
      .min(1)
      .max(ACCOUNT_NAME_MAX)
      .refine((s) => !CONTROL_CHARACTER.test(s), CONTROL_CHARACTER_MESSAGE)
      .describe('1–64 characters'),
    email: z.email().max(254).nullable().optional().describe('contact email; needed for /auth/user-login'),
    starting_balance: decimalInput.optional().describe('USDT, default "10000.00"'),
    password: z
      .string()
      .min(PASSWORD_LENGTH.min)
      .max(PASSWORD_LENGTH.max)
      .optional()
      .describe(
        '8–72 characters, for /auth/user-login (needs `email`); can be set later with PUT /auth/password',
      ),
  })
  // A misspelt field (`pasword`, `starting_balence`) must not silently give a different account.
  .strict();

const registerResponse = z.object({
  account_id: z.uuid(),
  api_key: z.string().describe('account API key `ak_live_…`'),
  api_secret: z.string().describe('API secret `sk_live_…`: shown only here, cannot be recovered'),
  display_name: z.string(),
  starting_balance: decimalOutput,
  message: z.string(),
});

const tokenResponse = z.object({
  token: z.string().describe('JWT (HS256), send as Authorization: Bearer <token>'),
  expires_at: timestamp.describe('1 hour after issue; log in again for a new token'),
  token_type: z.literal('Bearer'),
});

const loginBody = z.object({
  api_key: z.string().min(1).max(256).describe('account key, prefix `ak_live_`'),
  api_secret: z.string().min(1).max(256).describe('account secret, prefix `sk_live_`'),
});

const userLoginBody = z.object({
  email: z.email().max(254),
  password: z.string().min(1).max(256),
});

const passwordBody = z.object({
  password: z
    .string()
    .min(PASSWORD_LENGTH.min)
    .max(PASSWORD_LENGTH.max)
    .describe('the new password, 8–72 characters'),
  current_password: z.string().max(256).optional().describe('required when a password is already set'),
});

const passwordResponse = z.object({
  account_id: z.uuid(),
  password_set: z.literal(true),
  updated_at: timestamp,
  message: z.string(),
});

/**
 * Authentication endpoints (spec "Authentication endpoints"; ARCHITECTURE §12, §14b): register, key login,
 * email login, and `PUT /auth/password`. Rate-limited per client IP (group `auth`, 60 per minute).
 */
export const authRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/auth/register',
    {
      config: { auth: 'public', rateLimitGroup: 'auth' },
      schema: {
        tags: ['auth'],
        summary: 'Register an account: returns its API key and the secret (shown only once)',
        body: registerBody,
        response: { 201: registerResponse, ...errorResponses(409, 422, 429, 500) },
      },
    },
    async (request, reply) => {
      const { accounts } = identity(app.services);
      const body = request.body;
      const registration = await accounts.register(
        {
          displayName: body.display_name,
          email: body.email ?? null,
          ...(body.starting_balance !== undefined ? { startingBalance: body.starting_balance } : {}),
          password: body.password ?? null,
        },
        { requestId: request.id },
      );
      await awaitReadModels(app.services, reply, registration.position);
      return reply.status(201).send({
        account_id: registration.accountId,
        api_key: registration.apiKey,
        api_secret: registration.apiSecret,
        display_name: registration.account.displayName,
        starting_balance: registration.account.startingBalance,
        message:
          'Account created. Store api_secret now: it is shown only this once and cannot be recovered. ' +
          'POST /api/v1/auth/login with api_key and api_secret for a JWT; use X-API-Key for trading.',
      });
    },
  );

  app.post(
    '/auth/login',
    {
      config: { auth: 'public', rateLimitGroup: 'auth' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange the account API key and secret for a 1-hour JWT',
        body: loginBody,
        response: { 200: tokenResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const { accounts, auth } = identity(app.services);
      const issued = await loginWithKey(
        { db: app.services.database.db, accounts, tokens: auth.tokens },
        { apiKey: request.body.api_key, apiSecret: request.body.api_secret },
      );
      return { token: issued.token, expires_at: issued.expiresAt, token_type: issued.tokenType };
    },
  );

  app.post(
    '/auth/user-login',
    {
      config: { auth: 'public', rateLimitGroup: 'auth' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange email and password for a 1-hour JWT',
        body: userLoginBody,
        response: { 200: tokenResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const { accounts, auth } = identity(app.services);
      const issued = await loginWithPassword(
        { db: app.services.database.db, accounts, tokens: auth.tokens },
        { email: request.body.email, password: request.body.password },
      );
      return { token: issued.token, expires_at: issued.expiresAt, token_type: issued.tokenType };
    },
  );

  app.put(
    '/auth/password',
    {
      config: { auth: 'jwt', rateLimitGroup: 'auth' },
      schema: {
        tags: ['auth'],
        summary: 'Set or change the password used by /auth/user-login (JWT)',
        security: [{ bearer: [] }],
        body: passwordBody,
        response: { 200: passwordResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const { accounts } = identity(app.services);
      const principal = principalOf(request);
      const result = await accounts.setPassword(
        principal.accountId,
        { password: request.body.password, currentPassword: request.body.current_password ?? null },
        { actor: principal.accountId, requestId: request.id },
      );
      await awaitReadModels(app.services, reply, result.position);
      return {
        account_id: principal.accountId,
        password_set: true as const,
        updated_at: result.account.updatedAt,
        message: 'Password set. Log in with POST /api/v1/auth/user-login (email and password).',
      };
    },
  );
};
