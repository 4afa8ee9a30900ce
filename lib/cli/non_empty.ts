/**
 * An environment variable's value when it is set to something: unset and empty read alike.
 *
 * @returns `value`, or `undefined` when it is `undefined` or `""`.
 */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
