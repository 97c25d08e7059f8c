import type { IChartApi, ISeriesApi, SeriesType, Time, UTCTimestamp } from 'lightweight-charts';
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useStore } from '../store';
import { chartColors, theme } from './theme';

/**
 * Charts drawn with lightweight-charts (TradingView's open-source financial charts). Values are numbers for
 * drawing only: every figure a person reads as text comes from the venue's decimal strings. Times are shown in
 * the viewer's time zone. Each chart is an image to assistive technology, labelled with a one-line summary,
 * and carries `data-points` (and `data-last`) for tests. The library is a chunk of its own, fetched while the
 * page's first figures load (`loadCharts`), so the first page becomes interactive sooner.
 */

type ChartLib = typeof import('lightweight-charts');
let lib: Promise<ChartLib> | null = null;
/** The chart library, fetched once. */
export const loadCharts = (): Promise<ChartLib> => {
  lib ??= import('lightweight-charts');
  return lib;
};

/** A point of a line: time in ms since the epoch, value. */
export interface Point {
  time: number;
  value: number;
}

/** One line of a {@link LineChart}. */
export interface Line {
  id: string;
  name: string;
  points: Point[];
  color?: string;
}

const localTime = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hour12: false,
});
const localDay = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const localClock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
const localSeconds = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});

const toDate = (t: Time): Date => new Date((t as number) * 1000);

/** Seconds since the epoch, strictly increasing: points in the same second keep the last one. */
export const toSeries = (points: readonly Point[]): { time: UTCTimestamp; value: number }[] => {
  const out: { time: UTCTimestamp; value: number }[] = [];
  for (const p of points) {
    const time = Math.floor(p.time / 1000) as UTCTimestamp;
    const last = out[out.length - 1];
    if (last && time <= last.time) {
      if (time === last.time) last.value = p.value;
      continue;
    }
    out.push({ time, value: p.value });
  }
  return out;
};

/**
 * Creates a chart in `el` with the theme's colours and the viewer's time zone once the library is in; re-coloured
 * on theme change. Returns the chart, the library, and whether both are ready.
 */
const useChart = (
  el: { current: HTMLDivElement | null },
  setup: (chart: IChartApi, lc: ChartLib) => void,
) => {
  const chartRef = useRef<IChartApi | null>(null);
  const libRef = useRef<ChartLib | null>(null);
  const [ready, setReady] = useState(false);
  const t = useStore(theme);
  useEffect(() => {
    let cancelled = false;
    let chart: IChartApi | null = null;
    void loadCharts().then((lc) => {
      if (cancelled || !el.current) return;
      chart = lc.createChart(el.current, {
        autoSize: true,
        localization: { timeFormatter: (time: Time) => localTime.format(toDate(time)) },
        timeScale: {
          timeVisible: true,
          secondsVisible: true,
          borderVisible: false,
          // Tick mark types: 0–2 year, month, day; 3 time; 4 time with seconds.
          tickMarkFormatter: (time: Time, type: number) =>
            (type <= 2 ? localDay : type === 3 ? localClock : localSeconds).format(toDate(time)),
        },
        rightPriceScale: { borderVisible: false },
        handleScroll: { mouseWheel: false, pressedMouseMove: true },
        handleScale: { mouseWheel: false, pinch: true, axisPressedMouseMove: true },
      });
      chartRef.current = chart;
      libRef.current = lc;
      setup(chart, lc);
      setReady(true);
    });
    return () => {
      cancelled = true;
      chart?.remove();
      chartRef.current = null;
    };
  }, []);
  useEffect(() => {
    if (!ready) return;
    const c = chartColors();
    chartRef.current?.applyOptions({
      layout: {
        background: { type: libRef.current!.ColorType.Solid, color: c.background },
        textColor: c.text,
      },
      grid: { vertLines: { color: c.grid }, horzLines: { color: c.grid } },
    });
  }, [t, ready]);
  return { chart: chartRef, lib: libRef, ready };
};

/** The element a chart draws in: an image labelled with its summary, with its point count and last value. */
const ChartBox = ({
  box,
  height,
  label,
  points,
  last,
}: {
  box: { current: HTMLDivElement | null };
  height: number;
  label: string;
  points: number;
  last: number | undefined;
}) => (
  <div
    class="chart"
    ref={box as Ref<HTMLDivElement>}
    style={{ height: `${height}px` }}
    role="img"
    aria-label={label}
    data-points={points}
    data-last={last ?? ''}
  />
);

/**
 * Lines over time (equity curves; several overlaid for a comparison or a battle race). `fit` refits the time
 * axis on every change (off for the race, which sets its own range).
 */
export const LineChart = ({
  lines,
  label,
  height = 280,
  fit = true,
  baseline,
}: {
  lines: Line[];
  label: string;
  height?: number;
  fit?: boolean;
  /** Draws the lines as areas against this value (e.g. 0 for a drawdown below zero). */
  baseline?: number;
}) => {
  const el = useRef<HTMLDivElement>(null);
  const series = useRef(new Map<string, ISeriesApi<SeriesType>>());
  const { chart, lib, ready } = useChart(el, () => {});
  useEffect(() => {
    const c = chart.current;
    const lc = lib.current;
    if (!c || !lc) return;
    const colors = chartColors();
    const seen = new Set<string>();
    lines.forEach((line, i) => {
      seen.add(line.id);
      let s = series.current.get(line.id);
      const color = line.color ?? colors.palette[i % colors.palette.length] ?? colors.accent;
      if (!s) {
        s =
          baseline === undefined
            ? c.addSeries(lc.LineSeries, { color, lineWidth: 2, title: lines.length > 1 ? line.name : '' })
            : c.addSeries(lc.BaselineSeries, {
                baseValue: { type: 'price', price: baseline },
                topLineColor: colors.gain,
                bottomLineColor: colors.loss,
                bottomFillColor1: `${colors.loss}55`,
                bottomFillColor2: `${colors.loss}11`,
                topFillColor1: 'transparent',
                topFillColor2: 'transparent',
                lineWidth: 2,
              });
        series.current.set(line.id, s);
      }
      s.setData(toSeries(line.points));
    });
    for (const [id, s] of series.current) {
      if (!seen.has(id)) {
        c.removeSeries(s);
        series.current.delete(id);
      }
    }
    if (fit) c.timeScale().fitContent();
  }, [lines, fit, baseline, ready]);
  return (
    <ChartBox
      box={el}
      height={height}
      label={label}
      points={lines.reduce((n, l) => n + l.points.length, 0)}
      last={lines[0]?.points.at(-1)?.value}
    />
  );
};

/** A candle of the market chart: time in ms, prices and volume as numbers (drawing only). */
export interface CandlePoint {
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** Candlesticks with the volume as a histogram in the lower fifth. */
export const CandleChart = ({
  candles,
  label,
  height = 380,
}: {
  candles: CandlePoint[];
  label: string;
  height?: number;
}) => {
  const el = useRef<HTMLDivElement>(null);
  const price = useRef<ISeriesApi<'Candlestick'> | null>(null);
  const volume = useRef<ISeriesApi<'Histogram'> | null>(null);
  const { chart, ready } = useChart(el, (c, lc) => {
    const colors = chartColors();
    price.current = c.addSeries(lc.CandlestickSeries, {
      upColor: colors.gain,
      downColor: colors.loss,
      borderVisible: false,
      wickUpColor: colors.gain,
      wickDownColor: colors.loss,
    });
    volume.current = c.addSeries(lc.HistogramSeries, { priceScaleId: '', priceFormat: { type: 'volume' } });
    c.priceScale('').applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
    price.current.priceScale().applyOptions({ scaleMargins: { top: 0.05, bottom: 0.25 } });
  });
  const firstTime = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!ready) return;
    const colors = chartColors();
    const seconds = (ms: number) => Math.floor(ms / 1000) as UTCTimestamp;
    price.current?.setData(
      candles.map((k) => ({ time: seconds(k.time), open: k.open, high: k.high, low: k.low, close: k.close })),
    );
    volume.current?.setData(
      candles.map((k) => ({
        time: seconds(k.time),
        value: k.volume,
        color: `${k.close >= k.open ? colors.gain : colors.loss}66`,
      })),
    );
    // A new series (another pair or interval) is shown whole; a live update of the last candle keeps the view.
    if (candles[0]?.time !== firstTime.current) {
      firstTime.current = candles[0]?.time;
      chart.current?.timeScale().fitContent();
    }
  }, [candles, ready]);
  return (
    <ChartBox box={el} height={height} label={label} points={candles.length} last={candles.at(-1)?.close} />
  );
};
