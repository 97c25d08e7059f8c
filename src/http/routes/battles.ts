import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { battleEndpoints as ep } from '../../endpoints/battles';
import { routeGroup, serveAll } from './route-options';

/** Every battle endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600/min, §14b). */
const route = routeGroup('battles', { auth: 'jwt', rateLimitGroup: 'management' });

/** The errors of a read or a change of one battle. */
const one = [401, 403, 404, 429];
const change = [401, 403, 404, 409, 429];
const changeBody = [401, 403, 404, 409, 422, 429];
/** The errors of a placement in a participant's sandbox. */
const placement = [400, 401, 403, 404, 409, 422, 429, 503];

/**
 * The 20 battle endpoints (spec "Battle endpoints"; ARCHITECTURE §10, §14b; `docs/battles.md`). Battles are
 * event-sourced (`battle-{id}` streams, `commands/battle.ts`); commands and the detail answer from the battle's
 * state, the list and the snapshots from the `battles` read models. Ownership: an unknown id is
 * `BATTLE_NOT_FOUND` 404, another account's battle `PERMISSION_DENIED` 403 (nothing of it is shown). Each serves
 * its endpoint of `src/endpoints/battles.ts`.
 */
export const battleRoutes: FastifyPluginAsyncZod = async (app) => {
  serveAll(app, route, ep, changeBody, {
    create: {
      summary: 'Create a draft battle',
      description:
        'Defaults: battle_mode `live`, starting_balance "10000.00", ranking_metric `roi_pct`, duration_minutes null. ' +
        'A historical battle needs backtest_config (start_time < end_time inside the stored data, candle_interval ' +
        '1m 5m 1h 1d, pairs or null). Errors: `VALIDATION_ERROR` 422, `INVALID_SYMBOL` 400.',
      errors: [400, 401, 403, 422, 429],
    },
    list: { summary: "The caller's battles, newest first", errors: [401, 422, 429] },
    presets: { summary: 'Built-in presets (spec table)', errors: [401, 429] },
    get: { summary: 'A battle with its participants', errors: one },
    update: {
      summary: 'Update the configuration (draft only)',
      description: 'Absent fields keep their value; switching to `live` drops backtest_config.',
      errors: [400, ...changeBody],
    },
    delete: {
      summary: 'Delete a draft, or cancel an active or paused battle',
      description: 'Completed or cancelled battles: `BATTLE_INVALID_STATE` 409.',
      errors: change,
    },
    addParticipant: 'Add an agent of the caller (draft only)',
    removeParticipant: 'Remove an agent (draft only); answers the battle',
    start: {
      summary: 'Lock the configuration and begin (at least 2 participants)',
      description:
        'Live: every participant’s wallet starts a fresh session with the starting balance (positions closed, ' +
        'orders cancelled, history kept). Historical: the virtual clock starts at start_time, one sandbox ' +
        'wallet per participant. Fewer than 2 participants or not a draft: `BATTLE_INVALID_STATE` 409.',
      errors: [...change, 503],
    },
    pause: 'Pause one agent: it cannot place orders in this battle until resumed (battle `paused`)',
    resume: 'Resume a paused agent (battle `active` once no agent is paused)',
    stop: {
      summary: 'Rank and complete an active or paused battle (`final_rankings`)',
      errors: change,
    },
    replay: {
      summary: 'A new draft from a completed battle',
      errors: [400, ...changeBody],
    },
    live: {
      summary: 'Rankings now (active or paused; a completed battle: its final rankings)',
      description:
        'Live: equity at live prices, activity inside the battle window only. Historical: at virtual time; ' +
        '`elapsed_seconds` is then the virtual time elapsed.',
      errors: change,
    },
    results: { summary: 'Final results of a completed battle', errors: change },
    snapshots: {
      summary: 'Equity snapshots, oldest first',
      description: 'Live: every 5 s while active. Historical: at every step of the virtual clock.',
      errors: one,
    },
    step: {
      summary: 'Advance a historical battle one candle',
      description:
        'Every participant’s pending orders are checked along the candle’s path (O→L→H→C when close ≥ open, ' +
        'else O→H→L→C). The last step ranks and completes the battle.',
      errors: [...change, 503],
    },
    stepBatch: {
      summary: 'Advance a historical battle N candles (1 to 100,000; clamped at the last step)',
      errors: [...changeBody, 503],
    },
    placeOrder: {
      summary: "Order of a participant's sandbox in a historical battle (live order rules at virtual time)",
      description:
        'Same body as `POST /trade/order` plus `agent_id`, same response. A paused agent: ' +
        '`BATTLE_INVALID_STATE` 409; a rejection is recorded and answered with the rule’s error.',
      errors: placement,
    },
    placeOco: {
      summary:
        "OCO of a participant's sandbox in a historical battle: a take-profit and a stop-loss, the first to fill cancels the other",
      description:
        'Same body as `POST /trade/order/oco` plus `agent_id`, same response; the legs are matched on the ' +
        'candles of later steps (docs/trading-rules.md, "Order lists: OCO and bracket"). Cancel either leg ' +
        'with `DELETE /battles/{id}/trade/order/{order_id}`: both are cancelled. A paused agent: ' +
        '`BATTLE_INVALID_STATE` 409; a rejection is recorded and answered with the rule’s error.',
      errors: placement,
    },
    cancelOrder: {
      summary: "Cancel an open order of a participant's sandbox in a historical battle; its lock is released",
      description:
        'The order is found in whichever participant sandbox holds it open (a paused agent’s too). Unknown, ' +
        'filled or cancelled: `ORDER_NOT_FOUND` 404; a live battle: `BATTLE_INVALID_STATE` 409.',
      errors: [...change, 503],
    },
    prices: {
      summary: 'Prices of a historical battle at its virtual time (no look-ahead)',
      errors: change,
    },
  });
};
