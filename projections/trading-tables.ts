import type { OrderCountsTable, OrdersTable, TradeCountsTable, TradesTable } from './orders';
import type { BalancesTable, PositionsTable, WalletSessionsTable, WalletsTable } from './wallets';

/** Read models of the trading ledger (joined into `Database` in `schema.ts`). */
export interface TradingTables {
  orders: OrdersTable;
  trades: TradesTable;
  trade_counts: TradeCountsTable;
  order_counts: OrderCountsTable;
  wallets: WalletsTable;
  wallet_sessions: WalletSessionsTable;
  balances: BalancesTable;
  positions: PositionsTable;
}
