/** Content-Type facts. Pure. */

/**
 * The media type of a Content-Type value: what comes before any parameter, trimmed and lower-cased
 * (`Application/JSON; charset=utf-8` -> `application/json`). indexOf and slice rather than split: no array, and no
 * call into V8's runtime (String#split runs there), on every call.
 */
export function mediaTypeOf(value: string): string {
  const end = value.indexOf(';');
  return (end === -1 ? value : value.slice(0, end)).trim().toLowerCase();
}
