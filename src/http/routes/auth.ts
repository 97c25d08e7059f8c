import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { login, loginWithEmail, register, setPassword } from '../../application/auth';
import {
  loginBody,
  passwordBody,
  passwordResponse,
  registerBody,
  registerResponse,
  tokenOut,
  tokenResponse,
  userLoginBody,
} from '../../contract/auth';
import { errorResponses } from '../../contract/common';
import { callOf, publicCallOf } from '../call';
import { routeGroup } from './route-options';

/** Per client IP in the `auth` rate-limit group; registration and logins need no credential. */
const route = routeGroup('auth', { auth: 'public', rateLimitGroup: 'auth' });
const jwtRoute = routeGroup('auth', { auth: 'jwt', rateLimitGroup: 'auth' });

/**
 * Authentication endpoints (spec "Authentication endpoints"; ARCHITECTURE §12, §14b): register, key login,
 * email login, and `PUT /auth/password`. Rate-limited per client IP (group `auth`, 60 per minute).
 */
export const authRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/auth/register',
    route('Register an account: returns its API key and the secret (shown only once)', {
      body: registerBody,
      response: { 201: registerResponse, ...errorResponses(409, 422, 429, 500) },
    }),
    async (request, reply) => {
      const body = request.body;
      const registration = await register(publicCallOf(request), {
        displayName: body.display_name,
        email: body.email ?? null,
        ...(body.starting_balance !== undefined ? { startingBalance: body.starting_balance } : {}),
        password: body.password ?? null,
      });
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
    route('Exchange the account API key and secret for a 1-hour JWT', {
      body: loginBody,
      response: { 200: tokenResponse, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) =>
      tokenOut(
        await login(publicCallOf(request), {
          apiKey: request.body.api_key,
          apiSecret: request.body.api_secret,
        }),
      ),
  );

  app.post(
    '/auth/user-login',
    route('Exchange email and password for a 1-hour JWT', {
      body: userLoginBody,
      response: { 200: tokenResponse, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => tokenOut(await loginWithEmail(publicCallOf(request), request.body)),
  );

  app.put(
    '/auth/password',
    jwtRoute('Set or change the password used by /auth/user-login (JWT)', {
      body: passwordBody,
      response: { 200: passwordResponse, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => {
      const call = callOf(request);
      const account = await setPassword(call, {
        password: request.body.password,
        currentPassword: request.body.current_password ?? null,
      });
      return {
        account_id: call.caller.accountId,
        password_set: true as const,
        updated_at: account.updatedAt,
        message:
          'Password set. Log in with POST /api/v1/auth/user-login (email and password); ' +
          'when it replaced one, the tokens issued before no longer work.',
      };
    },
  );
};
