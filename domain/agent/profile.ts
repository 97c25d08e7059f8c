import { DomainError } from '../shared/errors';
import { CONTROL_CHARACTER, CONTROL_CHARACTER_MESSAGE } from '../shared/text';
import type { AgentProfileFields } from './events';

/**
 * Bounds of an agent's labels. Spec "Agent": display name 1–100 characters, colour in `#RRGGBB` shape. The
 * other bounds are the design's (the spec gives none): labels up to 100 characters, at most 20 strategy tags of
 * 1–50 characters each, avatar URL up to 2,048 characters (http or https).
 */
export const AGENT_LIMITS = {
  displayName: 100,
  label: 100,
  tags: 20,
  tag: 50,
  avatarUrl: 2048,
} as const;

/** `#RRGGBB` (spec "Agent" `color`). */
export const COLOR_PATTERN = /^#[0-9A-Fa-f]{6}$/;

const fail = (field: string, message: string): never => {
  throw new DomainError('VALIDATION_ERROR', `${field} ${message}`, { field });
};

const length = (s: string): number => [...s].length;

/**
 * Validates and normalises the supplied label fields (trims strings; empty optional labels become null; tags
 * are trimmed and de-duplicated in order). The name, `llm_model`, `framework` and every tag are one line of text:
 * no control characters ({@link CONTROL_CHARACTER}). Throws `DomainError('VALIDATION_ERROR')` naming the first bad
 * field.
 */
export const normalizeProfileChanges = (
  changes: Partial<AgentProfileFields>,
): Partial<AgentProfileFields> => {
  const out: Partial<AgentProfileFields> = {};
  if (changes.display_name !== undefined) {
    const name = changes.display_name.trim();
    if (length(name) < 1 || length(name) > AGENT_LIMITS.displayName) {
      fail('display_name', `must be 1 to ${AGENT_LIMITS.displayName} characters`);
    }
    if (CONTROL_CHARACTER.test(name)) fail('display_name', CONTROL_CHARACTER_MESSAGE);
    out.display_name = name;
  }
  for (const field of ['llm_model', 'framework'] as const) {
    const value = changes[field];
    if (value === undefined) continue;
    const text = value?.trim() ?? '';
    if (length(text) > AGENT_LIMITS.label) fail(field, `must be at most ${AGENT_LIMITS.label} characters`);
    if (CONTROL_CHARACTER.test(text)) fail(field, CONTROL_CHARACTER_MESSAGE);
    out[field] = text === '' ? null : text;
  }
  if (changes.strategy_tags !== undefined) {
    const tags = [...new Set(changes.strategy_tags.map((t) => t.trim()))];
    if (tags.length > AGENT_LIMITS.tags) fail('strategy_tags', `must hold at most ${AGENT_LIMITS.tags} tags`);
    if (tags.some((t) => length(t) < 1 || length(t) > AGENT_LIMITS.tag)) {
      fail('strategy_tags', `entries must be 1 to ${AGENT_LIMITS.tag} characters`);
    }
    if (tags.some((t) => CONTROL_CHARACTER.test(t))) {
      fail('strategy_tags', `entries ${CONTROL_CHARACTER_MESSAGE}`);
    }
    out.strategy_tags = tags;
  }
  if (changes.color !== undefined) {
    if (changes.color !== null && !COLOR_PATTERN.test(changes.color)) {
      fail('color', 'must be a hex colour #RRGGBB');
    }
    out.color = changes.color;
  }
  if (changes.avatar_url !== undefined) {
    const url = changes.avatar_url?.trim() ?? '';
    if (url !== '' && (!/^https?:\/\/\S+$/i.test(url) || url.length > AGENT_LIMITS.avatarUrl)) {
      fail('avatar_url', `must be an http(s) URL of at most ${AGENT_LIMITS.avatarUrl} characters`);
    }
    out.avatar_url = url === '' ? null : url;
  }
  return out;
};
