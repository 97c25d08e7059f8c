import { sql } from 'kysely';
import { openPGlite } from '../src/db/database';
import fs from 'node:fs';
const h = await openPGlite();
await sql`create table c (symbol text not null, interval text not null, open_time bigint not null, open numeric(38,8) not null, high numeric(38,8) not null, low numeric(38,8) not null, close numeric(38,8) not null, volume numeric(38,8) not null, close_time bigint not null, quote_volume numeric(38,8), trade_count bigint, primary key (symbol, interval, open_time))`.execute(h.db);
const dir='/work/shared/market-data/binance/klines/1h';
let t=performance.now();
let total=0;
for (const f of fs.readdirSync(dir)) {
  const lines=fs.readFileSync(dir+'/'+f,'utf8').trim().split('\n').slice(1);
  const sym=f.split('-')[0]!;
  for (let i=0;i<lines.length;i+=5000){
    const chunk=lines.slice(i,i+5000).map(l=>l.split(','));
    const col=(k:number)=>chunk.map(r=>r[k]!);
    await sql`insert into c (symbol, interval, open_time, open, high, low, close, volume, close_time)
      select ${sym}, '1h', * from unnest(${col(0)}::bigint[], ${col(1)}::numeric[], ${col(2)}::numeric[], ${col(3)}::numeric[], ${col(4)}::numeric[], ${col(5)}::numeric[], ${col(6)}::bigint[]) on conflict do nothing`.execute(h.db);
    total+=chunk.length;
  }
}
console.log('insert', total, performance.now()-t);
t=performance.now();
const r = await sql<any>`select symbol, interval, open_time::text as open_time, open::text as open, high::text as high, low::text as low, close::text as close, volume::text as volume from c order by symbol, interval, open_time`.execute(h.db);
console.log('select', r.rows.length, performance.now()-t, r.rows[0]);
t=performance.now();
const r2 = await sql<any>`select symbol, interval, string_agg(concat_ws(',', open_time, open, high, low, close, volume), E'\n' order by open_time) as t from c group by symbol, interval`.execute(h.db);
console.log('select agg', r2.rows.length, performance.now()-t);
await h.close();
