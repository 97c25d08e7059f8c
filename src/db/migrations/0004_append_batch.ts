import { type Kysely, sql } from 'kysely';
import { APPEND_EVENTS } from './0001_event_store';

/**
 * The append batcher's database side (docs/benchmarks.md "Event store"): `append_events_batch` appends to many
 * streams in one call and one transaction, and reports a revision conflict per append instead of raising, so
 * one stream's conflict never fails its batch neighbours.
 *
 * Arguments are parallel arrays. Per append (index k, 1-based, in the order given): `p_streams[k]`,
 * `p_expected[k]` (>= 0 exact revision, -1 no stream, -2 any, -3 stream exists) and `p_counts[k]` (its number of
 * events, consecutive in the event arrays). Per event: `p_ids`, `p_types`, `p_data`, `p_metadata` (canonical
 * JSON texts, see `src/eventstore/hash-chain.ts`).
 *
 * Returns one row per appended event (`o_conflict = false`: revision, global position, transaction id,
 * prev_hash/hash, recorded_at) and one row per conflicting append (`o_conflict = true`, `o_revision` = the
 * stream's actual revision, -1 when it does not exist); nothing is written for a conflicting append. Appends to
 * the same stream are applied in order, each checked against the revision its predecessors left.
 *
 * - Hash chain: the same SHA-256 formula as `append_events` in 0001, byte for byte.
 * - No deadlocks between batches: every stream head of the batch is locked before the first insert, in sorted
 *   `stream_id` order.
 * - A new stream's head row is created as a placeholder (`revision = -1`) while locking, with
 *   `on conflict do nothing`, so two batches creating the same stream queue on its head like on any other
 *   (no unique violation aborting a whole batch); a placeholder whose appends all conflicted is removed again.
 *
 * `append_events` (single stream, raises `EV409` on a conflict) becomes a wrapper of the batch function, so the
 * chain is computed in one place and both take the stream head the same way.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(`
    create or replace function append_events_batch(
      p_streams text[], p_expected bigint[], p_counts int[],
      p_ids uuid[], p_types text[], p_data text[], p_metadata text[]
    ) returns table (o_append int, o_conflict boolean, o_revision bigint, o_global_position bigint,
                     o_transaction_id text, o_prev_hash text, o_hash text, o_recorded_at timestamptz)
    language plpgsql as $fn$
    #variable_conflict use_column
    declare
      v_n int := coalesce(array_length(p_streams, 1), 0);
      v_events int := coalesce(array_length(p_ids, 1), 0);
      v_heads text[];
      v_start bigint[];
      v_rev bigint[];
      v_hash text[];
      v_h int;
      v_e int := 0;
      v_current bigint;
      v_expected bigint;
      v_prev text;
      v_next text;
      v_stream text;
    begin
      if coalesce(array_length(p_expected, 1), 0) <> v_n or coalesce(array_length(p_counts, 1), 0) <> v_n
         or coalesce(array_length(p_types, 1), 0) <> v_events or coalesce(array_length(p_data, 1), 0) <> v_events
         or coalesce(array_length(p_metadata, 1), 0) <> v_events
         or (select coalesce(sum(c), 0) from unnest(p_counts) c) <> v_events then
        raise exception 'append_events_batch: array lengths do not match' using errcode = '22023';
      end if;
      if v_n = 0 then
        return;
      end if;
      -- Lock every head in one global order (sorted stream ids) before writing anything.
      select array_agg(s order by s) into v_heads from (select distinct unnest(p_streams) as s) d;
      v_start := array_fill(-1::bigint, array[array_length(v_heads, 1)]);
      v_hash := array_fill(''::text, array[array_length(v_heads, 1)]);
      for h in 1..array_length(v_heads, 1) loop
        loop
          select s.revision, s.last_hash into v_current, v_prev
            from streams s where s.stream_id = v_heads[h] for update;
          exit when found;
          -- New stream: a placeholder head (ours, or we wait for the concurrent creator and lock theirs).
          insert into streams (stream_id, revision, last_hash) values (v_heads[h], -1, '')
            on conflict (stream_id) do nothing;
        end loop;
        v_start[h] := v_current;
        v_hash[h] := v_prev;
      end loop;
      v_rev := v_start;
      for k in 1..v_n loop
        v_stream := p_streams[k];
        v_h := array_position(v_heads, v_stream);
        v_current := v_rev[v_h];
        v_expected := p_expected[k];
        if (v_expected = -1 and v_current <> -1) or (v_expected = -3 and v_current = -1)
           or (v_expected >= 0 and v_current <> v_expected) then
          o_append := k;
          o_conflict := true;
          o_revision := v_current;
          o_global_position := null;
          o_transaction_id := null;
          o_prev_hash := null;
          o_hash := null;
          o_recorded_at := null;
          return next;
          v_e := v_e + p_counts[k];
          continue;
        end if;
        v_next := v_hash[v_h];
        for i in 1..p_counts[k] loop
          v_e := v_e + 1;
          v_current := v_current + 1;
          v_prev := v_next;
          v_next := encode(sha256(convert_to(concat_ws(E'\\n', v_prev, v_stream, v_current::text, p_ids[v_e]::text,
                      p_types[v_e], p_data[v_e], p_metadata[v_e]), 'UTF8')), 'hex');
          insert into events (stream_id, revision, event_id, type, data, metadata)
            values (v_stream, v_current, p_ids[v_e], p_types[v_e], p_data[v_e]::jsonb,
                    p_metadata[v_e]::jsonb || jsonb_build_object('prev_hash', v_prev, 'hash', v_next))
            returning global_position, transaction_id::text, recorded_at
            into o_global_position, o_transaction_id, o_recorded_at;
          o_append := k;
          o_conflict := false;
          o_revision := v_current;
          o_prev_hash := v_prev;
          o_hash := v_next;
          return next;
        end loop;
        v_rev[v_h] := v_current;
        v_hash[v_h] := v_next;
      end loop;
      for h in 1..array_length(v_heads, 1) loop
        if v_rev[h] = -1 then
          delete from streams where stream_id = v_heads[h];
        elsif v_rev[h] <> v_start[h] then
          update streams set revision = v_rev[h], last_hash = v_hash[h], updated_at = now()
            where stream_id = v_heads[h];
        end if;
      end loop;
    end
    $fn$`)
    .execute(db);
  await sql
    .raw(`
    create or replace function append_events(
      p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data text[], p_metadata text[]
    ) returns table (o_revision bigint, o_global_position bigint, o_transaction_id text, o_prev_hash text,
                     o_hash text, o_recorded_at timestamptz)
    language plpgsql as $fn$
    declare
      r record;
    begin
      for r in select * from append_events_batch(array[p_stream], array[p_expected],
                 array[coalesce(array_length(p_types, 1), 0)], p_ids, p_types, p_data, p_metadata) loop
        if r.o_conflict then
          raise exception 'wrong expected revision' using errcode = 'EV409', detail = r.o_revision::text;
        end if;
        o_revision := r.o_revision;
        o_global_position := r.o_global_position;
        o_transaction_id := r.o_transaction_id;
        o_prev_hash := r.o_prev_hash;
        o_hash := r.o_hash;
        o_recorded_at := r.o_recorded_at;
        return next;
      end loop;
    end
    $fn$`)
    .execute(db);
}

/** Restores `append_events` as 0001 created it and drops the batch function. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(APPEND_EVENTS).execute(db);
  await sql`drop function if exists append_events_batch`.execute(db);
}
