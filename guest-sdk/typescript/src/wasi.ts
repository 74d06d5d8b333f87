// Files, environment variables and randomness, through WASI (wasi:filesystem,
// wasi:cli/environment, wasi:random): what
// a guest sees of them is what the user granted (`cairn:grants.<package>` for a provider,
// `cairn:program` for a program) — preopened directories at their guest paths, and the
// granted variables. Nothing else exists: a path outside every grant is "not granted".
//
// QuickJS has no `fs` or `process`; these are synchronous, as a provider call is.

import type { Descriptor } from "wasi:filesystem/types@0.2.12";
import { getDirectories } from "wasi:filesystem/preopens@0.2.12";
import { getEnvironment } from "wasi:cli/environment@0.2.12";
import { getRandomBytes } from "wasi:random/random@0.2.12";
import { utf8Decode, utf8Encode } from "./values";

/** A failed file operation: `code` is WASI's error code (`no-entry`, `exist`, `not-permitted`,
 * `not-granted` when no grant covers the path, …). */
export class FileError extends Error {
  constructor(
    readonly code: string,
    readonly path: string,
    operation: string,
  ) {
    super(`${operation} ${path}: ${code}`);
    this.name = "FileError";
  }
}

function code(e: unknown): string {
  const payload = (e as { payload?: unknown } | null)?.payload;
  if (typeof payload === "string") return payload;
  return e instanceof Error ? e.message : String(e);
}

/** Splits an absolute path into its normal parts; `..` and `.` are resolved lexically (a
 * guest cannot climb out of a grant: the host refuses that too). */
function parts(path: string): string[] {
  if (!path.startsWith("/")) throw new FileError("invalid", path, "resolving");
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return out;
}

/** The preopened directories, asked for once: each `get-directories` call hands out new
 * handles, which would pile up in the host's table if asked for per operation. */
let preopens: Array<[Descriptor, string]> | undefined;

function directories(): Array<[Descriptor, string]> {
  if (preopens === undefined) preopens = getDirectories();
  return preopens;
}

/** The preopened directory holding `path` and the path relative to it (the longest grant
 * wins). */
function resolve(path: string, operation: string): [Descriptor, string] {
  const wanted = parts(path);
  let best: [Descriptor, string] | undefined;
  let bestLength = -1;
  for (const [dir, guest] of directories()) {
    const base = parts(guest.startsWith("/") ? guest : `/${guest}`);
    if (base.length > wanted.length || base.length <= bestLength) continue;
    if (base.every((p, i) => wanted[i] === p)) {
      best = [dir, wanted.slice(base.length).join("/") || "."];
      bestLength = base.length;
    }
  }
  if (!best) throw new FileError("not-granted", path, operation);
  return best;
}

/** Runs `f` with a descriptor opened at `path`, dropping it afterwards (handles are a
 * resource of the host: a leaked one stays until the instance goes). */
function withFile<T>(
  path: string,
  operation: string,
  open: { create?: boolean; truncate?: boolean; directory?: boolean },
  flags: { read?: boolean; write?: boolean; mutateDirectory?: boolean },
  f: (d: Descriptor) => T,
): T {
  const [dir, relative] = resolve(path, operation);
  let file: Descriptor;
  try {
    file = dir.openAt({ symlinkFollow: true }, relative, open, flags);
  } catch (e) {
    throw new FileError(code(e), path, operation);
  }
  try {
    return f(file);
  } catch (e) {
    if (e instanceof FileError) throw e;
    throw new FileError(code(e), path, operation);
  } finally {
    file[Symbol.dispose]();
  }
}

/** The contents of a file. */
export function readFile(path: string): Uint8Array {
  return withFile(path, "reading", {}, { read: true }, (file) => {
    const chunks: Uint8Array[] = [];
    let offset = 0;
    for (;;) {
      const [bytes, end] = file.read(65536, offset);
      if (bytes.length > 0) chunks.push(bytes);
      offset += bytes.length;
      if (end || bytes.length === 0) break;
    }
    const out = new Uint8Array(offset);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  });
}

/** A file's contents as UTF-8 text. */
export function readTextFile(path: string): string {
  const text = utf8Decode(readFile(path));
  if (text === undefined) throw new FileError("illegal-byte-sequence", path, "reading");
  return text;
}

/** The contents of a file, or undefined when there is no such file. */
export function readTextFileIfExists(path: string): string | undefined {
  try {
    return readTextFile(path);
  } catch (e) {
    if (e instanceof FileError && e.code === "no-entry") return undefined;
    throw e;
  }
}

/** Writes a file (created or truncated). */
export function writeFile(path: string, data: Uint8Array | string): void {
  const bytes = typeof data === "string" ? utf8Encode(data) : data;
  withFile(path, "writing", { create: true, truncate: true }, { write: true }, (file) => {
    let offset = 0;
    while (offset < bytes.length) {
      const n = file.write(bytes.subarray(offset), offset);
      if (n <= 0) throw new FileError("io", path, "writing");
      offset += n;
    }
  });
}

/** Makes a directory and its missing parents. */
export function mkdir(path: string): void {
  const [dir, relative] = resolve(path, "creating");
  if (relative === ".") return;
  let sofar = "";
  for (const part of relative.split("/")) {
    sofar = sofar ? `${sofar}/${part}` : part;
    try {
      dir.createDirectoryAt(sofar);
    } catch (e) {
      if (code(e) !== "exist") throw new FileError(code(e), path, "creating");
    }
  }
}

/** Removes a file; a missing one is no error. */
export function removeFile(path: string): void {
  const [dir, relative] = resolve(path, "removing");
  try {
    dir.unlinkFileAt(relative);
  } catch (e) {
    if (code(e) !== "no-entry") throw new FileError(code(e), path, "removing");
  }
}

/** The names in a directory. */
export function readDir(path: string): string[] {
  return withFile(path, "listing", { directory: true }, { read: true }, (dir) => {
    const stream = dir.readDirectory();
    try {
      const names: string[] = [];
      for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) {
        names.push(entry.name);
      }
      return names;
    } finally {
      stream[Symbol.dispose]();
    }
  });
}

/** Whether a file or directory exists (false where no grant covers it). */
export function exists(path: string): boolean {
  let found: [Descriptor, string];
  try {
    found = resolve(path, "checking");
  } catch {
    return false;
  }
  try {
    found[0].statAt({ symlinkFollow: true }, found[1]);
    return true;
  } catch {
    return false;
  }
}

/** The guest paths of the granted directories. */
export function grantedDirectories(): string[] {
  return directories().map(([, guest]) => guest);
}

/** The granted environment variables. */
export const env = {
  /** A variable's value, or undefined when it is not granted or not set. */
  get(name: string): string | undefined {
    for (const [key, value] of getEnvironment()) if (key === name) return value;
    return undefined;
  },
  /** Every granted variable. */
  all(): Record<string, string> {
    const out: Record<string, string> = Object.create(null);
    for (const [key, value] of getEnvironment()) out[key] = value;
    return out;
  },
};

/** Cryptographically secure randomness from the host (`Math.random` is neither secure nor, in
 * a pre-initialised QuickJS heap, guaranteed to differ between instances). */
export const random = {
  /** `length` random bytes. */
  bytes(length: number): Uint8Array {
    return getRandomBytes(length);
  },
  /** A uniformly random integer in [min, max] (both included; at most 2^53 apart). */
  integer(min: number, max: number): number {
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max < min) {
      throw new RangeError(`no integers between ${min} and ${max}`);
    }
    const span = max - min + 1;
    // Rejection sampling over 53 random bits: no modulo bias.
    const limit = Math.floor(2 ** 53 / span) * span;
    for (;;) {
      const b = getRandomBytes(7);
      const n = (b[0] & 31) * 2 ** 48 + b[1] * 2 ** 40 + b[2] * 2 ** 32 + b[3] * 2 ** 24 + b[4] * 2 ** 16 + b[5] * 2 ** 8 + b[6];
      if (n < limit) return min + (n % span);
    }
  },
  /** A random element of a non-empty string or array. */
  choice<T>(items: ArrayLike<T>): T {
    if (items.length === 0) throw new RangeError("nothing to choose from");
    return items[random.integer(0, items.length - 1)];
  },
  /** A random version 4 UUID. */
  uuid(): string {
    const b = getRandomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  },
};
