import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultMarketDataDir, siblingMarketDataDir } from '../../src/market/sibling-data';

/** `serve`'s market data default: the data set beside the checkout, unless the environment says otherwise. */
describe('sibling market data', () => {
  it('finds ../shared/market-data beside a checkout only when it holds the Binance data set', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-sibling-'));
    const repo = path.join(root, 'repo');
    fs.mkdirSync(repo);
    expect(siblingMarketDataDir(repo)).toBeUndefined();
    const data = path.join(root, 'shared', 'market-data', 'binance');
    fs.mkdirSync(data, { recursive: true });
    expect(siblingMarketDataDir(repo)).toBeUndefined();
    fs.writeFileSync(path.join(data, 'exchangeInfo.json'), '{}');
    expect(siblingMarketDataDir(repo)).toBe(path.join(root, 'shared', 'market-data'));
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('is used only when neither MARKET_DATA_DIR nor MARKET_SOURCE is set, not even empty', () => {
    const sibling = () => '/data/shared/market-data';
    expect(defaultMarketDataDir({}, sibling)).toBe('/data/shared/market-data');
    expect(defaultMarketDataDir({ MARKET_DATA_DIR: '' }, sibling)).toBeUndefined();
    expect(defaultMarketDataDir({ MARKET_DATA_DIR: '/elsewhere' }, sibling)).toBeUndefined();
    expect(defaultMarketDataDir({ MARKET_SOURCE: 'synthetic' }, sibling)).toBeUndefined();
    expect(defaultMarketDataDir({ MARKET_SOURCE: '' }, sibling)).toBeUndefined();
    expect(defaultMarketDataDir({}, () => undefined)).toBeUndefined();
  });
});
