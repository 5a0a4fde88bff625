export const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface Spinner {
  stop(): void;
}

/**
 * Shows `<emoji> <label> ⠋ 1.2s` on stderr while a call runs long. Only on a
 * terminal (never when stderr is piped or redirected), never on stdout, and
 * only after `delayMs`, so quick calls print nothing at all.
 */
export function startSpinner(
  emoji: string,
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
  delayMs = 300,
): Spinner {
  if (!stream.isTTY) return { stop: () => {} };
  const started = Date.now();
  let frame = 0;
  let shown = false;
  let interval: NodeJS.Timeout | undefined;
  const draw = (): void => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    stream.write(`\r\x1b[2K${emoji} ${label} ${SPINNER_FRAMES[frame++ % SPINNER_FRAMES.length]} ${seconds}s`);
    shown = true;
  };
  const delay = setTimeout(() => {
    draw();
    interval = setInterval(draw, 80);
    interval.unref();
  }, delayMs);
  delay.unref();
  return {
    stop: () => {
      clearTimeout(delay);
      if (interval !== undefined) clearInterval(interval);
      if (shown) stream.write("\r\x1b[2K");
      // stop() runs twice on the normal path (before printing, then in `finally`): clear once.
      shown = false;
    },
  };
}
