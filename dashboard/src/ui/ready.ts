/**
 * Marks a page interactive: a `performance` mark `ptv:ready:<page>` (the browser test reads its time since
 * navigation start as the page's first-interactive time, docs/benchmarks.md) and `data-ready` on `<html>`.
 */
export const markReady = (page: string): void => {
  if (document.documentElement.dataset.ready?.split(' ').includes(page)) return;
  performance.mark(`ptv:ready:${page}`);
  document.documentElement.dataset.ready = `${document.documentElement.dataset.ready ?? ''} ${page}`.trim();
};
