import type { ComponentProps } from 'preact';
import { Num } from './format';

/** A column of a {@link Head}: its label, right-aligned for figures, or read to screen readers only. */
export interface Column {
  label: string;
  right?: boolean;
  hidden?: boolean;
}

/** A figure's column (right-aligned). */
export const right = (label: string): Column => ({ label, right: true });
/** A column whose header is for screen readers only (checkboxes, buttons). */
export const hidden = (label: string): Column => ({ label, hidden: true });

/** A table's header row: strings are left-aligned columns. */
export const Head = ({ cols }: { cols: (string | Column)[] }) => (
  <thead>
    <tr>
      {cols.map((c) => {
        const col = typeof c === 'string' ? { label: c } : c;
        return (
          <th key={col.label} scope="col" class={col.right ? 'r' : undefined}>
            {col.hidden ? <span class="sr-only">{col.label}</span> : col.label}
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
