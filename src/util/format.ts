/**
 * `50000` → `"50,000"`. Written out because the first `toLocaleString` call in
 * a process sets up ICU number formatting (~25 ms), paid at every CLI start
 * by the tool descriptions that use it.
 */
export function groupDigits(value: number): string {
  return String(Math.trunc(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
