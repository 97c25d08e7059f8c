import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { ApiError } from '../api/http';
import { UnitNote } from './format';

/**
 * The venue's error exactly as it answered (`code` and `message`; the fields of a `VALIDATION_ERROR`), never
 * rephrased: what a person sees is what an agent would have got.
 */
export const ErrorNotice = ({ error, title }: { error: unknown; title?: string }) => {
  if (!error) return null;
  const e =
    error instanceof ApiError ? error : new ApiError(0, 'ERROR', (error as Error).message ?? String(error));
  const issues = Array.isArray(e.details?.['issues'])
    ? (e.details['issues'] as { field: string; message: string }[])
    : [];
  return (
    <div class="notice error" role="alert" data-code={e.code}>
      {title ? <strong>{title}: </strong> : null}
      <code>{e.code}</code> {e.message}
      {issues.length > 0 ? (
        <ul>
          {issues.map((i) => (
            <li key={i.field}>
              <code>{i.field}</code>: {i.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
};

/** An empty list that says what to do next. */
export const Empty = ({ children }: { children: ComponentChildren }) => <div class="empty">{children}</div>;

/** A quiet "loading" line for the first read of a panel. */
export const Loading = ({ what }: { what: string }) => (
  <div class="muted loading" aria-busy="true">
    Loading {what}…
  </div>
);

/** A titled panel of a page. */
export const Panel = ({
  title,
  actions,
  children,
  id,
}: {
  title: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  id?: string;
}) => (
  <section class="panel" aria-labelledby={id ? `${id}-title` : undefined} data-panel={id}>
    <header class="panel-head">
      <h2 id={id ? `${id}-title` : undefined}>{title}</h2>
      {actions ? <div class="actions">{actions}</div> : null}
    </header>
    {children}
  </section>
);

/**
 * One figure with its label (the summary cards). The figure says its unit (`<Num unit>`); `unit` here says one
 * in the label instead, for a card holding several figures of one unit (a minimum and an increment).
 */
export const Stat = ({
  label,
  unit,
  children,
  id,
}: {
  label: string;
  unit?: string;
  children: ComponentChildren;
  id?: string;
}) => (
  <div class="stat" data-stat={id}>
    <div class="stat-label">
      {label}
      {unit ? <UnitNote unit={unit} /> : null}
    </div>
    <div class="stat-value">{children}</div>
  </div>
);

/**
 * A choice among a few values as a radio group styled as buttons (arrow keys move between them, as a radio
 * group does).
 */
export const Segmented = <T extends string>({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: T;
  options: readonly T[] | readonly { value: T; label: string }[];
  onChange: (v: T) => void;
}) => (
  <fieldset class="segmented">
    <legend class="sr-only">{label}</legend>
    {options.map((o) => {
      const v = typeof o === 'string' ? o : o.value;
      const text = typeof o === 'string' ? o : o.label;
      return (
        <label key={v} class={v === value ? 'on' : ''}>
          <input type="radio" name={label} value={v} checked={v === value} onChange={() => onChange(v)} />
          {text}
        </label>
      );
    })}
  </fieldset>
);

/**
 * A labelled text input whose value the page holds: `label` is its visible name (people, screen readers and the
 * browser tests find the input by it), `onValue` gets what is typed, and every other attribute (`name`, `type`,
 * `inputMode`, `autoComplete`, `placeholder`, `required`, …) goes to the input as given.
 */
export const TextField = ({
  label,
  value,
  onValue,
  ...input
}: { label: string; value: string; onValue: (value: string) => void } & Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'label' | 'value' | 'onInput'
>) => (
  <label>
    {label}
    <input {...input} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
  </label>
);
