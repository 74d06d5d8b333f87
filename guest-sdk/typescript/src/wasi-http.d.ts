// The WASI 0.2.12 HTTP interfaces the SDK's `http` module (http.ts) calls, as TypeScript
// modules, with QuickJS's conventions (see wit.d.ts). The guest imports them under the build's
// names — `cairn:wasi-http`, `cairn:wasi-io`, `cairn:wasi-clocks` are wasi:http, wasi:io and
// wasi:clocks renamed, because componentize-qjs 0.4.5 cannot build a guest importing wasi:http
// under its own name — and the build gives the component the WASI names back
// (host/guest-build/src/wasi_copies.rs). Only what http.ts uses is declared.

declare module "cairn:wasi-io/poll@0.2.12" {
  export class Pollable {
    ready(): boolean;
    block(): void;
    [Symbol.dispose](): void;
  }
  /** The indices (into `pollables`) of those that are ready; blocks until one is. */
  export function poll(pollables: Pollable[]): number[];
}

declare module "cairn:wasi-io/streams@0.2.12" {
  import type { Pollable } from "cairn:wasi-io/poll@0.2.12";
  /** What a failed stream operation throws (as an `Error`'s `payload`). */
  export type StreamError = { tag: "last-operation-failed"; val: unknown } | { tag: "closed" };
  export class InputStream {
    /** Up to `length` bytes that are there now (possibly none); throws a `StreamError`. */
    read(length: number): Uint8Array;
    subscribe(): Pollable;
    [Symbol.dispose](): void;
  }
  export class OutputStream {
    /** How many bytes may be written now; throws a `StreamError`. */
    checkWrite(): number;
    write(contents: Uint8Array): void;
    flush(): void;
    subscribe(): Pollable;
    [Symbol.dispose](): void;
  }
}

declare module "cairn:wasi-clocks/monotonic-clock@0.2.12" {
  import type { Pollable } from "cairn:wasi-io/poll@0.2.12";
  /** A pollable that is ready `nanoseconds` from now. */
  export function subscribeDuration(nanoseconds: number): Pollable;
}

declare module "cairn:wasi-http/types@0.2.12" {
  import type { Pollable } from "cairn:wasi-io/poll@0.2.12";
  import type { InputStream, OutputStream } from "cairn:wasi-io/streams@0.2.12";
  export type Method =
    | { tag: "get" | "head" | "post" | "put" | "delete" | "connect" | "options" | "trace" | "patch" }
    | { tag: "other"; val: string };
  export type Scheme = { tag: "HTTP" | "HTTPS" } | { tag: "other"; val: string };
  /** wasi:http's `error-code`: `tag` is the case's WIT name (`HTTP-request-denied`). */
  export type ErrorCode = { tag: string; val?: unknown };
  /** wasi:http's `header-error`. */
  export type HeaderError = { tag: "invalid-syntax" | "forbidden" | "immutable" };
  export class Fields {
    /** Throws a `HeaderError`. */
    static fromList(entries: Array<[string, Uint8Array]>): Fields;
    entries(): Array<[string, Uint8Array]>;
    [Symbol.dispose](): void;
  }
  export class OutgoingRequest {
    /** Takes `headers` over. */
    constructor(headers: Fields);
    body(): OutgoingBody;
    setMethod(method: Method): void;
    setPathWithQuery(path: string | null): void;
    setScheme(scheme: Scheme | null): void;
    setAuthority(authority: string | null): void;
    [Symbol.dispose](): void;
  }
  export class RequestOptions {
    constructor();
    setConnectTimeout(nanoseconds: number | null): void;
    setFirstByteTimeout(nanoseconds: number | null): void;
    setBetweenBytesTimeout(nanoseconds: number | null): void;
    [Symbol.dispose](): void;
  }
  export class OutgoingBody {
    write(): OutputStream;
    /** Takes `body` over; throws an `ErrorCode`. */
    static finish(body: OutgoingBody, trailers: Fields | null): void;
    [Symbol.dispose](): void;
  }
  export class FutureIncomingResponse {
    subscribe(): Pollable;
    /** null until the response is there; then once the response or the error (nested
     * results are `{tag, val}`), then an `err` (asked twice). */
    get():
      | { tag: "ok"; val: { tag: "ok"; val: IncomingResponse } | { tag: "err"; val: ErrorCode } }
      | { tag: "err"; val?: unknown }
      | null;
    [Symbol.dispose](): void;
  }
  export class IncomingResponse {
    status(): number;
    headers(): Fields;
    consume(): IncomingBody;
    [Symbol.dispose](): void;
  }
  export class IncomingBody {
    stream(): InputStream;
    /** Takes `body` over. */
    static finish(body: IncomingBody): FutureTrailers;
    [Symbol.dispose](): void;
  }
  export class FutureTrailers {
    [Symbol.dispose](): void;
  }
}

declare module "cairn:wasi-http/outgoing-handler@0.2.12" {
  import type {
    FutureIncomingResponse,
    OutgoingRequest,
    RequestOptions,
  } from "cairn:wasi-http/types@0.2.12";
  /** Sends `request` (taken over); throws an `ErrorCode` when it is refused at once. */
  export function handle(
    request: OutgoingRequest,
    options: RequestOptions | null,
  ): FutureIncomingResponse;
}
