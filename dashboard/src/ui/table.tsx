import type { ComponentProps } from 'preact';
import { Num, UnitNote } from './format';

/**
 * A column of a {@link Head}: its label, right-aligned for figures, or read to screen readers only. `unit` is the
 * unit every figure of the column is counted in (`USDT`, `%`, a count's noun, `ratio`), said once in the header
 * (docs/dashboard.md "Reading the pages"); a column whose figures differ in unit (a quantity, in each row's base
 * asset) has none, and each figure says its own.
 */
export interface Column {
  label: string;
  right?: boolean;
  hidden?: boolean;
  unit?: string;
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
        const col = typeof c === 'string' ? { label: c } : c;
        return (
          <th key={col.label} scope="col" class={col.right ? 'r' : undefined} data-unit={col.unit}>
            {col.hidden ? <span class="sr-only">{col.label}</span> : col.label}
            {col.unit ? <UnitNote unit={col.unit} /> : null}
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
