import type { ComponentProps } from 'preact';
import { Num, UnitNote } from './format';

/**
 * A column of a {@link Head}: its label, right-aligned for figures, or read to screen readers only. `unit` is the
 * unit every figure of the column is counted in (`USDT`, `%`, a count's noun, `ratio`), said once in the header
 * (docs/dashboard.md "Reading the pages"); a column whose figures differ in unit (a quantity, in each row's base
 * asset) has none, and each figure says its own. `sort` makes the header a button ordering the table by the
 * column: `dir` is the order it is in now (said as `aria-sort` and a ▲/▼ mark), absent when another column orders it.
 */
export interface Column {
  label: string;
  right?: boolean;
  hidden?: boolean;
  unit?: string;
  sort?: { dir?: 'ascending' | 'descending'; onSort: () => void };
}

/** A figure's column (right-aligned), with the unit of its figures when they share one. */
export const right = (label: string, unit?: string): Column => ({ label, right: true, unit });
/** A column whose header is for screen readers only (checkboxes, buttons). */
export const hidden = (label: string): Column => ({ label, hidden: true });

/** A table's header row: strings are left-aligned columns. */
export const Head = ({ cols }: { cols: (string | Column)[] }) => (
  <thead>
    <tr>
      {cols.map((c) => {
        const col: Column = typeof c === 'string' ? { label: c } : c;
        const text = (
          <>
            {col.hidden ? <span class="sr-only">{col.label}</span> : col.label}
            {col.unit ? <UnitNote unit={col.unit} /> : null}
          </>
        );
        const dir = col.sort?.dir;
        return (
          <th
            key={col.label}
            scope="col"
            class={col.right ? 'r' : undefined}
            data-unit={col.unit}
            aria-sort={dir}
          >
            {col.sort ? (
              <button type="button" class="sort" onClick={col.sort.onSort}>
                {text}
                <span aria-hidden="true" class="sort-mark">
                  {dir === 'descending' ? ' ▼' : dir === 'ascending' ? ' ▲' : ''}
                </span>
              </button>
            ) : (
              text
            )}
          </th>
        );
      })}
    </tr>
  </thead>
);

/** A cell holding one venue decimal, right-aligned. */
export const NumCell = (props: ComponentProps<typeof Num> & { title?: string }) => {
  const { title, ...num } = props;
  return (
    <td class="r" title={title}>
      <Num {...num} />
    </td>
  );
};

/**
 * A cell of two figures of one row, the second small below the first (equity over its PnL, a PnL over its %);
 * `field` names the second (`data-field`) so it can be told from the first.
 */
export const StackedNumCell = ({
  main,
  sub,
  field,
}: {
  main: ComponentProps<typeof Num>;
  sub: ComponentProps<typeof Num>;
  field: string;
}) => (
  <td class="r">
    <Num {...main} />
    <br />
    <span class="small" data-field={field}>
      <Num {...sub} />
    </span>
  </td>
);
