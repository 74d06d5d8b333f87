// Logging: records shown with the deployment's progress, through the host's `log` import, and
// a `console` for code that expects one (QuickJS has none), writing to the same log.

import * as host from "cairn:deploy/host@0.3.0";

function text(args: unknown[]): string {
  return args
    .map((a) => {
      if (typeof a === "string") return a;
      if (a instanceof Error) return a.stack ? `${a.name}: ${a.message}\n${a.stack}` : `${a.name}: ${a.message}`;
      try {
        const json = JSON.stringify(a);
        return json === undefined ? String(a) : json;
      } catch {
        return String(a);
      }
    })
    .join(" ");
}

function send(severity: host.Severity, message: string, urn?: string): void {
  host.log(severity, urn === undefined || urn === "" ? null : urn, message);
}

/** `log.info("message")`, `log.warn("message", urn)`: a record about the resource `urn` (or
 * the provider or program when absent). */
export const log = {
  debug(message: string, urn?: string): void {
    send("debug", message, urn);
  },
  info(message: string, urn?: string): void {
    send("info", message, urn);
  },
  warn(message: string, urn?: string): void {
    send("warning", message, urn);
  },
  error(message: string, urn?: string): void {
    send("error", message, urn);
  },
};

/** Installs `console` (debug, log, info, warn, error) when the runtime has none. */
export function installConsole(): void {
  const g = globalThis as { console?: unknown };
  if (g.console !== undefined) return;
  g.console = {
    debug: (...args: unknown[]) => send("debug", text(args)),
    log: (...args: unknown[]) => send("info", text(args)),
    info: (...args: unknown[]) => send("info", text(args)),
    warn: (...args: unknown[]) => send("warning", text(args)),
    error: (...args: unknown[]) => send("error", text(args)),
  };
}
