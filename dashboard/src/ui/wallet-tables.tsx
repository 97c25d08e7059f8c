import type { Position, Trade } from '../api/contract';
import { baseAsset, QUOTE } from '../api/pairs';
import { href } from '../router';
import { Side, Time } from './format';
import { Head, NumCell, right, StackedNumCell } from './table';

/** The fields of a fill both the live trade history and a backtest's trade log carry. */
type Fill = Pick<
  Trade,
  'trade_id' | 'executed_at' | 'symbol' | 'side' | 'quantity' | 'price' | 'fee' | 'total' | 'realized_pnl'
> & {
  type?: string;
};

/**
 * Fills, newest or oldest first as given: the wallet's recent fills (`/trade/history`) and a backtest's trade log
 * (`/results/trades`, whose fills also name their order type and run on virtual time).
 */
export const FillsTable = ({
  fills,
  virtual = false,
  testId,
}: {
  fills: Fill[];
  virtual?: boolean;
  testId?: string;
}) => {
  const typed = fills.some((f) => f.type !== undefined);
  return (
    <table data-testid={testId}>
      <Head
        cols={[
          virtual ? 'Time (virtual)' : 'Time',
          'Pair',
          'Side',
          ...(typed ? ['Type'] : []),
          right('Quantity'),
          right('Price', QUOTE),
          right('Fee', QUOTE),
          right('Total', QUOTE),
          right('Realized PnL', QUOTE),
        ]}
      />
      <tbody>
        {fills.map((t) => (
          <tr key={t.trade_id} data-trade={t.trade_id}>
            <td>
              <Time iso={t.executed_at} />
            </td>
            <td>{t.symbol}</td>
            <td>
              <Side side={t.side} />
            </td>
            {typed ? <td>{t.type?.replace('_', ' ')}</td> : null}
            <NumCell value={t.quantity} unit={baseAsset(t.symbol)} />
            <NumCell value={t.price} />
            <NumCell value={t.fee} />
            <NumCell value={t.total} />
            <NumCell value={t.realized_pnl} signed />
          </tr>
        ))}
      </tbody>
    </table>
  );
};

/**
 * Positions valued as the venue valued them (the price's source on hover): live, or as of a past time. The
 * unrealized PnL and its percentage share a column (the percentage under the amount), so the table fits the
 * overview's main column at 1280 px without scrolling inside its panel.
 */
export const PositionsTable = ({ positions }: { positions: Position[] }) => (
  <table>
    <Head
      cols={[
        'Pair',
        right('Quantity'),
        right('Avg entry', QUOTE),
        right('Price', QUOTE),
        right('Value', QUOTE),
        right('Unrealized PnL', QUOTE),
        'Opened',
      ]}
    />
    <tbody>
      {positions.map((x) => (
        <tr key={x.symbol} data-position={x.symbol}>
          <th scope="row">
            <a href={href('market', x.symbol)}>{x.symbol}</a>
          </th>
          <NumCell value={x.quantity} unit={baseAsset(x.symbol)} />
          <NumCell value={x.avg_entry_price} />
          <NumCell value={x.current_price} title={`price source: ${x.price_source}`} />
          <NumCell value={x.market_value} />
          <StackedNumCell
            main={{ value: x.unrealized_pnl, signed: true }}
            sub={{ value: x.unrealized_pnl_pct, signed: true, unit: '%' }}
            field="unrealized_pnl_pct"
          />
          <td>
            <Time iso={x.opened_at} />
          </td>
        </tr>
      ))}
    </tbody>
  </table>
);
