import { createStore } from '../store';

/** Light or dark, from the viewer's choice (remembered) or else the system's. */
export type Theme = 'light' | 'dark';

const KEY = 'ptv.theme';
const stored = (): Theme | null => {
  try {
    const t = localStorage.getItem(KEY);
    return t === 'light' || t === 'dark' ? t : null;
  } catch {
    return null;
  }
};
const system = (): Theme => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');

/** The theme in force; `data-theme` on `<html>` follows it (the stylesheet's colours). */
export const theme = createStore<Theme>(stored() ?? system());

const apply = (t: Theme) => {
  document.documentElement.dataset.theme = t;
};
apply(theme.get());
theme.subscribe(apply);
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  if (!stored()) theme.set(system());
});

/** Switches between light and dark and remembers the choice. */
export const toggleTheme = (): void => {
  const next: Theme = theme.get() === 'dark' ? 'light' : 'dark';
  try {
    localStorage.setItem(KEY, next);
  } catch {
    // storage refused (private mode): the choice lasts this page
  }
  theme.set(next);
};

/** The chart colours of the current theme, read from the stylesheet's custom properties. */
export const chartColors = () => {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return {
    background: v('--panel'),
    text: v('--muted'),
    grid: v('--grid'),
    gain: v('--gain'),
    loss: v('--loss'),
    accent: v('--accent'),
    palette: v('--palette').split(/\s+/).filter(Boolean),
  };
};
