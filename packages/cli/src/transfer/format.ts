/** Sizes and rates for people: binary units, one decimal from KiB up. */
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** Bytes per second over `ms` (0 before any time has passed). */
export function bytesPerSecond(bytes: number, ms: number): number {
  return ms > 0 ? (bytes * 1000) / ms : 0;
}

export function formatRate(bytes: number, ms: number): string {
  return `${formatBytes(Math.round(bytesPerSecond(bytes, ms)))}/s`;
}

export function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}
